/* The performance model (see model.h for the formulas). */
#include "plan/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "plan/plan.h"
#include "backend/device.h"
#include "plan/skewed.h"

const int pyr_model_layers[PYR_MODEL_NLAYERS] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 24, 32, 48, 64};

pyr_model_constants_t pyr_model_default(pyr_backend_kind_t backend, int dims, pyr_precision_t precision)
{
    pyr_model_constants_t k;
    memset(&k, 0, sizeof k); /* and every field not set below: lv (threads = 0, not calibrated) */
    double elem = precision == PYR_DOUBLE ? 8.0 : 4.0;
    if (backend == PYR_BACKEND_CUDA) {
        k.up = k.down = elem / 55e9;
        k.up_both = k.down_both = elem / 47.5e9;
        k.row = 0;
        k.call = 5e-6;
        k.launch = 4e-6;
        k.host = elem / 40e9; /* host band copies by several threads: calibration finds several times this on a GPU host */
        k.up_strided = elem / 45e9;
        k.down_strided = elem / 35e9;
        k.up_ragged = k.down_ragged = 0;
        k.up_row_busy = k.down_row_busy = 0;
        k.up_part_row = k.down_part_row = 0;
        k.up_row_both = 0;
        k.compute_row = 0;
        /* float rates of one layer per call and of five or more, somewhat
         * below what calibration finds for the fused kernels on a current GPU,
         * double half: rates far below the kernels' price compute too high
         * against the transfers and lead uncalibrated plans to heights far
         * below the best (docs/model-and-wisdom.md#the-constants) */
        double one = dims == 3 ? 300e9 : dims == 2 ? 400e9 : 200e9;
        double fused = dims == 3 ? 500e9 : dims == 2 ? 1200e9 : 200e9;
        double scale = precision == PYR_DOUBLE ? 2.0 : 1.0;
        for (int i = 0; i < PYR_MODEL_NLAYERS; i++) {
            int h = pyr_model_layers[i];
            double rate = h == 1 ? one : h < 5 ? one + (fused - one) * (h - 1) / 4.0 : fused;
            k.compute[i] = scale / rate;
        }
    } else {
        k.up = k.down = k.up_both = k.down_both = elem / 4e9;
        k.row = 20e-9;
        k.call = 1e-6;
        k.launch = 3e-6;
        k.host = elem / 4e9;
        k.up_strided = k.down_strided = elem / 3e9;
        k.up_ragged = k.down_ragged = 0;
        k.up_row_busy = k.down_row_busy = 0;
        k.up_part_row = k.down_part_row = 0;
        k.up_row_both = 0;
        k.compute_row = 0;
        double rate = dims == 3 ? 0.7e9 : dims == 2 ? 1.0e9 : 1.5e9;
        if (precision == PYR_FLOAT) rate *= 1.6;
        for (int i = 0; i < PYR_MODEL_NLAYERS; i++) k.compute[i] = 1.0 / rate;
    }
    return k;
}

double pyr_model_compute_cost(const pyr_model_constants_t *k, int64_t h)
{
    if (h <= pyr_model_layers[0]) return k->compute[0];
    for (int i = 1; i < PYR_MODEL_NLAYERS; i++) {
        if (h <= pyr_model_layers[i]) {
            double a = pyr_model_layers[i - 1], b = pyr_model_layers[i], f = ((double)h - a) / (b - a);
            return k->compute[i - 1] + f * (k->compute[i] - k->compute[i - 1]);
        }
    }
    return k->compute[PYR_MODEL_NLAYERS - 1];
}

static int ok_nonneg(double x) { return isfinite(x) && x >= 0 && x < 1.0; }

int pyr_model_constants_valid(const pyr_model_constants_t *k)
{
    if (!ok_nonneg(k->up) || !ok_nonneg(k->down) || !ok_nonneg(k->up_both) || !ok_nonneg(k->down_both) || !ok_nonneg(k->row) ||
        !ok_nonneg(k->call) || !ok_nonneg(k->launch) || !ok_nonneg(k->host) || !ok_nonneg(k->up_strided) ||
        !ok_nonneg(k->down_strided) || !ok_nonneg(k->up_ragged) || !ok_nonneg(k->down_ragged) ||
        !ok_nonneg(k->compute_row) || !ok_nonneg(k->up_row_busy) || !ok_nonneg(k->down_row_busy) || !ok_nonneg(k->up_part_row) ||
        !ok_nonneg(k->down_part_row) || !ok_nonneg(k->up_row_both))
        return 0;
    for (int i = 0; i < PYR_MODEL_NLAYERS; i++)
        if (!ok_nonneg(k->compute[i]) || k->compute[i] <= 0) return 0;
    return 1;
}

