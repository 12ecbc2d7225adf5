/* pyr_lgs_solve: option checks, backend choice (the implementations
 * registered below, lgs_internal.h pyr_lgs_impl_t), the iteration loop with
 * residual checks, progress, divergence and stagnation detection. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "backend/plugin.h"
#include "core/error.h"
#include "pyrgrid.h"
#include "solvers/lgs/lgs_cpu.h"

/* The CPU's implementation; the CUDA one (cuda/lgs_cuda.cu) comes with the
 * CUDA backend's table (backend/plugin.h). */
extern const pyr_lgs_impl_t pyr_lgs_impl_cpu; /* lgs_cpu.c */

const pyr_lgs_impl_t *pyr_lgs_impl_find(pyr_backend_kind_t backend)
{
    if (backend == PYR_BACKEND_CPU) return &pyr_lgs_impl_cpu;
    const pyr_cuda_plugin_t *cuda = backend == PYR_BACKEND_CUDA ? pyr_cuda_plugin(PYR_CUDA_ASK) : NULL;
    return cuda ? cuda->lgs : NULL;
}

void pyr_lgs_options_default(pyr_lgs_options_t *o)
{
    memset(o, 0, sizeof *o);
    o->ordering = PYR_LGS_REDBLACK;
    o->omega = 1.0;
    o->precondition = PYR_LGS_PRECOND_NONE;
    o->tolerance = 1e-10;
    o->max_iterations = 100000;
    o->check_every = 10;
    o->report_every = 0;
    o->backend = PYR_BACKEND_AUTO;
    o->threads = 0;
    o->divergence_limit = 1e8;
    o->stagnation_window = 20000;
}

double pyr_lgs_omega_laplace(int64_t n, int64_t m)
{
    const double pi = 3.14159265358979323846;
    double rj = cos(pi / (double)(n + 1)) / (2.0 - cos(pi / (double)(m + 1)));
    return 2.0 / (1.0 + sqrt(1.0 - rj * rj));
}

const char *pyr_lgs_ordering_name(pyr_lgs_ordering_t o)
{
    return o == PYR_LGS_LEXICOGRAPHIC ? "lexicographic" : o == PYR_LGS_REDBLACK ? "redblack" : "?";
}

const char *pyr_lgs_precond_name(pyr_lgs_precond_t p)
{
    return p == PYR_LGS_PRECOND_NONE ? "none" : p == PYR_LGS_PRECOND_JACOBI ? "jacobi" : "?";
}

const char *pyr_lgs_stop_name(pyr_lgs_stop_t s)
{
    switch (s) {
    case PYR_LGS_CONVERGED: return "converged";
    case PYR_LGS_MAX_ITERATIONS: return "max_iterations";
    case PYR_LGS_DIVERGED: return "diverged";
    case PYR_LGS_STAGNATED: return "stagnated";
    case PYR_LGS_CANCELLED: return "cancelled";
    }
    return "?";
}

pyr_status_t pyr_lgs_cuda_usable(void)
{
    const pyr_lgs_impl_t *cuda = pyr_lgs_impl_find(PYR_BACKEND_CUDA);
    if (!cuda)
        return pyr_fail(PYR_ERR_NODEVICE, "%s", pyr_cuda_missing());
    char name[128];
    return cuda->probe(name, sizeof name);
}

void pyr_lgs_result_destroy(pyr_lgs_result_t **result)
{
    if (!result || !*result) return;
    free((*result)->history_iteration);
    free((*result)->history_residual);
    free(*result);
    *result = NULL;
}

