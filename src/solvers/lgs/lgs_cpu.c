/* The prepared form of a system (factorisation once per solve) and the CPU
 * iterations: sequential lexicographic and OpenMP red–black.  The red–black
 * row update mirrors cuda/lgs_cuda.cu's warp kernel expression for expression;
 * see lgs_internal.h for the scheme.  Registered as the cpu implementation
 * (lgs_internal.h pyr_lgs_impl_t). */
#include "solvers/lgs/lgs_cpu.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

void pyr_lgs_prep_destroy(pyr_lgs_prep_t **prep)
{
    if (!prep || !*prep) return;
    pyr_lgs_prep_t *p = *prep;
    double *arrays[11] = {p->alpha, p->ft, p->cat, p->cbt, p->gam, p->cC, p->aC, p->bC, p->cA, p->cB, p->F};
    for (int a = 0; a < 11; a++) free(arrays[a]);
    free(p);
    *prep = NULL;
}

pyr_status_t pyr_lgs_prep_create(const pyr_lgs_system_t *s, int jacobi, pyr_lgs_prep_t **out)
{
    *out = NULL;
    int64_t n = s->n, m = s->m;
    pyr_lgs_prep_t *p = calloc(1, sizeof *p);
    if (!p) return pyr_fail(PYR_ERR_NOMEM, "out of memory preparing the system");
    p->n = n;
    p->m = m;
    p->j = pyr_lgs_chunk(m);
    p->seg = (int64_t)p->j * PYR_LGS_LANES;
    p->nseg = (m + p->seg - 1) / p->seg;
    p->mpad = p->nseg * p->seg;
    size_t count = (size_t)n * (size_t)p->mpad;
    double **arrays[11] = {&p->alpha, &p->ft, &p->cat, &p->cbt, &p->gam, &p->cC,
                           &p->aC,    &p->bC, &p->cA,  &p->cB,  &p->F};
    for (int a = 0; a < 11; a++) {
        *arrays[a] = calloc(count, sizeof(double));
        if (!*arrays[a]) {
            pyr_lgs_prep_destroy(&p);
            return pyr_fail(PYR_ERR_NOMEM, "out of memory: the solver needs 11 arrays of %lld x %lld doubles "
                            "(%.1f MiB in all) besides the system", (long long)n, (long long)(count / (size_t)n),
                            11.0 * (double)count * 8.0 / 1048576.0);
        }
    }
    int64_t bad_i = -1, bad_k = -1;
    double bad_den = 0.0;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        const size_t src = (size_t)i * (size_t)m, dst = (size_t)i * (size_t)p->mpad;
        double cp_prev = 0.0;
        for (int64_t k = 0; k < m; k++) {
            double c = s->cC[src + k];
            double a = k > 0 ? s->aC[src + k] : 0.0;
            double b = k < m - 1 ? s->bC[src + k] : 0.0;
            double ca = i > 0 ? s->cA[src + k] : 0.0;
            double cb = i < n - 1 ? s->cB[src + k] : 0.0;
            double f = s->F[src + k];
            if (jacobi) {
                a = a / c;
                b = b / c;
                ca = ca / c;
                cb = cb / c;
                f = f / c;
                c = 1.0;
            }
            p->cC[dst + k] = c;
            p->aC[dst + k] = a;
            p->bC[dst + k] = b;
            p->cA[dst + k] = ca;
            p->cB[dst + k] = cb;
            p->F[dst + k] = f;
            double den = k > 0 ? c - a * cp_prev : c;
            if (den == 0.0 || !isfinite(den)) {
#pragma omp critical(pyr_lgs_pivot)
                if (bad_i < 0 || i < bad_i) {
                    bad_i = i;
                    bad_k = k;
                    bad_den = den;
                }
                break;
            }
            double cp = b / den;
            p->alpha[dst + k] = -(a / den);
            p->ft[dst + k] = f / den;
            p->cat[dst + k] = ca / den;
            p->cbt[dst + k] = cb / den;
            p->gam[dst + k] = -cp;
            cp_prev = cp;
        }
    }
    if (bad_i >= 0) {
        pyr_lgs_prep_destroy(&p);
        return pyr_fail(PYR_ERR_NUMERIC,
                        "zero pivot in the Thomas algorithm at block row i = %lld, k = %lld (0-based; system row "
                        "%lld): the eliminated diagonal cC - aC*b'/den is %g. The tridiagonal block C_%lld is "
                        "singular or needs pivoting, which the Thomas algorithm does not do; a diagonally dominant "
                        "block (|cC| > |aC| + |bC|) never has a zero pivot",
                        (long long)bad_i, (long long)bad_k, (long long)(bad_i * m + bad_k), bad_den,
                        (long long)bad_i);
    }
    /* ‖F‖² in the residual's order (see pyr_lgs_row_residual2) */
    double total = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double lane[PYR_LGS_LANES] = {0};
        const double *F = p->F + (size_t)i * (size_t)p->mpad;
        for (int64_t k = 0; k < m; k++) {
            double r = F[k];
            lane[(k % p->seg) / p->j] += r * r;
        }
        for (int off = PYR_LGS_LANES / 2; off > 0; off /= 2)
            for (int t = 0; t < off; t++) lane[t] += lane[t + off];
        total += lane[0];
    }
    p->f_norm2 = total;
    *out = p;
    return PYR_OK;
}

