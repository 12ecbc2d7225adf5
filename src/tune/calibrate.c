/* Calibration micro-runs (see calibrate.h).  Every figure is the best of a
 * few repetitions, so a busy machine makes it pessimistic rather than wild. */
#include "core/clock.h"
#include "tune/calibrate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/device.h"
#include "backend/kernels.h"
#include "backend/plugin.h"
#include "core/error.h"
#include "exec/exec.h"
#include "tune/longvector.h"

uint64_t pyr_cpu_cache_budget(int threads)
{
    long l2 = -1;
#ifdef _SC_LEVEL2_CACHE_SIZE
    l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    if (l2 <= 0) l2 = 1 << 20;
    return (uint64_t)l2 * (uint64_t)(threads > 0 ? threads : 1);
}

typedef struct {
    const pyr_device_ops_t *ops;
    const pyr_kernel_t *kernel;
    pyr_variant_t variant;
    pyr_coef_t coef;     /* the scheme's coefficients on a unit-spaced grid */
    unsigned used;       /* fields of the pieces (the scheme's fields_used on a plain problem) */
    unsigned pingpong;   /* of those, the ones with two buffers */
    int moved;           /* the field the transfers are timed on (the first used) */
    pyr_grid_dims_t grid; /* the piece as the whole grid (for kernels that need the grid's size) */
    int substeps;        /* the scheme's sub-steps per step */
    void *ctx;
    size_t elem;
    int split;           /* the axis pieces shrink along */
    int64_t ext[3];      /* piece extent */
    pyr_piece_t piece[2];
    pyr_piece_layout_t layout; /* of the piece buffers, as allocated */
    pyr_host_region_t host;
    int copies;          /* host region = `copies` pieces along the split axis */
    int host_malloced, host_registered;
    double target;       /* seconds a timed batch should last */
} cal_t;

static pyr_box_t piece_box(const cal_t *c)
{
    pyr_box_t b;
    for (int a = 0; a < 3; a++) {
        b.lo[a] = 0;
        b.hi[a] = c->ext[a];
    }
    return b;
}

/* The piece box moved to the r-th copy in the host region. */
static pyr_box_t host_slot(const cal_t *c, int r, const pyr_box_t *box)
{
    pyr_box_t b = *box;
    int64_t off = (int64_t)(r % c->copies) * c->ext[c->split];
    b.lo[c->split] += off;
    b.hi[c->split] += off;
    return b;
}

/* Transfers address the piece by grid coordinates: place the piece at the
 * r-th copy for the call. */
static pyr_status_t transfer(cal_t *c, int slot, int r, const pyr_box_t *box, int up)
{
    pyr_piece_t p = c->piece[slot];
    int64_t off = (int64_t)(r % c->copies) * c->ext[c->split];
    p.box.lo[c->split] += off;
    p.box.hi[c->split] += off;
    pyr_box_t b = host_slot(c, r, box);
    if (up) return c->ops->upload(c->ctx, slot, &p, c->moved, &c->host, &b);
    return c->ops->download(c->ctx, slot, &p, c->moved, &c->host, &b);
}

/* Piece `s` takes the shape c->ext in buffers of layout L. */
static void shape_piece(cal_t *c, int s, const pyr_piece_layout_t *L)
{
    pyr_piece_t *p = &c->piece[s];
    p->box = piece_box(c);
    p->pitch = L->pitch;
}

/* Both layers of piece `s` get defined values: the first nodes of the host
 * region, rows of c->ext[0] values (not waited for). */
static pyr_status_t fill_piece(cal_t *c, int s)
{
    pyr_box_t full = piece_box(c);
    pyr_host_region_t src = {c->host.data, full};
    for (int f = 0; f < PYR_MAX_FIELDS; f++) {
        if (!(c->used & (1u << f))) continue;
        PYR_TRY(c->ops->upload(c->ctx, s, &c->piece[s], f, &src, &full));
        if (c->pingpong & (1u << f)) PYR_TRY(c->ops->copy(c->ctx, s, &c->piece[s], f, 2, &c->piece[s], f, &full));
    }
    return PYR_OK;
}

/* Best time of one transfer of `box` over a few repetitions, each batch of
 * `batch` calls timed as a whole. */
