/* The CUDA backend's block-parallel weights solve (frames_math.h,
 * fr_weights_solve_block) against the one-thread solve the CPU uses: the
 * same weights, flags, history used and epsilon, bit for bit, over random
 * dot products (well posed, singular, overflowing), every weights mode and
 * block sizes below and above the system's size.  Run on the host, the
 * block's threads played by POSIX threads meeting at a barrier for each
 * __syncthreads, so it checks the arithmetic and the barriers' placement
 * without a GPU. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <stdint.h>
static pthread_barrier_t bar;
static _Thread_local struct { int x; } threadIdx;
static struct { int x; } blockDim;
#define __syncthreads() pthread_barrier_wait(&bar)
#define __host__
#define __device__
#define __shared__ static
#define __CUDACC__ 1
#include "pipelines/frames/frames_math.h"
#undef __CUDACC__

typedef struct { fr_dots_t d; int64_t t; int N, deg, window; double eps; double *work, *fast; int64_t fast_words; float a[64]; int used; double eps_used; int flags; int tid; } job_t;
static job_t J;
static float ba[64]; static int bused; static double beps; static int bflags[512];
static void *run(void *arg) {
    threadIdx.x = (int)(intptr_t)arg;
    int f = fr_weights_solve_block(&J.d, J.t, J.N, J.deg, J.window, J.eps, J.work, J.fast, J.fast_words, ba, &bused, &beps);
    bflags[threadIdx.x] = f;
    return NULL;
}
static uint64_t rs = 88172645463325252ull;
static double rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return (double)(rs >> 11) / 9007199254740992.0; }
int main(int argc, char **argv)
{
    int cases = argc > 1 ? atoi(argv[1]) : 160, bad = 0, nfail = 0, nflag = 0, nfast = 0;
    for (int c = 0; c < cases; c++) {
        int N = 1 + (int)(rnd() * 24), deg = (int)(rnd() * 4) - 1, win = 1 + (int)(rnd() * 30);
        if (deg < 0) win = 1;
        int ring = N + win + 1, span = N;
        int64_t t = (int64_t)(rnd() * 60);
        int nt = c % 4 == 0 ? 7 : c % 4 == 1 ? 32 : c % 4 == 2 ? 64 : 1;
        /* dot products of random frames: D = X^T X of random vectors with low-rank or degenerate variants */
        int P = 3 + (int)(rnd() * 40), deg_kind = c % 5;
        double *X = malloc(sizeof(double) * ring * P);
        for (int i = 0; i < ring * P; i++) X[i] = rnd() - 0.5;
        if (deg_kind == 1) for (int i = 0; i < ring; i++) for (int p = 0; p < P; p++) X[i * P + p] = X[p]; /* all equal: singular */
        if (deg_kind == 2) for (int i = 0; i < ring * P; i++) X[i] *= 1e200; /* overflow */
        double *D = calloc((size_t)ring * (span + 1), sizeof(double)), sx[200], sy[200];
        for (int i = 0; i < ring; i++) { sx[i] = (rnd() - 0.5) * 4; sy[i] = (rnd() - 0.5) * 4; }
        for (int64_t i = t > ring ? t - ring + 1 : 0; i <= t; i++)
            for (int k = 0; k <= span && k <= i; k++) {
                double s = 0; for (int p = 0; p < P; p++) s += X[(i % ring) * P + p] * X[((i - k) % ring) * P + p];
                D[(i % ring) * (span + 1) + k] = s;
            }
        int m = deg < 0 ? 1 : fr_poly_terms(deg);
        int64_t ww = fr_weights_work(N, m);
        double *w1 = malloc(sizeof(double) * ww), *w2 = malloc(sizeof(double) * ww);
        for (int64_t i = 0; i < ww; i++) w1[i] = w2[i] = NAN;
        fr_dots_t d = {D, sx, sy, ring, span};
        float a1[64]; int u1; double e1;
        for (int i = 0; i < 64; i++) a1[i] = ba[i] = 12345.f;
        int f1 = fr_weights_solve(&d, t, N, deg, win, 1e-6, w1, a1, &u1, &e1);
        J.d = d; J.t = t; J.N = N; J.deg = deg; J.window = win; J.eps = 1e-6; J.work = w2;
        /* the factor and vectors in a separate buffer (shared memory on the GPU) in every other case where they fit */
        static double fast[4000];
        for (int i = 0; i < 4000; i++) fast[i] = NAN;
        J.fast = c % 2 ? fast : NULL;
        J.fast_words = c % 2 ? 4000 : 0;
        blockDim.x = nt; bused = -7; beps = -7;
        pthread_barrier_init(&bar, NULL, nt);
        pthread_t th[512];
        for (int i = 0; i < nt; i++) pthread_create(&th[i], NULL, run, (void *)(intptr_t)i);
        for (int i = 0; i < nt; i++) pthread_join(th[i], NULL);
        pthread_barrier_destroy(&bar);
        int ok = bused == u1 && memcmp(&beps, &e1, 8) == 0 && memcmp(a1, ba, sizeof a1) == 0;
        for (int i = 0; i < nt; i++) ok &= bflags[i] == f1;
        /* the factor and the solution in double too (the float weights hide their last bits) */
        if (u1 > 0) {
            int n = u1 * m;
            const double *L1 = w1 + n * n, *L2 = J.fast && n * n + 2 * n <= 4000 ? J.fast : w2 + n * n;
            nfast += L2 == J.fast;
            ok &= memcmp(w1, w2, sizeof(double) * (size_t)(n * n)) == 0; /* the Gram matrix */
            for (int i = 0; i < n; i++) /* the factor's lower triangle */
                ok &= memcmp(L1 + i * n, L2 + i * n, sizeof(double) * (size_t)(i + 1)) == 0;
            ok &= memcmp(L1 + n * n, L2 + n * n, sizeof(double) * (size_t)(2 * n)) == 0; /* b, x */
        }
        if (f1 & FR_FLAG_FALLBACK) nfail++;
        if (f1 & (FR_FLAG_REGULARISED|FR_FLAG_REDUCED|FR_FLAG_ILL_CONDITIONED)) nflag++;
        if (!ok) { bad++; printf("case %d MISMATCH N=%d deg=%d win=%d t=%lld nt=%d flags %d/%d used %d/%d\n", c, N, deg, win, (long long)t, nt, f1, bflags[0], u1, bused); }
        free(X); free(D); free(w1); free(w2);
    }
    printf("%d cases (%d with the factor apart), %d mismatches, %d fallback, %d flagged\n", cases, nfast, bad, nfail, nflag);
    return bad != 0;
}