double pyr_lgs_row_residual2(const pyr_lgs_prep_t *p, int64_t i, const double *y)
{
    const int64_t n = p->n, m = p->m, mp = p->mpad;
    const size_t o = (size_t)i * (size_t)mp;
    const double *yr = y + o;
    const double *yu = i > 0 ? yr - mp : NULL, *yd = i < n - 1 ? yr + mp : NULL;
    double lane[PYR_LGS_LANES] = {0};
    for (int64_t k = 0; k < m; k++) {
        const size_t q = o + (size_t)k;
        double v = 0.0;
        if (yu) v = v + p->cA[q] * yu[k];
        if (k > 0) v = v + p->aC[q] * yr[k - 1];
        v = v + p->cC[q] * yr[k];
        if (k < m - 1) v = v + p->bC[q] * yr[k + 1];
        if (yd) v = v + p->cB[q] * yd[k];
        double r = p->F[q] - v;
        lane[(k % p->seg) / p->j] += r * r;
    }
    for (int off = PYR_LGS_LANES / 2; off > 0; off /= 2)
        for (int t = 0; t < off; t++) lane[t] += lane[t + off];
    return lane[0];
}

pyr_status_t pyr_lgs_cpu_residual2(const pyr_lgs_prep_t *p, const double *y, int threads, double *rows,
                                   double *total)
{
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t i = 0; i < p->n; i++) rows[i] = pyr_lgs_row_residual2(p, i, y);
    double t = 0.0;
    for (int64_t i = 0; i < p->n; i++) t += rows[i];
    *total = t;
    return PYR_OK;
}

/* ------------------------------------------------------------ lexicographic */

/* One block row: Thomas with the stored factors, natural order, then
 * relaxation.  dp: m doubles of scratch. */
static void lex_row(const pyr_lgs_prep_t *p, int64_t i, double *y, double omega, double *dp)
{
    const int64_t n = p->n, m = p->m, mp = p->mpad;
    const size_t o = (size_t)i * (size_t)mp;
    const double *al = p->alpha + o, *ft = p->ft + o, *ca = p->cat + o, *cb = p->cbt + o, *ga = p->gam + o;
    double *yr = y + o;
    const double *yu = i > 0 ? yr - mp : NULL, *yd = i < n - 1 ? yr + mp : NULL;
    double d = 0.0;
    for (int64_t k = 0; k < m; k++) {
        double b = ft[k];
        if (yu) b = b - ca[k] * yu[k];
        if (yd) b = b - cb[k] * yd[k];
        d = al[k] * d + b;
        dp[k] = d;
    }
    double v = 0.0;
    for (int64_t k = m - 1; k >= 0; k--) {
        v = ga[k] * v + dp[k];
        if (omega == 1.0) {
            yr[k] = v;
        } else {
            double old = yr[k];
            yr[k] = old + omega * (v - old);
        }
    }
}

