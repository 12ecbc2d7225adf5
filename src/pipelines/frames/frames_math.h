/* The frames pipeline's small numerical pieces, shared word for word by the
 * CPU implementation (C) and the CUDA one (compiled by nvcc as __host__
 * __device__), so that both backends solve the same small systems the same
 * way: the weights (Cholesky with the Tikhonov term and its fallbacks), the
 * shift step of the paper's formula, the noise model fit, the matched filter's
 * taps.  No allocation, no I/O. */
#ifndef PYR_PIPELINES_FRAMES_MATH_H
#define PYR_PIPELINES_FRAMES_MATH_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define FR_HD __host__ __device__ static inline
#else
#define FR_HD static inline
#endif

#define FR_MAX_HISTORY 64
#define FR_MAX_TAPS 33 /* matched filter: 2 * radius + 1 */

/* Weight-solve flags (the public PYR_FRAMES_FLAG_* values). */
#define FR_FLAG_NO_HISTORY 1
#define FR_FLAG_SHORT_HISTORY 2
#define FR_FLAG_ILL_CONDITIONED 4
#define FR_FLAG_REGULARISED 8
#define FR_FLAG_REDUCED 16
#define FR_FLAG_FALLBACK 32
#define FR_FLAG_NOT_CONVERGED 64

/* ------------------------------------------------------------ scale */

/* The sequence's unit: the power of two nearest below the RMS of the first
 * frame that is not all zero (sumsq over n finite pixels).  Every frame is
 * divided by it on input and every output multiplied by it, so that the
 * arithmetic sees values of order 1 whatever the data's units: float
 * products of spectra neither overflow for large pixel values nor underflow
 * for small ones, and each cut-off below is relative to the data.  A power
 * of two divides without rounding.  Returns 0 while no scale is known. */
FR_HD double fr_unit(double sumsq, double n)
{
    if (!(n > 0) || !(sumsq > 0) || !isfinite(sumsq)) return 0;
    int e = ilogb(sqrt(sumsq / n));
    /* the unit and its inverse stay normal floats */
    if (e < -126) e = -126;
    if (e > 126) e = 126;
    return ldexp(1.0, e);
}

/* ------------------------------------------------------------ shift step */

/* The paper's formula (docs/theory.md#frame-whitening): with p = sum gy*d, q = sum gx*d,
 * u = sum gx^2, v = sum gx*gy, w = sum gy^2 the displacement that best
 * explains d = f - r by the reference's gradient is
 *   dx = (q w - p v) / (u w - v^2),  dy = (p u - q v) / (u w - v^2).
 * Returns 0 when the gradient matrix is singular (a flat reference). */
FR_HD int fr_shift_step(double p, double q, double u, double v, double w, double *dx, double *dy)
{
    double det = u * w - v * v;
    if (!(det > 1e-30 * (u * w)) || !(u > 0) || !(w > 0)) {
        *dx = *dy = 0;
        return 0;
    }
    *dx = (q * w - p * v) / det;
    *dy = (p * u - q * v) / det;
    return 1;
}

/* The whole pixels of a shift, to move a mask with its frame: 0 for a shift
 * that is not finite (its frame is refused) or larger than any frame. */
FR_HD int64_t fr_pixel_shift(double s) { return fabs(s) < 1e9 ? (int64_t)llround(s) : 0; }

/* The smoothing (5-point average of the seed), central differences and
 * Parseval weights of the half spectrum of an r2c transform: entry (ky, kx),
 * kx in 0..nx/2.  omega = 2 pi k / n with k signed. */
FR_HD double fr_omega(int64_t k, int64_t n)
{
    int64_t ks = k <= n / 2 ? k : k - n;
    return 6.283185307179586 * (double)ks / (double)n;
}
FR_HD double fr_smooth(double wx, double wy) { return (1.0 + 2.0 * cos(wx) + 2.0 * cos(wy)) / 5.0; }
/* Columns other than 0 and nx/2 (nx even) stand for two conjugate entries. */
FR_HD double fr_half_weight(int64_t kx, int64_t nx) { return (kx == 0 || (nx % 2 == 0 && kx == nx / 2)) ? 1.0 : 2.0; }

/* e^{i omega s} for the shift tables, Hermitian at the Nyquist entry (its
 * imaginary part would be dropped by any c2r transform, differently by FFTW
 * and cuFFT; dropping it here makes both see the same input). */
