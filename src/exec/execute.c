/* The executor: walks a plan, calling the backend's operations.  The same
 * loop runs naive (one resident piece), trivial (height 1) and pyramid plans.
 *
 * In-place host update: within a pass, task t's result overlaps the source
 * regions of later tasks only in "bands" along the split axes (see
 * pyr_plan_bands).  The rest of a result is downloaded straight into the host
 * grid; the bands are downloaded into staging buffers and written into the
 * grid only once their last reader has finished, so later tasks upload the
 * old time layer they need and no second full-size host copy exists.  A band
 * whose only reader is the next task (every band of strips, slabs and
 * segments) needs no staging when several slots are in
 * flight: the task's buffer still holds it when the next task has uploaded,
 * so it is downloaded into the grid then, on the task's slot, after a mark of
 * that upload (pyr_plan_band_direct).  That saves the host copy, whose
 * memory traffic slows the copy engines (docs/performance.md#copies-beside-kernels).
 *
 * With an asynchronous backend (more than one slot) those band writes run on
 * a host worker thread: they are memory copies of up to tens of MB (planes of
 * a cube) that would otherwise sit between waiting for one slot and issuing
 * the next upload, on the pipeline's critical path.  A band is handed to the
 * worker only once its last reader's upload has finished, and the pass ends
 * by draining the worker, so the next pass reads only finished values.
 *
 * Device buffers: with k slots (pieces in flight) the executor keeps k + s
 * buffers of one time layer (s spares: 2 with several slots in 1D and 2D,
 * and in 3D for a plan that carries a layer back, else 1; see the planner's
 * build()) and lends each task two of them: it uploads into the buffer
 * that held the result of the slot's previous task (downloaded by then, on
 * the same slot) and computes with the oldest spare,
 * the buffer that held the next-to-last layer of the task s back.  A task
 * holds two buffers only while it computes: with three slots the pieces are
 * 1/4 or 1/5 of the budget instead of 1/6 for three pairs.  A spare passes
 * from one slot to another, so a task's first write to it waits for that
 * earlier task's compute (the backend's mark / after_mark); with two spares
 * that is the task before the previous one, and consecutive tasks' kernels
 * can overlap on the device.
 *
 * Several fields (the scheme's table, schemes/scheme.h): a "buffer" above
 * is a bundle holding one time layer of every ping-pong field; fields with
 * one buffer (inputs, state updated in place) live in a bundle per slot
 * that stays with the slot (its uploads, kernels and downloads run in its
 * order).  Every state field is uploaded, computed and downloaded as the
 * one field of the heat scheme is (bands included); an input field is
 * uploaded over the nodes the first sub-step updates and never downloaded.
 *
 * A layer back (plan->previous: Chebyshev's sweeps read u two sweeps back
 * where they write): the host keeps that layer of each ping-pong field
 * beside the caller's (exec_t.prev).  A task uploads it over the same nodes
 * as the newest into the buffer its first sub-step writes, once the spare
 * is free, and downloads the last two layers over its result (the newest
 * from buf[cur], the one before from buf[cur ^ 1], the input of its last
 * sub-step), bands of both held back alike.  The older layer sits in the
 * buffer handed on as the spare, so the mark that hands it on follows those
 * downloads, and no band goes straight into the grid.  The stencil's reach
 * is unchanged (the older layer is read only at the updated node), so
 * pieces, halos and layers are those of one layer.
 *
 * Stopping tests (Poisson): a pass that ends at a check, or the run's last,
 * reduces the change of its last sub-step over each task's result
 * (reduce_change), the partial results are combined in task order, and the
 * run stops at the first check below the tolerance. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/error.h"
#include "core/field.h"
#include "exec/exec.h"
#include "exec/exec_internal.h"
#include "exec/part_io.h"
#include "problem/field_init.h"
#include "plan/plan.h"

/* pyr_exec_fields_range's carry (exec.h). */
struct pyr_exec_carry {
    const pyr_scheme_t *scheme; /* NULL before the first range */
    pyr_problem_t problem;      /* the run's (every range's plan has it) */
    int64_t next;               /* the step the fields hold: the next range's first; -1 after a range failed */
    pyr_field_t *made[PYR_MAX_FIELDS]; /* the fields the library made (auxiliaries, inputs) */
    void *prev[PYR_MAX_FIELDS];        /* the layer before the fields' (plan->previous), host copies */
    pyr_scheme_points_t pts;           /* the scheme's point terms, open when points_open */
    int points_open;
};

static int is_state(const exec_t *e, int f)
{
    return e->role[f] == PYR_FIELD_PINGPONG || e->role[f] == PYR_FIELD_INPLACE || e->role[f] == PYR_FIELD_AUX;
}

/* The host array a band of field f goes to: the field's grid, or its older layer. */
static pyr_host_region_t *band_host(exec_t *e, int f, int older) { return older ? &e->prev[f] : &e->grid[f]; }

static void lock(exec_t *e)
{
    if (e->fl.running) pthread_mutex_lock(&e->fl.mu);
}

static void unlock(exec_t *e)
{
    if (e->fl.running) pthread_mutex_unlock(&e->fl.mu);
}

/* Bytes of buffers of size class c: (4 + c % 4) * 2^(c / 4 + 10), from 4 KiB. */
static size_t class_bytes(int c) { return (size_t)(4 + c % 4) << (c / 4 + 10); }

static int class_of(size_t bytes)
{
    int c = 0;
    while (c < STAGING_CLASSES - 1 && class_bytes(c) < bytes) c++;
    return c;
}

/* Buffer i back on its class's free list (the caller holds the lock). */
static void pool_release(exec_t *e, int i)
{
    staging_t *s = &e->pool[i];
    s->next = e->free_head[s->cls];
    e->free_head[s->cls] = i;
}

static pyr_status_t pool_acquire(exec_t *e, size_t bytes, int *index)
{
    const int c = class_of(bytes);
    const size_t cap = class_bytes(c);
    if (cap < bytes) return pyr_fail(PYR_ERR_NOMEM, "a band of %.3g GiB is larger than staging supports", (double)bytes / 1073741824.0);
    lock(e);
    int i = e->free_head[c];
    if (i >= 0) {
        e->free_head[c] = e->pool[i].next;
        *index = i;
        unlock(e);
        return PYR_OK;
    }
    unlock(e);
    /* a new arena of this class (allocated outside the lock: pinning takes milliseconds) */
    const size_t count = cap >= STAGING_ARENA ? 1 : STAGING_ARENA / cap;
    void *data = NULL;
    PYR_TRY(e->ops->host_alloc(e->ctx, cap * count, &data));
    lock(e);
    if (e->npool + (int)count > e->cap_pool) {
        int want = e->cap_pool ? 2 * e->cap_pool : 256;
        while (want < e->npool + (int)count) want *= 2;
        staging_t *grown = realloc(e->pool, (size_t)want * sizeof *grown);
        if (!grown) {
            unlock(e);
            e->ops->host_free(e->ctx, data);
            return pyr_fail(PYR_ERR_NOMEM, "out of host memory for band buffers");
        }
        e->pool = grown;
        e->cap_pool = want;
    }
    for (size_t k = 0; k < count; k++) {
        staging_t *s = &e->pool[e->npool + (int)k];
        s->data = (char *)data + k * cap;
        s->cls = c;
        s->owner = k == 0;
        s->next = -1;
        if (k > 0) pool_release(e, e->npool + (int)k);
    }
    *index = e->npool;
    e->npool += (int)count;
    unlock(e);
    return PYR_OK;
}

void pyr_host_copy_box(pyr_host_region_t *dst, const pyr_host_region_t *src, const pyr_box_t *box, size_t elem)
{
    int64_t w = pyr_box_extent(box, 0);
    int64_t dnx = pyr_box_extent(&dst->box, 0), dny = pyr_box_extent(&dst->box, 1);
    int64_t snx = pyr_box_extent(&src->box, 0), sny = pyr_box_extent(&src->box, 1);
    /* Bands can be tens of MB (planes of a 3D slab): copy with all cores, as
     * this sits between issuing one task and the next. */
#pragma omp parallel for collapse(2) schedule(static) if (pyr_box_volume(box) * (int64_t)elem > (1 << 20))
    for (int64_t z = box->lo[2]; z < box->hi[2]; z++)
        for (int64_t y = box->lo[1]; y < box->hi[1]; y++) {
            int64_t di = ((z - dst->box.lo[2]) * dny + (y - dst->box.lo[1])) * dnx + (box->lo[0] - dst->box.lo[0]);
            int64_t si = ((z - src->box.lo[2]) * sny + (y - src->box.lo[1])) * snx + (box->lo[0] - src->box.lo[0]);
            memcpy((char *)dst->data + di * (int64_t)elem, (const char *)src->data + si * (int64_t)elem, (size_t)w * elem);
        }
}

static void *flusher_main(void *arg)
{
    exec_t *e = arg;
    flusher_t *f = &e->fl;
    pthread_mutex_lock(&f->mu);
    for (;;) {
        while (!f->stop && f->nqueue == 0) pthread_cond_wait(&f->work, &f->mu);
        if (f->nqueue == 0) break; /* stop, and nothing left */
        pending_band_t b = f->queue[--f->nqueue];
        pyr_host_region_t src = {e->pool[b.buffer].data, b.box};
        f->busy = 1;
        pthread_mutex_unlock(&f->mu);
        pyr_host_copy_box(band_host(e, b.field, b.older), &src, &b.box, e->elem);
        pthread_mutex_lock(&f->mu);
        pool_release(e, b.buffer);
        f->busy = 0;
        if (f->nqueue == 0) pthread_cond_broadcast(&f->idle);
    }
    pthread_mutex_unlock(&f->mu);
    return NULL;
}

