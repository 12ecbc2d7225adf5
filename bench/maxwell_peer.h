/* The straightforward CUDA FDTD code a user writes first (two kernels per
 * step, H then E, one thread per Yee cell, the same per-node coefficients and
 * CPML as pyrgrid), run beside pyrgrid by bench_maxwell as its peer. */
#ifndef PYR_BENCH_MAXWELL_PEER_H
#define PYR_BENCH_MAXWELL_PEER_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t n[3];             /* n[2] == 1: 2D */
    int te;                   /* 2D: TE (Hz, Ex, Ey), else TM (Ez, Hx, Hy) */
    int64_t steps;
    int elem;                 /* 4: float, 8: double */
    double rh[3];             /* 1/h per axis */
    double ca0, cb0, dh0;     /* the constants where no per-node array is given */
    const void *cb;           /* E's cb per node (elem bytes each), or NULL */
    const double *prof;       /* CPML profiles (maxwell.h pyr_maxwell_profile's layout), or NULL */
    int64_t naux;
    int src_comp;             /* 0-2: the E component a point source drives */
    int64_t src_index;        /* its node, (z * ny + y) * nx + x */
    const double *amp;        /* its amplitude after each step's E */
    void *out[6];             /* host arrays (n nodes each) for the six final components, or NULL */
} peer_problem_t;

/* Runs it on GPU 0: loop = seconds of the time steps alone, all = with
 * allocation, upload and download; 0, or 1 with a message in err. */
#ifdef __cplusplus
extern "C"
#endif
    int
    pyr_bench_maxwell_peer(const peer_problem_t *q, double *loop, double *all, char *err, size_t errsize);

#endif