FR_HD void fr_phase(int64_t k, int64_t n, double s, float *c, float *sn)
{
    double w = fr_omega(k, n);
    if (n % 2 == 0 && k == n / 2) {
        *c = (float)cos(w * s);
        *sn = 0.0f;
        return;
    }
    *c = (float)cos(w * s);
    *sn = (float)sin(w * s);
}

/* ------------------------------------------------------------ masks, background */

/* The value a masked pixel i takes before the frame is transformed: the mean
 * of its 4-neighbours that are finite and not masked (bad, when given, flags
 * masked pixels), or fallback where there are none. */
FR_HD float fr_fill_value(const float *in, const uint8_t *bad, int64_t nx, int64_t ny, int64_t i, float fallback)
{
    int64_t x = i % nx, y = i / nx;
    int64_t nb[4] = {x > 0 ? i - 1 : -1, x + 1 < nx ? i + 1 : -1, y > 0 ? i - nx : -1, y + 1 < ny ? i + nx : -1};
    float s = 0;
    int n = 0;
    for (int k = 0; k < 4; k++) {
        int64_t j = nb[k];
        if (j < 0 || (bad && bad[j]) || !isfinite(in[j])) continue;
        s += in[j];
        n++;
    }
    return n ? s / (float)n : fallback;
}

/* The value a masked pixel i of frame f takes from g, the reference moved to
 * the frame: g there plus the mean of f - g over the pixels of the 5 x 5 box
 * around i that are not masked (bad flags them). */
FR_HD float fr_refill_value(const float *f, const float *g, const uint8_t *bad, int64_t nx, int64_t ny, int64_t i)
{
    int64_t x = i % nx, y = i / nx;
    double s = 0;
    int n = 0;
    for (int64_t yy = y - 2; yy <= y + 2; yy++)
        for (int64_t xx = x - 2; xx <= x + 2; xx++) {
            if (yy < 0 || yy >= ny || xx < 0 || xx >= nx || bad[yy * nx + xx]) continue;
            s += (double)f[yy * nx + xx] - (double)g[yy * nx + xx];
            n++;
        }
    return g[i] + (n ? (float)(s / n) : 0.0f);
}

/* The background basis (1, x, y) of the prediction: coordinates centred on
 * the frame and in units of its width, so that over the interior (a
 * rectangle centred on the frame) the three are orthogonal and each
 * coefficient is one sum divided by a fixed one. */
FR_HD double fr_bg_coord(int64_t x, int64_t n) { return ((double)x - 0.5 * (double)(n - 1)) / (double)n; }

/* The 5-point average of the seed at pixel i (not on the frame's edge). */
FR_HD float fr_smooth5(const float *h, int64_t i, int64_t nx)
{
    return (h[i] + h[i - 1] + h[i + 1] + h[i - nx] + h[i + nx]) * 0.2f;
}

/* Entry (ky, kx) of the spectrum of the reference's pixel images from its
 * spectrum G (which: 0 S G, 1 i wx S G, 2 i wy S G), divided by the pixel
 * count (the c2r transform does not); the derivative is 0 at the Nyquist
 * entry, whose imaginary part a c2r transform drops. */
FR_HD void fr_ref_coef(int64_t kx, int64_t ky, int64_t nx, int64_t ny, int which, float gr, float gi, double *re, double *im)
{
    double wx = fr_omega(kx, nx), wy = fr_omega(ky, ny);
    double S = fr_smooth(wx, wy) / ((double)nx * (double)ny);
    double a = (double)gr * S, b = (double)gi * S;
    if (which == 0) {
        *re = a;
        *im = b;
        return;
    }
    double w = which == 1 ? wx : wy;
    if ((which == 1 && nx % 2 == 0 && kx == nx / 2) || (which == 2 && ny % 2 == 0 && ky == ny / 2)) w = 0;
    *re = -w * b;
    *im = w * a;
}

/* Shift refinement: at most this many registrations of a frame at the
 * refined shift (the first at the spectral estimate). */
#define FR_REFINE_MAX 3

/* ------------------------------------------------------------ weights */

