/* Performance model of a plan: predicted run time from the plan's exact task
 * geometry (every task of every pass: values uploaded, downloaded, computed,
 * rows of each transfer, layers, operations issued) and machine constants.
 *
 * Two forms:
 *   serial      the paper's eqs. 2, 4, 5 (docs/theory.md#the-time-model)
 *               generalised: every task uploads, computes, downloads, one
 *               after another,
 *                 tau = sum over tasks (U_t + C_t + D_t)
 *   overlapped  the executor's pipeline with `slots` piece buffers in flight:
 *               an upload engine, a compute engine and a download engine run
 *               tasks in order; task t uploads once its slot's previous task
 *               (t - slots) has downloaded; while both copy directions are
 *               busy each moves at its "both" rate.  Simulated per pass
 *               (passes do not overlap), so fill and drain are included; the
 *               result is about max(sum U, sum C, sum D) + fill + drain.
 * With one slot (the CPU backend) both forms agree.
 *
 * Stage times of a task (seconds):
 *   U_t = call + up * values_up + row * rows_up
 *         (part rows: + up_part_row * rows_up, per value up_strided)
 *   C_t = calls_prepare * call + launch * h + compute(h) * values_computed
 *         (on a queued backend, CUDA: max(launch * h, the rest), the host
 *         issuing launches while the device runs the earlier ones)
 *   D_t = calls_down * call + down * values_down + row * rows_down
 *   host copies of held-back bands: host * band_values, on the host thread
 *   before the next upload of the same slot (none for bands downloaded
 *   straight into the grid, pyr_plan_band_direct). */
#ifndef PYR_PLAN_MODEL_H
#define PYR_PLAN_MODEL_H

#include "plan/longvector.h"
#include "pyrgrid.h"

struct pyr_plan;

/* Compute cost is tabulated by layers per compute call at these counts
 * (interpolated linearly between, constant past the last). */
#define PYR_MODEL_NLAYERS 20
extern const int pyr_model_layers[PYR_MODEL_NLAYERS];

typedef struct {
    double up, down;           /* s per value host->device / device->host, the other direction idle */
    double up_both, down_both; /* s per value while the other direction is busy too */
    double row;                /* s per row (contiguous run) of a transfer, on top of the per-value cost */
    double call;               /* s per transfer or device-copy operation issued */
    double launch;             /* s per layer of a compute call (kernel launch / parallel region) */
    double host;               /* s per value copied host to host (held-back bands) */
    double up_strided, down_strided; /* s per value when the box's rows are only part of the host
                                        array's rows (blocks, cubes: one DMA per row, not one run);
                                        0 = as contiguous (constants from before these were measured) */
    double up_ragged, down_ragged; /* s per part row on top of the above when the host rows do not start
                                      and end on 64-byte boundaries (grids of 2^k+1 nodes: a device-to-host
                                      DMA then writes partial cache lines); 0 = no extra cost known */
    double up_row_busy, down_row_busy; /* s per row on top of the above, for part-row copies whose rows lie on
                                          different pages of host memory (2D blocks), while a kernel runs:
                                          such copies slow down then (docs/performance.md#copies-beside-kernels);
                                          0 = not known */
    double up_part_row, down_part_row; /* s per row of a part-row copy on top of `row` (each row its own
                                          DMA run in a wider host array): what makes short runs (blocks,
                                          cubes) slower per value than long ones (the interior of a strip's
                                          rows); 0 = not known (older wisdom prices part rows per value in
                                          up_strided / down_strided instead) */
    double up_row_both;                /* s per row of a part-row upload on top of the above while the download
                                          direction runs beside it, each row weighted by the share of its host
                                          row the box leaves out (cubes' rows, not slabs'): a cube pass's uploads
                                          run slower than alone, for reasons no isolated copy reproduces
                                          (docs/performance.md#copies-beside-kernels), so calibration fits it to
                                          a short pass of cubes (pyr_model_fit_up_row_both); 0 = not known */
    double compute[PYR_MODEL_NLAYERS]; /* s per value computed, by layers per compute call */
    double compute_row;                /* s per row of each computed layer, on top (wide rows cost less per value);
                                          0 = not measured */
    pyr_lv_constants_t lv;             /* the long-vector method's (plan/longvector.h; CUDA, 2D heat);
                                          threads = 0: not calibrated */
} pyr_model_constants_t;

typedef enum {
    PYR_MODEL_AUTO = 0,   /* overlapped when the plan has more than one slot, else serial */
    PYR_MODEL_SERIAL,
    PYR_MODEL_OVERLAPPED
} pyr_model_form_t;