static pyr_status_t flusher_start(exec_t *e)
{
    flusher_t *f = &e->fl;
    if (pthread_mutex_init(&f->mu, NULL)) return pyr_fail(PYR_ERR_NOMEM, "cannot create a mutex for the band writer");
    if (pthread_cond_init(&f->work, NULL) || pthread_cond_init(&f->idle, NULL)) {
        pthread_mutex_destroy(&f->mu);
        return pyr_fail(PYR_ERR_NOMEM, "cannot create a condition variable for the band writer");
    }
    if (pthread_create(&f->thread, NULL, flusher_main, e)) {
        pthread_cond_destroy(&f->work);
        pthread_cond_destroy(&f->idle);
        pthread_mutex_destroy(&f->mu);
        return pyr_fail(PYR_ERR_NOMEM, "cannot start the band writer thread");
    }
    f->running = 1;
    return PYR_OK;
}

/* Wait until every band handed to the worker is in the grid. */
static void flusher_drain(exec_t *e)
{
    flusher_t *f = &e->fl;
    if (!f->running) return;
    pthread_mutex_lock(&f->mu);
    while (f->nqueue > 0 || f->busy) pthread_cond_wait(&f->idle, &f->mu);
    pthread_mutex_unlock(&f->mu);
}

static void flusher_stop(exec_t *e)
{
    flusher_t *f = &e->fl;
    if (!f->running) return;
    pthread_mutex_lock(&f->mu);
    f->stop = 1;
    pthread_cond_signal(&f->work);
    pthread_mutex_unlock(&f->mu);
    pthread_join(f->thread, NULL);
    pthread_cond_destroy(&f->work);
    pthread_cond_destroy(&f->idle);
    pthread_mutex_destroy(&f->mu);
    free(f->queue);
    f->running = 0;
}

/* Write held-back bands whose last reader is done (all of them when `all`):
 * now, or by handing them to the worker. */
static pyr_status_t flush_bands(exec_t *e, int64_t done_through, int all)
{
    int k = 0;
    flusher_t *f = &e->fl;
    lock(e);
    int handed = 0;
    for (int i = 0; i < e->npending; i++) {
        pending_band_t *b = &e->pending[i];
        if (!(all || b->last_reader <= done_through)) {
            e->pending[k++] = *b;
        } else if (f->running) {
            if (f->nqueue == f->cap_queue) {
                int cap = f->cap_queue ? 2 * f->cap_queue : 64;
                pending_band_t *grown = realloc(f->queue, (size_t)cap * sizeof *grown);
                if (!grown) {
                    unlock(e);
                    return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
                }
                f->queue = grown;
                f->cap_queue = cap;
            }
            f->queue[f->nqueue++] = *b;
            handed = 1;
        } else {
            pyr_host_region_t src = {e->pool[b->buffer].data, b->box};
            pyr_host_copy_box(band_host(e, b->field, b->older), &src, &b->box, e->elem);
            pool_release(e, b->buffer);
        }
    }
    e->npending = k;
    if (handed) pthread_cond_signal(&f->work);
    unlock(e);
    return PYR_OK;
}

static pyr_status_t push_pending(exec_t *e, pending_band_t b)
{
    if (e->npending == e->cap_pending) {
        int cap = e->cap_pending ? 2 * e->cap_pending : 64;
        pending_band_t *grown = realloc(e->pending, (size_t)cap * sizeof *grown);
        if (!grown) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
        e->pending = grown;
        e->cap_pending = cap;
    }
    e->pending[e->npending++] = b;
    return PYR_OK;
}

/* Every buffer of a state field must hold the boundary nodes (those no
 * sub-step updates) inside the piece's region: faces of unsplit axes come
 * from the resident face pieces, boundary planes of split axes were
 * uploaded into buffer 0 and are mirrored into buffer 1 of the ping-pong
 * fields. */
pyr_status_t pyr_exec_prepare_boundary(exec_t *e, int slot, const pyr_piece_t *piece)
{
    pyr_copy_op_t c[PYR_COPY_MANY_MAX];
    const int n = pyr_exec_face_copies(e, piece, 3, c, 0, PYR_COPY_MANY_MAX);
    if (n < 0) return pyr_fail(PYR_ERR_INTERNAL, "executor: more than %d boundary faces", PYR_COPY_MANY_MAX);
    for (int f = 0; f < e->nf; f++)
        if (is_state(e, f)) PYR_TRY(pyr_exec_copies(e, slot, f, c, n));
    return pyr_exec_prepare_fixed(e, slot, piece);
}

int pyr_exec_face_copies(const exec_t *e, const pyr_piece_t *piece, int layers, pyr_copy_op_t *c, int n, int max)
{
    for (int k = 0; k < e->nfaces; k++) {
        pyr_box_t b = pyr_box_intersect(&piece->box, &e->faces[k].box);
        if (pyr_box_empty(&b)) continue;
        if (n >= max) return -1;
        c[n++] = (pyr_copy_op_t){.dst = piece, .dst_layers = layers, .src = &e->faces[k], .src_layer = 0, .box = b};
    }
    return n;
}

/* Without copy_many, one by one from the last: a batch's order is not part of
 * its meaning, and running it reversed where the backend has no copy_many
 * (the CPU) has every CPU test check that no batch depends on it. */
pyr_status_t pyr_exec_copies(exec_t *e, int slot, int f, const pyr_copy_op_t *c, int n)
{
    if (n > 1 && e->ops->copy_many) return e->ops->copy_many(e->ctx, slot, f, c, n);
    for (int i = n - 1; i >= 0; i--) PYR_TRY(e->ops->copy(e->ctx, slot, c[i].dst, f, c[i].dst_layers, c[i].src, c[i].src_layer, &c[i].box));
    return PYR_OK;
}

pyr_status_t pyr_exec_prepare_fixed(exec_t *e, int slot, const pyr_piece_t *piece)
{
    const pyr_plan_t *plan = e->plan;
    for (int a = 0; a < plan->problem.dims; a++) {
        if (!plan->split[a]) continue;
        int64_t n = plan->problem.n[a];
        for (int side = 0; side < 2; side++) {
            const int64_t thick = plan->fixed[a][side];
            if (thick <= 0) continue;
            pyr_box_t b = piece->box;
            b.lo[a] = side ? n - thick : 0;
            b.hi[a] = side ? n : thick;
            b = pyr_box_intersect(&b, &piece->box);
            if (pyr_box_empty(&b)) continue;
            for (int f = 0; f < e->nf; f++)
                if (e->role[f] == PYR_FIELD_PINGPONG) PYR_TRY(e->ops->copy(e->ctx, slot, piece, f, 2, piece, 0, &b));
        }
    }
    return PYR_OK;
}

void pyr_exec_lend(exec_t *e, pyr_piece_t *piece, void *l0, void *l1, void *fixed)
{
    piece->nfields = e->nf;
    for (int f = 0; f < e->nf; f++) {
        piece->buf[f][0] = piece->buf[f][1] = NULL;
        if (e->role[f] == PYR_FIELD_PINGPONG) {
            piece->buf[f][0] = (char *)l0 + e->pp_off[f];
            piece->buf[f][1] = (char *)l1 + e->pp_off[f];
        } else if (e->role[f] >= 0) {
            piece->buf[f][0] = (char *)fixed + e->fixed_off[f];
        }
    }
}

/* Upload what a task (or the resident piece) needs: every state field over
 * `state`, every input over `input`, each only over its support; but the
 * fields in `zero`, known to hold zeros. */
static pyr_status_t upload_fields_but(exec_t *e, int slot, const pyr_piece_t *piece, const pyr_box_t *state, const pyr_box_t *input,
                                      unsigned zero)
{
    for (int f = 0; f < e->nf; f++) {
        if (e->role[f] < 0 || ((zero >> f) & 1)) continue;
        pyr_box_t parts[2];
        const int np = pyr_plan_field_boxes(e->plan, f, is_state(e, f) ? state : input, parts);
        for (int k = 0; k < np; k++) {
            PYR_TRY(e->ops->upload(e->ctx, slot, piece, f, &e->grid[f], &parts[k]));
            e->count.uploaded += (uint64_t)pyr_box_volume(&parts[k]);
        }
    }
    return PYR_OK;
}

static pyr_status_t upload_fields(exec_t *e, int slot, const pyr_piece_t *piece, const pyr_box_t *state, const pyr_box_t *input)
{
    return upload_fields_but(e, slot, piece, state, input, 0);
}

/* Field f of the resident piece made from its recipe over `box` on the device (the runtime's fill):
 * nothing crosses from the host but a tabled kind's factors for the box's axes. */
static pyr_status_t fill_on_device(exec_t *e, const pyr_piece_t *piece, int f, const pyr_recipe_t *recipe, const pyr_box_t *box)
{
    if (pyr_box_empty(box)) return PYR_OK;
    double *tab[3];
    int64_t n[3];
    for (int a = 0; a < 3; a++) n[a] = pyr_box_extent(box, a);
    PYR_TRY(pyr_recipe_tables(recipe, box->lo, n, tab));
    const pyr_status_t st = e->ops->fill(e->ctx, 0, piece, f, recipe, (const double *const *)tab, box);
    for (int a = 0; a < 3; a++) free(tab[a]);
    return st;
}

/* The older layer of the fields that keep one (exec_t.prev) over `box`,
 * into the buffer the piece's first sub-step writes (buf[f][cur ^ 1]): the
 * layer before the one upload_fields brought, which that sub-step reads
 * where it writes. */
static pyr_status_t upload_previous(exec_t *e, int slot, const pyr_piece_t *piece, const pyr_box_t *box)
{
    pyr_piece_t other = *piece;
    for (int f = 0; f < e->nf; f++) other.buf[f][0] = piece->buf[f][1] ? piece->buf[f][piece->cur ^ 1] : piece->buf[f][0];
    for (int f = 0; f < e->nf; f++) {
        if (!e->prev[f].data) continue;
        pyr_box_t parts[2];
        const int np = pyr_plan_field_boxes(e->plan, f, box, parts);
        for (int k = 0; k < np; k++) {
            PYR_TRY(e->ops->upload(e->ctx, slot, &other, f, &e->prev[f], &parts[k]));
            e->count.uploaded += (uint64_t)pyr_box_volume(&parts[k]);
        }
    }
    return PYR_OK;
}

