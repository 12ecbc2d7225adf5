/* The long-vector method's time model (see longvector.h). */
#include "plan/longvector.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

int64_t pyr_lv_length(int64_t rows, int64_t width, int64_t pitch)
{
    if (rows <= 0 || width <= 0) return 0;
    return (rows - 1) * pitch + width;
}

/* threads as the whole number the model divides by (at least 1). */
static int64_t whole_threads(double threads)
{
    if (!(threads >= 1)) return 1;
    if (threads > 9.0e15) return (int64_t)9.0e15;
    return (int64_t)llround(threads);
}

int64_t pyr_lv_waves(int64_t m, double threads)
{
    if (m <= 0) return 0;
    const int64_t t = whole_threads(threads);
    return (m - 1) / t + 1;
}

double pyr_lv_wave_seconds(const pyr_lv_constants_t *k)
{
    return PYR_LV_ADDS * k->t_add + PYR_LV_AXPYS * k->t_saxpy + PYR_LV_SCALS * k->t_scal;
}

double pyr_lv_step_seconds(const pyr_lv_constants_t *k, int64_t m)
{
    return PYR_LV_CALLS * k->t_kernel + pyr_lv_wave_seconds(k) * (double)pyr_lv_waves(m, k->threads);
}

int64_t pyr_lv_pitch(int64_t n, int64_t align)
{
    int64_t row = n + 2;
    if (align > 1) row = (row + align - 1) / align * align;
    return row;
}

int64_t pyr_lv_grid_length(int64_t n, int64_t align)
{
    return pyr_lv_length(n, n, pyr_lv_pitch(n, align));
}

/* The smallest N in (lo, hi] with M(N) > limit, or hi + 1 when there is none
 * (M grows with N: the pitch never shrinks). */
static int64_t first_above(int64_t lo, int64_t hi, int64_t align, int64_t limit)
{
    int64_t a = lo + 1, b = hi + 1;
    while (a < b) {
        int64_t mid = a + (b - a) / 2;
        if (pyr_lv_grid_length(mid, align) > limit) b = mid;
        else a = mid + 1;
    }
    return a;
}

int pyr_lv_staircase(double threads, int64_t align, int64_t n_lo, int64_t n_hi, int64_t *pos, int max)
{
    if (!(threads >= 1) || n_hi <= n_lo || n_lo < 1) return 0;
    const int64_t t = whole_threads(threads);
    int count = 0;
    int64_t n = n_lo;
    /* from each step to the next: the first N whose range passes the current waves' capacity */
    for (;;) {
        const int64_t w = pyr_lv_waves(pyr_lv_grid_length(n, align), (double)t);
        if (w > INT64_MAX / t) break;
        const int64_t next = first_above(n, n_hi, align, w * t);
        if (next > n_hi) break;
        if (count < max && pos) pos[count] = next;
        count++;
        n = next;
    }
    return count;
}

void pyr_lv_defaults(pyr_lv_constants_t *k, size_t elem, double threads)
{
    const double bw = 2.5e12, t = threads >= 1 ? threads : 1;
    k->threads = t;
    k->t_kernel = 5e-6;
    k->t_add = 3.0 * (double)elem * t / bw;
    k->t_saxpy = 3.0 * (double)elem * t / bw;
    k->t_scal = 2.0 * (double)elem * t / bw;
}

static int ok_time(double x) { return isfinite(x) && x >= 0 && x < 1.0; }

int pyr_lv_valid(const pyr_lv_constants_t *k)
{
    return ok_time(k->t_kernel) && ok_time(k->t_add) && ok_time(k->t_saxpy) && ok_time(k->t_scal) && isfinite(k->threads) &&
           k->threads >= 1 && k->threads <= 1e12;
}

void pyr_lv_format(const pyr_lv_constants_t *k, char *out, size_t size)
{
    snprintf(out, size, "%.17g,%.17g,%.17g,%.17g,%.17g", k->t_kernel, k->t_add, k->t_saxpy, k->t_scal, k->threads);
}

