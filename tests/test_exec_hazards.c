/* The executor's operations obey the backend contract when operations of
 * different queues really run at the same time (as on the CUDA backend).
 *
 * The CPU backend runs every operation of a slot as it is issued, so the
 * bitwise tests on it cannot see an executor that hands device memory from
 * one queue to another too early.  This test wraps the CPU backend's
 * operations (backend/device.h) and the plan's kernel, and keeps a vector
 * clock per queue: the three slots and the runtime's lane (queue 3 = the
 * runtime's slot count, whatever the plan's; it takes copies, marks and
 * waits only).  Ordering is known from issue order
 * within a queue, from mark / after_mark between queues (one mark per queue
 * and kind), from wait(queue) for the host (every operation issued after a
 * wait follows what it waited for), and from the contract's rule that a
 * copy follows the latest upload into its source buffer (the same pointer)
 * on any queue.
 *
 * Device memory is checked by region: every allocation has a shadow cell
 * per 4 bytes holding its last writer (queue and clock) and each queue's
 * latest read since then.  An operation's accesses are worked out from its
 * arguments, row by row through the piece layout (pyr_piece_index): an
 * upload writes its box of buffer 0, a download reads its box of the newest
 * buffer, a copy reads its box of the source buffer and writes it in each
 * target buffer it names (not where a row is its own source), a reduction
 * reads its box of both buffers, and a kernel call's sub-step i writes
 * boxes[i] in the ping-pong fields' buffer (cur + i + 1) % 2 and reads the
 * box grown by the scheme's reach along every axis at once (corners too: an
 * over-approximation of the star stencil) in buffer (cur + i) % 2, and
 * boxes[i] of an input field; a halo the kernel takes itself (kernels.h
 * halo) reads its fill box from one store into buffer cur and its save box
 * from buffer cur into another.
 * Every access must be ordered after the
 * conflicting accesses of other queues to the same bytes (read after write,
 * write after read or write); accesses to disjoint bytes of one buffer (a
 * lane's copy of some planes, or of a boundary face, beside a slot's kernel
 * writing others) do not conflict.  A box outside its piece, bytes outside
 * every device allocation, and anything but a copy on the lane are
 * violations too.  The host grid is checked by boxes: an upload reads a box
 * of it, a download into it writes one (a task's result must not reach the
 * grid before an earlier task on another slot has uploaded the old values
 * there; a band downloaded straight into the grid must follow the next
 * task's upload; a skewed pass's first pieces must not read or write planes
 * the last pass's downloads still write).  A failing case reports how many
 * accesses were unordered and the first of each kind (up to three).
 *
 * Random plans: pyramid and trivial plans of heat and Poisson (1D, 2D, 3D,
 * two and three slots), and skewed heat plans (2D and 3D, two and three
 * slots, float and double, awkward sizes, explicit planes per piece or a
 * budget, heights whose passes take one-step calls - last-box-only on the
 * CPU, so the next call's faces go on the lane beside its kernel, and the
 * kernel takes the halo planes itself - and three-step calls, whose
 * save and fill stay on the slot); each
 * also compared bit for bit with the naive method (the CPU runtime runs the
 * lane's copies as late as its waits allow).  Skewed Maxwell plans too (its
 * state in place in the ring of planes the slots share: a piece reads in
 * place what the pieces before left below its planes, and a ring write must
 * wait for the pieces in flight that read those planes until their
 * downloads are done), with CPML, materials, sources and probes; compared
 * with the naive method as well (the CPU runtime runs the
 * lane's copies as late as its waits allow).  Synthetic sequences first show
 * the check catches an unordered hand-over between slots, on the host grid,
 * and between a slot's kernel and the lane's copies, and does not flag
 * disjoint regions.
 *
 *   test_exec_hazards [cases] [seed]   (cases of each kind: general, skewed) */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "backend/device.h"
#include "backend/kernels.h"
#include "core/error.h"
#include "plan/plan.h"
#include "plan/skewed.h"
#include "maxwell_util.h"
#include "poisson_util.h"
#include "schemes/maxwell.h"
#include "schemes/poisson.h"

#define NQ 4         /* queues tracked: the CPU runtime's three slots and its lane */
#define GRAIN 4      /* bytes per shadow cell */
#define MAXALLOC 512 /* device allocations tracked at once */

typedef struct {
    uint64_t c[NQ];
} vclock_t;

static vclock_t q_vc[NQ], mark_vc[NQ][PYR_MARKS], host_vc;
static size_t g_elem = 4; /* bytes of a value of the plan under test */

/* ------------------------------------------------ device memory, by region */

typedef struct {
    uint32_t wclock;   /* the last write's position in its queue (0: none) */
    uint32_t read[NQ]; /* per queue, its latest read since that write (0: none) */
    int8_t wq;         /* the last writer's queue */
} cell_t;

typedef struct {
    char *base;
    size_t bytes;
    cell_t *cells; /* one per GRAIN bytes */
    int id;
} alloc_t;

static alloc_t allocs[MAXALLOC];
static int nallocs, alloc_ids;

/* The latest upload into a buffer pointer (the contract: a copy out of that
 * pointer follows it, on any queue). */
typedef struct {
    const void *ptr;
    vclock_t v;
} upload_t;
static upload_t uploads[MAXALLOC];
static int nuploads;

/* Accesses of the host grid by backend operations not yet known to be
 * finished for everyone (a record goes once the host has waited past it). */
typedef struct {
    pyr_box_t box;
    int q, write;
    uint64_t clock;
} grid_access_t;
#define MAXGRID 4096
static grid_access_t grid_acc[MAXGRID];
static int ngrid;
static const void *grid_data; /* the field under test's values */
static int violations;
static char first_violation[1024]; /* the first violation of each kind, " | " between */

/* What the cases exercised (the skewed paths must keep being taken). */
static long g_lane_copies, g_kernels_one, g_kernels_several, g_kernel_saves, g_kernel_fills;

static int lane0(void) { return pyr_device_cpu.slots; }
static const char *qname(int q) { return q < lane0() ? "slot" : "lane"; }

/* A violation: the message of the first of each kind (what, on which
 * queue, after which queue's access; up to three kinds) is kept. */