/* The piece as seen with its older layer current: its download moves the
 * layer before the newest (the input of the last sub-step computed). */
static pyr_piece_t older_view(const pyr_piece_t *piece)
{
    pyr_piece_t v = *piece;
    v.cur = piece->cur ^ 1;
    return v;
}

/* Download the older layer of the fields that keep one over `box` into it. */
static pyr_status_t download_previous(exec_t *e, int slot, const pyr_piece_t *piece, const pyr_box_t *box)
{
    if (pyr_box_empty(box)) return PYR_OK;
    const pyr_piece_t older = older_view(piece);
    for (int f = 0; f < e->nf; f++) {
        if (!e->prev[f].data) continue;
        pyr_box_t parts[2];
        const int np = pyr_plan_field_boxes(e->plan, f, box, parts);
        for (int k = 0; k < np; k++) {
            PYR_TRY(e->ops->download(e->ctx, slot, &older, f, &e->prev[f], &parts[k]));
            e->count.downloaded += (uint64_t)pyr_box_volume(&parts[k]);
        }
    }
    return PYR_OK;
}

/* Download the state fields' newest values over `box` (each over its
 * support) into their grids. */
static pyr_status_t download_fields(exec_t *e, int slot, const pyr_piece_t *piece, const pyr_box_t *box)
{
    if (pyr_box_empty(box)) return PYR_OK;
    for (int f = 0; f < e->nf; f++) {
        if (!is_state(e, f)) continue;
        pyr_box_t parts[2];
        const int np = pyr_plan_field_boxes(e->plan, f, box, parts);
        for (int k = 0; k < np; k++) {
            PYR_TRY(e->ops->download(e->ctx, slot, piece, f, &e->grid[f], &parts[k]));
            e->count.downloaded += (uint64_t)pyr_box_volume(&parts[k]);
        }
    }
    return PYR_OK;
}

/* The kernel on the first n layer boxes; the piece's ping-pong fields then
 * hold their newest values in buffer (cur + n) % 2.  A kernel keeps only the
 * last sub-step's values in memory (fused launches hold the others in
 * registers), so where the change of the last sub-step is measured
 * (`measured`) that sub-step is a call of its own: the buffers then hold
 * its input and its output. */
static pyr_status_t compute(exec_t *e, int slot, pyr_piece_t *piece, int n, int measured, int64_t step, int nprobes, double *probes_out)
{
    const pyr_grid_dims_t grid = {{e->plan->problem.n[0], e->plan->problem.n[1], e->plan->problem.n[2]}};
    const int first = measured && n > 1 ? n - 1 : n;
    pyr_kernel_call_t call = {.piece = piece,
                              .coef = &e->plan->coef,
                              .boxes = e->layer_boxes,
                              .nboxes = first,
                              .variant = &e->plan->variant,
                              .step = step,
                              .grid = &grid,
                              .nsources = e->nsrc,
                              .sources = e->src,
                              .amplitudes = e->amp,
                              .nprobes = nprobes,
                              .probes = e->task_probes,
                              .probes_out = probes_out,
                              .terms = e->series ? e->pts.terms : NULL,
                              .series = e->series,
                              .nseries = e->pts.nseries,
                              .sources_id = e->src_id};
    PYR_TRY(e->plan->kernel->run(e->ctx, slot, &call));
    piece->cur = (piece->cur + first) & 1;
    if (first == n) return PYR_OK;
    pyr_kernel_call_t last = {.piece = piece, .coef = &e->plan->coef, .boxes = e->layer_boxes + first, .nboxes = n - first, .variant = &e->plan->variant,
                              .step = step + first, .grid = &grid};
    PYR_TRY(e->plan->kernel->run(e->ctx, slot, &last));
    piece->cur = (piece->cur + n - first) & 1;
    return PYR_OK;
}

/* The probes a task records: those in its result (each node is in exactly
 * one task's result), into e->task_probes; their indices into idx. */
static int task_probe_list(exec_t *e, const pyr_box_t *result, int *idx)
{
    int k = 0;
    for (int i = 0; i < e->nprobes; i++) {
        const int64_t *nd = e->probes[i].node;
        if (nd[0] >= result->lo[0] && nd[0] < result->hi[0] && nd[1] >= result->lo[1] && nd[1] < result->hi[1] && nd[2] >= result->lo[2] &&
            nd[2] < result->hi[2]) {
            e->task_probes[k] = e->probes[i];
            idx[k++] = i;
        }
    }
    return k;
}

/* A slot's probe values (valid after its wait) into the pass's table. */
static void collect_probes(exec_t *e, int slot, int64_t h)
{
    const int k = e->slot_probe_n[slot];
    for (int64_t s = 0; s < h; s++)
        for (int j = 0; j < k; j++) e->probe_pass[s * e->nprobes + e->slot_probe_idx[slot][j]] = e->slot_probe_out[slot][s * k + j];
    e->slot_probe_n[slot] = 0;
}

/* This pass's source amplitudes, from the scheme's amplitudes hook. */
static pyr_status_t pass_amplitudes(exec_t *e, int64_t step, int64_t h)
{
    if (!e->nsrc) return PYR_OK;
    return e->plan->scheme->amplitudes(&e->plan->problem, &e->pts, step, h, e->amp);
}

/* This pass's probe values to the scheme's record hook (only those on nodes
 * this run owns hold values), the caller's probe hook the first nshown. */
static pyr_status_t pass_probes(exec_t *e, const pyr_hooks_t *hooks, int64_t step, int64_t h)
{
    if (!e->nprobes) return PYR_OK;
    const pyr_scheme_t *scheme = e->plan->scheme;
    if (scheme->record)
        PYR_TRY(scheme->record(&e->plan->problem, &e->pts, step, h, e->probe_pass, e->probe_owned, step + h >= e->plan->problem.steps));
    const int shown = e->pts.nshown;
    if (!hooks || !hooks->probe || shown == 0) return PYR_OK;
    if (shown == e->nprobes) return hooks->probe(hooks->user, step, h, e->probe_pass, shown);
    for (int64_t s = 0; s < h; s++) memcpy(e->probe_shown + s * shown, e->probe_pass + s * e->nprobes, (size_t)shown * sizeof(double));
    return hooks->probe(hooks->user, step, h, e->probe_shown, shown);
}

/* The first ping-pong field: the one the stopping test measures. */
static int measured_field(const exec_t *e)
{
    for (int f = 0; f < e->nf; f++)
        if (e->role[f] == PYR_FIELD_PINGPONG) return f;
    return -1;
}

static pyr_status_t set_piece(exec_t *e, pyr_piece_t *piece, const pyr_box_t *box)
{
    piece->box = *box;
    piece->pitch = e->plan->layout.pitch;
    piece->cur = 0;
    int64_t need = (pyr_box_extent(box, 0) <= piece->pitch) ? 1 : 0;
    uint64_t bytes = (uint64_t)piece->pitch * (uint64_t)pyr_box_extent(box, 1) * (uint64_t)pyr_box_extent(box, 2) * e->elem;
    if (!need || bytes > e->plan->layout.layer_bytes)
        return pyr_fail(PYR_ERR_INTERNAL, "piece of %lld x %lld x %lld nodes exceeds its buffer", (long long)pyr_box_extent(box, 0),
                        (long long)pyr_box_extent(box, 1), (long long)pyr_box_extent(box, 2));
    return PYR_OK;
}

/* The bundle size of the ping-pong fields and of the one-buffer fields. */
static uint64_t bundle_bytes(const exec_t *e, int pingpong)
{
    uint64_t n = 0;
    for (int f = 0; f < e->nf; f++)
        if (e->role[f] >= 0 && (e->role[f] == PYR_FIELD_PINGPONG) == pingpong) n++;
    return n * e->plan->layout.layer_bytes;
}

/* The change over `box`, or over the part of it a part of a larger grid
 * owns (part_io.h: its halo ring is not its to measure); 0 when it owns
 * none of it. */
static pyr_status_t reduce_over(exec_t *e, int slot, const pyr_piece_t *piece, int f, const pyr_box_t *box, double *out)
{
    pyr_box_t b = *box;
    if (e->plan->exchange) b = pyr_box_intersect(&b, &e->plan->exchange->reduce_box);
    if (pyr_box_empty(&b)) {
        *out = 0;
        return PYR_OK;
    }
    return e->ops->reduce_change(e->ctx, slot, piece, f, &b, out);
}