pyr_status_t pyr_model_fit_up_row_both(const pyr_plan_t *plan, const pyr_model_constants_t *k, int64_t h, double measured,
                                       double *fit, int *explained)
{
    *fit = 0;
    *explained = 0;
    if (!(measured > 0) || !isfinite(measured))
        return pyr_fail(PYR_ERR_ARG, "fitting the model to a pass: measured %g s; need a positive time", measured);
    pyr_model_constants_t kk = *k;
    pyr_model_prediction_t pr;
    kk.up_row_both = 1e-9;
    PYR_TRY(pyr_model_predict_pass(plan, &kk, PYR_MODEL_OVERLAPPED, h, &pr));
    /* the most it may be: every upload beside a download at half its rate */
    const double cap = pr.upload_beside > 0 ? 1e-9 * pr.upload / pr.upload_beside : 0;
    kk.up_row_both = 0;
    PYR_TRY(pyr_model_predict_pass(plan, &kk, PYR_MODEL_OVERLAPPED, h, &pr));
    if (pr.seconds >= measured) {
        *explained = 1;
        return PYR_OK;
    }
    if (!(cap > 0)) return PYR_OK; /* nothing to fit */
    kk.up_row_both = cap;
    PYR_TRY(pyr_model_predict_pass(plan, &kk, PYR_MODEL_OVERLAPPED, h, &pr));
    if (pr.seconds < measured) return PYR_OK; /* more than this cost can be */
    double lo = 0, hi = cap;
    for (int i = 0; i < 80 && hi - lo > 1e-6 * hi; i++) {
        kk.up_row_both = 0.5 * (lo + hi);
        PYR_TRY(pyr_model_predict_pass(plan, &kk, PYR_MODEL_OVERLAPPED, h, &pr));
        if (pr.seconds >= measured) hi = kk.up_row_both;
        else lo = kk.up_row_both;
    }
    *fit = 0.5 * (lo + hi);
    *explained = 1;
    return PYR_OK;
}

double pyr_model_paper(const pyr_counters_t *c, double tau_c, double tau_a)
{
    return (double)(c->uploaded + c->downloaded) * tau_c + (double)c->computed * tau_a;
}

/* ------------------------------------------------------------ task stages */

typedef struct {
    double u, c, d; /* seconds with the other copy direction idle */
    double host;    /* band copies into the grid (the executor's writer thread) */
    double ub, db;  /* rate of the upload / download while a kernel runs, as a fraction of u / d's (<= 1) */
    double ud;      /* rate of the upload while a download runs, as a fraction of its "both" rate (<= 1) */
} stage_t;

static int64_t rows_of(const pyr_box_t *b)
{
    return pyr_box_empty(b) ? 0 : pyr_box_extent(b, 1) * pyr_box_extent(b, 2);
}

/* Seconds to move a box between the grid (rows of nx values of elem bytes)
 * and the device: one contiguous run when the box spans whole rows, else a
 * row-by-row (strided) copy, whose rows cost extra each (a strip's rows of
 * 32767 of 32769 values move as fast as whole ones, a block's of 4096 do
 * not) and more when they do not start and end on 64-byte boundaries of the
 * host memory. */
/* The rows of a box in a grid of rows of nx values that up_row_both prices,
 * each in proportion to the share of its host row that the box leaves out:
 * rows of nearly the grid's width (a slab's or a strip's interior, 1023 of
 * 1025 values) move as one run and are not slowed beside downloads (the 3D
 * slab sweeps are priced well without it), a cube's rows (~450 of 1025)
 * are; 0 for a box that moves as one contiguous run. */
static double part_rows(const pyr_box_t *b, int64_t nx)
{
    const double rows = (double)rows_of(b);
    if (pyr_box_empty(b) || pyr_box_extent(b, 0) >= nx || rows <= 1) return 0;
    return rows * (double)(nx - pyr_box_extent(b, 0)) / (double)nx;
}

