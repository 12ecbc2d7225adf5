/* How a compute call's layers are cut into fused launches (the CUDA stencil
 * kernels, backend/cuda/stencil_fused.cuh): launches of odd sizes (each goes
 * from one buffer to the other, so the layers' parity is kept), as few as
 * launches of at most kmax steps need, their sizes as equal as possible.
 * With free_depth (the caller named no depth), launches of one step (in 3D
 * the streaming kernel, the slowest per step) give way to fewer launches up
 * to two steps deeper where the parity allows (and kcap allows): 50
 * layers at three per launch are 15 launches of three and one of five, not
 * 16 of three and two of one.  Plain C, so that host tests check it. */
#ifndef PYR_BACKEND_LAUNCH_SPLIT_H
#define PYR_BACKEND_LAUNCH_SPLIT_H

/* Launches for n >= 1 layers. */
static inline int pyr_launch_count(int n, int kmax, int kcap, int free_depth)
{
    int count = (n + kmax - 1) / kmax;
    if ((count ^ n) & 1) count++;
    if (kcap > kmax + 2) kcap = kmax + 2;
    if (free_depth) {
        while (count > 2) {
            const int p0 = (n - count) / 2;
            if (p0 / count > 0) break; /* no launch of one step */
            const int c2 = count - 2, p2 = (n - c2) / 2;
            if (1 + 2 * (p2 / c2 + (p2 % c2 ? 1 : 0)) > kcap) break;
            count = c2;
        }
    }
    return count;
}

/* The steps of launch i (0 <= i < count) of n layers cut into count launches. */
static inline int pyr_launch_size(int n, int count, int i)
{
    const int pairs = (n - count) / 2, q = pairs / count, extra = pairs % count;
    return 1 + 2 * (q + (i < extra ? 1 : 0));
}

#endif