static pyr_status_t check_options(const pyr_lgs_options_t *o)
{
    if (o->ordering != PYR_LGS_LEXICOGRAPHIC && o->ordering != PYR_LGS_REDBLACK)
        return pyr_fail(PYR_ERR_ARG, "ordering %d is not lexicographic or redblack", (int)o->ordering);
    if (o->precondition != PYR_LGS_PRECOND_NONE && o->precondition != PYR_LGS_PRECOND_JACOBI)
        return pyr_fail(PYR_ERR_ARG, "precondition %d is not none or jacobi", (int)o->precondition);
    if (!(o->omega > 0.0 && o->omega < 2.0))
        return pyr_fail(PYR_ERR_ARG, "omega = %g: relaxation converges only for 0 < omega < 2 (1 is plain "
                        "Gauss-Seidel)", o->omega);
    if (!(o->tolerance >= 0.0) || !isfinite(o->tolerance))
        return pyr_fail(PYR_ERR_ARG, "tolerance = %g: must be >= 0 and finite (0 runs max_iterations)",
                        o->tolerance);
    if (o->max_iterations < 0)
        return pyr_fail(PYR_ERR_ARG, "max_iterations = %lld: must be >= 0", (long long)o->max_iterations);
    if (o->check_every < 1)
        return pyr_fail(PYR_ERR_ARG, "check_every = %lld: must be >= 1", (long long)o->check_every);
    if (o->report_every < 0)
        return pyr_fail(PYR_ERR_ARG, "report_every = %lld: must be >= 0 (0: only at the end)",
                        (long long)o->report_every);
    if (o->threads < 0) return pyr_fail(PYR_ERR_ARG, "threads = %d: must be >= 0 (0: all cores)", o->threads);
    if (!(o->divergence_limit > 0.0))
        return pyr_fail(PYR_ERR_ARG, "divergence_limit = %g: must be > 0", o->divergence_limit);
    if (o->stagnation_window < 0)
        return pyr_fail(PYR_ERR_ARG, "stagnation_window = %lld: must be >= 0 (0: never)",
                        (long long)o->stagnation_window);
    if (o->backend != PYR_BACKEND_AUTO && o->backend != PYR_BACKEND_CPU && o->backend != PYR_BACKEND_CUDA)
        return pyr_fail(PYR_ERR_ARG, "backend %d is not auto, cpu or cuda", (int)o->backend);
    if (o->backend == PYR_BACKEND_CUDA && o->ordering == PYR_LGS_LEXICOGRAPHIC)
        return pyr_fail(PYR_ERR_UNSUPPORTED, "ordering = lexicographic is sequential and runs on the CPU only; use "
                        "ordering = redblack with backend = cuda, or backend = cpu");
    return PYR_OK;
}

/* The iterate's home: an implementation's (the CPU's padded array itself, or a GPU's copy of it). */
typedef struct {
    const pyr_lgs_impl_t *impl;
    void *run;       /* the implementation's state */
    const pyr_lgs_prep_t *prep;
    double *y;       /* padded n×mpad: the CPU's iterate, a GPU's initial iterate and result */
    double *rows;    /* n row sums */
} engine_t;

static pyr_status_t engine_iterate(engine_t *e, int64_t iterations) { return e->impl->iterate(e->run, iterations); }

static pyr_status_t engine_residual(engine_t *e, double *rel)
{
    double total = 0.0;
    PYR_TRY(e->impl->residual(e->run, e->rows, &total));
    double fn = e->prep->f_norm2;
    *rel = fn > 0.0 ? sqrt(total) / sqrt(fn) : sqrt(total);
    return PYR_OK;
}

static pyr_status_t history_push(pyr_lgs_result_t *r, int64_t *cap, int64_t it, double rel)
{
    if (r->history_len == *cap) {
        int64_t nc = *cap ? 2 * *cap : 64;
        int64_t *hi = realloc(r->history_iteration, (size_t)nc * sizeof *hi);
        if (!hi) return pyr_fail(PYR_ERR_NOMEM, "out of memory growing the residual history");
        r->history_iteration = hi;
        double *hr = realloc(r->history_residual, (size_t)nc * sizeof *hr);
        if (!hr) return pyr_fail(PYR_ERR_NOMEM, "out of memory growing the residual history");
        r->history_residual = hr;
        *cap = nc;
    }
    r->history_iteration[r->history_len] = it;
    r->history_residual[r->history_len] = rel;
    r->history_len++;
    return PYR_OK;
}

static int64_t next_multiple(int64_t it, int64_t k) { return (it / k + 1) * k; }