static double transfer_cost(const pyr_model_constants_t *k, const pyr_box_t *b, int64_t nx, int64_t elem, int up, double *busy)
{
    if (busy) *busy = 0;
    if (pyr_box_empty(b)) return 0;
    const double rows = (double)rows_of(b), v = (double)pyr_box_volume(b);
    const int strided = pyr_box_extent(b, 0) < nx && rows > 1;
    const double s = up ? k->up_strided : k->down_strided, c = up ? k->up : k->down;
    double t = k->call + (strided && s > 0 ? s : c) * v + k->row * rows;
    if (strided) t += (up ? k->up_part_row : k->down_part_row) * rows;
    const int ragged = (nx * elem) % 64 != 0 || (b->lo[0] * elem) % 64 != 0 || (b->hi[0] * elem) % 64 != 0;
    if (strided && ragged) t += (up ? k->up_ragged : k->down_ragged) * rows;
    /* rows on different host pages: extra time per row while a kernel runs */
    if (busy && strided && (nx - pyr_box_extent(b, 0)) * elem >= 4096) *busy = (up ? k->up_row_busy : k->down_row_busy) * rows;
    return t;
}

/* Compute time of a call of h layers doing `work` seconds of device work.  On a
 * backend whose operations are queued (plan->ops->concurrent: the host issues
 * the next launches while the device runs the current ones) the per-layer
 * launch cost overlaps the work and only bounds it from below; on the CPU
 * backend each layer's parallel region adds to it.  (Measured on the GPU, the
 * additive form priced a pass's compute high by about its launches:
 * docs/model-and-wisdom.md#the-model.) */
static double compute_time(const pyr_plan_t *plan, const pyr_model_constants_t *k, int64_t h, double work)
{
    double launches = k->launch * (double)h;
    return plan->ops->concurrent ? fmax(launches, work) : launches + work;
}

/* Layers of field f a streamed piece moves each way: both of a ping-pong
 * field whose layer before is read too (plan->previous), else one. */
static double field_layers(const pyr_plan_t *plan, int f)
{
    return plan->previous && plan->scheme->field[f].role == PYR_FIELD_PINGPONG ? 2.0 : 1.0;
}

/* Stage times of every task of a pass of height h. */
static void task_stages(const pyr_plan_t *plan, const pyr_model_constants_t *k, int64_t h, stage_t *st, pyr_model_prediction_t *sum)
{
    const pyr_problem_t *p = &plan->problem;
    int64_t nt = pyr_plan_tasks(plan);
    double ccost = pyr_model_compute_cost(k, pyr_plan_layers(plan, h));
    const int64_t elem = (int64_t)pyr_precision_size(p->precision);
    /* every state field moves as the one field of the heat scheme; inputs only go up */
    const int ninput = pyr_plan_inputs(plan), nstate = plan->npp + plan->nfixed - ninput;
    const int64_t layers = pyr_plan_layers(plan, h);
    int unsplit_faces = 0;
    for (int a = 0; a < p->dims; a++)
        if (!plan->split[a]) unsplit_faces += 2;
    for (int64_t t = 0; t < nt; t++) {
        pyr_task_t task;
        pyr_plan_task(plan, t, h, &task);
        double ux = 0, dx = 0, x = 0, u = 0, uboth = 0;
        for (int f = 0; f < plan->scheme->nfields; f++) {
            if (!((plan->fields >> f) & 1)) continue;
            pyr_box_t parts[2];
            const int np = pyr_plan_field_boxes(plan, f, plan->scheme->field[f].role == PYR_FIELD_INPUT ? &task.input : &task.upload, parts);
            const double times = field_layers(plan, f);
            for (int q = 0; q < np; q++) {
                u += times * transfer_cost(k, &parts[q], p->n[0], elem, 1, &x);
                ux += times * x;
                uboth += times * k->up_row_both * part_rows(&parts[q], p->n[0]);
            }
        }

        int copies = unsplit_faces;
        for (int a = 0; a < p->dims; a++) {
            if (!plan->split[a]) continue;
            if (task.src.lo[a] == 0) copies++;
            if (task.src.hi[a] == p->n[a]) copies++;
        }
        copies *= nstate;
        double comp = 0, comp_rows = 0;
        for (int64_t l = 1; l <= layers; l++) {
            pyr_box_t b = pyr_plan_layer_box(plan, &task, h, l);
            comp += (double)pyr_box_volume(&b);
            comp_rows += (double)rows_of(&b);
        }
        double c = compute_time(plan, k, layers, k->call * copies + ccost * comp + k->compute_row * comp_rows);

        pyr_box_t main_box, bands[3];
        int64_t last[3];
        int nb = pyr_plan_bands(plan, &task, h, &main_box, bands, last);
        double d = 0, hc = 0;
        for (int f = 0; f < plan->scheme->nfields; f++) {
            if (!((plan->fields >> f) & 1) || plan->scheme->field[f].role == PYR_FIELD_INPUT) continue;
            pyr_box_t parts[2];
            const double times = field_layers(plan, f);
            int np = pyr_plan_field_boxes(plan, f, &main_box, parts);
            for (int q = 0; q < np; q++) {
                d += times * transfer_cost(k, &parts[q], p->n[0], elem, 0, &x);
                dx += times * x;
            }
            for (int b = 0; b < nb; b++) {
                np = pyr_plan_field_boxes(plan, f, &bands[b], parts);
                for (int q = 0; q < np; q++) {
                    if (pyr_plan_band_direct(plan, &task, &bands[b], t, last[b])) {
                        /* straight into the grid once the next task has uploaded */
                        d += times * transfer_cost(k, &parts[q], p->n[0], elem, 0, &x);
                        dx += times * x;
                        continue;
                    }
                    /* into a staging buffer of the band's own width: one contiguous run on the host side */
                    d += times * transfer_cost(k, &parts[q], pyr_box_extent(&parts[q], 0), elem, 0, &x);
                    dx += times * x;
                    hc += times * k->host * (double)pyr_box_volume(&parts[q]);
                }
            }
        }
        st[t].u = u;
        st[t].c = c;
        st[t].d = d;
        st[t].host = hc;
        st[t].ub = u > 0 ? u / (u + ux) : 1.0;
        st[t].db = d > 0 ? d / (d + dx) : 1.0;
        st[t].ud = u > 0 ? u / (u + uboth) : 1.0;
        sum->upload_beside += uboth;
        sum->upload += u;
        sum->compute += c;
        sum->download += d;
        sum->host += hc;
    }
}