static pyr_status_t run_pass(exec_t *e, int64_t step, int64_t h, int reduce)
{
    pyr_plan_t *plan = e->plan;
    int64_t ntasks = pyr_plan_tasks(plan);
    int slots = plan->slots;
    const int64_t layers = pyr_plan_layers(plan, h);
    const int mf = measured_field(e);
    /* both layers of a field read a layer back: the older goes down from the buffer the next task
     * computes in (the spare handed on), so the hand-over waits for its downloads too */
    const int carry = plan->previous;
    /* bands of the previous task that go straight into the grid after this task's upload */
    pyr_box_t direct[3];
    int ndirect = 0;
    for (int64_t t = 0; t < ntasks; t++) {
        int slot = (int)(t % slots);
        if (t >= slots) {
            PYR_TRY(e->ops->wait(e->ctx, slot));
            if (e->nprobes) collect_probes(e, slot, h);
            PYR_TRY(flush_bands(e, t - slots, 0));
        }
        pyr_task_t task;
        pyr_plan_task(plan, t, h, &task);
        pyr_piece_t *piece = &e->pieces[slot];
        PYR_TRY(set_piece(e, piece, &task.src));
        void *bundle[2] = {e->slot_next[slot], e->spare[0]};
        pyr_exec_lend(e, piece, bundle[0], bundle[1], e->fixed[slot]);
        /* Uploads finish in task order: a task's result reaches the grid
         * (after its own upload, on its slot) only once every earlier task
         * has read the old values there; the copy engine moves them one
         * after another anyway. */
        const int prev = (int)((t + slots - 1) % slots);
        if (t > 0 && slots > 1 && e->ops->after_mark) PYR_TRY(e->ops->after_mark(e->ctx, slot, prev, PYR_MARK_UPLOAD));
        PYR_TRY(upload_fields(e, slot, piece, &task.upload, &task.input));
        if (slots > 1 && e->ops->mark) PYR_TRY(e->ops->mark(e->ctx, slot, PYR_MARK_UPLOAD));
        if (ndirect > 0) {
            /* task t - 1's bands: this upload has read their old values */
            PYR_TRY(e->ops->after_mark(e->ctx, prev, slot, PYR_MARK_UPLOAD));
            for (int b = 0; b < ndirect; b++) PYR_TRY(download_fields(e, prev, &e->pieces[prev], &direct[b]));
            ndirect = 0;
        }
        /* the spare was task t - spares' (another slot's, as a rule) until its compute ended */
        if (t >= plan->spares && slots > 1 && e->ops->after_mark)
            PYR_TRY(e->ops->after_mark(e->ctx, slot, (int)((t - plan->spares) % slots), PYR_MARK_COMPUTE));
        if (carry) PYR_TRY(upload_previous(e, slot, piece, &task.upload));
        PYR_TRY(pyr_exec_prepare_boundary(e, slot, piece));
        for (int64_t l = 1; l <= layers; l++) {
            e->layer_boxes[l - 1] = pyr_plan_layer_box(plan, &task, h, l);
            e->count.computed += (uint64_t)pyr_box_volume(&e->layer_boxes[l - 1]);
        }
        const int np = e->nprobes ? task_probe_list(e, &task.result, e->slot_probe_idx[slot]) : 0;
        if (e->nprobes) e->slot_probe_n[slot] = np;
        PYR_TRY(compute(e, slot, piece, (int)layers, reduce, step, np, np ? e->slot_probe_out[slot] : NULL));
        /* the change reads the spare too: before the mark that hands the spare on */
        if (reduce) PYR_TRY(reduce_over(e, slot, piece, mf, &task.result, &e->partial[t]));
        if (!carry && slots > 1 && e->ops->mark) PYR_TRY(e->ops->mark(e->ctx, slot, PYR_MARK_COMPUTE));
        e->slot_next[slot] = bundle[piece->cur];
        if (plan->spares == 2) e->spare[0] = e->spare[1];
        e->spare[plan->spares - 1] = bundle[piece->cur ^ 1];

        pyr_box_t main_box, bands[3];
        int64_t last[3];
        int nb = pyr_plan_bands(plan, &task, h, &main_box, bands, last);
        PYR_TRY(download_fields(e, slot, piece, &main_box));
        if (carry) PYR_TRY(download_previous(e, slot, piece, &main_box));
        const pyr_piece_t older = older_view(piece);
        for (int b = 0; b < nb; b++) {
            if (pyr_plan_band_direct(plan, &task, &bands[b], t, last[b])) {
                direct[ndirect++] = bands[b];
                continue;
            }
            for (int f = 0; f < e->nf; f++) {
                if (!is_state(e, f)) continue;
                pyr_box_t parts[2];
                const int nparts = pyr_plan_field_boxes(e->plan, f, &bands[b], parts);
                for (int o = 0; o < (e->prev[f].data ? 2 : 1); o++)
                    for (int k = 0; k < nparts; k++) {
                        int buf = -1;
                        PYR_TRY(pool_acquire(e, (size_t)pyr_box_volume(&parts[k]) * e->elem, &buf));
                        pyr_host_region_t dst = {e->pool[buf].data, parts[k]};
                        PYR_TRY(e->ops->download(e->ctx, slot, o ? &older : piece, f, &dst, &parts[k]));
                        e->count.downloaded += (uint64_t)pyr_box_volume(&parts[k]);
                        pending_band_t pb = {buf, f, o, parts[k], last[b]};
                        PYR_TRY(push_pending(e, pb));
                    }
            }
        }
        if (carry && slots > 1 && e->ops->mark) PYR_TRY(e->ops->mark(e->ctx, slot, PYR_MARK_COMPUTE));
    }
    if (ndirect > 0) return pyr_fail(PYR_ERR_INTERNAL, "executor: the last task of a pass left %d bands for a next task", ndirect);
    for (int s = 0; s < slots; s++) {
        PYR_TRY(e->ops->wait(e->ctx, s));
        if (e->nprobes) collect_probes(e, s, h);
    }
    PYR_TRY(flush_bands(e, 0, 1));
    flusher_drain(e);
    return PYR_OK;
}

static pyr_status_t upload_faces(exec_t *e)
{
    pyr_plan_t *plan = e->plan;
    const pyr_problem_t *p = &plan->problem;
    for (int a = 0; a < p->dims; a++) {
        if (plan->split[a]) continue;
        for (int side = 0; side < 2; side++) {
            const int64_t thick = plan->fixed[a][side];
            if (thick <= 0) continue;
            pyr_piece_t *face = &e->faces[e->nfaces];
            memset(face, 0, sizeof *face);
            pyr_box_t box = pyr_plan_grid(plan);
            box.lo[a] = side ? p->n[a] - thick : 0;
            box.hi[a] = side ? p->n[a] : thick;
            int64_t ext[3] = {pyr_box_extent(&box, 0), pyr_box_extent(&box, 1), pyr_box_extent(&box, 2)};
            pyr_piece_layout_t L = pyr_face_layout(ext, e->elem);
            face->box = box;
            face->pitch = L.pitch;
            face->nfields = e->nf;
            e->nfaces++;
            for (int f = 0; f < e->nf; f++) {
                if (!is_state(e, f)) continue;
                PYR_TRY(e->ops->dev_alloc(e->ctx, L.layer_bytes, &face->buf[f][0]));
                PYR_TRY(e->ops->upload(e->ctx, 0, face, f, &e->grid[f], &box));
                e->count.uploaded += (uint64_t)pyr_box_volume(&box);
            }
        }
    }
    return PYR_OK;
}

static void exec_release(exec_t *e)
{
    flusher_stop(e); /* finishes what it was given: nothing uses the pool after this */
    pyr_exec_skewed_release(e);
    if (e->buffers)
        for (int b = 0; b < e->plan->slots + e->plan->spares; b++)
            if (e->buffers[b]) e->ops->dev_free(e->ctx, e->buffers[b]);
    if (e->fixed)
        for (int b = 0; b < e->plan->slots; b++)
            if (e->fixed[b]) e->ops->dev_free(e->ctx, e->fixed[b]);
    free(e->buffers);
    free(e->fixed);
    free(e->slot_next);
    free(e->pieces);
    for (int k = 0; k < e->nfaces; k++)
        for (int f = 0; f < e->nf; f++)
            if (e->faces[k].buf[f][0]) e->ops->dev_free(e->ctx, e->faces[k].buf[f][0]);
    for (int i = 0; i < e->npool; i++)
        if (e->pool[i].owner) e->ops->host_free(e->ctx, e->pool[i].data);
    free(e->pool);
    free(e->pending);
    free(e->layer_boxes);
    free(e->partial);
    if (e->slot_probe_out)
        for (int b = 0; b < e->plan->slots; b++)
            if (e->slot_probe_out[b]) e->ops->host_free(e->ctx, e->slot_probe_out[b]);
    if (e->slot_probe_idx)
        for (int b = 0; b < e->plan->slots; b++) free(e->slot_probe_idx[b]);
    free(e->slot_probe_out);
    free(e->slot_probe_idx);
    free(e->slot_probe_n);
    free(e->src);
    free(e->probe_owned);
    free(e->probe_shown);
    if (e->points_open) e->plan->scheme->points_free(&e->pts);
    free(e->probes);
    free(e->task_probes);
    free(e->amp);
    free(e->series);
    free(e->probe_pass);
}

/* The scheme's point sources and probes, in the form the kernels' calls
 * take them, and the probes this run owns: a part of a larger grid owns its
 * own box (the exchange's reduce box), its halo is another part's; a probe
 * off the grid never lies in a task's result. */