int pyr_lv_parse(const char *text, pyr_lv_constants_t *k)
{
    double v[5];
    const char *p = text;
    for (int i = 0; i < 5; i++) {
        char *end = NULL;
        if (*p == 0 || *p == ',' || *p == ' ') return 0;
        v[i] = strtod(p, &end);
        if (end == p) return 0;
        if (i < 4 && *end != ',') return 0;
        if (i == 4 && *end != 0) return 0;
        p = end + 1;
    }
    pyr_lv_constants_t c = {v[0], v[1], v[2], v[3], v[4]};
    if (!pyr_lv_valid(&c) || c.threads != floor(c.threads)) return 0;
    *k = c;
    return 1;
}

int64_t pyr_lv_plan_length(const pyr_plan_t *plan)
{
    pyr_box_t in = pyr_plan_interior(plan);
    return pyr_lv_length(pyr_box_extent(&in, 1), pyr_box_extent(&in, 0), plan->layout.pitch);
}

void pyr_lv_plan_print(const pyr_plan_t *plan, FILE *out)
{
    const pyr_lv_constants_t *k = &plan->model.lv;
    const pyr_problem_t *p = &plan->problem;
    const int64_t m = pyr_lv_plan_length(plan), w = pyr_lv_waves(m, k->threads);
    const double step = pyr_lv_step_seconds(k, m);
    fprintf(out, "long-vector  per step %d library calls x t_kernel + (%d t_add + %d t_saxpy + %d t_scal) x ceil(M / threads)\n",
            PYR_LV_CALLS, PYR_LV_ADDS, PYR_LV_AXPYS, PYR_LV_SCALS);
    fprintf(out, "             t_kernel %.3g us; per wave of %.0f elements t_add %.3g us, t_saxpy %.3g us, t_scal %.3g us\n",
            1e6 * k->t_kernel, k->threads, 1e6 * k->t_add, 1e6 * k->t_saxpy, 1e6 * k->t_scal);
    fprintf(out, "             M = %lld elements (%lld rows of %lld, interior %lld x %lld): %lld wave%s, %.4g us per step, "
                 "%.4g s for %lld steps without the transfers\n",
            (long long)m, (long long)p->n[1], (long long)plan->layout.pitch, (long long)(p->n[1] - 2), (long long)(p->n[0] - 2),
            (long long)w, w == 1 ? "" : "s", 1e6 * step, step * (double)p->steps, (long long)p->steps);
    if (p->n[0] != p->n[1]) return;
    /* where this size sits on the staircase of square grids */
    const int64_t n = p->n[0] - 2;
    const int64_t align = plan->ops && plan->ops->pitch_align_bytes > 0
                              ? plan->ops->pitch_align_bytes / (int64_t)pyr_precision_size(p->precision)
                              : 1;
    int64_t before = 0, after = 0, pos[1];
    const int64_t lo = n > 4096 ? n - 4096 : 1;
    int64_t cur = lo;
    /* the last step at or below n, and the first above it */
    for (;;) {
        if (pyr_lv_staircase(k->threads, align, cur, n, pos, 1) == 0) break;
        before = pos[0];
        cur = pos[0];
    }
    if (pyr_lv_staircase(k->threads, align, n, n + 65536, pos, 1) > 0) after = pos[0];
    fprintf(out, "             staircase (square grids, N interior nodes per axis): ");
    if (before) fprintf(out, "last step at N = %lld, ", (long long)before);
    else fprintf(out, "no step in N = %lld..%lld, ", (long long)lo, (long long)n);
    if (after) fprintf(out, "next at N = %lld (%lld waves)\n", (long long)after,
                       (long long)pyr_lv_waves(pyr_lv_grid_length(after, align), k->threads));
    else fprintf(out, "none within N + 65536\n");
}