/* One call of a skewed piece, priced: its kernel, the fill of its input
 * (halo planes and its window's boundary faces: into the input alone where
 * the kernel writes only its result, else into both layers), the save of its
 * top planes (copies, or the kernel's own reads and writes where it takes
 * them: kernels.h halo), the faces of its result (where it is the piece's last call),
 * and whether the kernel writes only its result (the executor's question,
 * plan/skewed.h).  Copies are priced as one-layer compute over as many
 * values (a copy reads and writes each value once, as a one-step update
 * does), plus a call each. */
typedef struct {
    double kernel, fill, save, faces;
    int only, computes;
} skew_call_cost_t;

static void skew_call_cost(const pyr_plan_t *plan, const pyr_model_constants_t *k, int64_t t, int64_t s, int c, int fused,
                           skew_call_cost_t *o)
{
    const pyr_problem_t *p = &plan->problem;
    const int nfaces = 2 * p->dims;
    pyr_skew_call_t call;
    pyr_skew_call(plan, t, s, c, &call);
    memset(o, 0, sizeof *o);
    o->computes = !pyr_box_empty(&call.result);
    const pyr_grid_dims_t grid = {{p->n[0], p->n[1], p->n[2]}};
    pyr_piece_t v;
    pyr_skew_view_shape(plan, &call.window, &v);
    o->only = plan->ctx ? pyr_skew_last_box_only(plan, plan->ctx, &call, &v, s, &grid) : !o->computes && !plan->previous;
    pyr_piece_t st, fs;
    pyr_skew_view_shape(plan, &call.save, &st);
    pyr_skew_view_shape(plan, &call.fill, &fs);
    const int kin = plan->ctx && pyr_skew_halo(plan, plan->ctx, &call, &v, &st, &fs, s, &grid);
    const pyr_box_t in = pyr_plan_interior(plan), w = pyr_box_intersect(&call.window, &in), fb = pyr_box_intersect(&call.fill, &in);
    /* the halo planes' interior: copied from the store, or read from it by the kernel (kernels.h halo); the
     * window's faces, into the input alone where the kernel writes only its result (every call: one that
     * computes nothing passes its planes on, faces included) */
    const double faces = (double)(pyr_box_volume(&call.window) - pyr_box_volume(&w));
    /* a layer read back: the store's older planes too, beside the newest (plan/skewed.h) */
    const double older = plan->previous ? 1.0 : 0.0;
    const double fill = (kin ? 0 : (1.0 + older) * (double)pyr_box_volume(&fb)) + (o->only ? 1.0 : 2.0) * faces;
    const int fill_calls = 1 + nfaces + (int)older;
    if (o->computes) {
        double comp = 0, rows = 0;
        for (int i = 1; i <= c; i++) {
            /* a fused launch (kernels.h launch_steps) streams its whole window through every step it
             * holds: the trapezoid's ends cost as much as its middle */
            pyr_box_t b = fused ? w : pyr_skew_layer_box(plan, &call, i);
            comp += (double)pyr_box_volume(&b);
            rows += (double)rows_of(&b);
        }
        o->kernel = compute_time(plan, k, c, pyr_model_compute_cost(k, c) * comp + k->compute_row * rows);
        o->faces = k->call * nfaces + k->compute[0] * faces;
    }
    o->fill = k->call * fill_calls + k->compute[0] * fill;
    if (plan->previous && s > 0 && o->computes) {
        /* the first sub-step reads the layer before where the call before left it, as many planes below as
         * the two calls' steps (about 2c: kernels.h older_shift), so it is launched in chunks of that many
         * planes; the store's older planes go in between its two parts (exec/skewed.c run_call) */
        const int a = pyr_skew_axis(plan);
        const pyr_box_t b = pyr_skew_layer_box(plan, &call, 1);
        const int64_t span = pyr_box_extent(&b, a) > 0 ? pyr_box_extent(&b, a) : 0;
        o->kernel += k->call * (double)((span + 2 * c - 1) / (2 * c));
    }
    if (kin) { /* the kernel writes what it reads anyway: half a copy's traffic, in the kernel's time */
        const pyr_box_t ks = pyr_skew_kernel_save(&call);
        o->kernel += 0.5 * k->compute[0] * (double)pyr_box_volume(&ks);
    } else {
        o->save = (1.0 + older) * (k->call + k->compute[0] * (double)pyr_box_volume(&call.save));
    }
}