static void violation(const char *fmt, ...)
{
    violations++;
    char m[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    const char *cut = strstr(m, " (device buffer");
    const size_t key = cut ? (size_t)(cut - m) : strlen(m);
    int kinds = 0;
    for (const char *k = first_violation; *k; kinds++) {
        if (!strncmp(k, m, key) && (k[key] == 0 || k[key] == ' ')) return; /* a kind kept already */
        const char *next = strstr(k, " | ");
        if (!next) {
            kinds++;
            break;
        }
        k = next + 3;
    }
    if (kinds >= 3) return;
    const size_t at = strlen(first_violation);
    snprintf(first_violation + at, sizeof first_violation - at, "%s%s", at ? " | " : "", m);
}

static void vc_join(vclock_t *a, const vclock_t *b)
{
    for (int i = 0; i < NQ; i++)
        if (b->c[i] > a->c[i]) a->c[i] = b->c[i];
}

static void reset_clocks(void)
{
    memset(q_vc, 0, sizeof q_vc);
    memset(mark_vc, 0, sizeof mark_vc);
    memset(&host_vc, 0, sizeof host_vc);
    for (int i = 0; i < nallocs; i++) memset(allocs[i].cells, 0, (allocs[i].bytes + GRAIN - 1) / GRAIN * sizeof(cell_t));
    nuploads = 0;
    ngrid = 0;
    violations = 0;
    first_violation[0] = 0;
}

static int track_alloc(void *ptr, size_t bytes)
{
    if (nallocs == MAXALLOC) return 0;
    cell_t *cells = calloc((bytes + GRAIN - 1) / GRAIN + 1, sizeof *cells);
    if (!cells) return 0;
    allocs[nallocs++] = (alloc_t){(char *)ptr, bytes, cells, ++alloc_ids};
    return 1;
}

static void untrack_alloc(const void *ptr)
{
    for (int i = 0; i < nallocs; i++)
        if (allocs[i].base == ptr) {
            const char *lo = allocs[i].base, *hi = lo + allocs[i].bytes;
            for (int k = 0; k < nuploads;) {
                const char *p = uploads[k].ptr;
                if (p >= lo && p < hi) uploads[k] = uploads[--nuploads];
                else k++;
            }
            free(allocs[i].cells);
            allocs[i] = allocs[--nallocs];
            return;
        }
}

/* The allocation holding bytes [p, p + len), or NULL. */
static alloc_t *find_alloc(const char *p, size_t len)
{
    for (int i = 0; i < nallocs; i++)
        if (p >= allocs[i].base && p + len <= allocs[i].base + allocs[i].bytes) return &allocs[i];
    return NULL;
}

/* One operation on queue q: it is issued after everything the host has
 * waited for, and follows the queue's earlier operations. */
static const vclock_t *begin_op(int q)
{
    vc_join(&q_vc[q], &host_vc);
    q_vc[q].c[q]++;
    return &q_vc[q];
}

/* Bytes [off, off + len) of allocation A, accessed by an operation of queue
 * q at clock v; *seen: this access reported a violation already (one per
 * access, not per byte). */
static void access_bytes(int q, const vclock_t *v, alloc_t *A, size_t off, size_t len, int write, const char *what, int *seen)
{
    const size_t c0 = off / GRAIN, c1 = (off + len + GRAIN - 1) / GRAIN;
    for (size_t c = c0; c < c1; c++) {
        cell_t *x = &A->cells[c];
        if (x->wclock && x->wq != q && v->c[x->wq] < x->wclock && !(*seen)++)
            violation("%s on %s %d not ordered after %s %d's write of the same bytes (device buffer %d, byte %zu)", what, qname(q), q,
                      qname(x->wq), x->wq, A->id, c * GRAIN);
        if (write) {
            for (int o = 0; o < NQ; o++)
                if (o != q && x->read[o] && v->c[o] < x->read[o] && !(*seen)++)
                    violation("%s on %s %d not ordered after %s %d's read of the same bytes (device buffer %d, byte %zu)", what, qname(q),
                              q, qname(o), o, A->id, c * GRAIN);
            x->wq = (int8_t)q;
            x->wclock = (uint32_t)v->c[q];
            memset(x->read, 0, sizeof x->read);
        } else {
            x->read[q] = (uint32_t)v->c[q];
        }
    }
}

/* `box` of a piece buffer (the piece's layout), row by row.  src / src_buf
 * (may be NULL): the copy's source, whose rows are not written where they
 * are the target's own. */
static void access_box_from(int q, const vclock_t *v, const pyr_piece_t *p, const void *buf, const pyr_box_t *box, int write,
                            const char *what, const pyr_piece_t *src, const void *src_buf)
{
    if (!buf || pyr_box_empty(box)) return;
    if (!pyr_box_contains(&p->box, box)) {
        violation("%s on %s %d: box [%lld..%lld]x[%lld..%lld]x[%lld..%lld) outside its piece", what, qname(q), q, (long long)box->lo[0],
                  (long long)box->hi[0], (long long)box->lo[1], (long long)box->hi[1], (long long)box->lo[2], (long long)box->hi[2]);
        return;
    }
    const size_t w = (size_t)pyr_box_extent(box, 0) * g_elem;
    const char *first = (const char *)buf + pyr_piece_index(p, box->lo[0], box->lo[1], box->lo[2]) * (int64_t)g_elem;
    const char *last = (const char *)buf + pyr_piece_index(p, box->lo[0], box->hi[1] - 1, box->hi[2] - 1) * (int64_t)g_elem + w;
    alloc_t *A = find_alloc(first, (size_t)(last - first));
    if (!A) {
        violation("%s on %s %d: bytes outside every device buffer", what, qname(q), q);
        return;
    }
    int seen = 0;
    for (int64_t z = box->lo[2]; z < box->hi[2]; z++)
        for (int64_t y = box->lo[1]; y < box->hi[1]; y++) {
            const char *row = (const char *)buf + pyr_piece_index(p, box->lo[0], y, z) * (int64_t)g_elem;
            if (src && row == (const char *)src_buf + pyr_piece_index(src, box->lo[0], y, z) * (int64_t)g_elem) continue;
            access_bytes(q, v, A, (size_t)(row - A->base), w, write, what, &seen);
        }
}

static void access_box(int q, const vclock_t *v, const pyr_piece_t *p, const void *buf, const pyr_box_t *box, int write, const char *what)
{
    access_box_from(q, v, p, buf, box, write, what, NULL, NULL);
}

/* A backend operation on queue q reads (upload) or writes (download) `box`
 * of the host grid: conflicting accesses of other queues must be ordered
 * before. */
static void access_grid(int q, const vclock_t *v, const pyr_host_region_t *host, const pyr_box_t *box, int write, const char *what)
{
    if (!grid_data || host->data != grid_data) return; /* staging buffers: one owner each */
    int k = 0;
    for (int i = 0; i < ngrid; i++) {
        grid_access_t *a = &grid_acc[i];
        if (host_vc.c[a->q] >= a->clock) continue; /* the host waited past it: ordered before everything from now on */
        if (a->q != q && (write || a->write) && v->c[a->q] < a->clock) {
            pyr_box_t x = pyr_box_intersect(&a->box, box);
            if (!pyr_box_empty(&x)) violation("%s on %s %d not ordered after %s %d's access of the host grid", what, qname(q), q, qname(a->q), a->q);
        }
        grid_acc[k++] = *a;
    }
    ngrid = k;
    if (ngrid == MAXGRID) {
        violation("grid access table full");
        return;
    }
    grid_acc[ngrid++] = (grid_access_t){*box, q, write, v->c[q]};
}

/* Only copies, marks and waits go on a lane. */
static void slot_only(int q, const char *what)
{
    if (q < 0 || q >= lane0()) violation("%s issued on queue %d, not a slot", what, q);
}

/* ------------------------------------------------ what each operation touches */

static void note_upload(int q, const vclock_t *v, const pyr_piece_t *piece, int f, const pyr_host_region_t *host, const pyr_box_t *box)
{
    access_box(q, v, piece, piece->buf[f][0], box, 1, "upload");
    access_grid(q, v, host, box, 0, "upload (grid read)");
    const void *ptr = piece->buf[f][0];
    int k = 0;
    while (k < nuploads && uploads[k].ptr != ptr) k++;
    if (k == nuploads) {
        if (nuploads == MAXALLOC) {
            violation("upload table full");
            return;
        }
        nuploads++;
    }
    uploads[k] = (upload_t){ptr, *v};
}

/* The contract: a copy out of a buffer follows the latest upload into it, even on another queue. */
static void copy_follows_upload(int q, const void *src)
{
    for (int k = 0; k < nuploads; k++)
        if (uploads[k].ptr == src) vc_join(&q_vc[q], &uploads[k].v);
}

static void note_copy(int q, const vclock_t *v, const pyr_piece_t *dst, int f, int dst_layers, const pyr_piece_t *src, int src_layer,
                      const pyr_box_t *box)
{
    const void *s = src->buf[f][src_layer];
    access_box(q, v, src, s, box, 0, q < lane0() ? "copy (source)" : "lane copy (source)");
    for (int l = 0; l < 2; l++)
        if ((dst_layers >> l) & 1 && dst->buf[f][l])
            access_box_from(q, v, dst, dst->buf[f][l], box, 1, q < lane0() ? "copy (target)" : "lane copy (target)", src, s);
}

/* Sub-step i reads the ping-pong fields' buffer (cur + i) % 2 over its box
 * grown by the reach (every axis at once: the corners too) and writes the
 * other over its box; an input field is read at the nodes updated; an
 * in-place field is read around and written. */
static long g_previous_reads; /* sub-steps that read the layer before their input (Chebyshev's) */
static long g_skewed_cheb;    /* skewed cases of Chebyshev's sweeps */

static void note_kernel(int q, const vclock_t *v, const pyr_kernel_call_t *call)
{
    const pyr_piece_t *p = call->piece;
    const pyr_scheme_t *s = pyr_scheme_of(call->coef->equation);
    const int dims = call->coef->dims;
    if (!s) {
        violation("a kernel of an unknown scheme");
        return;
    }
    for (int i = 0; i < call->nboxes; i++) {
        const pyr_box_t *b = &call->boxes[i];
        if (pyr_box_empty(b)) continue;
        const pyr_substep_t *sub = &s->sub[i % s->nsub];
        pyr_box_t around = *b;
        for (int a = 0; a < dims; a++) {
            around.lo[a] -= sub->reach_lo[a];
            around.hi[a] += sub->reach_hi[a];
            /* a kernel reads nothing off the grid (Maxwell's boxes reach its faces) */
            if (call->grid && around.lo[a] < 0) around.lo[a] = 0;
            if (call->grid && around.hi[a] > call->grid->n[a]) around.hi[a] = call->grid->n[a];
        }
        const int in = (p->cur + i) & 1;
        /* Chebyshev's sweeps also read, at each node, the layer before their input: the buffer they write */
        const int previous = call->coef->equation == PYR_EQ_POISSON && call->coef->c[PYR_POISSON_CHEBYSHEV_COEF] != 0;
        g_previous_reads += previous;
        for (int f = 0; f < p->nfields && f < s->nfields; f++) {
            if (!p->buf[f][0]) continue;
            switch (s->field[f].role) {
            case PYR_FIELD_PINGPONG:
                access_box(q, v, p, p->buf[f][in], &around, 0, "compute (read)");
                if (previous) access_box(q, v, p, p->buf[f][in ^ 1], b, 0, "compute (read the layer before)");
                access_box(q, v, p, p->buf[f][in ^ 1], b, 1, "compute (write)");
                break;
            case PYR_FIELD_INPUT: access_box(q, v, p, p->buf[f][0], b, 0, "compute (read input)"); break;
            default:
                access_box(q, v, p, p->buf[f][0], &around, 0, "compute (read)");
                access_box(q, v, p, p->buf[f][0], b, 1, "compute (write)");
                break;
            }
        }
    }
    /* a halo the kernel takes itself (kernels.h halo), as the CPU kernel does: the fill box read from its
     * store and written into the first layer, then the save box read there and written into its store */
    if (call->fill_from) {
        access_box(q, v, call->fill_from, call->fill_from->buf[0][0], &call->fill, 0, "compute (fill read)");
        access_box(q, v, p, p->buf[0][p->cur], &call->fill, 1, "compute (fill write)");
        g_kernel_fills++;
    }
    if (call->save_to) {
        access_box(q, v, p, p->buf[0][p->cur], &call->save, 0, "compute (save read)");
        access_box(q, v, call->save_to, call->save_to->buf[0][0], &call->save, 1, "compute (save write)");
        g_kernel_saves++;
    }
}

static void note_download(int q, const vclock_t *v, const pyr_piece_t *piece, int f, const pyr_host_region_t *host, const pyr_box_t *box)
{
    access_box(q, v, piece, pyr_piece_current(piece, f), box, 0, "download");
    access_grid(q, v, host, box, 1, "download (grid write)");
}

static void clk_wait(int q) { vc_join(&host_vc, &q_vc[q]); }
static void clk_mark(int q, int which) { mark_vc[q][which] = q_vc[q]; }
static void clk_after_mark(int q, int other, int which) { vc_join(&q_vc[q], &mark_vc[other][which]); }

static int queue_ok(int q) { return q >= 0 && q < pyr_device_cpu.slots + pyr_device_cpu.lanes && q < NQ; }

/* ------------------------------------------------ the wrapped operations */

static pyr_status_t h_alloc(void *ctx, size_t bytes, void **ptr)
{
    PYR_TRY(pyr_device_cpu.dev_alloc(ctx, bytes, ptr));
    if (!track_alloc(*ptr, bytes)) violation("allocation table full");
    return PYR_OK;
}

static void h_free(void *ctx, void *ptr)
{
    untrack_alloc(ptr);
    pyr_device_cpu.dev_free(ctx, ptr);
}

static pyr_status_t h_upload(void *ctx, int slot, const pyr_piece_t *piece, int f, const pyr_host_region_t *host, const pyr_box_t *box)
{
    slot_only(slot, "upload");
    note_upload(slot, begin_op(slot), piece, f, host, box);
    return pyr_device_cpu.upload(ctx, slot, piece, f, host, box);
}

static pyr_status_t h_copy(void *ctx, int q, const pyr_piece_t *dst, int f, int dst_layers, const pyr_piece_t *src, int src_layer,
                           const pyr_box_t *box)
{
    if (!queue_ok(q)) {
        violation("copy on queue %d", q);
        return pyr_device_cpu.copy(ctx, q, dst, f, dst_layers, src, src_layer, box);
    }
    copy_follows_upload(q, src->buf[f][src_layer]);
    note_copy(q, begin_op(q), dst, f, dst_layers, src, src_layer, box);
    if (q >= lane0()) g_lane_copies++;
    return pyr_device_cpu.copy(ctx, q, dst, f, dst_layers, src, src_layer, box);
}

static pyr_status_t h_run(void *ctx, int slot, const pyr_kernel_call_t *call)
{
    slot_only(slot, "kernel");
    note_kernel(slot, begin_op(slot), call);
    if (call->nboxes > 1) g_kernels_several++;
    else g_kernels_one++;
    return pyr_kernel_find(call->coef->equation, PYR_BACKEND_CPU)->run(ctx, slot, call);
}

static pyr_status_t h_download(void *ctx, int slot, const pyr_piece_t *piece, int f, const pyr_host_region_t *host, const pyr_box_t *box)
{
    slot_only(slot, "download");
    note_download(slot, begin_op(slot), piece, f, host, box);
    return pyr_device_cpu.download(ctx, slot, piece, f, host, box);
}

static pyr_status_t h_reduce(void *ctx, int slot, const pyr_piece_t *piece, int f, const pyr_box_t *box, double *out)
{
    slot_only(slot, "reduction");
    const vclock_t *v = begin_op(slot);
    access_box(slot, v, piece, piece->buf[f][0], box, 0, "reduce (read)");
    access_box(slot, v, piece, piece->buf[f][1], box, 0, "reduce (read)");
    return pyr_device_cpu.reduce_change(ctx, slot, piece, f, box, out);
}

static pyr_status_t h_wait(void *ctx, int q)
{
    if (!queue_ok(q)) violation("wait for queue %d", q);
    else clk_wait(q);
    return pyr_device_cpu.wait(ctx, q);
}

static pyr_status_t h_mark(void *ctx, int q, int which)
{
    if (!queue_ok(q) || which < 0 || which >= PYR_MARKS) violation("mark %d on queue %d", which, q);
    else clk_mark(q, which);
    return pyr_device_cpu.mark(ctx, q, which);
}

static pyr_status_t h_after_mark(void *ctx, int q, int other, int which)
{
    if (!queue_ok(q) || !queue_ok(other) || which < 0 || which >= PYR_MARKS) violation("after_mark(%d, %d, %d)", q, other, which);
    else clk_after_mark(q, other, which);
    return pyr_device_cpu.after_mark(ctx, q, other, which); /* a slot waiting for the lane runs its queued copies */
}

static pyr_device_ops_t hazard_ops(void)
{
    pyr_device_ops_t o = pyr_device_cpu; /* its lane included: lanes = 1, queue 3 */
    o.name = "cpu (hazard check)";
    o.concurrent = 1;
    o.dev_alloc = h_alloc;
    o.dev_free = h_free;
    o.upload = h_upload;
    o.copy = h_copy;
    o.copy_many = NULL; /* copies one by one, each checked */
    o.download = h_download;
    o.reduce_change = h_reduce;
    o.wait = h_wait;
    o.mark = h_mark;
    o.after_mark = h_after_mark;
    o.copy_peer = NULL;
    return o;
}

/* ------------------------------------------------ the check itself */

/* A piece of one ping-pong field over `box` (rows of `pitch` values) in buffers b0 and b1. */
static pyr_piece_t small_piece(pyr_box_t box, int64_t pitch, void *b0, void *b1)
{
    pyr_piece_t p;
    memset(&p, 0, sizeof p);
    p.box = box;
    p.pitch = pitch;
    p.nfields = 1;
    p.buf[0][0] = b0;
    p.buf[0][1] = b1;
    return p;
}

/* Between slots: a buffer written on slot 0 and then read on slot 1 is a
 * hazard unless slot 1 waits for slot 0's mark (or the host waited); and on
 * the host grid. */
static void test_check_catches_hazards(void)
{
    static float mem_a[64], mem_b[64];
    g_elem = sizeof(float);
    track_alloc(mem_a, sizeof mem_a);
    track_alloc(mem_b, sizeof mem_b);
    pyr_piece_t p = small_piece((pyr_box_t){{0, 0, 0}, {8, 8, 1}}, 8, mem_a, mem_b);
    const pyr_box_t all = p.box, low = {{0, 0, 0}, {8, 3, 1}}, high = {{0, 3, 0}, {8, 8, 1}};

    reset_clocks();
    access_box(0, begin_op(0), &p, mem_a, &all, 1, "upload");
    access_box(1, begin_op(1), &p, mem_a, &all, 0, "compute (read)");
    CHECK(violations == 1, "read on slot 1 after an unordered write on slot 0: %d violations flagged", violations);

    reset_clocks();
    access_box(0, begin_op(0), &p, mem_a, &all, 1, "upload");
    clk_mark(0, PYR_MARK_COMPUTE);
    clk_after_mark(1, 0, PYR_MARK_COMPUTE);
    access_box(1, begin_op(1), &p, mem_a, &all, 0, "compute (read)");
    CHECK(violations == 0, "ordered by mark / after_mark: %d violations (%s)", violations, first_violation);

    reset_clocks();
    access_box(0, begin_op(0), &p, mem_a, &all, 0, "download");
    access_box(1, begin_op(1), &p, mem_a, &all, 1, "upload");
    CHECK(violations == 1, "write on slot 1 over an unordered read on slot 0: %d violations flagged", violations);

    reset_clocks();
    access_box(0, begin_op(0), &p, mem_a, &all, 0, "download");
    clk_mark(0, PYR_MARK_COMPUTE);
    access_box(0, begin_op(0), &p, mem_b, &all, 1, "later write");
    clk_after_mark(1, 0, PYR_MARK_COMPUTE);
    access_box(1, begin_op(1), &p, mem_b, &all, 0, "read");
    CHECK(violations == 1, "a mark orders only what was issued before it: %d violations flagged", violations);

    reset_clocks();
    access_box(0, begin_op(0), &p, mem_a, &all, 1, "upload");
    clk_wait(0);
    access_box(2, begin_op(2), &p, mem_a, &all, 1, "upload");
    CHECK(violations == 0, "ordered by the host's wait: %d violations (%s)", violations, first_violation);

    /* by region: other rows of the same buffer do not conflict, overlapping ones do */
    reset_clocks();
    access_box(0, begin_op(0), &p, mem_a, &low, 1, "upload");
    access_box(1, begin_op(1), &p, mem_a, &high, 1, "upload");
    CHECK(violations == 0, "disjoint rows of one buffer flagged: %d violations (%s)", violations, first_violation);
    pyr_box_t over = high;
    over.lo[1] = 2;
    access_box(2, begin_op(2), &p, mem_a, &over, 0, "download");
    CHECK(violations == 1, "a read over rows two slots wrote unordered: %d violations flagged (one per access)", violations);

    /* the contract's rule: a copy follows the latest upload into its source, on any queue */
    reset_clocks();
    note_upload(0, begin_op(0), &p, 0, &(pyr_host_region_t){NULL, all}, &all);
    copy_follows_upload(1, mem_a);
    note_copy(1, begin_op(1), &p, 0, 2, &p, 0, &low);
    CHECK(violations == 0, "a copy after an upload of its source on another slot flagged: %d violations (%s)", violations,
          first_violation);

    /* the host grid: a download into a box another slot's upload read, unordered, then ordered */
    static float cells[64];
    pyr_host_region_t g = {cells, {{0, 0, 0}, {8, 8, 1}}};
    pyr_box_t top = {{0, 4, 0}, {8, 6, 1}}, part = {{0, 5, 0}, {8, 8, 1}}, apart = {{0, 0, 0}, {8, 2, 1}};
    grid_data = cells;
    reset_clocks();
    access_grid(1, begin_op(1), &g, &part, 0, "upload (grid read)");
    access_grid(0, begin_op(0), &g, &top, 1, "download (grid write)");
    CHECK(violations == 1, "grid write over an unordered read of another slot: %d violations flagged", violations);
    reset_clocks();
    access_grid(1, begin_op(1), &g, &part, 0, "upload (grid read)");
    access_grid(0, begin_op(0), &g, &apart, 1, "download (grid write)");
    CHECK(violations == 0, "disjoint grid boxes flagged: %d violations (%s)", violations, first_violation);
    reset_clocks();
    access_grid(1, begin_op(1), &g, &part, 0, "upload (grid read)");
    clk_mark(1, PYR_MARK_UPLOAD);
    clk_after_mark(0, 1, PYR_MARK_UPLOAD);
    access_grid(0, begin_op(0), &g, &top, 1, "download (grid write)");
    CHECK(violations == 0, "grid write ordered by mark / after_mark flagged: %d violations (%s)", violations, first_violation);
    grid_data = NULL;
    untrack_alloc(mem_a);
    untrack_alloc(mem_b);
}

/* The lane beside a slot's kernel, as a skewed pass uses it: a 3D piece of
 * 4 x 4 x 8 nodes in two buffers, a kernel on slot 0 computing planes 2..5
 * of buffer 1 from buffer 0, copies on the lane into and out of a halo
 * store.  A lane copy touching what the kernel writes, or a kernel reading
 * what the lane wrote, must be ordered by marks; copies of other planes, or
 * of the boundary columns inside the kernel's planes, run beside it. */
static void test_check_catches_lane_hazards(void)
{
    static double b0[4 * 4 * 8], b1[4 * 4 * 8], store[4 * 4 * 8], untracked[4 * 4 * 8];
    g_elem = sizeof(double);
    track_alloc(b0, sizeof b0);
    track_alloc(b1, sizeof b1);
    track_alloc(store, sizeof store);
    const int L = lane0();
    const pyr_piece_t P = small_piece((pyr_box_t){{0, 0, 0}, {4, 4, 8}}, 4, b0, b1), S = small_piece(P.box, 4, store, NULL);
    const pyr_coef_t coef = {.equation = PYR_EQ_HEAT, .dims = 3, .precision = PYR_DOUBLE};
    const pyr_box_t result = {{1, 1, 2}, {3, 3, 6}};                       /* interior nodes of planes 2..5 */
    const pyr_box_t top = {{0, 0, 4}, {4, 4, 6}}, low = {{0, 0, 0}, {4, 4, 2}}; /* a save's and a fill's planes */
    const pyr_box_t face = {{0, 0, 2}, {1, 4, 6}};                          /* x = 0 over the kernel's planes */
    pyr_kernel_call_t kc = {.piece = &P, .coef = &coef, .boxes = &result, .nboxes = 1};
    pyr_piece_t Q = P; /* the next call reads buffer 1 */
    Q.cur = 1;
    pyr_box_t next = result;
    next.lo[2] = 1; /* it reads planes 0..6 of buffer 1: the fill's too */
    pyr_kernel_call_t kc2 = {.piece = &Q, .coef = &coef, .boxes = &next, .nboxes = 1};

    /* a save of planes the kernel writes, on the lane without waiting for it */
    reset_clocks();
    note_kernel(0, begin_op(0), &kc);
    note_copy(L, begin_op(L), &S, 0, 1, &P, 1, &top);
    CHECK(violations == 1, "a lane copy reading what a slot's kernel writes, unordered: %d violations flagged", violations);
    CHECK(strstr(first_violation, "lane copy (source) on lane") != NULL, "message: %s", first_violation);

    /* the same after mark(slot, CALL) / after_mark(lane, slot, CALL) */
    reset_clocks();
    note_kernel(0, begin_op(0), &kc);
    clk_mark(0, PYR_MARK_CALL);
    clk_after_mark(L, 0, PYR_MARK_CALL);
    note_copy(L, begin_op(L), &S, 0, 1, &P, 1, &top);
    CHECK(violations == 0, "a lane copy after the kernel's mark flagged: %d violations (%s)", violations, first_violation);

    /* a fill beside the kernel: other planes of the buffer it writes, and the boundary column inside its planes */
    reset_clocks();
    note_kernel(0, begin_op(0), &kc);
    note_copy(L, begin_op(L), &P, 0, 2, &S, 0, &low);
    note_copy(L, begin_op(L), &P, 0, 2, &S, 0, &face);
    CHECK(violations == 0, "lane copies of other nodes of the buffer a kernel writes flagged: %d violations (%s)", violations,
          first_violation);
    /* ... but a write of its input beside it is not */
    note_copy(L, begin_op(L), &P, 0, 1, &S, 0, &low);
    CHECK(violations == 1, "a lane copy writing what a slot's kernel reads, unordered: %d violations flagged", violations);

    /* the next kernel reads what the lane wrote: only after after_mark(slot, lane, LANE) past those copies */
    reset_clocks();
    note_kernel(0, begin_op(0), &kc);
    note_copy(L, begin_op(L), &P, 0, 2, &S, 0, &low);
    note_kernel(0, begin_op(0), &kc2);
    CHECK(violations == 1, "a kernel reading what the lane wrote, unordered: %d violations flagged", violations);
    reset_clocks();
    note_kernel(0, begin_op(0), &kc);
    note_copy(L, begin_op(L), &P, 0, 2, &S, 0, &low);
    clk_mark(L, PYR_MARK_LANE);
    clk_after_mark(0, L, PYR_MARK_LANE);
    note_kernel(0, begin_op(0), &kc2);
    CHECK(violations == 0, "a kernel after the lane's mark flagged: %d violations (%s)", violations, first_violation);
    reset_clocks();
    note_kernel(0, begin_op(0), &kc);
    clk_mark(L, PYR_MARK_LANE);
    note_copy(L, begin_op(L), &P, 0, 2, &S, 0, &low); /* issued after the lane's mark */
    clk_after_mark(0, L, PYR_MARK_LANE);
    note_kernel(0, begin_op(0), &kc2);
    CHECK(violations == 1, "a lane mark orders only the copies issued before it: %d violations flagged", violations);

    /* a save beside a kernel of several steps, whose middle layer lands in the buffer the save reads
     * (the race of commit aeeca40) */
    const pyr_box_t three[3] = {{{1, 1, 1}, {3, 3, 7}}, {{1, 1, 2}, {3, 3, 6}}, {{1, 1, 3}, {3, 3, 5}}};
    pyr_kernel_call_t k3 = {.piece = &P, .coef = &coef, .boxes = three, .nboxes = 3};
    reset_clocks();
    clk_mark(0, PYR_MARK_CALL);
    clk_after_mark(L, 0, PYR_MARK_CALL);
    note_copy(L, begin_op(L), &S, 0, 1, &P, 0, &top);
    note_kernel(0, begin_op(0), &k3);
    CHECK(violations == 1, "a save beside a kernel writing both buffers: %d violations flagged", violations);
    CHECK(strstr(first_violation, "compute (write) on slot 0 not ordered after lane") != NULL, "message: %s", first_violation);
    reset_clocks();
    note_copy(L, begin_op(L), &S, 0, 1, &P, 0, &top);
    note_kernel(0, begin_op(0), &kc);
    CHECK(violations == 0, "a save beside a kernel writing its result only flagged: %d violations (%s)", violations, first_violation);

    /* bytes outside every buffer, and a box outside its piece */
    reset_clocks();
    pyr_piece_t W = P;
    W.buf[0][0] = untracked;
    note_copy(L, begin_op(L), &S, 0, 1, &W, 0, &low);
    CHECK(violations == 1, "a copy out of untracked memory: %d violations flagged", violations);
    reset_clocks();
    pyr_box_t wide = P.box;
    wide.hi[2]++;
    note_copy(1, begin_op(1), &S, 0, 1, &P, 0, &wide);
    CHECK(violations == 2, "a copy box outside its pieces: %d violations flagged", violations);
    untrack_alloc(b0);
    untrack_alloc(b1);
    untrack_alloc(store);
}

/* ------------------------------------------------ random plans */

/* Run the plan with the wrapped operations and kernel: no unordered access, and the naive method's values. */
static int check_plan(const pyr_problem_t *p, const pyr_options_t *o, const pyr_device_ops_t *ops, int poisson, int skewed,
                      const char *label)
{
    pyr_plan_t *plan = NULL;
    if (pyr_plan_create(p, o, &plan) != PYR_OK) {
        CHECK(0, "%s: plan failed: %s", label, pyr_last_error());
        return 1;
    }
    char what[160] = "";
    if (skewed) {
        int steps[PYR_SKEW_MAX_CALLS];
        const int nc = pyr_skew_calls(plan, plan->height, steps, PYR_SKEW_MAX_CALLS);
        int at = snprintf(what, sizeof what, " (slots %d, %lld planes, calls", plan->slots, (long long)plan->skew_size);
        for (int j = 0; j < nc && at < (int)sizeof what - 16; j++) at += snprintf(what + at, sizeof what - (size_t)at, "%s%d", j ? "+" : " ", steps[j]);
        snprintf(what + at, sizeof what - (size_t)at, ")");
        CHECK(plan->decomp == PYR_DECOMP_SKEWED, "%s: a %s plan", label, pyr_decomp_name(plan->decomp));
    }
    plan->ops = ops; /* same context: the wrapped operations call the CPU backend's */
    pyr_kernel_t kernel = *plan->kernel;
    kernel.run = h_run;
    plan->kernel = &kernel;
    g_elem = pyr_precision_size(p->precision);
    pyr_field_t *f = NULL;
    CHECK_OK(pyr_field_create(p, &f));
    CHECK_OK(pyr_field_init(f, p));
    reset_clocks();
    grid_data = f ? f->data : NULL;
    pyr_field_t *fields[2] = {f, NULL};
    pyr_status_t st = pyr_execute_fields(plan, fields, poisson ? 2 : 1, NULL, NULL);
    grid_data = NULL;
    CHECK(st == PYR_OK, "%s%s: execute failed: %s", label, what, pyr_last_error());
    CHECK(violations == 0, "%s%s: %d unordered accesses, first of each kind: %s", label, what, violations, first_violation);
    int bad = st != PYR_OK || violations != 0;
    /* and the values: any mistake in what went where, or a lane copy run too late, shows */
    pyr_field_t *ref = poisson ? poisson_reference(p, NULL, NULL, NULL) : naive_reference(p, NULL);
    CHECK(ref != NULL, "%s: naive reference failed: %s", label, pyr_last_error());
    if (ref && f && st == PYR_OK) {
        int64_t d = first_difference(f, ref);
        CHECK(d < 0, "%s%s: differs from the naive method at node %lld", label, what, (long long)d);
        bad |= d >= 0;
    }
    pyr_field_destroy(&ref);
    pyr_plan_destroy(&plan);
    pyr_field_destroy(&f);
    return bad;
}

static int run_case(uint64_t seed, int c, const pyr_device_ops_t *ops)
{
    rng_t r = {seed * 7919u + (uint64_t)c};
    int dims = (int)rng_range(&r, 1, 3);
    int64_t n[3] = {1, 1, 1};
    for (int a = 0; a < dims; a++) n[a] = rng_range(&r, 3, dims == 1 ? 300 : dims == 2 ? 60 : 20);
    pyr_precision_t prec = rng_range(&r, 0, 1) ? PYR_DOUBLE : PYR_FLOAT;
    int64_t steps = rng_range(&r, 1, 30);
    pyr_problem_t p;
    /* heat, or Poisson: a piece of two fields (f in the slot's own buffer) and a reduction per task */
    const int poisson = rng_range(&r, 0, 2) == 0;
    if (poisson) {
        make_poisson(&p, dims, n, NULL, prec, steps, 0, rng_range(&r, 1, 8), PYR_RHS_SINE, PYR_INIT_RANDOM, (uint64_t)c);
        if (rng_range(&r, 0, 1)) p.poisson.tolerance = 1e-30; /* checks at every interval, no stop */
        /* Chebyshev: pieces carry the layer two sweeps back up and down beside u */
        if (rng_range(&r, 0, 1)) p.poisson.iteration = PYR_ITER_CHEBYSHEV;
    } else {
        make_problem(&p, dims, n, prec, steps, PYR_INIT_SINE, 0);
    }

    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.threads = 1;
    o.method = rng_range(&r, 0, 4) == 0 ? PYR_METHOD_TRIVIAL : PYR_METHOD_PYRAMID;
    if (dims == 1) o.decomposition = PYR_DECOMP_SEGMENTS;
    else if (dims == 3) o.decomposition = rng_range(&r, 0, 1) ? PYR_DECOMP_SLABS : PYR_DECOMP_BLOCKS;
    else o.decomposition = rng_range(&r, 0, 1) ? PYR_DECOMP_BLOCKS : PYR_DECOMP_STRIPS;
    int64_t hmax = steps < 12 ? steps : 12;
    o.height = o.method == PYR_METHOD_TRIVIAL ? 0 : rng_range(&r, 1, hmax);
    o.slots = (int)rng_range(&r, 2, 3);
    uint64_t lo = smallest_budget(&p, o, 1ull << 34);
    o.memory = lo + (uint64_t)rng_range(&r, 0, (int64_t)(pyr_problem_nodes(&p) * pyr_precision_size(prec)));

    char label[256];
    snprintf(label, sizeof label, "case %d seed %llu: %s%s %dD %lldx%lldx%lld %s steps=%lld %s %s height=%lld slots=%d memory=%llu", c,
             (unsigned long long)seed, poisson ? "poisson" : "heat", p.poisson.iteration == PYR_ITER_CHEBYSHEV ? " (chebyshev)" : "", dims, (long long)n[0], (long long)n[1], (long long)n[2],
             pyr_precision_name(prec),
             (long long)steps, pyr_method_name(o.method), pyr_decomp_name(o.decomposition), (long long)o.height, o.slots,
             (unsigned long long)o.memory);
    return check_plan(&p, &o, ops, poisson, 0, label);
}

/* A skewed heat plan: 2D or 3D, two or three slots, planes per piece given
 * (often one to three: many pieces) or from a budget, heights whose calls
 * are of one step (the lane path on the CPU), of three (the slot path) or
 * both. */
static int run_skewed_case(uint64_t seed, int c, const pyr_device_ops_t *ops)
{
    rng_t r = {seed * 104729u + (uint64_t)c + 0x5eed};
    static const int64_t awkward[] = {3, 4, 5, 7, 8, 9, 16, 17, 31, 33};
    const int dims = (int)rng_range(&r, 2, 3);
    const int a = dims - 1;
    int64_t n[3] = {1, 1, 1};
    for (int d = 0; d < dims; d++) {
        const int64_t cap = dims == 2 ? (d == a ? 90 : 48) : (d == a ? 30 : 14);
        int64_t v = rng_range(&r, 0, 2) == 0 ? awkward[rng_range(&r, 0, 9)] : rng_range(&r, 3, cap);
        n[d] = v < cap ? v : cap;
    }
    const pyr_precision_t prec = rng_range(&r, 0, 1) ? PYR_DOUBLE : PYR_FLOAT;
    const int64_t steps = rng_range(&r, 1, 30);
    static const int64_t mixed[] = {2, 4, 5, 7, 8, 10, 11, 13};
    int64_t h;
    switch (rng_range(&r, 0, 3)) {
    case 0: h = mixed[rng_range(&r, 0, 7)]; break; /* one-step calls after three-step ones */
    case 1: h = rng_range(&r, 1, 3); break;          /* one call, or two of one step */
    case 2: h = steps; break;                        /* one pass */
    default: h = rng_range(&r, 1, 14); break;
    }
    if (h > steps) h = steps;
    /* a third Poisson: its f lives in the ring of input planes the slots share, whose writes must wait for
     * every slot's reads (the change measured now and then, or at every check) */
    const int poisson = rng_range(&r, 0, 2) == 0;
    pyr_problem_t p;
    if (poisson) {
        make_poisson(&p, dims, n, NULL, prec, steps, 0, rng_range(&r, 1, 8), PYR_RHS_SINE, PYR_INIT_RANDOM, seed + (uint64_t)c);
        if (rng_range(&r, 0, 1)) p.poisson.tolerance = 1e-30;
        /* half of them Chebyshev's (drawn apart: the other draws stay): both layers of u in the pieces' buffers
         * and halo stores, the layer before the pass's first uploaded into the spare, the last two downloaded
         * before the spare is handed on */
        rng_t rc = {seed * 6143u + (uint64_t)c + 0xc4eb};
        if (rng_range(&rc, 0, 1)) {
            p.poisson.iteration = PYR_ITER_CHEBYSHEV;
            g_skewed_cheb++;
        }
    } else {
        make_problem(&p, dims, n, prec, steps, PYR_INIT_RANDOM, seed + (uint64_t)c);
    }

    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.threads = 1;
    o.method = PYR_METHOD_PYRAMID;
    o.decomposition = PYR_DECOMP_SKEWED;
    o.height = h;
    o.slots = (int)rng_range(&r, 2, 3);
    char how[64];
    const int mode = (int)rng_range(&r, 0, 2);
    if (mode < 2) {
        o.piece = mode == 0 ? rng_range(&r, 1, 3) : rng_range(&r, 1, n[a] + 2);
        o.memory = 1ull << 40;
        snprintf(how, sizeof how, "planes=%lld", (long long)o.piece);
    } else {
        const uint64_t lo = smallest_budget(&p, o, 1ull << 34);
        o.memory = lo + (uint64_t)rng_range(&r, 0, (int64_t)(pyr_problem_nodes(&p) * pyr_precision_size(prec)));
        snprintf(how, sizeof how, "memory=%llu", (unsigned long long)o.memory);
    }
    char label[256];
    snprintf(label, sizeof label, "skewed case %d seed %llu: %s%s %dD %lldx%lldx%lld %s steps=%lld height=%lld slots=%d %s", c,
             (unsigned long long)seed, poisson ? "poisson" : "heat", p.poisson.iteration == PYR_ITER_CHEBYSHEV ? " (chebyshev)" : "", dims, (long long)n[0], (long long)n[1], (long long)n[2],
             pyr_precision_name(prec), (long long)steps, (long long)h, o.slots, how);
    return check_plan(&p, &o, ops, poisson, 1, label);
}

/* A skewed Maxwell plan (in-place state in the ring): 2D TM/TE or 3D, random materials, CPML (on the last
 * axis's faces too), sources and probes; two or three slots; planes per piece given (often one to three:
 * the ring wraps often) or from a budget; any height.  The host grid checked is one component's. */
static long g_maxwell_pieces;

static int run_maxwell_skewed_case(uint64_t seed, int c, const pyr_device_ops_t *ops)
{
    rng_t r = {seed * 15485863u + (uint64_t)c + 0x3a5};
    const int dims = (int)rng_range(&r, 2, 3);
    int64_t n[3] = {1, 1, 1};
    double len[3] = {1, 1, 1};
    for (int d = 0; d < dims; d++) {
        n[d] = rng_range(&r, 6, dims == 2 ? (d == dims - 1 ? 70 : 30) : (d == dims - 1 ? 24 : 12));
        len[d] = mx_frac(&r, 0.5, 3.0);
    }
    const pyr_precision_t prec = rng_range(&r, 0, 1) ? PYR_DOUBLE : PYR_FLOAT;
    pyr_problem_t p;
    int drawn[3];
    mx_random_problem(&r, dims, n, len, prec, &p, drawn);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.threads = 1;
    o.method = PYR_METHOD_PYRAMID;
    o.decomposition = PYR_DECOMP_SKEWED;
    o.height = rng_range(&r, 1, p.steps < 14 ? p.steps : 14);
    o.slots = (int)rng_range(&r, 2, 3);
    char how[64];
    if (rng_range(&r, 0, 1)) {
        o.piece = rng_range(&r, 0, 1) ? rng_range(&r, 1, 3) : rng_range(&r, 1, n[dims - 1] + 2);
        o.memory = 1ull << 40;
        snprintf(how, sizeof how, "planes=%lld", (long long)o.piece);
    } else {
        const uint64_t lo = smallest_budget(&p, o, 1ull << 34);
        o.memory = lo + (uint64_t)rng_range(&r, 0, (int64_t)(pyr_problem_nodes(&p) * pyr_precision_size(prec)));
        snprintf(how, sizeof how, "memory=%llu", (unsigned long long)o.memory);
    }
    char label[300];
    snprintf(label, sizeof label, "skewed maxwell case %d seed %llu: %dD%s %lldx%lldx%lld %s steps=%lld cpml=%d/%#x sources=%d probes=%d "
             "height=%lld slots=%d %s", c, (unsigned long long)seed, dims, dims == 2 ? (p.maxwell.te ? " TE" : " TM") : "", (long long)n[0],
             (long long)n[1], (long long)n[2], pyr_precision_name(prec), (long long)p.steps, p.maxwell.cpml_cells, p.maxwell.cpml_faces,
             p.maxwell.nsources, p.maxwell.nprobes, (long long)o.height, o.slots, how);
    pyr_plan_t *plan = NULL;
    if (pyr_plan_create(&p, &o, &plan) != PYR_OK) {
        CHECK(0, "%s: plan failed: %s", label, pyr_last_error());
        return 1;
    }
    CHECK(plan->decomp == PYR_DECOMP_SKEWED && pyr_skew_inplace(plan), "%s: not an in-place skewed plan", label);
    g_maxwell_pieces += pyr_skew_pieces(plan, plan->height);
    plan->ops = ops;
    pyr_kernel_t kernel = *plan->kernel;
    kernel.run = h_run;
    plan->kernel = &kernel;
    g_elem = pyr_precision_size(p.precision);
    mx_result_t a = {0}, b = {0};
    pyr_field_t *fields[MX_FIELDS] = {NULL};
    pyr_status_t st = PYR_OK;
    for (int k = 0; k < 6 && st == PYR_OK; k++) {
        if (!mx_used(&p, k)) continue;
        st = pyr_field_create(&p, &a.c[k]);
        if (st == PYR_OK) st = pyr_field_init_state(a.c[k], &p, k);
        fields[k] = a.c[k];
        if (!grid_data && st == PYR_OK) grid_data = a.c[k]->data;
    }
    reset_clocks();
    pyr_hooks_t hooks = {.user = &a, .probe = mx_probe_cb};
    if (st == PYR_OK) st = pyr_execute_fields(plan, fields, MX_FIELDS, &hooks, &a.run);
    grid_data = NULL;
    CHECK(st == PYR_OK, "%s: execute failed: %s", label, pyr_last_error());
    CHECK(violations == 0, "%s: %d unordered accesses, first of each kind: %s", label, violations, first_violation);
    int bad = st != PYR_OK || violations != 0;
    pyr_plan_destroy(&plan);
    if (st == PYR_OK) {
        CHECK_OK(mx_reference(&p, NULL, &b));
        for (int k = 0; k < 6; k++) {
            if (!a.c[k] || !b.c[k]) continue;
            const int64_t d = first_difference(a.c[k], b.c[k]);
            CHECK(d < 0, "%s: component %d differs from the naive method at node %lld", label, k, (long long)d);
            bad |= d >= 0;
        }
        const int same = a.nseries == b.nseries && (!a.nseries || !memcmp(a.probes, b.probes, (size_t)(a.nseries * a.nprobes) * sizeof(double)));
        CHECK(same, "%s: probe series differ from the naive method", label);
        bad |= !same;
    }
    mx_free(&a);
    mx_free(&b);
    return bad;
}

/* How the executor reaches the host grid, and what the run says: a backend
 * that registers memory gets the grid registered once and released once
 * (pinned); one whose registration is refused gets nothing left registered,
 * the run says staged and why; a plan that stages registers nothing.  The
 * values are the naive method's in every case. */
static int g_reg_calls, g_unreg_calls, g_refuse;

static pyr_status_t fake_register(void *ctx, void *ptr, size_t bytes)
{
    (void)ctx;
    (void)ptr;
    (void)bytes;
    g_reg_calls++;
    return g_refuse ? pyr_fail(PYR_ERR_NOMEM, "locked-memory limit (test)") : PYR_OK;
}

static void fake_unregister(void *ctx, void *ptr)
{
    (void)ctx;
    (void)ptr;
    g_unreg_calls++;
}

static void test_host_memory_outcome(void)
{
    for (int mode = 0; mode < 3; mode++) { /* 0 pinned, 1 registration refused, 2 staged as planned */
        const int64_t n[3] = {40, 30, 1};
        pyr_problem_t p;
        make_problem(&p, 2, n, PYR_DOUBLE, 7, PYR_INIT_SINE, 0);
        pyr_options_t o;
        pyr_options_default(&o);
        o.backend = PYR_BACKEND_CPU;
        o.method = PYR_METHOD_NAIVE;
        pyr_plan_t *plan = NULL;
        CHECK_OK(pyr_plan_create(&p, &o, &plan));
        if (!plan) continue;
        pyr_device_ops_t ops = pyr_device_cpu;
        ops.host_register = fake_register;
        ops.host_unregister = fake_unregister;
        plan->ops = &ops; /* same context: the CPU backend's */
        if (mode == 2) plan->host_memory = PYR_HOST_STAGE;
        g_reg_calls = g_unreg_calls = 0;
        g_refuse = mode == 1;
        pyr_field_t *f = NULL;
        CHECK_OK(pyr_field_create(&p, &f));
        CHECK_OK(pyr_field_init(f, &p));
        pyr_field_t *fields[1] = {f};
        pyr_run_info_t ri;
        memset(&ri, 0, sizeof ri);
        CHECK_OK(pyr_execute_fields(plan, fields, 1, NULL, &ri));
        const pyr_host_memory_t want = mode == 0 ? PYR_HOST_PIN : PYR_HOST_STAGE;
        CHECK(ri.host_memory == want, "mode %d: the run says %s", mode, pyr_host_memory_name(ri.host_memory));
        CHECK(g_reg_calls == (mode == 2 ? 0 : 1) && g_unreg_calls == (mode == 0 ? 1 : 0), "mode %d: %d registrations, %d releases", mode,
              g_reg_calls, g_unreg_calls);
        CHECK(mode != 1 || strstr(ri.host_note, "locked-memory limit (test)"), "mode 1: the note does not say why: '%s'", ri.host_note);
        CHECK(mode != 2 || strstr(ri.host_note, "as planned"), "mode 2: note '%s'", ri.host_note);
        CHECK(mode != 0 || ri.host_note[0] == 0, "mode 0: note '%s'", ri.host_note);
        pyr_field_t *ref = naive_reference(&p, NULL);
        CHECK(ref && f && first_difference(f, ref) < 0, "mode %d: differs from the naive method", mode);
        pyr_field_destroy(&ref);
        pyr_field_destroy(&f);
        pyr_plan_destroy(&plan);
    }
}

int main(int argc, char **argv)
{
    test_host_memory_outcome();
    int cases = argc > 1 ? atoi(argv[1]) : 300;
    uint64_t seed = argc > 2 ? (uint64_t)strtoull(argv[2], NULL, 10) : 1;
    CHECK(pyr_device_cpu.slots + pyr_device_cpu.lanes <= NQ && pyr_device_cpu.lanes >= 1,
          "the CPU runtime has %d slots and %d lanes; the test tracks %d queues and needs a lane", pyr_device_cpu.slots,
          pyr_device_cpu.lanes, NQ);
    test_check_catches_hazards();
    test_check_catches_lane_hazards();
    pyr_device_ops_t ops = hazard_ops();
    int failed = 0;
    for (int c = 0; c < cases && failed < 5; c++) failed += run_case(seed, c, &ops);
    printf("%ld sub-steps read the layer before their input (Chebyshev's sweeps through streamed pieces)\n", g_previous_reads);
    if (cases >= 20 && !failed) CHECK(g_previous_reads > 0, "no Chebyshev case ran");
    const long one0 = g_kernels_one, several0 = g_kernels_several;
    for (int c = 0; c < cases && failed < 5; c++) failed += run_skewed_case(seed, c, &ops);
    const long one = g_kernels_one - one0, several = g_kernels_several - several0;
    printf("skewed cases: %ld lane copies, %ld kernel calls of one step, %ld of several, %ld saves and %ld fills by the kernel, "
           "%ld of Chebyshev's sweeps\n",
           g_lane_copies, one, several, g_kernel_saves, g_kernel_fills, g_skewed_cheb);
    if (cases >= 20 && !failed) CHECK(g_skewed_cheb >= cases / 10, "only %ld skewed Chebyshev cases ran", g_skewed_cheb);
    /* the lane, both placements of a call's save and fill, and halos the kernel takes itself were exercised */
    if (cases >= 20 && !failed)
        CHECK(g_lane_copies > 0 && one > 0 && several > 0 && g_kernel_saves > 0 && g_kernel_fills > 0,
              "skewed cases took %ld lane copies, %ld one-step and %ld several-step calls, %ld saves and %ld fills by the kernel",
              g_lane_copies, one, several, g_kernel_saves, g_kernel_fills);
    const long before = g_kernels_one + g_kernels_several;
    for (int c = 0; c < cases / 3 && failed < 5; c++) failed += run_maxwell_skewed_case(seed, c, &ops);
    printf("skewed Maxwell cases: %ld pieces, %ld kernel calls\n", g_maxwell_pieces, g_kernels_one + g_kernels_several - before);
    if (cases >= 20 && !failed) CHECK(g_maxwell_pieces >= cases, "skewed Maxwell cases ran %ld pieces", g_maxwell_pieces);
    return check_report();
}
