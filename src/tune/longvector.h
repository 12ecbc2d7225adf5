/* The long-vector method's calibration: the paper's t_kernel, t_add,
 * t_saxpy and t_scal, and the threads of a wave, measured and fitted.  Its
 * checks and model constants are its entry's (methods/longvector/method.h). */
#ifndef PYR_TUNE_LONGVECTOR_H
#define PYR_TUNE_LONGVECTOR_H

#include "methods/longvector/method.h"
#include "plan/longvector.h"
#include "plan/plan.h"
#include "tune/calibrate.h"

/* Op times at one vector length: seconds per call of a geam add, an axpy,
 * a scal. */
typedef struct {
    int64_t n;
    double t[3];
} pyr_lv_sample_t;

/* The paper's staircase model fitted to measured op times: for each
 * candidate thread count T, each kind of operation's time is fitted as
 * a + b ceil(n / T) by least squares of the relative error (a, b >= 0); the
 * T with the least summed squared relative error wins (the first of the
 * list on a tie within 2%, so put the hardware's count first).  t_kernel is
 * the intercepts' mean weighted by the calls of a step, t_add / t_saxpy /
 * t_scal the slopes.  *rms (may be NULL) gets the winner's RMS relative
 * error over all samples and operations.  PYR_ERR_ARG without samples or
 * candidates. */
pyr_status_t pyr_lv_fit(const pyr_lv_sample_t *s, int n, const double *threads, int ncand, pyr_lv_constants_t *k, double *rms);

/* The measured start of the staircase: with samples in increasing n, the
 * time of a step's mix of operations S(n) = 3 t_add + 4 t_saxpy + 2 t_scal
 * against its floor (the least of the four shortest samples), the last n
 * before S first exceeds the floor by the fraction `rise` (and stays above
 * at the next sample).  0 when S never does, or already at the second
 * sample. */
int64_t pyr_lv_knee(const pyr_lv_sample_t *s, int n, double rise);

/* Measure t_kernel, t_add, t_saxpy, t_scal and the threads of a wave on the
 * CUDA backend (o: device, precision, effort): each operation timed back to
 * back, its operands rotating over four vectors (a step's working set), at
 * vector lengths from 1 Ki elements up to those of the paper's largest grid
 * (N = 7000, 49 M elements; fewer when the GPU's free memory is short),
 * finely (4.5% apart in N) below 8 M.  threads is the measured start of the
 * staircase (pyr_lv_knee with PYR_LV_RISE), else the GPU's resident threads;
 * then the fit of pyr_lv_fit gives the times.  *hardware (may be NULL) gets
 * the GPU's resident threads (multiprocessors x threads per multiprocessor),
 * *rms (may be NULL) the fit's RMS relative error. */
pyr_status_t pyr_calibrate_longvector(const pyr_calibrate_opts_t *o, pyr_lv_constants_t *k, int64_t *hardware, double *rms);

#endif