/* The read-only inputs of skewed piece t, as the executor moves them (exec/skewed.c): its own planes up
 * beside its state's (*up), and where it takes a new mapping of the inputs' ring of R planes (*base: the
 * mapping so far) the planes it shares with the pieces before moved within the ring on its slot (*comp). */
static void skew_inputs(const pyr_plan_t *plan, const pyr_model_constants_t *k, int64_t t, int64_t h, int64_t R, int64_t *base,
                        double *up, double *comp)
{
    const pyr_problem_t *p = &plan->problem;
    const int a = pyr_skew_axis(plan);
    const int64_t elem = (int64_t)pyr_precision_size(p->precision);
    const double nin = plan->nfixed;
    *up = *comp = 0;
    if (plan->nfixed == 0) return;
    const pyr_box_t ub = pyr_skew_upload(plan, t);
    if (!pyr_box_empty(&ub)) *up = nin * transfer_cost(k, &ub, p->n[0], elem, 1, NULL);
    const int64_t moved = pyr_skew_ring_next(plan, t, h, R, base);
    if (moved > 0) {
        const pyr_box_t grid = pyr_plan_grid(plan);
        const double plane = (double)pyr_box_volume(&grid) / (double)pyr_box_extent(&grid, a);
        *comp = nin * (k->call + k->compute[0] * plane * (double)moved);
    }
}

/* Stage times of the pieces of a skewed pass of in-place state (plan/skewed.h): every field's planes up
 * (each over its support, as the ring takes them), one kernel call of the piece's steps over its plane
 * ranges, the state's planes down; where a piece takes a new mapping of the ring, the planes it shares with
 * the pieces before moved within it on its slot. */