/* ------------------------------------------------------------ red–black */

/* One block row of the red–black method (lgs_internal.h; the CUDA kernel
 * lgs_rb_kernel computes the same, lane t of a warp doing this code's t).
 * scratch: mpad + S doubles. */
static void rb_row(const pyr_lgs_prep_t *p, int64_t i, double *y, double omega, double *scratch)
{
    const int64_t n = p->n, mp = p->mpad, S = p->seg, nseg = p->nseg;
    const int J = p->j, L = PYR_LGS_LANES;
    const size_t o = (size_t)i * (size_t)mp;
    const double *al = p->alpha + o, *ft = p->ft + o, *ca = p->cat + o, *cb = p->cbt + o, *ga = p->gam + o;
    double *yr = y + o;
    const double *yu = i > 0 ? yr - mp : NULL, *yd = i < n - 1 ? yr + mp : NULL;
    double *dp = scratch, *beta = scratch + mp;
    double A[PYR_LGS_LANES], B[PYR_LGS_LANES];

    double carry = 0.0;
    for (int64_t s = 0; s < nseg; s++) {
        const int64_t base = s * S;
        for (int64_t e = 0; e < S; e++) {
            const int64_t k = base + e;
            double b = ft[k];
            if (yu) b = b - ca[k] * yu[k];
            if (yd) b = b - cb[k] * yd[k];
            beta[e] = b;
        }
        for (int t = 0; t < L; t++) {
            const int e0 = t * J;
            double a = al[base + e0], bb = beta[e0];
            for (int j = 1; j < J; j++) {
                const double aj = al[base + e0 + j];
                bb = aj * bb + beta[e0 + j];
                a = aj * a;
            }
            A[t] = a;
            B[t] = bb;
        }
        for (int off = 1; off < L; off *= 2)
            for (int t = L - 1; t >= off; t--) {
                B[t] = A[t] * B[t - off] + B[t];
                A[t] = A[t] * A[t - off];
            }
        for (int t = 0; t < L; t++) {
            double d = t == 0 ? carry : A[t - 1] * carry + B[t - 1];
            for (int j = 0; j < J; j++) {
                const int e = t * J + j;
                d = al[base + e] * d + beta[e];
                dp[base + e] = d;
            }
        }
        carry = A[L - 1] * carry + B[L - 1];
    }

    carry = 0.0;
    for (int64_t s = nseg - 1; s >= 0; s--) {
        const int64_t base = s * S;
        for (int t = 0; t < L; t++) {
            const int64_t e0 = base + t * J + J - 1;
            double a = ga[e0], bb = dp[e0];
            for (int j = J - 2; j >= 0; j--) {
                const int64_t e = base + t * J + j;
                bb = ga[e] * bb + dp[e];
                a = ga[e] * a;
            }
            A[t] = a;
            B[t] = bb;
        }
        for (int off = 1; off < L; off *= 2)
            for (int t = 0; t + off < L; t++) {
                B[t] = A[t] * B[t + off] + B[t];
                A[t] = A[t] * A[t + off];
            }
        for (int t = 0; t < L; t++) {
            double v = t == L - 1 ? carry : A[t + 1] * carry + B[t + 1];
            for (int j = J - 1; j >= 0; j--) {
                const int64_t e = base + t * J + j;
                v = ga[e] * v + dp[e];
                if (omega == 1.0) {
                    yr[e] = v;
                } else {
                    double old = yr[e];
                    yr[e] = old + omega * (v - old);
                }
            }
        }
        carry = A[0] * carry + B[0];
    }
}