static pyr_status_t setup_points(exec_t *e)
{
    const pyr_plan_t *plan = e->plan;
    const pyr_scheme_t *scheme = plan->scheme;
    if (!scheme->points) return PYR_OK;
    if (!scheme->amplitudes || !scheme->points_free)
        return pyr_fail(PYR_ERR_INTERNAL, "the %s scheme has a points hook without amplitudes and points_free", scheme->name);
    if (e->carry && e->carry->points_open) {
        e->pts = e->carry->pts; /* the run's, opened by its first range */
    } else {
        PYR_TRY(scheme->points(&plan->problem, &e->pts));
        if (e->carry) e->carry->pts = e->pts, e->carry->points_open = 1;
        else e->points_open = 1;
    }
    const pyr_scheme_points_t *pts = &e->pts;
    if (pts->nshown < 0 || pts->nshown > pts->nprobes)
        return pyr_fail(PYR_ERR_INTERNAL, "the %s scheme shows %d of its %d probes", scheme->name, pts->nshown, pts->nprobes);
    if ((pts->nsources || pts->nprobes) && plan->decomp == PYR_DECOMP_SKEWED && !plan->resident && plan->npp > 0)
        return pyr_fail(PYR_ERR_INTERNAL, "a skewed plan of the %s scheme: its passes take no point sources or probes", scheme->name);
    const int64_t hmax = plan->height;
    e->nsrc = pts->nsources;
    e->nprobes = pts->nprobes;
    if (e->nsrc) {
        e->src = malloc((size_t)e->nsrc * sizeof *e->src);
        e->amp = malloc((size_t)(e->nsrc * hmax) * sizeof *e->amp);
        if (!e->src || !e->amp) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the sources");
        for (int i = 0; i < e->nsrc; i++) {
            e->src[i].field = pts->sources[i].field;
            memcpy(e->src[i].node, pts->sources[i].node, sizeof e->src[i].node);
        }
        /* sources with terms: the amplitudes hook gives their series' rows, the kernels the amplitudes */
        e->pts.series = NULL;
        if (pts->terms && pts->nseries > 0) {
            e->series = malloc((size_t)pts->nseries * (size_t)hmax * sizeof *e->series);
            if (!e->series) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the sources' series");
            e->pts.series = e->series;
        }
        static atomic_uint_fast64_t ids;
        e->src_id = atomic_fetch_add(&ids, 1) + 1;
    }
    if (e->nprobes) {
        const int slots = plan->slots;
        e->probe_owned = calloc((size_t)e->nprobes, 1);
        if (pts->nshown < e->nprobes) e->probe_shown = malloc((size_t)(pts->nshown * hmax + 1) * sizeof *e->probe_shown);
        e->probes = malloc((size_t)e->nprobes * sizeof *e->probes);
        e->task_probes = malloc((size_t)e->nprobes * sizeof *e->task_probes);
        e->probe_pass = calloc((size_t)(e->nprobes * hmax), sizeof *e->probe_pass);
        e->slot_probe_out = calloc((size_t)slots, sizeof *e->slot_probe_out);
        e->slot_probe_idx = calloc((size_t)slots, sizeof *e->slot_probe_idx);
        e->slot_probe_n = calloc((size_t)slots, sizeof *e->slot_probe_n);
        if (!e->probes || !e->task_probes || !e->probe_owned || !e->probe_pass || (pts->nshown < e->nprobes && !e->probe_shown) ||
            !e->slot_probe_out || !e->slot_probe_idx || !e->slot_probe_n)
            return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the probes");
        pyr_box_t own = pyr_plan_interior(plan);
        if (plan->exchange) own = pyr_box_intersect(&own, &plan->exchange->reduce_box);
        for (int i = 0; i < e->nprobes; i++) {
            const int64_t *nd = pts->probes[i].node;
            e->probes[i].field = pts->probes[i].field;
            memcpy(e->probes[i].node, nd, sizeof e->probes[i].node);
            e->probe_owned[i] = nd[0] >= own.lo[0] && nd[0] < own.hi[0] && nd[1] >= own.lo[1] && nd[1] < own.hi[1] && nd[2] >= own.lo[2] &&
                                nd[2] < own.hi[2];
        }
        for (int b = 0; b < slots; b++) {
            e->slot_probe_idx[b] = malloc((size_t)e->nprobes * sizeof(int));
            if (!e->slot_probe_idx[b]) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the probes");
            PYR_TRY(e->ops->host_alloc(e->ctx, (size_t)(e->nprobes * hmax) * sizeof(double), (void **)&e->slot_probe_out[b]));
        }
    }
    return PYR_OK;
}

/* Max of the tasks' partial changes, in task order. */
static double combine(const exec_t *e, int64_t n)
{
    double m = 0;
    for (int64_t t = 0; t < n; t++)
        if (!(e->partial[t] <= m)) m = e->partial[t]; /* a NaN wins, as an infinity would */
    return m;
}

/* ------------------------------------------- a part of a larger grid */

/* The executor as part_io.h's hook sees it. */
struct pyr_exec_io {
    exec_t *e;
};

pyr_status_t pyr_exec_fetch(pyr_exec_io_t *io, const pyr_box_t *box)
{
    exec_t *e = io->e;
    if (!e->plan->resident || pyr_box_empty(box)) return PYR_OK; /* streamed pieces: the host fields are current */
    PYR_TRY(download_fields(e, 0, &e->pieces[0], box));
    return e->ops->wait(e->ctx, 0);
}

pyr_status_t pyr_exec_store(pyr_exec_io_t *io, const pyr_box_t *box)
{
    exec_t *e = io->e;
    if (pyr_box_empty(box)) return PYR_OK;
    if (e->plan->resident) {
        /* both time layers: the halo ring's outer nodes are never computed, and a
         * kernel reads each layer in turn */
        pyr_piece_t *piece = &e->pieces[0];
        for (int f = 0; f < e->nf; f++) {
            if (!is_state(e, f)) continue;
            PYR_TRY(e->ops->upload(e->ctx, 0, piece, f, &e->grid[f], box));
            e->count.uploaded += (uint64_t)pyr_box_volume(box);
            if (e->role[f] == PYR_FIELD_PINGPONG) PYR_TRY(e->ops->copy(e->ctx, 0, piece, f, 2, piece, 0, box));
        }
        return e->ops->wait(e->ctx, 0);
    }
    /* streamed pieces upload from the host fields; the faces of unsplit axes stay
     * resident for the run and must follow */
    for (int k = 0; k < e->nfaces; k++) {
        pyr_box_t b = pyr_box_intersect(&e->faces[k].box, box);
        if (pyr_box_empty(&b)) continue;
        for (int f = 0; f < e->nf; f++) {
            if (!is_state(e, f)) continue;
            PYR_TRY(e->ops->upload(e->ctx, 0, &e->faces[k], f, &e->grid[f], &b));
            e->count.uploaded += (uint64_t)pyr_box_volume(&b);
        }
    }
    return e->ops->wait(e->ctx, 0);
}

const pyr_piece_t *pyr_exec_resident_piece(pyr_exec_io_t *io, const pyr_device_ops_t **ops, void **ctx)
{
    exec_t *e = io->e;
    if (ops) *ops = e->ops;
    if (ctx) *ctx = e->ctx;
    return e->plan->resident ? &e->pieces[0] : NULL;
}

/* The end of a pass of a part: the hook swaps halos at multiples of H and
 * makes a measured change global; it is called at every check and at the
 * end too, so that all parts meet at the same points (multi/). */
static pyr_status_t exchange_at(exec_t *e, int64_t step, int reduced)
{
    const pyr_exchange_t *x = e->plan->exchange;
    const int64_t steps = e->plan->problem.steps;
    const int swap = x->every > 0 && step % x->every == 0 && step < steps;
    if (!swap && !reduced && step < steps) return PYR_OK;
    if (e->plan->resident) PYR_TRY(e->ops->wait(e->ctx, 0));
    pyr_exec_io_t io = {e};
    return x->at_pass_end(x->user, &io, step, swap, reduced, &e->change, step == steps);
}

/* The host waits for every slot and lane. */
static pyr_status_t wait_all(exec_t *e)
{
    for (int s = 0; s < e->plan->slots; s++) PYR_TRY(e->ops->wait(e->ctx, s));
    for (int l = 0; l < e->ops->lanes; l++) PYR_TRY(e->ops->wait(e->ctx, e->ops->slots + l));
    return PYR_OK;
}

/* Seconds of a slice of a resident pass when the caller asks about stopping
 * (pyr_cancel_fn): a stop is then seen well within a second. */
#define CANCEL_SLICE_S 0.1

/* The pass from `step` of this call's range: the plan's passes, every one
 * ending by the range's last step.  A range whose first step is a multiple
 * of every spacing the passes end at (checks, snapshots, exchanges) counts
 * its full passes from that step, as a run of its own would: those spacings
 * fall on the same steps counted from there. */
static int64_t range_pass_height(const exec_t *e, int64_t step)
{
    const pyr_plan_t *plan = e->plan;
    const int64_t every[3] = {plan->options.snapshot_every, plan->check_every, plan->exchange_every};
    int aligned = 1;
    for (int i = 0; i < 3; i++) aligned &= every[i] <= 0 || e->first % every[i] == 0;
    const int64_t h = pyr_plan_pass_height(plan, aligned ? step - e->first : step);
    return h < e->last - step ? h : e->last - step;
}