static void skew_inplace_stages(const pyr_plan_t *plan, const pyr_model_constants_t *k, int64_t h, stage_t *st, pyr_model_prediction_t *sum)
{
    const pyr_problem_t *p = &plan->problem;
    const int64_t elem = (int64_t)pyr_precision_size(p->precision), np = pyr_skew_pieces(plan, h), layers = pyr_plan_layers(plan, h);
    const int nsub = plan->scheme->nsub, a = pyr_skew_axis(plan);
    const double ccost = pyr_model_compute_cost(k, layers);
    const int64_t ring = pyr_skew_ring_planes(plan, plan->height > 0 ? plan->height : h);
    const pyr_box_t grid = pyr_plan_grid(plan);
    const double plane = (double)pyr_box_volume(&grid) / (double)pyr_box_extent(&grid, a);
    int64_t ring_base = 0;
    for (int64_t t = 0; t < np; t++) {
        const pyr_box_t ub = pyr_skew_upload(plan, t), db = pyr_skew_download(plan, t, h);
        double u = 0, d = 0, c = 0, comp = 0, rows = 0, nring = 0;
        for (int f = 0; f < plan->scheme->nfields; f++) {
            if (!pyr_skew_in_ring(plan, f)) continue;
            nring++;
            pyr_box_t parts[2];
            int n = pyr_plan_field_boxes(plan, f, &ub, parts);
            for (int q = 0; q < n; q++) u += transfer_cost(k, &parts[q], p->n[0], elem, 1, NULL);
            if (plan->scheme->field[f].role == PYR_FIELD_INPUT) continue;
            n = pyr_plan_field_boxes(plan, f, &db, parts);
            for (int q = 0; q < n; q++) d += transfer_cost(k, &parts[q], p->n[0], elem, 0, NULL);
        }
        for (int64_t s = 1; s <= h; s++)
            for (int q = 0; q < nsub; q++) {
                const pyr_box_t b = pyr_skew_inplace_box(plan, t, s, q);
                comp += (double)pyr_box_volume(&b);
                rows += (double)rows_of(&b);
            }
        if (comp > 0) c = compute_time(plan, k, layers, ccost * comp + k->compute_row * rows);
        const int64_t moved = pyr_skew_ring_next(plan, t, h, ring, &ring_base);
        if (moved > 0) c += nring * (k->call + k->compute[0] * plane * (double)moved);
        st[t].u = u;
        st[t].c = c;
        st[t].d = d;
        st[t].host = 0;
        st[t].ub = st[t].db = st[t].ud = 1.0;
        sum->upload += u;
        sum->compute += c;
        sum->download += d;
    }
}

/* Stage times of the pieces of a skewed pass (plan/skewed.h): whole planes up
 * and down, one contiguous run each; the calls of each piece in the
 * executor's order (exec/skewed.c): where the runtime has a lane and call j's
 * kernel writes only its result, call j's save (and call j + 1's fill, where
 * its kernel does too) run beside call j's kernel and cost only what they
 * take beyond it; the piece's result gets its faces after its last call. */
static void skew_stages(const pyr_plan_t *plan, const pyr_model_constants_t *k, int64_t h, stage_t *st, pyr_model_prediction_t *sum)
{
    const pyr_problem_t *p = &plan->problem;
    const int64_t elem = (int64_t)pyr_precision_size(p->precision);
    int steps[PYR_SKEW_MAX_CALLS];
    const int ncalls = pyr_skew_calls(plan, h, steps, PYR_SKEW_MAX_CALLS);
    const int64_t np = pyr_skew_pieces(plan, h);
    /* sweeps that read a layer back launch once per layer, over its trapezoid's box (no fused window) */
    const int fused = plan->kernel && plan->kernel->launch_steps && plan->skew_k > 1 && !plan->previous;
    const pyr_device_ops_t *ops = plan->ops;
    const int lane = ops && ops->lanes > 0 && ops->mark && ops->after_mark;
    const int64_t ring = pyr_skew_ring_planes(plan, plan->height > 0 ? plan->height : h);
    int64_t ring_base = 0;
    for (int64_t t = 0; t < np; t++) {
        pyr_box_t ub = pyr_skew_upload(plan, t), db = pyr_skew_download(plan, t, h);
        double x = 0;
        double u = transfer_cost(k, &ub, p->n[0], elem, 1, &x);
        /* a layer read back goes up and down beside the newest (exec/skewed.c: with two spares a piece's
         * uploads need not wait for the previous piece's downloads) */
        if (plan->previous) u *= 2;
        const double d = (plan->previous ? 2.0 : 1.0) * transfer_cost(k, &db, p->n[0], elem, 0, &x);
        skew_call_cost_t cur = {0}, next = {0};
        double c = 0, last_faces = 0;
        if (ncalls > 0) {
            skew_call_cost(plan, k, t, 0, steps[0], fused, &cur);
            c += cur.fill;
        }
        int64_t s = 0;
        for (int j = 0; j < ncalls; j++) {
            if (j + 1 < ncalls) skew_call_cost(plan, k, t, s + steps[j], steps[j + 1], fused, &next);
            double beside = 0;
            const int save_beside = lane && cur.only, fill_beside = save_beside && j + 1 < ncalls && next.only;
            if (save_beside) beside += cur.save;
            else c += cur.save;
            c += cur.kernel;
            if (j + 1 < ncalls) {
                if (fill_beside) beside += next.fill;
                else c += next.fill;
            }
            if (beside > cur.kernel) c += beside - cur.kernel;
            if (cur.computes) last_faces = cur.faces;
            s += steps[j];
            cur = next;
        }
        c += last_faces;
        double iu, ic;
        skew_inputs(plan, k, t, h, ring, &ring_base, &iu, &ic);
        u += iu;
        c += ic;
        st[t].u = u;
        st[t].c = c;
        st[t].d = d;
        st[t].host = 0;
        st[t].ub = st[t].db = st[t].ud = 1.0;
        sum->upload += u;
        sum->compute += c;
        sum->download += d;
    }
}