/* Cholesky of A + reg*I (n x n, row-major, leading dimension n) into L (lower,
 * n x n), then solves for x.  Returns 0 on success, 1 when a pivot is not
 * positive or a value is not finite.  *min_piv2 / *max_piv2 return the
 * extreme squared pivots (the conditioning check). */
FR_HD int fr_cholesky_solve(int n, const double *A, double reg, const double *b, double *L, double *x, double *min_piv2,
                            double *max_piv2)
{
    double mn = 0, mx = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j <= i; j++) {
            double s = A[i * n + j] + (i == j ? reg : 0.0);
            for (int k = 0; k < j; k++) s -= L[i * n + k] * L[j * n + k];
            if (i == j) {
                if (!(s > 0) || !isfinite(s)) return 1;
                if (i == 0 || s < mn) mn = s;
                if (i == 0 || s > mx) mx = s;
                L[i * n + i] = sqrt(s);
            } else {
                L[i * n + j] = s / L[j * n + j];
            }
        }
    }
    for (int i = 0; i < n; i++) { /* L y = b */
        double s = b[i];
        for (int k = 0; k < i; k++) s -= L[i * n + k] * x[k];
        x[i] = s / L[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--) { /* L^T x = y */
        double s = x[i];
        for (int k = i + 1; k < n; k++) s -= L[k * n + i] * x[k];
        x[i] = s / L[i * n + i];
    }
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i])) return 1;
    *min_piv2 = mn;
    *max_piv2 = mx;
    return 0;
}

/* Monomials of degree <= deg in (a, b): 1, a, b, a^2, a b, b^2. */
FR_HD int fr_poly_terms(int deg) { return deg <= 0 ? 1 : deg == 1 ? 3 : 6; }
FR_HD void fr_poly_eval(int deg, double a, double b, double *phi)
{
    phi[0] = 1;
    if (deg >= 1) {
        phi[1] = a;
        phi[2] = b;
    }
    if (deg >= 2) {
        phi[3] = a * a;
        phi[4] = a * b;
        phi[5] = b * b;
    }
}

/* Where the dot products live: dot(i, j) for frames i >= j, j >= i - span,
 * in a ring of `ring` frames: D[(i % ring) * (span + 1) + (i - j)].  The
 * shifts of the frames are in a ring of the same length. */
typedef struct {
    const double *D;
    const double *sx, *sy;
    int ring, span;
} fr_dots_t;

FR_HD double fr_dot(const fr_dots_t *d, int64_t i, int64_t j)
{
    if (i < j) {
        int64_t t = i;
        i = j;
        j = t;
    }
    return d->D[(i % d->ring) * (d->span + 1) + (i - j)];
}

/* Work space of fr_weights_solve, in doubles, for n history frames and m
 * polynomial terms. */
FR_HD int64_t fr_weights_work(int n, int m) { return 3 * (int64_t)(n * m) * (n * m) + 4 * (int64_t)(n * m) + 8; }

/* The weights of frame t from its nh = min(N, t) predecessors:
 *   deg < 0 (align/plain): (R + eps E) a = rho over frame t alone;
 *   deg >= 0 (poly): a_k(t) = sum_m alpha_{k,m} phi_m(s_{t-k} - s_t), alpha
 *     minimising sum over the window's frames tau of ||f_tau - sum_k a_k(tau) f_{tau-k}||^2
 *     + eps ||alpha||^2 (relative to the mean diagonal) — the paper's polynomial model.
 * On a failed Cholesky eps is raised 100-fold (twice), then the history is
 * halved, and at last the weights are 0.  Writes a[0..*used-1]; returns flags. */