static pyr_status_t time_transfer(cal_t *c, const pyr_box_t *box, int up, int batch, double *best)
{
    *best = INFINITY;
    int reps = 0;
    double start = pyr_now_s();
    while (reps < 3 || (reps < 50 && pyr_now_s() - start < c->target)) {
        double t0 = pyr_now_s();
        for (int i = 0; i < batch; i++) PYR_TRY(transfer(c, 0, reps * batch + i, box, up));
        PYR_TRY(c->ops->wait(c->ctx, 0));
        double t = (pyr_now_s() - t0) / batch;
        if (t < *best) *best = t;
        reps++;
    }
    return PYR_OK;
}

/* The kernel on n sub-steps of piece `slot`. */
static pyr_status_t compute(cal_t *c, int slot, const pyr_box_t *boxes, int n)
{
    /* each step's box for every sub-step of the scheme */
    pyr_box_t sub[64 * 4];
    const int k = c->substeps > 1 ? c->substeps : 1;
    if (n * k > 64 * 4) return pyr_fail(PYR_ERR_INTERNAL, "calibrate: %d sub-steps in one call", n * k);
    for (int l = 0; l < n; l++)
        for (int j = 0; j < k; j++) sub[l * k + j] = boxes[l];
    pyr_kernel_call_t call = {.piece = &c->piece[slot], .coef = &c->coef, .boxes = sub, .nboxes = n * k, .variant = &c->variant,
                              .grid = &c->grid};
    return c->kernel->run(c->ctx, slot, &call);
}

/* Four layers on the whole of slot 1's piece (slot 0's when there is one
 * slot), waited for: device memory swept as by a task's compute. */
static pyr_status_t sweep_other(cal_t *c)
{
    const pyr_coef_t *coef = &c->coef;
    const int s = c->ops->slots > 1 ? 1 : 0;
    pyr_box_t boxes[4];
    for (int l = 0; l < 4; l++) {
        boxes[l] = piece_box(c);
        for (int a = 0; a < coef->dims; a++) {
            boxes[l].lo[a] += 1;
            boxes[l].hi[a] -= 1;
        }
    }
    c->piece[s].cur = 0;
    PYR_TRY(compute(c, s, boxes, 4));
    return c->ops->wait(c->ctx, s);
}

/* Part-row transfers as blocks and cubes make them: the box's rows inside a
 * host array whose rows (and planes) are several times wider, as in a large
 * grid.  `ragged`: the host rows are one value longer and the box starts one
 * value in, so its rows start and end anywhere within a 64-byte line, as in
 * a grid of 2^k+1 nodes (a device-to-host DMA then writes partial lines).
 * `after`: each copy follows a compute call that sweeps the other
 * slot's piece, as every part-row copy of a pass follows a kernel (on the
 * GPU such copies run slower then: docs/performance.md#copies-beside-kernels).
 * Best seconds per call for each direction in best[0] (down), best[1] (up);
 * both stay INFINITY when the test could not run. */
static pyr_status_t time_wide(cal_t *c, int ragged, int after, pyr_box_t *box_out, double best[2])
{
    best[0] = best[1] = INFINITY;
    const int dims3 = c->ext[2] > 1 && c->split == 2;
    const int64_t spread = dims3 ? 4 : 8;
    pyr_box_t box = piece_box(c);
    if (dims3 && box.hi[2] > 64) box.hi[2] = 64;
    pyr_host_region_t wide;
    wide.box = box;
    wide.box.hi[0] = spread * c->ext[0] + ragged;
    if (dims3) wide.box.hi[1] = spread * c->ext[1];
    size_t bytes = (size_t)pyr_box_volume(&wide.box) * c->elem;
    wide.data = NULL;
    if (posix_memalign(&wide.data, 4096, bytes)) return PYR_OK; /* not worth failing calibration over */
    memset(wide.data, 0, bytes);
    pyr_status_t st = c->ops->host_register(c->ctx, wide.data, bytes);
    if (st != PYR_OK) {
        pyr_clear_error();
        free(wide.data);
        return PYR_OK;
    }
    /* the box in the middle of the wide rows */
    pyr_piece_t p = c->piece[0];
    int64_t off = (spread / 2) * c->ext[0] + ragged;
    box.lo[0] += off;
    box.hi[0] += off;
    p.box.lo[0] += off;
    p.box.hi[0] += off;
    if (dims3) p.box.hi[2] = p.box.lo[2] + c->ext[2];
    for (int up = 0; up < 2; up++) {
        int reps = 0;
        double start = pyr_now_s();
        while (st == PYR_OK && (reps < 3 || (reps < 30 && pyr_now_s() - start < c->target))) {
            if (after) st = sweep_other(c);
            if (st != PYR_OK) break;
            double t0 = pyr_now_s();
            st = up ? c->ops->upload(c->ctx, 0, &p, c->moved, &wide, &box) : c->ops->download(c->ctx, 0, &p, c->moved, &wide, &box);
            if (st == PYR_OK) st = c->ops->wait(c->ctx, 0);
            double t = pyr_now_s() - t0;
            if (t < best[up]) best[up] = t;
            reps++;
        }
    }
    c->ops->wait(c->ctx, 0);
    c->ops->host_unregister(c->ctx, wide.data);
    free(wide.data);
    *box_out = box;
    return st;
}