/* The executor's pipeline over one pass: three in-order engines, slot reuse,
 * shared copy bandwidth while both directions are busy, and the host thread
 * writing a task's bands into the grid after its download (the pass ends
 * when it is done). */
static double simulate(const stage_t *st, int64_t n, int slots, double up_rate_both, double down_rate_both)
{
    int64_t udone = 0, cdone = 0, ddone = 0, hdone = 0;
    int uact = 0, cact = 0, dact = 0, hact = 0;
    double urem = 0, crem = 0, drem = 0, hrem = 0, t = 0;
    while (hdone < n) {
        if (!uact && udone < n && (udone < slots || udone - slots < ddone)) {
            uact = 1;
            urem = st[udone].u;
        }
        if (!cact && cdone < udone) {
            cact = 1;
            crem = st[cdone].c;
        }
        if (!dact && ddone < cdone) {
            dact = 1;
            drem = st[ddone].d;
        }
        if (!hact && hdone < ddone) {
            hact = 1;
            hrem = st[hdone].host;
        }
        double ru = dact ? up_rate_both : 1.0, rd = uact ? down_rate_both : 1.0;
        if (cact && uact) ru *= st[udone].ub;
        if (dact && uact) ru *= st[udone].ud;
        if (cact && dact) rd *= st[ddone].db;
        double dt = INFINITY;
        if (uact) dt = fmin(dt, urem / ru);
        if (cact) dt = fmin(dt, crem);
        if (dact) dt = fmin(dt, drem / rd);
        if (hact) dt = fmin(dt, hrem);
        if (!isfinite(dt)) break; /* nothing can run: cannot happen with slots >= 1 */
        t += dt;
        if (uact) {
            urem -= dt * ru;
            if (urem <= 1e-15 * (1 + t)) uact = 0, udone++;
        }
        if (cact) {
            crem -= dt;
            if (crem <= 1e-15 * (1 + t)) cact = 0, cdone++;
        }
        if (dact) {
            drem -= dt * rd;
            if (drem <= 1e-15 * (1 + t)) dact = 0, ddone++;
        }
        if (hact) {
            hrem -= dt;
            if (hrem <= 1e-15 * (1 + t)) hact = 0, hdone++;
        }
    }
    return t;
}

pyr_model_form_t pyr_model_resolve(const pyr_plan_t *plan, pyr_model_form_t form)
{
    if (form == PYR_MODEL_AUTO) return plan->slots > 1 && plan->ops->concurrent ? PYR_MODEL_OVERLAPPED : PYR_MODEL_SERIAL;
    return form;
}

/* A resident (naive) plan: the grid goes up once, each pass is one compute
 * call of h layers on the interior, the result comes down at the end. */
static void predict_resident_pass(const pyr_plan_t *plan, const pyr_model_constants_t *k, int64_t h, pyr_model_prediction_t *out)
{
    const int64_t layers = pyr_plan_layers(plan, h);
    double c = plan->method == PYR_METHOD_LONGVECTOR
                   ? (double)layers * pyr_lv_step_seconds(&k->lv, pyr_lv_plan_length(plan)) /* the paper's model (plan/longvector.h) */
                   : compute_time(plan, k, layers, pyr_model_compute_cost(k, layers) * (double)pyr_plan_useful(plan, h));
    out->compute = c;
    out->serial = out->seconds = c;
}