static pyr_status_t run_loop(engine_t *e, const pyr_lgs_options_t *o, pyr_lgs_result_t *r)
{
    int64_t cap = 0, it = 0;
    double rel;
    PYR_TRY(engine_residual(e, &rel));
    PYR_TRY(history_push(r, &cap, 0, rel));
    const double rel0 = rel;
    double best = rel;
    int64_t best_it = 0;
    r->stop = PYR_LGS_MAX_ITERATIONS;
    if (o->tolerance > 0.0 && rel <= o->tolerance) r->stop = PYR_LGS_CONVERGED;
    double t0 = pyr_now_s();
    while (r->stop == PYR_LGS_MAX_ITERATIONS && it < o->max_iterations) {
        int64_t next = next_multiple(it, o->check_every);
        if (o->report_every > 0 && next_multiple(it, o->report_every) < next)
            next = next_multiple(it, o->report_every);
        if (next > o->max_iterations) next = o->max_iterations;
        double ti = pyr_now_s();
        PYR_TRY(engine_iterate(e, next - it));
        r->iterate_seconds += pyr_now_s() - ti;
        it = next;
        r->iterations = it;
        PYR_TRY(engine_residual(e, &rel));
        PYR_TRY(history_push(r, &cap, it, rel));
        r->rel_residual = rel;
        if (!isfinite(rel) || rel > o->divergence_limit) {
            r->stop = PYR_LGS_DIVERGED;
            break;
        }
        if (o->tolerance > 0.0 && rel <= o->tolerance) {
            r->stop = PYR_LGS_CONVERGED;
            break;
        }
        if (rel < best * (1.0 - 1e-3)) {
            best = rel;
            best_it = it;
        } else if (o->stagnation_window > 0 && it - best_it >= o->stagnation_window) {
            r->stop = PYR_LGS_STAGNATED;
            break;
        }
        if (o->progress && o->report_every > 0 && it % o->report_every == 0 && it < o->max_iterations &&
            o->progress(o->progress_user, it, rel)) {
            r->stop = PYR_LGS_CANCELLED;
            break;
        }
    }
    r->seconds = pyr_now_s() - t0;
    r->rel_residual = rel;
    if (o->progress && r->stop != PYR_LGS_CANCELLED) o->progress(o->progress_user, it, rel);
    switch (r->stop) {
    case PYR_LGS_DIVERGED: {
        /* advice that changes something: back to omega = 1 from over-relaxation, else damp harder */
        char advice[160];
        if (o->omega > 1.0)
            snprintf(advice, sizeof advice, "over-relaxation may be too strong; try omega = 1");
        else
            snprintf(advice, sizeof advice, "the iteration does not contract; try %sunder-relaxation (omega = %g)",
                     o->omega < 1.0 ? "stronger " : "", o->omega / 2.0);
        return pyr_fail(PYR_ERR_DIVERGED,
                        "line Gauss-Seidel diverged: relative residual %g at iteration %lld (it was %g at the start; "
                        "limit %g). With omega = %g %s, %s%s",
                        rel, (long long)it, rel0, o->divergence_limit, o->omega, advice,
                        r->warning[0] ? "or make the system diagonally dominant, which Gauss-Seidel needs to be sure "
                                        "to converge: "
                                      : "or check that the system is diagonally dominant",
                        r->warning);
    }
    case PYR_LGS_STAGNATED:
        return pyr_fail(PYR_ERR_DIVERGED,
                        "line Gauss-Seidel stagnated: the relative residual is %g at iteration %lld and has not "
                        "improved by 0.1%% since iteration %lld (best %g), above tolerance = %g. The tolerance may "
                        "be below what double precision reaches for this system (try tolerance = %g), or the "
                        "iteration does not converge%s%s",
                        rel, (long long)it, (long long)best_it, best, o->tolerance, best * 10.0,
                        r->warning[0] ? ": " : "", r->warning);
    case PYR_LGS_CANCELLED: return pyr_fail(PYR_ERR_CANCELLED, "solve cancelled at iteration %lld", (long long)it);
    default: return PYR_OK;
    }
}