/* The wide-row costs (see time_wide), only for backends that pin the user's
 * grid (the GPU; the CPU copies rows with memcpy and keeps the half-width
 * figures): s per row of aligned part rows beyond what the same values cost
 * in one run (`contig`, s per value down / up; 0 when not slower, -1 when
 * not measured), the extra s per ragged row (0 when none) and the extra s per row
 * when each copy follows a kernel that sweeps a piece (0 when not slower),
 * as the copies of a pass run beside its kernels.  Per row, not per value:
 * a part row's cost is its own DMA run, so rows of 32767 of 32769 values (a
 * strip's interior) move almost as fast as whole rows, where rows of a few
 * thousand (blocks) do not (docs/performance.md#copies-beside-kernels). */
static pyr_status_t measure_wide(cal_t *c, double call, double row, const double contig[2],
                                 double part_row[2], double ragged[2], double busy[2])
{
    part_row[0] = part_row[1] = -1;
    ragged[0] = ragged[1] = busy[0] = busy[1] = 0;
    if (!c->ops->host_register || c->ext[0] < 64) return PYR_OK;
    pyr_box_t box, rbox, kbox;
    double al[2], rg[2], ak[2];
    PYR_TRY(time_wide(c, 0, 0, &box, al));
    PYR_TRY(time_wide(c, 1, 0, &rbox, rg));
    PYR_TRY(time_wide(c, 0, 1, &kbox, ak));
    if (!isfinite(al[0]) || !isfinite(al[1])) return PYR_OK;
    double v = (double)pyr_box_volume(&box), rows = (double)(pyr_box_extent(&box, 1) * pyr_box_extent(&box, 2));
    for (int up = 0; up < 2; up++) {
        double extra = (al[up] - call - rows * row - contig[up] * v) / rows;
        part_row[up] = extra > 0 ? extra : 0;
        if (isfinite(rg[up]) && rg[up] > al[up]) ragged[up] = (rg[up] - al[up]) / rows;
        /* more than 5% slower right after a kernel: a per-row cost (the rows' pages, we think) */
        if (isfinite(ak[up]) && ak[up] > 1.05 * al[up]) busy[up] = (ak[up] - al[up]) / rows;
    }
    return PYR_OK;
}

/* Costs of one direction: per value of whole rows (one contiguous run, as
 * strips and slabs move), per value and per row of part rows (row by row,
 * as blocks and cubes move: the host rows are the grid's, wider than the
 * box).  The host region's rows are the piece's width, so the full box is
 * contiguous and the half and narrow boxes are strided. */