static pyr_status_t execute(exec_t *e, const pyr_hooks_t *hooks, unsigned made, const pyr_recipe_t *recipe)
{
    pyr_plan_t *plan = e->plan;
    const pyr_problem_t *p = &plan->problem;
    const pyr_scheme_t *scheme = plan->scheme;
    const double tolerance = scheme->tolerance(p);
    const int reduces = scheme->reduction == PYR_REDUCE_MAX_CHANGE && measured_field(e) >= 0 && e->ops->reduce_change;
    const uint64_t pp_bytes = bundle_bytes(e, 1), fixed_bytes = bundle_bytes(e, 0);

    e->pieces = calloc((size_t)plan->slots, sizeof *e->pieces);
    e->buffers = calloc((size_t)(plan->slots + plan->spares), sizeof *e->buffers);
    e->fixed = calloc((size_t)plan->slots, sizeof *e->fixed);
    e->slot_next = calloc((size_t)plan->slots, sizeof *e->slot_next);
    e->layer_boxes = malloc((size_t)pyr_plan_layers(plan, plan->height) * sizeof *e->layer_boxes);
    const int64_t ntasks = plan->resident ? 1 : pyr_plan_tasks(plan);
    e->partial = calloc((size_t)ntasks, sizeof *e->partial);
    if (!e->pieces || !e->buffers || !e->fixed || !e->slot_next || !e->layer_boxes || !e->partial)
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    if (pp_bytes > 0)
        for (int b = 0; b < plan->slots + plan->spares; b++) PYR_TRY(e->ops->dev_alloc(e->ctx, pp_bytes, &e->buffers[b]));
    /* skewed pieces keep their inputs in a ring the slots share (exec/skewed.c) */
    if (fixed_bytes > 0 && (plan->resident || plan->decomp != PYR_DECOMP_SKEWED))
        for (int b = 0; b < plan->slots; b++) PYR_TRY(e->ops->dev_alloc(e->ctx, fixed_bytes, &e->fixed[b]));
    for (int s = 0; s < plan->slots; s++) e->slot_next[s] = e->buffers[s];
    for (int b = 0; b < plan->spares; b++) e->spare[b] = e->buffers[plan->slots + b];
    PYR_TRY(upload_faces(e));
    PYR_TRY(setup_points(e));
    if (!plan->resident && plan->slots > 1 && plan->decomp != PYR_DECOMP_SKEWED) PYR_TRY(flusher_start(e));

    pyr_box_t interior = pyr_plan_interior(plan);
    /* what a resident piece hands back: a part of a larger grid its own box only (its halo is another
     * part's, and the host grid may be the caller's, which every part writes into) */
    pyr_box_t written = interior;
    if (plan->exchange) written = pyr_box_intersect(&interior, &plan->exchange->reduce_box);
    void *res[2] = {e->buffers[0], e->buffers[1]};
    if (plan->resident) {
        /* one piece for the whole run, in the two bundles (one slot, one spare) */
        pyr_box_t grid = pyr_plan_grid(plan);
        PYR_TRY(set_piece(e, &e->pieces[0], &grid));
        pyr_exec_lend(e, &e->pieces[0], res[0], res[1], e->fixed[0]);
        pyr_task_t whole;
        memset(&whole, 0, sizeof whole);
        whole.result = interior;
        whole.src = grid;
        pyr_box_t input = pyr_plan_layer_box(plan, &whole, 1, 1);
        PYR_TRY(upload_fields_but(e, 0, &e->pieces[0], &grid, &input, made));
        for (int f = 0; f < e->nf; f++) {
            if (e->role[f] < 0 || !((made >> f) & 1)) continue;
            pyr_box_t parts[2];
            const int np = pyr_plan_field_boxes(plan, f, is_state(e, f) ? &grid : &input, parts);
            for (int k = 0; k < np; k++) PYR_TRY(fill_on_device(e, &e->pieces[0], f, &recipe[f], &parts[k]));
        }
        PYR_TRY(pyr_exec_prepare_boundary(e, 0, &e->pieces[0]));
        /* a later range of a run: the layer before, which its first sub-step reads */
        if (e->first > 0) PYR_TRY(upload_previous(e, 0, &e->pieces[0], &grid));
    }
    const int64_t every = plan->check_every;
    /* A resident pass may be the whole run (the naive method's height): where the caller asks to be
     * asked about stopping (an interrupt), it is computed in slices of about CANCEL_SLICE_S seconds,
     * each a pass of its own for the loop below but for the progress hook.  A part of a larger grid
     * is not sliced: its passes end where the parts meet. */
    const int slicing = plan->resident && hooks && hooks->cancel && !plan->exchange;
    int64_t slice = 1;
    int64_t step = e->first;
    while (step < e->last) {
        const int64_t full = range_pass_height(e, step);
        int64_t h = slicing && slice < full ? slice : full;
        const double started = slicing ? pyr_now_s() : 0;
        const int at_check = every > 0 && (step + h) % every == 0;
        const int reduce = reduces && (at_check || step + h == p->steps);
        PYR_TRY(pass_amplitudes(e, step, h));
        if (plan->resident) {
            const int64_t layers = pyr_plan_layers(plan, h);
            pyr_task_t whole;
            memset(&whole, 0, sizeof whole);
            whole.result = interior;
            for (int64_t l = 1; l <= layers; l++) {
                e->layer_boxes[l - 1] = pyr_plan_layer_box(plan, &whole, h, l);
                e->count.computed += (uint64_t)pyr_box_volume(&e->layer_boxes[l - 1]);
            }
            const int np = e->nprobes ? task_probe_list(e, &interior, e->slot_probe_idx[0]) : 0;
            if (e->nprobes) e->slot_probe_n[0] = np;
            PYR_TRY(compute(e, 0, &e->pieces[0], (int)layers, reduce, step, np, np ? e->slot_probe_out[0] : NULL));
            if (reduce) PYR_TRY(reduce_over(e, 0, &e->pieces[0], measured_field(e), &interior, &e->partial[0]));
            if (e->nprobes) {
                PYR_TRY(e->ops->wait(e->ctx, 0));
                collect_probes(e, 0, h);
            }
        } else if (plan->decomp == PYR_DECOMP_SKEWED) {
            /* the next pass's pieces may queue behind this one's unless the host grid is read or
             * written after it: the last pass, a snapshot, a check or a part's halo swap */
            const int64_t next = step + h;
            const int drain = next >= e->last || reduce || e->nprobes || plan->exchange ||
                              (plan->options.snapshot_every > 0 && next % plan->options.snapshot_every == 0);
            PYR_TRY(pyr_exec_skewed_pass(e, step, h, drain, reduce));
        } else {
            PYR_TRY(run_pass(e, step, h, reduce));
        }
        PYR_TRY(pass_probes(e, hooks, step, h));
        step += h;
        int stop = 0;
        if (reduce) {
            if (plan->resident) PYR_TRY(e->ops->wait(e->ctx, 0));
            e->change = combine(e, ntasks);
            e->checked = 1;
        }
        /* a part of a larger grid: halos swapped, the change made global (part_io.h) */
        if (plan->exchange) PYR_TRY(exchange_at(e, step, reduce));
        if (reduce && tolerance > 0 && e->change < tolerance) e->converged = stop = 1;
        int snap = plan->options.snapshot_every > 0 && step % plan->options.snapshot_every == 0;
        const int downloaded = plan->resident && (snap || step == e->last || stop);
        if (downloaded) PYR_TRY(download_fields(e, 0, &e->pieces[0], &written));
        /* a range's carry keeps the layer before too, for the next range's plan */
        if (plan->resident && e->carry && (step == e->last || stop)) PYR_TRY(download_previous(e, 0, &e->pieces[0], &interior));
        if (plan->resident && hooks && (hooks->progress || hooks->cancel)) PYR_TRY(e->ops->wait(e->ctx, 0));
        if (slicing) {
            /* the next slice: CANCEL_SLICE_S at this one's pace, at most twice as many steps */
            const double took = pyr_now_s() - started, fit = took > 0 ? CANCEL_SLICE_S * (double)h / took : (double)p->steps;
            if (fit < (double)(2 * slice)) slice = fit > 1 ? (int64_t)fit : 1;
            else if (slice < p->steps) slice *= 2;
        }
        if (snap && hooks && (hooks->snapshot || hooks->snapshot_fields)) {
            PYR_TRY(e->ops->wait(e->ctx, 0));
            if (hooks->snapshot && e->fields[0]) PYR_TRY(hooks->snapshot(hooks->user, e->fields[0], step));
            if (hooks->snapshot_fields) {
                /* the caller's state fields (not the library's own auxiliaries or inputs) */
                pyr_field_t *given[PYR_MAX_FIELDS] = {NULL};
                for (int f = 0; f < e->nf; f++)
                    if (e->role[f] == PYR_FIELD_PINGPONG || e->role[f] == PYR_FIELD_INPLACE) given[f] = e->fields[f];
                PYR_TRY(hooks->snapshot_fields(hooks->user, given, e->nf, step));
            }
        }
        int cancelled = h == full && hooks && hooks->progress && hooks->progress(hooks->user, step, p->steps);
        if (!cancelled && !stop && step < e->last && hooks && hooks->cancel) cancelled = hooks->cancel(hooks->user, step, p->steps);
        if (cancelled) {
            /* the caller's fields hold time layer `step`, the count the message states (streamed
             * passes wrote theirs; wait_all lets the last downloads land) */
            if (plan->resident && !downloaded) PYR_TRY(download_fields(e, 0, &e->pieces[0], &written));
            PYR_TRY(wait_all(e));
            return pyr_fail(PYR_ERR_CANCELLED, "run cancelled after %lld of %lld steps", (long long)step, (long long)p->steps);
        }
        if (stop) break;
    }
    PYR_TRY(wait_all(e));
    e->steps_done = step;
    e->count.redundant = e->count.computed - pyr_plan_useful(plan, step - e->first);
    return PYR_OK;
}

static pyr_status_t check_field(const pyr_plan_t *plan, const pyr_field_t *field, const char *name)
{
    for (int a = 0; a < 3; a++)
        if (field->n[a] != plan->problem.n[a])
            return pyr_fail(PYR_ERR_ARG, "field %s of %lld x %lld x %lld nodes does not match the plan's grid of %lld x %lld x %lld", name,
                            (long long)field->n[0], (long long)field->n[1], (long long)field->n[2], (long long)plan->problem.n[0],
                            (long long)plan->problem.n[1], (long long)plan->problem.n[2]);
    if (field->precision != plan->problem.precision)
        return pyr_fail(PYR_ERR_ARG, "field %s precision %s does not match the plan's %s", name, pyr_precision_name(field->precision),
                        pyr_precision_name(plan->problem.precision));
    if (!field->data) return pyr_fail(PYR_ERR_ARG, "field %s has no data", name);
    return PYR_OK;
}


pyr_status_t pyr_exec_carry_create(pyr_exec_carry_t **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? PYR_OK : pyr_fail(PYR_ERR_NOMEM, "out of host memory");
}

void pyr_exec_carry_destroy(pyr_exec_carry_t **carry)
{
    pyr_exec_carry_t *c = carry ? *carry : NULL;
    if (!c) return;
    for (int f = 0; f < PYR_MAX_FIELDS; f++) {
        pyr_field_destroy(&c->made[f]);
        free(c->prev[f]);
    }
    if (c->points_open) c->scheme->points_free(&c->pts);
    free(c);
    *carry = NULL;
}