size_t pyr_lgs_cpu_scratch_per_thread(const pyr_lgs_prep_t *p) { return (size_t)(p->mpad + p->seg); }

void pyr_lgs_cpu_iterate(const pyr_lgs_prep_t *p, pyr_lgs_ordering_t ordering, double omega, int threads,
                         double *y, double *scratch, int64_t iterations)
{
    if (ordering == PYR_LGS_LEXICOGRAPHIC) {
        for (int64_t it = 0; it < iterations; it++)
            for (int64_t i = 0; i < p->n; i++) lex_row(p, i, y, omega, scratch);
        return;
    }
    const size_t per = pyr_lgs_cpu_scratch_per_thread(p);
#pragma omp parallel num_threads(threads)
    {
        double *mine = scratch + per * (size_t)omp_get_thread_num();
        for (int64_t it = 0; it < iterations; it++)
            for (int color = 0; color < 2; color++) {
                const int64_t rows = (p->n - color + 1) / 2;
#pragma omp for schedule(static)
                for (int64_t r = 0; r < rows; r++) rb_row(p, color + 2 * r, y, omega, mine);
            }
    }
}

/* ---------------------------------------------------------------- registration (lgs_internal.h) */

/* The iterate is the caller's padded array itself. */
typedef struct {
    const pyr_lgs_prep_t *prep;
    double *y;
    pyr_lgs_ordering_t ordering;
    double omega;
    int threads;
    double *scratch; /* threads x pyr_lgs_cpu_scratch_per_thread */
} cpu_run_t;

static pyr_status_t cpu_probe(char *name, size_t size)
{
    if (name && size) name[0] = 0;
    return PYR_OK;
}

static pyr_status_t cpu_create(const pyr_lgs_prep_t *prep, double *y_padded, pyr_lgs_ordering_t ordering, double omega, int threads,
                               void **impl)
{
    *impl = NULL;
    cpu_run_t *c = calloc(1, sizeof *c);
    if (c) c->scratch = malloc(pyr_lgs_cpu_scratch_per_thread(prep) * (size_t)threads * sizeof(double));
    if (!c || !c->scratch) {
        free(c);
        return pyr_fail(PYR_ERR_NOMEM, "out of memory: the iterate of a %lld x %lld system needs %.1f MiB", (long long)prep->n,
                        (long long)prep->m, (double)((size_t)prep->n * (size_t)prep->mpad) * 8.0 / 1048576.0);
    }
    c->prep = prep;
    c->y = y_padded;
    c->ordering = ordering;
    c->omega = omega;
    c->threads = threads;
    *impl = c;
    return PYR_OK;
}

static pyr_status_t cpu_iterate(void *impl, int64_t iterations)
{
    cpu_run_t *c = impl;
    pyr_lgs_cpu_iterate(c->prep, c->ordering, c->omega, c->threads, c->y, c->scratch, iterations);
    return PYR_OK;
}

static pyr_status_t cpu_residual(void *impl, double *rows, double *total)
{
    cpu_run_t *c = impl;
    return pyr_lgs_cpu_residual2(c->prep, c->y, c->threads, rows, total);
}

static pyr_status_t cpu_download(void *impl)
{
    (void)impl; /* the iterate is in place */
    return PYR_OK;
}

static void cpu_destroy(void *impl)
{
    cpu_run_t *c = impl;
    if (!c) return;
    free(c->scratch);
    free(c);
}

const pyr_lgs_impl_t pyr_lgs_impl_cpu = {
    .backend = PYR_BACKEND_CPU,
    .host_threads = 1,
    .probe = cpu_probe,
    .create = cpu_create,
    .iterate = cpu_iterate,
    .residual = cpu_residual,
    .download = cpu_download,
    .destroy = cpu_destroy,
};