static pyr_status_t measure_direction(cal_t *c, int up, double call, double *per_value, double *per_value_strided, double *per_row)
{
    pyr_box_t full = piece_box(c);
    double tf;
    PYR_TRY(time_transfer(c, &full, up, 1, &tf));
    double vf = (double)pyr_box_volume(&full), rows = (double)(c->ext[1] * c->ext[2]);
    *per_row = 0;
    *per_value_strided = 0;
    if (rows > 1 && c->ext[0] > 64) {
        pyr_box_t narrow = full, half = full;
        narrow.hi[0] = narrow.lo[0] + 16;
        half.hi[0] = half.lo[0] + c->ext[0] / 2;
        double tn, th;
        PYR_TRY(time_transfer(c, &narrow, up, 1, &tn));
        PYR_TRY(time_transfer(c, &half, up, 1, &th));
        double vn = (double)pyr_box_volume(&narrow), vh = (double)pyr_box_volume(&half);
        double vs = (th - tn) / (vh - vn);
        if (!(vs > 0)) vs = th / vh;
        double row = (tn - call - vn * vs) / rows;
        *per_row = row > 0 ? row : 0;
        double s = (th - call - rows * *per_row) / vh;
        *per_value_strided = s > 0 ? s : th / vh;
    }
    double v = (tf - call - rows * *per_row) / vf;
    *per_value = v > 0 ? v : tf / vf;
    if (*per_value_strided == 0) *per_value_strided = *per_value;
    return PYR_OK;
}

/* Compute h layers shrinking along the split axis (a task's pyramid);
 * returns the best seconds per call and the values computed. */
static pyr_status_t time_compute(cal_t *c, int h, int tiny, double *best, double *values, double *rows)
{
    const pyr_coef_t *coef = &c->coef;
    pyr_box_t boxes[64];
    double vol = 0, nrows = 0;
    /* h layers: h / sub-steps steps of the scheme (each step's box serves its sub-steps) */
    const int k = c->substeps > 1 ? c->substeps : 1;
    const int layers = h;
    h = layers / k > 0 ? layers / k : 1;
    for (int l = 0; l < h; l++) {
        pyr_box_t b = piece_box(c);
        for (int a = 0; a < coef->dims; a++) {
            if (tiny) {
                b.lo[a] = c->ext[a] / 2;
                b.hi[a] = b.lo[a] + 1;
                continue;
            }
            b.lo[a] += 1;
            b.hi[a] -= 1;
            if (a == c->split) {
                b.lo[a] += l;
                b.hi[a] -= l;
            }
        }
        boxes[l] = b;
        vol += (double)pyr_box_volume(&b) * k;
        nrows += (double)(pyr_box_extent(&b, 1) * pyr_box_extent(&b, 2)) * k;
    }
    (void)layers;
    *values = vol;
    *rows = nrows;
    *best = INFINITY;
    int reps = 0;
    double start = pyr_now_s();
    while (reps < 3 || (reps < 100 && pyr_now_s() - start < c->target)) {
        double t0 = pyr_now_s();
        int n = 0;
        do {
            c->piece[0].cur = 0;
            PYR_TRY(compute(c, 0, boxes, h));
            n++;
            if (n % 4 == 0) PYR_TRY(c->ops->wait(c->ctx, 0));
        } while (n < 64 && pyr_now_s() - t0 < c->target / 10);
        PYR_TRY(c->ops->wait(c->ctx, 0));
        double t = (pyr_now_s() - t0) / n;
        if (t < *best) *best = t;
        reps++;
    }
    return PYR_OK;
}

/* The per-row part of compute (see run): two pieces of equal size, the
 * calibration's and one 4 times wider along x, 16 layers each. */
static pyr_status_t measure_compute_row(cal_t *c, pyr_model_constants_t *k)
{
    const int h = 16, split = c->split;
    if (split == 0 || c->ext[split] / 4 < 2 * h + 3) return PYR_OK;
    double t[2] = {0, 0}, v[2] = {0, 0}, r[2] = {0, 0};
    PYR_TRY(time_compute(c, h, 0, &t[0], &v[0], &r[0]));
    const int64_t keep[3] = {c->ext[0], c->ext[1], c->ext[2]};
    const pyr_piece_t keep_piece = c->piece[0];
    c->ext[0] *= 4;
    c->ext[split] /= 4;
    pyr_piece_layout_t L = pyr_piece_layout(c->ops, c->ext, c->elem);
    pyr_status_t st = PYR_OK;
    const int ok = L.layer_bytes <= c->layout.layer_bytes;
    if (ok) {
        shape_piece(c, 0, &L);
        st = fill_piece(c, 0);
        if (st == PYR_OK) st = c->ops->wait(c->ctx, 0);
        if (st == PYR_OK) st = time_compute(c, h, 0, &t[1], &v[1], &r[1]);
    }
    for (int a = 0; a < 3; a++) c->ext[a] = keep[a];
    c->piece[0] = keep_piece;
    PYR_TRY(st);
    if (!ok) return PYR_OK;
    /* the calibration piece's own values back (the wider shape rearranged them) */
    PYR_TRY(fill_piece(c, 0));
    PYR_TRY(c->ops->wait(c->ctx, 0));
    /* t - launches = compute * v + compute_row * r, for both shapes */
    double a0 = t[0] - h * k->launch, a1 = t[1] - h * k->launch;
    double det = r[0] * v[1] - r[1] * v[0];
    if (det != 0) {
        double row = (a0 * v[1] - a1 * v[0]) / det;
        if (row > 0 && row * r[0] < 0.5 * a0) k->compute_row = row;
    }
    return PYR_OK;
}