/* Documented defaults, used when this machine has no calibration (wisdom);
 * docs/model-and-wisdom.md#the-constants lists them too.  They aim at plans
 * near the best without a calibration: somewhat below what calibration finds
 * on a current machine, with compute and transfers in about their measured
 * proportion (compute priced far too slow picks heights far too low).
 *   cuda: PCIe Gen5 x16: 55 GB/s each way alone, 47.5 GB/s each way both at
 *         once; part rows 45 GB/s up, 35 down; host band copies 40 GB/s;
 *         5 us per transfer call, 4 us per launch; compute in float 2D 400e9
 *         values per second at one layer per call, rising linearly to 1200e9
 *         at five or more (fused kernels), 3D 300e9 -> 500e9, 1D 200e9;
 *         double at half the rate.
 *   cpu:  "device" memory is a cache-sized buffer; memcpy in and out at
 *         4 GB/s per thread-pair equivalent (elem / 4e9 s per value; part
 *         rows 3 GB/s), 20 ns per row, 1 us per call, 3 us per parallel
 *         region (layer); the stencil at 1e9 values per second in 2D double,
 *         0.7e9 in 3D, 1.5e9 in 1D; float 1.6x faster. */
pyr_model_constants_t pyr_model_default(pyr_backend_kind_t backend, int dims, pyr_precision_t precision);

/* Seconds per value computed in a compute call of h layers. */
double pyr_model_compute_cost(const pyr_model_constants_t *k, int64_t h);

/* Whether every constant is finite and non-negative, and the compute table
 * positive (a check on calibration results and wisdom files). */
int pyr_model_constants_valid(const pyr_model_constants_t *k);

/* Breakdown of a prediction (whole run). */
typedef struct {
    double seconds;                  /* the prediction in the chosen form */
    double serial;                   /* serial form */
    double upload, compute, download; /* sums of the stage times (serial form) */
    double host;                     /* band copies into the grid (on their own thread when slots > 1) */
    double upload_beside;            /* what up_row_both adds to `upload` were every upload beside a download */
} pyr_model_prediction_t;

/* Predicted time of the plan's whole run, or (first_step > 0) of the passes
 * starting at or after step first_step (for timings that skip a warm-up
 * pass).  Walks the task geometry of each distinct pass height once. */
pyr_status_t pyr_model_predict(const struct pyr_plan *plan, const pyr_model_constants_t *k, pyr_model_form_t form,
                               int64_t first_step, pyr_model_prediction_t *out);

/* The form `form` stands for with this plan: AUTO is the overlapped form when
 * the plan keeps several slots on a backend that runs them concurrently. */
pyr_model_form_t pyr_model_resolve(const struct pyr_plan *plan, pyr_model_form_t form);

/* Predicted time of one pass of height h. */
pyr_status_t pyr_model_predict_pass(const struct pyr_plan *plan, const pyr_model_constants_t *k, pyr_model_form_t form,
                                    int64_t h, pyr_model_prediction_t *out);

/* The up_row_both that makes the overlapped prediction of one pass of
 * height h of `plan` (from k, its other constants) equal `measured` seconds,
 * found by bisection (the prediction grows with it).  *explained = 1 with
 * that value, or with 0 when the prediction without it is already as slow;
 * *explained = 0 and *fit = 0 when no value up to the one that would halve
 * the rate of every upload beside a download reaches the measurement (the
 * excess is not this cost: the slowdowns observed are well within that), and when
 * the plan has no part-row uploads beside downloads (nothing moves it). */
pyr_status_t pyr_model_fit_up_row_both(const struct pyr_plan *plan, const pyr_model_constants_t *k, int64_t h, double measured,
                                       double *fit, int *explained);

/* The paper's serial form from counts only (eqs. 2, 4, 5 with wc = up + down):
 * tau = (up + down) tau_c + computed tau_a. */
double pyr_model_paper(const pyr_counters_t *counts, double tau_c, double tau_a);

/* The paper's closed forms per time step (docs/theory.md#the-time-model,
 * eqs. 4 and 5, exact forms before the approximation): a 2D grid of I - 1 interior nodes
 * per axis, strips of R rows or blocks of side B on the device, height n,
 * fractional task counts (I - 1) / (R - 2n) as in the paper.  n = 1 is the
 * trivial algorithm. */
double pyr_model_paper_strips(double I, double R, double n, double tau_c, double tau_a);
double pyr_model_paper_blocks(double I, double B, double n, double tau_c, double tau_a);

/* The constants and form a plan was (or will be) modelled with. */
const pyr_model_constants_t *pyr_plan_model(const struct pyr_plan *plan);
pyr_model_form_t pyr_plan_model_form(const struct pyr_plan *plan);

#endif