FR_HD int fr_weights_solve(const fr_dots_t *d, int64_t t, int N, int deg, int window, double eps, double *work, float *a,
                           int *used, double *eps_used)
{
    int flags = 0;
    int nh = (int)(t < N ? t : N);
    *used = 0;
    *eps_used = eps;
    if (nh == 0) return FR_FLAG_NO_HISTORY;
    if (nh < N) flags |= FR_FLAG_SHORT_HISTORY;
    int m = deg < 0 ? 1 : fr_poly_terms(deg);
    while (nh >= 1) {
        int n = nh * m;
        double *A = work, *L = A + (int64_t)n * n, *b = L + (int64_t)n * n, *x = b + n, *phi = x + n, *psi = phi + 8;
        for (int i = 0; i < n * n; i++) A[i] = 0;
        for (int i = 0; i < n; i++) b[i] = 0;
        int64_t lo = deg < 0 ? t : t - window + 1;
        if (lo < nh) lo = nh; /* frames with a full history of nh */
        for (int64_t tau = lo; tau <= t; tau++) {
            for (int k = 1; k <= nh; k++) {
                if (deg < 0) phi[0] = 1;
                else fr_poly_eval(deg, d->sx[(tau - k) % d->ring] - d->sx[tau % d->ring],
                                  d->sy[(tau - k) % d->ring] - d->sy[tau % d->ring], phi);
                double rk = fr_dot(d, tau, tau - k);
                for (int p = 0; p < m; p++) b[(k - 1) * m + p] += phi[p] * rk;
                for (int l = 1; l <= nh; l++) {
                    if (deg < 0) psi[0] = 1;
                    else fr_poly_eval(deg, d->sx[(tau - l) % d->ring] - d->sx[tau % d->ring],
                                      d->sy[(tau - l) % d->ring] - d->sy[tau % d->ring], psi);
                    double r = fr_dot(d, tau - k, tau - l);
                    for (int p = 0; p < m; p++)
                        for (int q = 0; q < m; q++) A[((k - 1) * m + p) * n + (l - 1) * m + q] += phi[p] * psi[q] * r;
                }
            }
        }
        double scale = 0;
        int finite = 1;
        for (int i = 0; i < n; i++) scale += A[i * n + i];
        for (int i = 0; i < n * n; i++) finite &= isfinite(A[i]) ? 1 : 0;
        for (int i = 0; i < n; i++) finite &= isfinite(b[i]) ? 1 : 0;
        scale /= n;
        if (!finite || !(scale > 0)) break;
        double e = eps;
        for (int attempt = 0; attempt < 3; attempt++) {
            double mn, mx;
            if (!fr_cholesky_solve(n, A, e * scale, b, L, x, &mn, &mx)) {
                if (mn < 10.0 * e * scale) flags |= FR_FLAG_ILL_CONDITIONED;
                double phit[8];
                for (int k = 1; k <= nh; k++) {
                    if (deg < 0) phit[0] = 1;
                    else fr_poly_eval(deg, d->sx[(t - k) % d->ring] - d->sx[t % d->ring],
                                      d->sy[(t - k) % d->ring] - d->sy[t % d->ring], phit);
                    double s = 0;
                    for (int p = 0; p < m; p++) s += x[(k - 1) * m + p] * phit[p];
                    a[k - 1] = (float)s;
                }
                *used = nh;
                *eps_used = e;
                return flags;
            }
            flags |= FR_FLAG_REGULARISED;
            e *= 100.0;
        }
        flags |= FR_FLAG_REDUCED;
        nh /= 2;
    }
    for (int k = 0; k < N; k++) a[k] = 0;
    *used = 0;
    return flags | FR_FLAG_FALLBACK;
}

#ifdef __CUDACC__
/* fr_cholesky_solve by a block of threads (every thread of the block calls
 * it; the result is the block's).  Each value is the one-thread solve's
 * arithmetic in its order, so the bits are the same: column j of the factor
 * after columns 0..j-1, each of its rows i by the thread i % blockDim.x (a
 * dot product over k < j in increasing k); the forward substitution by
 * columns (row i's sum still takes x[0], x[1], ... in turn, each row always
 * by the same thread); the back substitution, whose sums take x[i+1] first
 * and so form one chain, by one thread. */