static pyr_status_t run(cal_t *c, const pyr_calibrate_opts_t *o, pyr_model_constants_t *k)
{
    const size_t elem = c->elem;
    /* Piece shape: the size plans use on this backend. */
    double values;
    if (o->backend == PYR_BACKEND_CPU) values = (double)pyr_cpu_cache_budget(o->threads > 0 ? o->threads : pyr_cpu_threads()) / (2.0 * (double)elem);
    else values = 16.0 * 1048576.0;
    c->ext[0] = c->ext[1] = c->ext[2] = 1;
    if (o->dims == 1) {
        c->ext[0] = (int64_t)values;
        c->split = 0;
    } else if (o->dims == 2) {
        c->ext[0] = o->backend == PYR_BACKEND_CPU ? 1024 : 4096;
        c->ext[1] = (int64_t)(values / (double)c->ext[0]);
        c->split = 1;
    } else {
        /* GPU: 360 interior columns and rows fill the fused 3D kernel's tiles about as well as the
         * pieces of plans on large grids do (hundreds of nodes wide, 95-97% of the tiles used); 254
         * used 70% of them and priced every plan's compute high */
        c->ext[0] = c->ext[1] = o->backend == PYR_BACKEND_CPU ? 64 : 362;
        c->ext[2] = (int64_t)(values / (double)(c->ext[0] * c->ext[1]));
        c->split = 2;
    }
    if (c->ext[c->split] < 8) c->ext[c->split] = 8;
    c->layout = pyr_piece_layout(c->ops, c->ext, elem);
    int nslots = c->ops->slots > 1 ? 2 : 1;
    for (int s = 0; s < nslots; s++) {
        shape_piece(c, s, &c->layout);
        c->piece[s].nfields = PYR_MAX_FIELDS;
        for (int f = 0; f < PYR_MAX_FIELDS; f++)
            for (int l = 0; l < ((c->pingpong >> f) & 1 ? 2 : 1); l++)
                if (c->used & (1u << f)) PYR_TRY(c->ops->dev_alloc(c->ctx, c->layout.layer_bytes, &c->piece[s].buf[f][l]));
    }
    for (int a = 0; a < 3; a++) c->grid.n[a] = c->ext[a];
    /* Host region: several pieces long, so the CPU copies come from memory, not cache. */
    double piece_bytes = values * (double)elem;
    c->copies = o->backend == PYR_BACKEND_CPU ? (int)ceil(64.0 * 1048576.0 / piece_bytes) : 2;
    if (c->copies < 2) c->copies = 2;
    c->host.box = piece_box(c);
    c->host.box.hi[c->split] *= c->copies;
    size_t host_bytes = (size_t)pyr_box_volume(&c->host.box) * elem;
    /* The executor moves the user's own memory, pinned with host_register
     * where the backend has it (registered pages can move slower than
     * host_alloc's): measure that. */
    if (c->ops->host_register) {
        c->host.data = malloc(host_bytes);
        if (!c->host.data) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for calibration");
        c->host_malloced = 1;
        /* a refused registration leaves the copies staged: measure those, as a run would make them */
        if (c->ops->host_register(c->ctx, c->host.data, host_bytes) == PYR_OK) c->host_registered = 1;
        else pyr_clear_error();
    } else {
        PYR_TRY(c->ops->host_alloc(c->ctx, host_bytes, &c->host.data));
    }
    int64_t nhost = pyr_box_volume(&c->host.box);
    for (int64_t i = 0; i < nhost; i++) {
        if (elem == 8) ((double *)c->host.data)[i] = 0.25 + (double)(i % 7) * 0.0625;
        else ((float *)c->host.data)[i] = 0.25f + (float)(i % 7) * 0.0625f;
    }
    pyr_box_t full = piece_box(c);
    for (int s = 0; s < nslots; s++) PYR_TRY(fill_piece(c, s));
    PYR_TRY(c->ops->wait(c->ctx, 0));
    if (nslots > 1) PYR_TRY(c->ops->wait(c->ctx, 1));

    /* Per call: a one-value upload. */
    pyr_box_t one = full;
    for (int a = 0; a < 3; a++) one.hi[a] = one.lo[a] + 1;
    PYR_TRY(time_transfer(c, &one, 1, 64, &k->call));

    PYR_TRY(measure_direction(c, 1, k->call, &k->up, &k->up_strided, &k->row));
    double row_down;
    PYR_TRY(measure_direction(c, 0, k->call, &k->down, &k->down_strided, &row_down));
    k->row = 0.5 * (k->row + row_down);
    double part_row[2], ragged[2], busy[2];
    const double contig[2] = {k->down, k->up};
    PYR_TRY(measure_wide(c, k->call, k->row, contig, part_row, ragged, busy));
    k->up_row_busy = busy[1];
    k->down_row_busy = busy[0];
    if (part_row[0] >= 0 && part_row[1] >= 0) {
        /* measured in the grid-like host array: part rows cost per row, their values as in one run */
        k->up_strided = k->up;
        k->down_strided = k->down;
        k->up_part_row = part_row[1];
        k->down_part_row = part_row[0];
    }
    k->up_ragged = ragged[1];
    k->down_ragged = ragged[0];

    /* Both directions at once (backends that overlap slots). */
    k->up_both = k->up;
    k->down_both = k->down;
    if (nslots > 1) {
        /* The shared rate varies more between tries than one direction alone: take the best of
         * more, and of `burst` pieces each way, so that the two streams' start skew (some tens of
         * microseconds) stays small against what they move. */
        const int burst = 4;
        double best = INFINITY, start = pyr_now_s();
        for (int r = 0; r < 5 || (r < 40 && pyr_now_s() - start < 3 * c->target); r++) {
            double t0 = pyr_now_s();
            for (int b = 0; b < burst; b++) {
                PYR_TRY(transfer(c, 0, 0, &full, 1));
                PYR_TRY(transfer(c, 1, 1, &full, 0));
            }
            PYR_TRY(c->ops->wait(c->ctx, 0));
            PYR_TRY(c->ops->wait(c->ctx, 1));
            double t = pyr_now_s() - t0;
            if (t < best) best = t;
        }
        double v = (double)pyr_box_volume(&full), rows = (double)(c->ext[1] * c->ext[2]);
        /* each direction moved burst * v values in `best`; the slower of the two sets the pace */
        double per = (best - burst * (k->call + rows * k->row)) / (burst * v);
        k->up_both = per > k->up ? per : k->up;
        k->down_both = per > k->down ? per : k->down;
    }

    /* Per layer of a compute call: one node per layer. */
    double t, v, rows;
    PYR_TRY(time_compute(c, 16, 1, &t, &v, &rows));
    k->launch = t / 16;

    /* Per row of a layer: the same 16 layers on the piece and on one 4 times
     * wider and 4 times shorter (as strips and slabs are, next to blocks and
     * cubes); t = launches + compute * values + compute_row * rows. */
    k->compute_row = 0;
    PYR_TRY(measure_compute_row(c, k));

    /* Compute cost by layers per call. */
    int last = -1;
    for (int i = 0; i < PYR_MODEL_NLAYERS; i++) {
        int h = pyr_model_layers[i];
        if (2 * h + 3 > c->ext[c->split]) break;
        PYR_TRY(time_compute(c, h, 0, &t, &v, &rows));
        double per = (t - (double)h * k->launch - rows * k->compute_row) / v;
        k->compute[i] = per > 0.25 * t / v ? per : 0.25 * t / v;
        last = i;
    }
    if (last < 0) return pyr_fail(PYR_ERR_INTERNAL, "calibration piece too small to compute on");
    for (int i = last + 1; i < PYR_MODEL_NLAYERS; i++) k->compute[i] = k->compute[last];

    /* Host-to-host copies (held-back bands). */
    double best = INFINITY;
    for (int r = 0; r < 5; r++) {
        double t0 = pyr_now_s();
        /* as the executor writes bands: a box copy, all cores when large;
         * the first half of the host region from its second half */
        pyr_box_t hb = c->host.box;
        hb.hi[c->split] = hb.lo[c->split] + (hb.hi[c->split] - hb.lo[c->split]) / 2;
        pyr_host_region_t dst = {c->host.data, hb}, src = {(char *)c->host.data + (size_t)pyr_box_volume(&hb) * elem, hb};
        pyr_host_copy_box(&dst, &src, &hb, elem);
        double tt = pyr_now_s() - t0;
        if (tt < best) best = tt;
    }
    k->host = best / ((double)(host_bytes / 2 / elem));
    if (!pyr_model_constants_valid(k))
        return pyr_fail(PYR_ERR_INTERNAL, "calibration gave unusable constants (a timer problem?); try again on a quieter machine");
    return PYR_OK;
}

