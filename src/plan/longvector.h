/* The long-vector method (docs/theory.md#the-long-vector-method): the 2D heat
 * scheme as whole-vector library operations (cuBLAS) on the grid held as one
 * vector, and the paper's time model of it.
 *
 * A piece buffer of `rows` rows of `pitch` elements is one vector V.  A box
 * of the piece (w columns by r rows, the interior on the naive method's
 * resident piece) spans the contiguous range of
 *
 *     M = (r - 1) * pitch + w        elements
 *
 * from its first node to its last (rows of the box and, between them, the
 * nodes right and left of it and the row padding).  One time step of
 * u' = u + ((rx*((xm + xp) - (u + u)) + ry*((ym + yp) - (u + u)))) is
 * (src/methods/longvector/cuda/longvector.cu; W the next layer, T and X work vectors,
 * every operation over the M elements of the range):
 *
 *     T = V + V                       geam     (u + u)
 *     W = V[-1] + V[+1]               geam     (xm + xp)
 *     W = W - T                       axpy -1
 *     W = rx * W                      scal
 *     X = V[-pitch] + V[+pitch]       geam     (ym + yp)
 *     X = X - T                       axpy -1
 *     X = ry * X                      scal
 *     W = W + X                       axpy +1
 *     W = W + V                       axpy +1
 *     W = V outside the box           one 2D copy (the nodes between the box's rows: the border restored)
 *
 * The paper's model, T = T_cpugpu + N_time (4 t_kernel + t_add ceil(((N+2)^2 - 1)/threads)
 * + t_add ceil((N(N+2) - 2)/threads) + t_saxpy ceil((N(N+2) - 2)/threads)), counts its own four
 * calls; with the calls above it reads, per step,
 *
 *     t_step(M) = 10 t_kernel + (3 t_add + 4 t_saxpy + 2 t_scal) ceil(M / threads)
 *
 * t_kernel: the fixed cost of a library call (launch and set-up), t_add,
 * t_saxpy, t_scal: the time of one "wave" of `threads` elements of each kind
 * of operation (geam adds, axpy, scal), threads: elements processed at once
 * (the GPU's resident threads).  For an (N+2)^2 grid whose rows are not
 * padded, M = N(N+2) - 2, the paper's second and third lengths. */
#ifndef PYR_PLAN_LONGVECTOR_H
#define PYR_PLAN_LONGVECTOR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Library calls per step, and of them the whole-range operations by kind. */
#define PYR_LV_CALLS 10
#define PYR_LV_ADDS 3
#define PYR_LV_AXPYS 4
#define PYR_LV_SCALS 2
/* Where the staircase starts, measured: the first time above the small
 * vectors' time (the launch floor) by this fraction, in calibration (the
 * threads of a wave) and in the sweep (the first step measured). */
#define PYR_LV_RISE 0.05

typedef struct {
    double t_kernel; /* s per library call */
    double t_add;    /* s per wave of a geam add, C = A + B */
    double t_saxpy;  /* s per wave of y = alpha x + y */
    double t_scal;   /* s per wave of x = alpha x */
    double threads;  /* elements per wave (resident threads); 0 = not known */
} pyr_lv_constants_t;

/* Elements of the range a box of `rows` rows of `width` nodes spans in
 * buffers of `pitch` elements per row (0 for an empty box). */
int64_t pyr_lv_length(int64_t rows, int64_t width, int64_t pitch);
/* ceil(m / threads), at least 1 for m > 0 (0 for m <= 0). */
int64_t pyr_lv_waves(int64_t m, double threads);
/* The modelled seconds of one step on a range of m elements. */
double pyr_lv_step_seconds(const pyr_lv_constants_t *k, int64_t m);
/* What one more wave of every operation of a step costs: the height of a
 * step of the staircase. */
double pyr_lv_wave_seconds(const pyr_lv_constants_t *k);
/* The row pitch of a square grid of N interior nodes per axis (N + 2 per
 * row) in buffers whose pitch is a multiple of `align` elements (<= 1: none). */
int64_t pyr_lv_pitch(int64_t n, int64_t align);
/* The range length of the interior of a square grid of N interior nodes per
 * axis, rows padded to `align` elements. */
int64_t pyr_lv_grid_length(int64_t n, int64_t align);
/* The staircase over square grids of N = n_lo .. n_hi interior nodes per
 * axis: the N at which ceil(M / threads) grows (M of pyr_lv_grid_length),
 * in increasing order, at most max of them.  Returns how many there are in
 * all (which may exceed max); 0 when threads is not positive. */
int pyr_lv_staircase(double threads, int64_t align, int64_t n_lo, int64_t n_hi, int64_t *pos, int max);

/* Documented defaults for a GPU of `threads` resident threads when nothing
 * is calibrated: 5 us per call, and each wave moving its bytes (3 values per
 * element for geam and axpy, 2 for scal) at 2.5 TB/s. */
void pyr_lv_defaults(pyr_lv_constants_t *k, size_t elem, double threads);
/* Every constant finite and >= 0, threads >= 1 (calibrated or defaulted). */
int pyr_lv_valid(const pyr_lv_constants_t *k);
/* The wisdom's form, "t_kernel,t_add,t_saxpy,t_scal,threads" (%.17g), and
 * its parse (1 when well formed and valid). */
void pyr_lv_format(const pyr_lv_constants_t *k, char *out, size_t size);
int pyr_lv_parse(const char *text, pyr_lv_constants_t *k);

struct pyr_plan;
/* The range length a long-vector plan's steps work on. */
int64_t pyr_lv_plan_length(const struct pyr_plan *plan);
/* The model's view of a long-vector plan for `pyrgrid plan`: the formula
 * with its constants, the range, the waves, and the nearest steps of the
 * staircase. */
void pyr_lv_plan_print(const struct pyr_plan *plan, FILE *out);

#ifdef __cplusplus
}
#endif

#endif