static pyr_status_t exec_range(pyr_plan_t *plan, pyr_field_t *const *given, const pyr_host_region_t *regions, const pyr_recipe_t *recipes,
                               int nfields, int64_t first, int64_t last, pyr_exec_carry_t *carry, const pyr_hooks_t *hooks,
                               pyr_run_info_t *run)
{
    if (run) memset(run, 0, sizeof *run);
    if (!plan || !given) return pyr_fail(PYR_ERR_ARG, "pyr_execute_fields: plan and fields are required");
    const pyr_scheme_t *scheme = plan->scheme;
    if (nfields != scheme->nfields)
        return pyr_fail(PYR_ERR_ARG, "pyr_execute_fields: the %s scheme has %d field%s, %d given", scheme->name, scheme->nfields,
                        scheme->nfields == 1 ? "" : "s", nfields);
    exec_t e;
    memset(&e, 0, sizeof e);
    for (int c = 0; c < STAGING_CLASSES; c++) e.free_head[c] = -1;
    e.first = first;
    e.last = last;
    e.carry = carry;
    e.plan = plan;
    e.ops = plan->ops;
    e.ctx = plan->ctx;
    e.elem = pyr_precision_size(plan->problem.precision);
    e.nf = scheme->nfields;
    /* fields the library makes (inputs not given; a range's, once for the run), and each field's place in its bundle */
    pyr_field_t *own[PYR_MAX_FIELDS] = {NULL}, **made = carry ? carry->made : own;
    pyr_field_t *fields[PYR_MAX_FIELDS] = {NULL};
    int region[PYR_MAX_FIELDS] = {0}; /* fields given as regions of host memory another owns (exec.h) */
    pyr_status_t st = PYR_OK;
    int64_t pp = 0, fx = 0;
    for (int f = 0; f < e.nf && st == PYR_OK; f++) {
        e.role[f] = -1;
        if (!((plan->fields >> f) & 1)) continue;
        e.role[f] = (int)scheme->field[f].role;
        if (e.role[f] == PYR_FIELD_PINGPONG) e.pp_off[f] = pp++ * (int64_t)plan->layout.layer_bytes;
        else e.fixed_off[f] = fx++ * (int64_t)plan->layout.layer_bytes;
        if (regions && regions[f].data) {
            /* only a resident part reads and writes such a region: just its own box goes back into it, and
             * nothing else (layers before, snapshots, pinning) assumes a field's array there */
            const pyr_box_t g = pyr_plan_grid(plan);
            if (!plan->exchange || !plan->resident || carry || (hooks && (hooks->snapshot || hooks->snapshot_fields)) ||
                !pyr_box_contains(&regions[f].box, &g)) {
                st = pyr_fail(PYR_ERR_INTERNAL, "field %s given as a region of another's host grid to a plan that is not a resident part "
                                                "of a larger grid inside it",
                              scheme->field[f].name);
                break;
            }
            e.grid[f] = regions[f];
            region[f] = 1;
            continue;
        }
        /* the library's own auxiliaries, except a part's: the parts exchange them (multi/) */
        fields[f] = scheme->field[f].role == PYR_FIELD_AUX && !plan->exchange ? NULL : given[f];
        if (!fields[f] && made[f]) fields[f] = made[f];
        if (!fields[f]) {
            if (scheme->field[f].role != PYR_FIELD_INPUT && scheme->field[f].role != PYR_FIELD_AUX) {
                st = pyr_fail(PYR_ERR_ARG, "pyr_execute_fields: field %s of the %s scheme is required", scheme->field[f].name, scheme->name);
                break;
            }
            /* the library's auxiliaries start at zero: pages that read so untouched (pyr_field_alloc_zero) */
            if (scheme->field[f].role == PYR_FIELD_AUX) st = pyr_field_alloc_zero(plan->problem.dims, plan->problem.n, plan->problem.precision, &made[f]);
            else st = pyr_field_create(&plan->problem, &made[f]);
            if (st == PYR_OK && scheme->field[f].role != PYR_FIELD_AUX) st = scheme->init_input(&plan->problem, f, made[f]);
            fields[f] = made[f];
        }
        if (st == PYR_OK) st = check_field(plan, fields[f], scheme->field[f].name);
        if (st == PYR_OK) {
            e.grid[f].data = fields[f]->data;
            e.grid[f].box = pyr_plan_grid(plan);
        }
    }
    /* the caller's fields in GPU memory (pyr_field_wrap_device): one resident piece on that GPU copies
     * them in and out device to device, its queue first waiting for the caller's stream */
    int on_device[PYR_MAX_FIELDS], any_device = 0;
    uintptr_t stream[PYR_MAX_FIELDS] = {0};
    for (int f = 0; f < e.nf; f++) {
        on_device[f] = fields[f] ? pyr_field_device(fields[f], &stream[f]) >= 0 : 0;
        if (!on_device[f] || st != PYR_OK) continue;
        any_device = 1;
        const int at = pyr_field_device(fields[f], NULL);
        if (!e.ops->after_stream || !plan->resident || plan->exchange || carry || at != plan->options.device)
            st = pyr_fail(PYR_ERR_UNSUPPORTED, "field %s lies in GPU %d's memory, which only an in-core plan of one device on the CUDA "
                                               "backend's GPU %d computes on (pyr_plan_takes_field says why this one does not)",
                          scheme->field[f].name, at, at);
        else if (hooks && (hooks->snapshot || hooks->snapshot_fields) && plan->options.snapshot_every > 0)
            st = pyr_fail(PYR_ERR_UNSUPPORTED, "field %s lies in GPU memory: snapshots are handed over in host memory; copy the field "
                                               "to the host (pyr_field_copy) for a run with snapshots",
                          scheme->field[f].name);
    }
    /* the caller's own inputs, over the whole grid (a part's slice cannot say); one in GPU memory is
     * checked in a host copy */
    pyr_field_t *checked[PYR_MAX_FIELDS] = {NULL};
    if (st == PYR_OK && scheme->check_inputs && !plan->exchange) {
        const pyr_field_t *caller[PYR_MAX_FIELDS] = {NULL};
        for (int f = 0; f < e.nf && st == PYR_OK; f++) {
            if (e.role[f] != PYR_FIELD_INPUT || made[f]) continue;
            caller[f] = fields[f];
            if (!on_device[f]) continue;
            st = pyr_field_alloc(fields[f]->dims, fields[f]->n, fields[f]->precision, &checked[f]);
            if (st == PYR_OK)
                st = e.ops->copy_linear(plan->options.device, checked[f]->data, fields[f]->data,
                                        (size_t)pyr_field_count(fields[f]) * e.elem, stream[f]);
            caller[f] = checked[f];
        }
        if (st == PYR_OK) st = scheme->check_inputs(&plan->problem, caller);
        for (int f = 0; f < e.nf; f++) pyr_field_destroy(&checked[f]);
    }
    e.fields = fields;
    /* Fields whose values are a recipe (zeros included: pyr_field_alloc_zero, pyr_field_alloc_recipe,
     * or a region's as its owner says): a resident piece makes them on the device instead of uploading
     * them (the mark is spent: the run writes the field).  Any other run, or one of no steps, reads or
     * hands back the host's values: made there first.  A field's node c (the plan's coordinates) is
     * node recipe.origin + c - box.lo of its host grid in the recipe's whole grid. */
    unsigned made_on_device = 0;
    pyr_recipe_t recipe[PYR_MAX_FIELDS];
    memset(recipe, 0, sizeof recipe);
    const int fills = plan->resident && first < last && e.ops->fill;
    for (int f = 0; f < e.nf && st == PYR_OK; f++) {
        if (e.role[f] < 0) continue;
        pyr_recipe_t r;
        if (region[f]) {
            if (!recipes || recipes[f].kind == PYR_RECIPE_NONE) continue;
            if (!fills || carry) {
                st = pyr_fail(PYR_ERR_INTERNAL, "field %s: a region made from a recipe for a plan that cannot make it on its device",
                              scheme->field[f].name);
                break;
            }
            r = recipes[f];
        } else if (!fields[f] || on_device[f]) {
            continue;
        } else if (fills && !carry) {
            /* (taken at once: a caller's zero field's page map is read once) */
            if (!pyr_field_take_recipe(fields[f], &r)) continue;
        } else if (!pyr_field_recipe(fields[f], &r)) {
            continue;
        } else if (!fills || r.kind != PYR_RECIPE_ZERO) {
            /* streamed, no steps, or a range's carry (which keeps the layer before as a host copy of the
             * field, plan->previous): the host's values */
            st = pyr_field_materialize(fields[f]);
            continue;
        } else if (!pyr_field_take_recipe(fields[f], &r)) {
            continue; /* written since it was looked at (a caller's zeros): uploaded as any */
        }
        for (int a = 0; a < 3; a++) r.origin[a] -= e.grid[f].box.lo[a];
        recipe[f] = r;
        made_on_device |= 1u << f;
        /* the run writes back the interior (a part: its share of it): the rest, which the host field
         * holds from the start (the boundary, a part's halo), made there (a part's region: by its owner,
         * multi/multi.c, whose grid the other parts write too) */
        if (is_state(&e, f) && r.kind != PYR_RECIPE_ZERO && !region[f]) {
            const pyr_box_t grid = pyr_plan_grid(plan);
            pyr_box_t written = pyr_plan_interior(plan);
            if (plan->exchange) written = pyr_box_intersect(&written, &plan->exchange->reduce_box);
            st = pyr_recipe_fill_outside(&r, e.elem, e.grid[f].data, &e.grid[f].box, &written, &grid);
        }
    }
    if (st != PYR_OK || first >= last) {
        for (int f = 0; f < e.nf; f++) pyr_field_destroy(&own[f]);
        if (run && st == PYR_OK) run->steps = first, run->parts = run->ranks = 1;
        return st;
    }

    size_t grid_bytes = 0;
    for (int f = 0; f < e.nf; f++)
        if (fields[f]) { grid_bytes = (size_t)pyr_field_count(fields[f]) * e.elem; break; }
    /* streamed pieces of a scheme that reads a layer back: the host keeps that layer, starting as the
     * initial field (the first sub-step does not read it: Chebyshev's first sweep is plain Jacobi);
     * a range's carry keeps it for every plan, from the run's start to its end */
    if (plan->previous && (!plan->resident || carry)) {
        for (int f = 0; f < e.nf && st == PYR_OK; f++) {
            if (e.role[f] != PYR_FIELD_PINGPONG) continue;
            e.prev[f].box = pyr_plan_grid(plan);
            if (carry && carry->prev[f]) {
                e.prev[f].data = carry->prev[f];
                continue;
            }
            void *copy = malloc(grid_bytes);
            if (!copy) {
                st = pyr_fail(PYR_ERR_NOMEM, "out of host memory for the layer before field %s's (%.3g GiB)", scheme->field[f].name,
                              (double)grid_bytes / 1073741824.0);
                break;
            }
            memcpy(copy, fields[f]->data, grid_bytes);
            e.prev[f].data = copy;
            if (carry) carry->prev[f] = copy;
        }
    }
    if (st != PYR_OK) {
        for (int f = 0; f < e.nf; f++) {
            if (!carry) free(e.prev[f].data);
            pyr_field_destroy(&own[f]);
        }
        return st;
    }
    /* The host fields: registered (pinned) as planned, or left pageable, every copy then staged
     * through the backend's pinned buffers: planned so, or registering failed (said in the run info). */
    int registered[PYR_MAX_FIELDS] = {0}, registered_prev[PYR_MAX_FIELDS] = {0};
    pyr_host_memory_t host = e.ops->host_register ? (plan->host_memory == PYR_HOST_STAGE ? PYR_HOST_STAGE : PYR_HOST_PIN) : PYR_HOST_AUTO;
    char host_note[192] = "";
    double pin_s = 0, unpin_s = 0;
    if (host == PYR_HOST_STAGE) snprintf(host_note, sizeof host_note, "%.190s", plan->host_why[0] ? plan->host_why : "staged as planned (run.host_memory)");
    if (host == PYR_HOST_PIN) {
        const double t0 = pyr_now_s();
        for (int f = 0; f < e.nf && host == PYR_HOST_PIN; f++) {
            /* the library's auxiliaries: a resident plan sets them on the device and never moves them; streamed
             * pieces move their layers every pass, and staged copies of those thin boxes would hold the issuing
             * thread until each chunk's copy is done, behind the slot's queued kernels */
            if (e.role[f] < 0 || (e.role[f] == PYR_FIELD_AUX && plan->resident) || on_device[f]) continue;
            /* another's grid, shared with other parts: its copies are staged */
            if (region[f]) {
                snprintf(host_note, sizeof host_note, "the caller's grid, read and written in place by every part: copies staged");
                continue;
            }
            if (e.ops->host_register(e.ctx, fields[f]->data, grid_bytes) == PYR_OK) {
                registered[f] = 1;
                if (!e.prev[f].data) continue;
                if (e.ops->host_register(e.ctx, e.prev[f].data, grid_bytes) == PYR_OK) {
                    registered_prev[f] = 1;
                    continue;
                }
            }
            snprintf(host_note, sizeof host_note, "registering %.1f GiB of host memory failed (%s): copies staged through pinned buffers",
                     (double)grid_bytes / 1073741824.0, pyr_last_error());
            pyr_clear_error();
            for (int g = 0; g <= f; g++) {
                if (registered[g]) e.ops->host_unregister(e.ctx, fields[g]->data), registered[g] = 0;
                if (registered_prev[g]) e.ops->host_unregister(e.ctx, e.prev[g].data), registered_prev[g] = 0;
            }
            host = PYR_HOST_STAGE;
        }
        pin_s = pyr_now_s() - t0;
        for (int f = 0; f < e.nf; f++)
            if (region[f]) host = PYR_HOST_STAGE;
    }
    if (any_device) {
        if (!host_note[0]) snprintf(host_note, sizeof host_note, "the caller's fields in GPU memory are copied device to device");
        for (int f = 0; f < e.nf && st == PYR_OK; f++)
            if (on_device[f]) st = e.ops->after_stream(e.ctx, 0, stream[f]);
    }
    /* the fields made on the device come back into fresh pages: faulted in while the device computes
     * (a pinned grid was, by its registration) */
    pyr_prefault_t *prefault[PYR_MAX_FIELDS] = {NULL};
    for (int f = 0; f < e.nf && st == PYR_OK; f++) {
        if (!((made_on_device >> f) & 1) || !is_state(&e, f) || registered[f]) continue;
        pyr_box_t back = pyr_plan_interior(plan);
        if (plan->exchange) back = pyr_box_intersect(&back, &plan->exchange->reduce_box);
        if (pyr_box_empty(&back)) continue;
        const pyr_box_t *h = &e.grid[f].box;
        const int64_t hx = pyr_box_extent(h, 0), hy = pyr_box_extent(h, 1);
        const int64_t lo = ((back.lo[2] - h->lo[2]) * hy + (back.lo[1] - h->lo[1])) * hx + (back.lo[0] - h->lo[0]);
        const int64_t hi = ((back.hi[2] - 1 - h->lo[2]) * hy + (back.hi[1] - 1 - h->lo[1])) * hx + (back.hi[0] - h->lo[0]);
        prefault[f] = pyr_prefault_start((char *)e.grid[f].data + lo * (int64_t)e.elem, (size_t)(hi - lo) * e.elem);
    }
    if (st == PYR_OK) st = execute(&e, hooks, made_on_device, recipe);
    for (int f = 0; f < e.nf; f++) pyr_prefault_join(&prefault[f]);
    if (st != PYR_OK) {
        /* let queued work finish before freeing what it uses, keeping the
         * message of the first failure */
        char message[1024];
        snprintf(message, sizeof message, "%s", pyr_last_error());
        wait_all(&e);
        pyr_fail(st, "%s", message);
    }
    exec_release(&e);
    const double t1 = pyr_now_s();
    for (int f = 0; f < e.nf; f++) {
        if (registered[f]) e.ops->host_unregister(e.ctx, fields[f]->data);
        if (registered_prev[f]) e.ops->host_unregister(e.ctx, e.prev[f].data);
    }
    unpin_s = pyr_now_s() - t1;
    for (int f = 0; f < e.nf; f++) {
        if (!carry) free(e.prev[f].data);
        pyr_field_destroy(&own[f]);
    }
    if (run && st == PYR_OK) {
        run->host_memory = host;
        run->pin_seconds = pin_s;
        run->unpin_seconds = unpin_s;
        snprintf(run->host_note, sizeof run->host_note, "%s", host_note);
        run->counts = e.count;
        run->steps = e.steps_done;
        run->checked = e.checked;
        run->change = e.change;
        run->converged = e.converged;
        run->parts = run->ranks = 1;
    }
    return st;
}