pyr_status_t pyr_calibrate_problem(pyr_equation_t equation, int dims, pyr_precision_t precision, pyr_problem_t *q)
{
    if (dims < 1 || dims > 3) return pyr_fail(PYR_ERR_ARG, "calibrate: dims = %d; use 1, 2 or 3", dims);
    pyr_problem_default(q);
    q->equation = equation;
    q->dims = dims;
    q->precision = precision;
    for (int a = 0; a < 3; a++) {
        q->n[a] = a < dims ? 11 : 1;
        q->length[a] = 10.0;
    }
    q->heat.dt = 0.4 / dims;
    q->poisson.rhs = PYR_RHS_SINE;
    q->init = PYR_INIT_RANDOM; /* a start every scheme takes (as the pass of cubes) */
    const pyr_scheme_t *scheme = pyr_scheme_of(equation);
    if (!scheme) return pyr_fail(PYR_ERR_ARG, "calibrate: equation %d is no registered scheme", (int)equation);
    /* the scheme's own refusal (Maxwell's grids are 2D or 3D) says why the set does not exist */
    if (scheme->validate(q) != PYR_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", pyr_last_error());
        return pyr_fail(PYR_ERR_UNSUPPORTED, "%s", why);
    }
    return PYR_OK;
}

pyr_status_t pyr_calibrate_backend(pyr_backend_kind_t backend, pyr_backend_kind_t *kind)
{
    *kind = backend == PYR_BACKEND_AUTO ? (pyr_backend_available(PYR_BACKEND_CUDA) ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU) : backend;
    if (!pyr_device_get(*kind))
        return pyr_fail(PYR_ERR_NODEVICE, "calibrate --backend %s: %s", pyr_backend_name(*kind),
                        *kind == PYR_BACKEND_CUDA ? pyr_cuda_missing() : "this pyrgrid was built without that backend");
    if (*kind == PYR_BACKEND_CUDA && !pyr_backend_available(*kind))
        return pyr_fail(PYR_ERR_NODEVICE, "calibrate --backend cuda: no usable GPU here; use --backend cpu");
    return PYR_OK;
}

