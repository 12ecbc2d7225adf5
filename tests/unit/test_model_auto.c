/* On the CPU backend, height = auto and decomposition = auto (the model with
 * constants calibrated here) run within 10% of the best height found by a
 * sweep over strips and blocks on a small problem.  The grid (3073^2
 * doubles, 75 MB) is larger than the last-level caches of the machines we
 * run on, as the grids pyrgrid is for are: the calibration measures copies
 * from memory, and a grid that stays in a shared cache copies up to twice as
 * fast as that, or not, with the neighbours' load (a 1025^2 grid here made
 * the automatic choice 13-19% slower than the best in one run of three).  Timings are the best of
 * several runs of the steady passes (the first pass is a warm-up), on one
 * thread (calibrated for one thread); a failed
 * comparison is redone up to twice, calibration included, with more
 * repetitions, before it counts, since the machine may be shared (the
 * threshold stays 10%). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "heat_util.h"
#include "tune/calibrate.h"
#include "plan/plan.h"
#include "tune/wisdom.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct {
    double first, last;
    int n;
} times_t;

static int on_pass(void *user, int64_t done, int64_t total)
{
    (void)done;
    (void)total;
    times_t *t = user;
    double x = now();
    if (t->n++ == 0) t->first = x;
    t->last = x;
    return 0;
}

/* Best seconds per interior node and step over `reps` runs of 3 passes of
 * height h (2 timed). */
static double time_height(const pyr_problem_t *base, const pyr_options_t *o, pyr_decomp_t d, int64_t h, int reps)
{
    pyr_problem_t p = *base;
    p.steps = 3 * h;
    pyr_options_t oo = *o;
    oo.decomposition = d;
    oo.height = h;
    pyr_plan_t *plan = NULL;
    pyr_field_t *f = NULL;
    if (pyr_plan_create(&p, &oo, &plan) != PYR_OK) {
        pyr_clear_error();
        return INFINITY; /* does not fit */
    }
    CHECK_OK(pyr_field_create(&p, &f));
    CHECK_OK(pyr_field_init(f, &p));
    double best = INFINITY;
    for (int r = 0; r < reps && f; r++) {
        times_t t = {0, 0, 0};
        pyr_hooks_t hooks = {.progress = on_pass, .user = &t};
        CHECK_OK(pyr_execute(plan, f, &hooks, NULL));
        double per = (t.last - t.first) / ((double)pyr_problem_interior(&p) * (double)(2 * h));
        if (t.n == 3 && per < best) best = per;
    }
    pyr_field_destroy(&f);
    pyr_plan_destroy(&plan);
    return best;
}

int main(void)
{
    char path[] = "/tmp/pyrgrid-test-auto-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("mkstemp");
        return 1;
    }
    close(fd);
    setenv("PYRGRID_WISDOM", path, 1);

    pyr_problem_t p;
    int64_t n[3] = {3073, 3073, 1};
    make_problem(&p, 2, n, PYR_DOUBLE, 64, PYR_INIT_GAUSS, 0);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.method = PYR_METHOD_PYRAMID;
    o.memory = 1 << 20; /* pieces of a few dozen rows, so that the height matters */
    o.threads = 1;      /* one thread: a machine shared with other work slows it in proportion,
                           while OpenMP teams that wait at every barrier for a preempted thread do not */

    static const int64_t heights[] = {1, 2, 4, 6, 8, 12, 16, 24};
    const int nh = (int)(sizeof heights / sizeof heights[0]);
    const pyr_decomp_t ds[2] = {PYR_DECOMP_STRIPS, PYR_DECOMP_BLOCKS};
    double ratio = INFINITY;
    /* A failed comparison is redone from the calibration on: a calibration
     * taken while the machine was busy misleads the choice as much as a
     * slow timing does. */
    for (int attempt = 0; attempt < 3 && ratio > 1.10; attempt++) {
        /* calibrate the constants this problem needs */
        pyr_wisdom_t *w = malloc(sizeof *w);
        pyr_wisdom_init(w);
        pyr_wisdom_constants_t rec;
        memset(&rec, 0, sizeof rec);
        pyr_calibrate_opts_t co = {.backend = PYR_BACKEND_CPU, .threads = 1, .precision = PYR_DOUBLE, .dims = 2, .effort = 0.5 + attempt,
                                   .equation = PYR_EQ_HEAT};
        CHECK_OK(pyr_calibrate(&co, &rec.k, NULL, 0));
        rec.backend = PYR_BACKEND_CPU;
        rec.precision = PYR_DOUBLE;
        rec.dims = 2;
        snprintf(rec.version, sizeof rec.version, "%s", PYR_VERSION_STRING);
        CHECK_OK(pyr_wisdom_device(PYR_BACKEND_CPU, 0, 1, rec.device, sizeof rec.device));
        CHECK_OK(pyr_wisdom_put_constants(w, &rec));
        CHECK_OK(pyr_wisdom_save(path, w));
        free(w);
        pyr_wisdom_forget();
        CHECK_OK(pyr_wisdom_import_file(path));

        /* the automatic choice */
        pyr_plan_t *plan = NULL;
        CHECK_OK(pyr_plan_create(&p, &o, &plan));
        if (!plan) return check_report();
        CHECK(strstr(plan->model_source, "calibrated") != NULL, "auto plan did not use the calibration: %s", plan->model_source);
        pyr_decomp_t d_auto = plan->decomp;
        int64_t h_auto = plan->height;
        pyr_plan_destroy(&plan);

        int reps = 3 + 2 * attempt;
        double sweep_best = INFINITY;
        pyr_decomp_t d_best = PYR_DECOMP_STRIPS;
        int64_t h_best = 0;
        for (int di = 0; di < 2; di++)
            for (int i = 0; i < nh; i++) {
                double t = time_height(&p, &o, ds[di], heights[i], reps);
                if (t < sweep_best) {
                    sweep_best = t;
                    d_best = ds[di];
                    h_best = heights[i];
                }
            }
        /* The sweep only picks the best height.  Its time there is the least
         * of 16 noisy minima, low by the luck that picked it, and the
         * automatic height (7 or 14, say) may not be in the sweep at all; so
         * both are timed again, interleaved, and only those fresh timings,
         * as many of each, are compared. */
        double t_auto = INFINITY, best = INFINITY;
        if (d_auto == d_best && h_auto == h_best) {
            /* the automatic choice is the sweep's best: timing it against
             * itself would only measure the machine's noise */
            t_auto = best = sweep_best;
        } else {
            for (int r = 0; r < 4; r++) { /* each first in half the rounds */
                double a, b;
                if (r % 2) {
                    b = time_height(&p, &o, d_best, h_best, reps);
                    a = time_height(&p, &o, d_auto, h_auto, reps);
                } else {
                    a = time_height(&p, &o, d_auto, h_auto, reps);
                    b = time_height(&p, &o, d_best, h_best, reps);
                }
                if (a < t_auto) t_auto = a;
                if (b < best) best = b;
            }
        }
        ratio = t_auto / best;
        printf("attempt %d: auto %s height %lld: %.4f ns per node-step; best %s height %lld: %.4f; auto/best = %.3f\n", attempt + 1,
               pyr_decomp_name(d_auto), (long long)h_auto, 1e9 * t_auto, pyr_decomp_name(d_best), (long long)h_best, 1e9 * best, ratio);
    }
    CHECK(ratio <= 1.10, "the automatic choice is %.1f%% slower than the best height of the sweep", 100 * (ratio - 1));
    unlink(path);
    return check_report();
}