pyr_status_t pyr_lgs_solve(const pyr_lgs_system_t *sys, const pyr_lgs_options_t *opt, double *y,
                           pyr_lgs_result_t **result)
{
    if (!result) return pyr_fail(PYR_ERR_ARG, "pyr_lgs_solve: result is NULL");
    *result = NULL;
    if (!sys || !y) return pyr_fail(PYR_ERR_ARG, "pyr_lgs_solve: %s is NULL", sys ? "y" : "sys");
    pyr_lgs_options_t o;
    if (opt)
        o = *opt;
    else
        pyr_lgs_options_default(&o);
    PYR_TRY(check_options(&o));
    char warning[512];
    PYR_TRY(pyr_lgs_system_check(sys, warning, sizeof warning));
    const int64_t n = sys->n, m = sys->m;
    for (size_t q = 0; q < (size_t)n * (size_t)m; q++)
        if (!isfinite(y[q]))
            return pyr_fail(PYR_ERR_ARG, "the initial guess y[%lld, %lld] is %g; it must be finite",
                            (long long)(q / (size_t)m), (long long)(q % (size_t)m), y[q]);

    pyr_backend_kind_t backend = o.backend;
    if (backend == PYR_BACKEND_AUTO) {
        backend = PYR_BACKEND_CPU;
        /* where no GPU may be present, the CUDA backend is not even loaded */
        if (o.ordering == PYR_LGS_REDBLACK && pyr_gpu_count() > 0 && pyr_lgs_cuda_usable() == PYR_OK) backend = PYR_BACKEND_CUDA;
        pyr_clear_error();
    }
    const pyr_lgs_impl_t *impl = pyr_lgs_impl_find(backend);
    if (!impl) return pyr_lgs_cuda_usable(); /* cuda, not compiled in: says so */
    char device[128] = "";
    PYR_TRY(impl->probe(device, sizeof device));

    double t_setup = pyr_now_s();
    pyr_lgs_prep_t *prep = NULL;
    PYR_TRY(pyr_lgs_prep_create(sys, o.precondition == PYR_LGS_PRECOND_JACOBI, &prep));
    engine_t e;
    memset(&e, 0, sizeof e);
    e.impl = impl;
    e.prep = prep;
    int threads = o.ordering == PYR_LGS_LEXICOGRAPHIC ? 1 : (o.threads > 0 ? o.threads : omp_get_max_threads());
    if (o.ordering == PYR_LGS_REDBLACK && o.threads == 0) {
        /* automatic: at least 8192 unknowns a thread, so that tiny systems do
         * not pay two barriers an iteration for nothing (the iterates do not
         * depend on the thread count) */
        int64_t most = (n * prep->mpad) / 8192;
        if (most < 1) most = 1;
        if (threads > most) threads = (int)most;
    }
    pyr_status_t st = PYR_OK;
    pyr_lgs_result_t *r = NULL;
    const size_t padded = (size_t)n * (size_t)prep->mpad;
    e.y = calloc(padded, sizeof(double));
    e.rows = malloc((size_t)n * sizeof(double));
    r = calloc(1, sizeof *r);
    if (!e.y || !e.rows || !r) {
        st = pyr_fail(PYR_ERR_NOMEM, "out of memory: the iterate of a %lld x %lld system needs %.1f MiB",
                      (long long)n, (long long)m, (double)padded * 8.0 / 1048576.0);
        goto done;
    }
    for (int64_t i = 0; i < n; i++) memcpy(e.y + (size_t)i * (size_t)prep->mpad, y + (size_t)i * (size_t)m, (size_t)m * sizeof(double));
    st = impl->create(prep, e.y, o.ordering, o.omega, threads, &e.run);
    if (st != PYR_OK) goto done;
    r->backend = backend;
    r->ordering = o.ordering;
    r->threads = impl->host_threads ? threads : 0;
    r->f_norm = sqrt(prep->f_norm2);
    snprintf(r->warning, sizeof r->warning, "%s", warning);
    snprintf(r->device, sizeof r->device, "%s", device);
    r->setup_seconds = pyr_now_s() - t_setup;

    st = run_loop(&e, &o, r);
    if (st == PYR_OK || st == PYR_ERR_DIVERGED || st == PYR_ERR_CANCELLED) {
        pyr_status_t dl = impl->download(e.run);
        if (dl != PYR_OK) {
            st = dl;
        } else {
            for (int64_t i = 0; i < n; i++)
                memcpy(y + (size_t)i * (size_t)m, e.y + (size_t)i * (size_t)prep->mpad, (size_t)m * sizeof(double));
            *result = r;
            r = NULL;
        }
    }
done:
    if (e.run) impl->destroy(e.run);
    pyr_lgs_result_destroy(&r);
    free(e.y);
    free(e.rows);
    pyr_lgs_prep_destroy(&prep);
    return st;
}

pyr_status_t pyr_lgs_residual(const pyr_lgs_system_t *sys, const double *y, double *rel_residual)
{
    if (!sys || !y || !rel_residual) return pyr_fail(PYR_ERR_ARG, "pyr_lgs_residual: NULL argument");
    int64_t n = sys->n, m = sys->m;
    double r2 = 0.0, f2 = 0.0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < m; k++) {
            size_t q = (size_t)i * (size_t)m + (size_t)k;
            double v = 0.0;
            if (i > 0) v = v + sys->cA[q] * y[q - (size_t)m];
            if (k > 0) v = v + sys->aC[q] * y[q - 1];
            v = v + sys->cC[q] * y[q];
            if (k < m - 1) v = v + sys->bC[q] * y[q + 1];
            if (i < n - 1) v = v + sys->cB[q] * y[q + (size_t)m];
            double r = sys->F[q] - v;
            r2 += r * r;
            f2 += sys->F[q] * sys->F[q];
        }
    *rel_residual = f2 > 0.0 ? sqrt(r2) / sqrt(f2) : sqrt(r2);
    return PYR_OK;
}