pyr_status_t pyr_calibrate_check(const pyr_calibrate_opts_t *o)
{
    if (o->dims < 1 || o->dims > 3) return pyr_fail(PYR_ERR_ARG, "calibrate: dims = %d; use 1, 2 or 3", o->dims);
    if (!strncmp(o->kernel, "longvector", 10))
        return pyr_fail(PYR_ERR_CONFIG, "calibrate --kernel longvector: the long-vector method is no pyramid kernel; every calibration "
                        "of the CUDA backend's 2D heat kernel measures its constants (t_kernel, t_add, t_saxpy, t_scal, threads): "
                        "calibrate without --kernel");
    pyr_backend_kind_t kind;
    PYR_TRY(pyr_calibrate_backend(o->backend, &kind));
    pyr_problem_t q;
    PYR_TRY(pyr_calibrate_problem(o->equation, o->dims, o->precision, &q));
    const pyr_kernel_t *kernel = pyr_kernel_find(o->equation, kind);
    if (!kernel)
        return pyr_fail(PYR_ERR_UNSUPPORTED, "calibrate: the %s backend has no kernel for the %s equation", pyr_backend_name(kind),
                        pyr_equation_name(o->equation));
    pyr_variant_t v;
    return pyr_kernel_variant(kernel, o->kernel, o->dims, o->precision, &v);
}