__device__ static int fr_cholesky_solve_block(int n, const double *A, double reg, const double *b, double *L, double *x,
                                              double *min_piv2, double *max_piv2)
{
    __shared__ int fail;
    __shared__ double mn, mx;
    int tid = threadIdx.x, nt = blockDim.x;
    __syncthreads(); /* the block's last use of fail, mn, mx is over */
    if (tid == 0) fail = 0;
    __syncthreads();
    for (int j = 0; j < n; j++) {
        for (int i = j + tid; i < n; i += nt) {
            double s = A[i * n + j] + (i == j ? reg : 0.0);
            for (int k = 0; k < j; k++) s -= L[i * n + k] * L[j * n + k];
            L[i * n + j] = s; /* the sum until its pivot is known */
        }
        __syncthreads();
        double s = L[j * n + j];
        __syncthreads(); /* every thread has read the pivot's sum */
        if (!(s > 0) || !isfinite(s)) return 1;
        double p = sqrt(s);
        if (tid == 0) {
            if (j == 0 || s < mn) mn = s;
            if (j == 0 || s > mx) mx = s;
            L[j * n + j] = p;
        }
        for (int i = j + 1 + tid; i < n; i += nt) L[i * n + j] = L[i * n + j] / p;
        __syncthreads();
    }
    for (int i = tid; i < n; i += nt) x[i] = b[i]; /* L y = b */
    for (int k = 0; k < n; k++) {
        if (k % nt == tid) x[k] = x[k] / L[k * n + k];
        __syncthreads();
        double xk = x[k];
        for (int i = k + 1 + ((tid - (k + 1) % nt + nt) % nt); i < n; i += nt) x[i] -= L[i * n + k] * xk;
    }
    __syncthreads();
    if (tid == 0) { /* L^T x = y */
        for (int i = n - 1; i >= 0; i--) {
            double s = x[i];
            for (int k = i + 1; k < n; k++) s -= L[k * n + i] * x[k];
            x[i] = s / L[i * n + i];
        }
        for (int i = 0; i < n; i++)
            if (!isfinite(x[i])) fail = 1;
    }
    __syncthreads();
    if (fail) return 1;
    *min_piv2 = mn;
    *max_piv2 = mx;
    return 0;
}

/* fr_weights_solve by a block of threads (every thread calls it; all return
 * the flags, thread 0 writes *used and *eps_used): the same sums in the same
 * order, so the same bits.  The Gram matrix by pairs of history frames (k, l),
 * one thread each, its m x m entries summed over the window's frames in
 * increasing tau; the right-hand side by k; the factor and solves by
 * fr_cholesky_solve_block; the weights by k.  `fast` (shared memory, or
 * NULL) of fast_words doubles takes the factor, b and x in turn when they fit
 * (the factor's dot products and the back substitution's one thread read
 * them many times), else they follow A in work, as fr_weights_solve has them. */