pyr_status_t pyr_exec_fields(pyr_plan_t *plan, pyr_field_t *const *given, int nfields, const pyr_hooks_t *hooks, pyr_run_info_t *run)
{
    return exec_range(plan, given, NULL, NULL, nfields, 0, plan ? plan->problem.steps : 0, NULL, hooks, run);
}

pyr_status_t pyr_exec_fields_made(pyr_plan_t *plan, pyr_field_t *const *given, const pyr_host_region_t *regions, const pyr_recipe_t *recipes,
                                  int nfields, const pyr_hooks_t *hooks, pyr_run_info_t *run)
{
    return exec_range(plan, given, regions, recipes, nfields, 0, plan ? plan->problem.steps : 0, NULL, hooks, run);
}

pyr_status_t pyr_exec_fields_range(pyr_plan_t *plan, pyr_field_t *const *fields, int nfields, int64_t first, int64_t last,
                                   pyr_exec_carry_t *carry, const pyr_hooks_t *hooks, pyr_run_info_t *run)
{
    if (run) memset(run, 0, sizeof *run);
    if (!plan || !fields || !carry) return pyr_fail(PYR_ERR_ARG, "pyr_exec_fields_range: plan, fields and carry are required");
    const pyr_problem_t *p = &plan->problem, *q = &carry->problem;
    if (plan->exchange) return pyr_fail(PYR_ERR_UNSUPPORTED, "pyr_exec_fields_range: a part of a larger grid runs its steps in one run");
    if (carry->next < 0)
        return pyr_fail(PYR_ERR_ARG, "pyr_exec_fields_range: a range of this run failed, so its carried state is lost; run it again from step 0");
    if (first != carry->next || last < first || last > p->steps)
        return pyr_fail(PYR_ERR_ARG, "pyr_exec_fields_range: steps %lld .. %lld of a run of %lld; the ranges run in order, this one from step %lld",
                        (long long)first, (long long)last, (long long)p->steps, (long long)carry->next);
    if (carry->scheme && (carry->scheme != plan->scheme || q->dims != p->dims || q->precision != p->precision || q->steps != p->steps ||
                          q->n[0] != p->n[0] || q->n[1] != p->n[1] || q->n[2] != p->n[2]))
        return pyr_fail(PYR_ERR_ARG, "pyr_exec_fields_range: the plan is of another problem than the run's earlier ranges (scheme, grid, "
                                     "precision or steps); plan every range for the same problem");
    if (!carry->scheme) {
        carry->scheme = plan->scheme;
        carry->problem = *p;
    }
    pyr_run_info_t ri;
    const pyr_status_t st = exec_range(plan, fields, NULL, NULL, nfields, first, last, carry, hooks, &ri);
    carry->next = st == PYR_OK ? ri.steps : -1;
    if (run) *run = ri;
    return st;
}