pyr_status_t pyr_calibrate(const pyr_calibrate_opts_t *o, pyr_model_constants_t *k, char *kernel, size_t ksize)
{
    if (o->lv_threads) *o->lv_threads = 0;
    PYR_TRY(pyr_calibrate_check(o));
    pyr_backend_kind_t kind;
    PYR_TRY(pyr_calibrate_backend(o->backend, &kind));
    cal_t c;
    memset(&c, 0, sizeof c);
    c.ops = pyr_device_get(kind);
    pyr_calibrate_opts_t oo = *o;
    oo.backend = kind;
    c.elem = pyr_precision_size(o->precision);
    c.kernel = pyr_kernel_find(o->equation, kind);
    PYR_TRY(pyr_kernel_variant(c.kernel, o->kernel, o->dims, o->precision, &c.variant));
    {
        /* the scheme's coefficients on a unit-spaced grid of the calibration's dimension */
        pyr_problem_t q;
        PYR_TRY(pyr_calibrate_problem(o->equation, o->dims, o->precision, &q));
        const pyr_scheme_t *scheme = pyr_scheme_of(o->equation);
        scheme->coefficients(&q, &c.coef);
        c.used = scheme->fields_used(&q);
        for (int f = 0; f < scheme->nfields; f++)
            if (scheme->field[f].role == PYR_FIELD_PINGPONG) c.pingpong |= 1u << f;
        c.substeps = scheme->nsub;
        while (c.moved < PYR_MAX_FIELDS - 1 && !(c.used & (1u << c.moved))) c.moved++;
    }
    c.target = 0.03 * (o->effort > 0 ? o->effort : 1.0);
    pyr_options_t opt;
    pyr_options_default(&opt);
    opt.backend = kind;
    opt.device = o->device;
    opt.threads = o->threads;
    PYR_TRY(c.ops->create(&opt, o->precision, &c.ctx));
    memset(k, 0, sizeof *k);
    pyr_status_t st = run(&c, &oo, k);
    /* the long-vector method's constants ride on the CUDA 2D heat record (tune/longvector.h) */
    if (st == PYR_OK && kind == PYR_BACKEND_CUDA && o->equation == PYR_EQ_HEAT && o->dims == 2)
        st = pyr_calibrate_longvector(&oo, &k->lv, o->lv_threads, NULL);
    for (int s = 0; s < 2; s++) c.ops->wait(c.ctx, s < c.ops->slots ? s : 0);
    for (int s = 0; s < 2; s++)
        for (int f = 0; f < PYR_MAX_FIELDS; f++)
            for (int l = 0; l < 2; l++)
                if (c.piece[s].buf[f][l]) c.ops->dev_free(c.ctx, c.piece[s].buf[f][l]);
    if (st == PYR_OK && kernel) pyr_variant_format(&c.variant, kernel, ksize);
    if (c.host_registered) c.ops->host_unregister(c.ctx, c.host.data);
    if (c.host_malloced) free(c.host.data);
    else if (c.host.data) c.ops->host_free(c.ctx, c.host.data);
    c.ops->destroy(c.ctx);
    /* last, with the device's memory free again: what a real pass of cubes adds (calibrate_pass.c) */
    if (st == PYR_OK) {
        /* a host too small for the pass's grid keeps the other constants, the cost unknown (0) */
        st = pyr_calibrate_pass(&oo, oo.kernel, k, o->pass);
        if (st == PYR_ERR_NOMEM || st == PYR_ERR_BUDGET) {
            if (o->pass) snprintf(o->pass->note, sizeof o->pass->note, "%s", pyr_last_error());
            pyr_clear_error();
            k->up_row_both = 0;
            st = PYR_OK;
        }
    }
    return st;
}