#define FR_POLY_MAX 6
__device__ static int fr_weights_solve_block(const fr_dots_t *d, int64_t t, int N, int deg, int window, double eps,
                                             double *work, double *fast, int64_t fast_words, float *a, int *used,
                                             double *eps_used)
{
    __shared__ int bad;
    __shared__ double sscale;
    int tid = threadIdx.x, nt = blockDim.x;
    int flags = 0;
    int nh = (int)(t < N ? t : N);
    if (tid == 0) {
        *used = 0;
        *eps_used = eps;
    }
    if (nh == 0) return FR_FLAG_NO_HISTORY;
    if (nh < N) flags |= FR_FLAG_SHORT_HISTORY;
    int m = deg < 0 ? 1 : fr_poly_terms(deg);
    while (nh >= 1) {
        int n = nh * m;
        double *A = work, *L = A + (int64_t)n * n, *b = L + (int64_t)n * n, *x = b + n;
        if (fast && (int64_t)n * n + 2 * n <= fast_words) {
            L = fast;
            b = L + (int64_t)n * n;
            x = b + n;
        }
        int64_t lo = deg < 0 ? t : t - window + 1;
        if (lo < nh) lo = nh; /* frames with a full history of nh */
        __syncthreads();      /* the block's last use of A, bad, sscale is over */
        if (tid == 0) bad = 0;
        for (int pr = tid; pr < nh * nh + nh; pr += nt) {
            double acc[FR_POLY_MAX * FR_POLY_MAX], phi[8], psi[8];
            int k = pr < nh * nh ? pr / nh + 1 : pr - nh * nh + 1, l = pr < nh * nh ? pr % nh + 1 : 0;
            for (int i = 0; i < m * m; i++) acc[i] = 0;
            /* ring positions of tau, tau - k, tau - l, stepped with tau (no
             * division per frame); fr_dot's entry is that of the later one */
            int64_t rt = lo % d->ring, rk = (lo - k) % d->ring, rl = (lo - l) % d->ring;
            for (int64_t tau = lo; tau <= t; tau++) {
                if (deg < 0) phi[0] = 1;
                else fr_poly_eval(deg, d->sx[rk] - d->sx[rt], d->sy[rk] - d->sy[rt], phi);
                if (l == 0) { /* b's entries of k: fr_dot(d, tau, tau - k) */
                    double r = d->D[rt * (d->span + 1) + k];
                    for (int p = 0; p < m; p++) acc[p] += phi[p] * r;
                } else {
                    if (deg < 0) psi[0] = 1;
                    else fr_poly_eval(deg, d->sx[rl] - d->sx[rt], d->sy[rl] - d->sy[rt], psi);
                    /* fr_dot(d, tau - k, tau - l) */
                    double r = d->D[(k < l ? rk : rl) * (d->span + 1) + (k < l ? l - k : k - l)];
                    for (int p = 0; p < m; p++)
                        for (int q = 0; q < m; q++) acc[p * m + q] += phi[p] * psi[q] * r;
                }
                rt = rt + 1 == d->ring ? 0 : rt + 1;
                rk = rk + 1 == d->ring ? 0 : rk + 1;
                rl = rl + 1 == d->ring ? 0 : rl + 1;
            }
            if (l == 0)
                for (int p = 0; p < m; p++) b[(k - 1) * m + p] = acc[p];
            else
                for (int p = 0; p < m; p++)
                    for (int q = 0; q < m; q++) A[((k - 1) * m + p) * n + (l - 1) * m + q] = acc[p * m + q];
        }
        __syncthreads();
        for (int i = tid; i < n * n + n; i += nt)
            if (!isfinite(i < n * n ? A[i] : b[i - n * n])) bad = 1;
        if (tid == 0) {
            double s = 0;
            for (int i = 0; i < n; i++) s += A[i * n + i];
            sscale = s;
        }
        __syncthreads();
        double scale = sscale / n;
        if (bad || !(scale > 0)) break;
        double e = eps;
        int done = 0;
        for (int attempt = 0; attempt < 3; attempt++) {
            double mn, mx;
            if (!fr_cholesky_solve_block(n, A, e * scale, b, L, x, &mn, &mx)) {
                if (mn < 10.0 * e * scale) flags |= FR_FLAG_ILL_CONDITIONED;
                for (int k = 1 + tid; k <= nh; k += nt) {
                    double phit[8];
                    if (deg < 0) phit[0] = 1;
                    else fr_poly_eval(deg, d->sx[(t - k) % d->ring] - d->sx[t % d->ring],
                                      d->sy[(t - k) % d->ring] - d->sy[t % d->ring], phit);
                    double s = 0;
                    for (int p = 0; p < m; p++) s += x[(k - 1) * m + p] * phit[p];
                    a[k - 1] = (float)s;
                }
                if (tid == 0) {
                    *used = nh;
                    *eps_used = e;
                }
                done = 1;
                break;
            }
            flags |= FR_FLAG_REGULARISED;
            e *= 100.0;
        }
        if (done) return flags;
        flags |= FR_FLAG_REDUCED;
        nh /= 2;
    }
    for (int k = tid; k < N; k += nt) a[k] = 0;
    if (tid == 0) *used = 0;
    return flags | FR_FLAG_FALLBACK;
}
#endif

/* ------------------------------------------------------------ matched filter */

/* Taps of the 1D Gaussian of the given FWHM, normalised to sum 1 (the 2D
 * filter is k (x) k); radius ceil(2.5 sigma), at most (FR_MAX_TAPS-1)/2.
 * Returns the radius.  Also sum of k^2 (the 2D filter's sum of squares is its
 * square). */
FR_HD int fr_psf_taps(double fwhm, float *k, double *sum_sq)
{
    double sigma = fwhm / 2.3548200450309493;
    int r = (int)ceil(2.5 * sigma);
    if (r < 1) r = 1;
    if (r > (FR_MAX_TAPS - 1) / 2) r = (FR_MAX_TAPS - 1) / 2;
    double s = 0, tap[FR_MAX_TAPS];
    for (int i = -r; i <= r; i++) s += tap[i + r] = exp(-0.5 * (double)(i * i) / (sigma * sigma));
    double sq = 0;
    for (int i = 0; i <= 2 * r; i++) {
        k[i] = (float)(tap[i] / s);
        sq += (double)k[i] * (double)k[i];
    }
    *sum_sq = sq;
    return r;
}

/* ------------------------------------------------------------ noise model */