pyr_status_t pyr_model_predict_pass(const pyr_plan_t *plan, const pyr_model_constants_t *k, pyr_model_form_t form, int64_t h,
                                    pyr_model_prediction_t *out)
{
    out->seconds = out->serial = out->upload = out->compute = out->download = out->host = out->upload_beside = 0;
    if (h <= 0) return PYR_OK;
    if (plan->resident) {
        predict_resident_pass(plan, k, h, out);
        return PYR_OK;
    }
    const int skewed = plan->decomp == PYR_DECOMP_SKEWED;
    int64_t nt = skewed ? pyr_skew_pieces(plan, h) : pyr_plan_tasks(plan);
    stage_t *st = malloc((size_t)nt * sizeof *st);
    if (!st) return pyr_fail(PYR_ERR_NOMEM, "out of host memory modelling %lld tasks", (long long)nt);
    if (skewed && pyr_skew_inplace(plan)) skew_inplace_stages(plan, k, h, st, out);
    else if (skewed) skew_stages(plan, k, h, st, out);
    else task_stages(plan, k, h, st, out);
    out->serial = out->upload + out->compute + out->download + out->host;
    if (pyr_model_resolve(plan, form) == PYR_MODEL_SERIAL || plan->slots <= 1) {
        out->seconds = out->serial;
    } else {
        double ru = k->up_both > 0 ? fmin(1.0, k->up / k->up_both) : 1.0;
        double rd = k->down_both > 0 ? fmin(1.0, k->down / k->down_both) : 1.0;
        out->seconds = simulate(st, nt, plan->slots, ru, rd);
    }
    free(st);
    return PYR_OK;
}

pyr_status_t pyr_model_predict(const pyr_plan_t *plan, const pyr_model_constants_t *k, pyr_model_form_t form, int64_t first_step,
                               pyr_model_prediction_t *out)
{
    out->seconds = out->serial = out->upload = out->compute = out->download = out->host = out->upload_beside = 0;
    const pyr_problem_t *p = &plan->problem;
    int64_t memo_h[8];
    pyr_model_prediction_t memo[8];
    int nmemo = 0;
    for (int64_t step = 0; step < p->steps;) {
        int64_t h = pyr_plan_pass_height(plan, step);
        if (step >= first_step) {
            int m = 0;
            while (m < nmemo && memo_h[m] != h) m++;
            if (m == nmemo) {
                if (nmemo == 8) m = 7;
                else nmemo++;
                memo_h[m] = h;
                PYR_TRY(pyr_model_predict_pass(plan, k, form, h, &memo[m]));
            }
            out->seconds += memo[m].seconds;
            out->serial += memo[m].serial;
            out->upload += memo[m].upload;
            out->compute += memo[m].compute;
            out->download += memo[m].download;
            out->host += memo[m].host;
            out->upload_beside += memo[m].upload_beside;
        }
        step += h;
    }
    if (plan->resident && first_step == 0 && p->steps > 0) {
        /* one upload of the grid, one download of the interior */
        pyr_box_t g = pyr_plan_grid(plan), in = pyr_plan_interior(plan);
        const int64_t elem = (int64_t)pyr_precision_size(p->precision);
        const int ninput = pyr_plan_inputs(plan), nstate = plan->npp + plan->nfixed - ninput;
        double u = nstate * transfer_cost(k, &g, p->n[0], elem, 1, NULL) + ninput * transfer_cost(k, &in, p->n[0], elem, 1, NULL);
        double d = nstate * transfer_cost(k, &in, p->n[0], elem, 0, NULL);
        out->upload += u;
        out->download += d;
        out->seconds += u + d;
        out->serial += u + d;
    }
    return PYR_OK;
}

double pyr_model_paper_strips(double I, double R, double n, double tc, double ta)
{
    return 1.0 / n * (I - 1) / (R - 2 * n) * (2 * (R - n) * (I - 1) * tc + n * (R - n - 1) * (I - 1) * ta);
}

double pyr_model_paper_blocks(double I, double B, double n, double tc, double ta)
{
    double mu = (I - 1) / (B - 2 * n);
    return 1.0 / n * mu * mu * ((B * B + (B - 2 * n) * (B - 2 * n)) * tc + n * ((B - n) * (B - n) - 2 * (B - n) + (n * n + 2) / 3) * ta);
}