/* Sums of one frame for the fit m^2 = A x + C over its valid pixels (x the
 * matched filter's K^2 * (prediction + background)):
 * n, sum x, sum x^2, sum y, sum x y (y = m^2); then n, sum x, sum y, sum x^2
 * over the valid pixels where no source is predicted (fr_noise_sky: the sky,
 * or the bias, alone), not clipped.  Accumulated over frames with weight
 * lambda = 1 - 1/noise_frames. */
#define FR_NOISE_SUMS 9

/* The background's part of x at a pixel: the plane base + slope * xt of the
 * row (base = bg0 + bg2 * yt, slope = bg1) through the matched filter, which
 * gives a plane back times the sum k2sum of its taps. */
FR_HD float fr_noise_bg(float k2sum, float base, float slope, float xt) { return k2sum * (base + slope * xt); }

/* Whether x is the background's part xb or less: the prediction puts no
 * source at the pixel. */
FR_HD int fr_noise_sky(float x, float xb) { return x <= xb; }

FR_HD void fr_noise_fit(const double *S, double *A, double *C, double *F)
{
    double n = S[0], sx = S[1], sxx = S[2], sy = S[3], sxy = S[4];
    if (!(n > 0)) {
        *A = 0;
        *C = 1;
        *F = 1;
        return;
    }
    double det = n * sxx - sx * sx;
    double a = det > 1e-12 * n * sxx ? (n * sxy - sx * sy) / det : 0.0;
    if (!(a > 0) || !isfinite(a)) a = 0;
    /* C takes any sign: with a bias (pedestal) in the frames the signal x
     * starts at the bias, and the read noise is C + A * bias */
    double c = (sy - a * sx) / n;
    /* the variance's floor; the frames are in the sequence's unit (fr_unit),
     * so 1e-30 lies far below any float data's rounding and keeps the float
     * variance normal */
    double floor_ = 1e-3 * sy / n;
    if (!(floor_ > 1e-30)) floor_ = 1e-30;
    /* A line through data linear in x (the photon noise) passes near the
     * variance y0 that the pixels without a predicted source show at their
     * level x0, and changes little over their spread of x.  Where the
     * residual's variance grows faster than x (frames that are not
     * registered: the prediction misses each star by its shift) the line is
     * steep and falls below (x0, y0), to the floor at much of the sky, whose
     * own noise then makes thousands of candidates; there C keeps the sign
     * of a variance, as the line through the origin of x lies above such
     * data at the sky. */
    int linear = 1;
    if (S[5] > 0) {
        double x0 = S[6] / S[5], y0 = S[7] / S[5], vx0 = S[8] / S[5] - x0 * x0;
        linear = a * x0 + c >= 0.5 * y0 && a * sqrt(vx0 > 0 ? vx0 : 0) <= 0.5 * y0;
    }
    /* a C within the floor of zero is the fit's rounding (no bias, little
     * read noise): the floor, as the variance's least value */
    if (!isfinite(c) || !linear || c > -floor_) c = c > floor_ ? c : floor_;
    *A = a;
    *C = c;
    *F = floor_;
}

/* A variance plane's value (var, the frame's own pixels, nx*ny) at pixel
 * (x, y) of the frame registered by the whole-pixel shift (ox, oy)
 * (fr_pixel_shift: the frame's pixel q lands at q - o), the edge's pixel
 * beyond the frame, times scale (the sequence's unit's inverse squared).  To
 * the nearest pixel: a Fourier shift would ring around a star's variance and
 * turn it negative. */
FR_HD float fr_var_at(const float *var, int64_t nx, int64_t ny, int64_t x, int64_t y, int64_t ox, int64_t oy, float scale)
{
    int64_t qx = x + ox, qy = y + oy;
    qx = qx < 0 ? 0 : qx >= nx ? nx - 1 : qx;
    qy = qy < 0 ? 0 : qy >= ny ? ny - 1 : qy;
    return var[qy * nx + qx] * scale;
}

/* The model's variance at x, in float (a per-pixel expression: float keeps
 * it vectorised on the CPU; both backends evaluate exactly this), never below
 * the floor F. */
FR_HD float fr_noise_var(double A, double C, double F, float x)
{
    float a = (float)A, c = (float)C, f = (float)F;
    float v = a * (x > 0 ? x : 0.0f) + c;
    return v > f ? v : f;
}

#endif
