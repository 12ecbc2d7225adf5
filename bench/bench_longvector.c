/* The long-vector method beside the naive method's stencil kernel, on the
 * same grids in one run (issue 23): steady rates in Gcell/s (interior nodes
 * x steps / s over the compute calls between the first and the last), their
 * ratio, and the device memory traffic per node and step that explains it:
 *
 *   longvector  3 geam (read 2, write 1) + 4 axpy (read 2, write 1) + 2 scal
 *               (read 1, write 1) over the range = 25 values per node and step
 *               (plus the small border copy)
 *   naive       a fused launch of K steps reads the grid and writes it once:
 *               about 2 values per node per K steps (plus the tiles' halos)
 *
 *   bench_longvector [--sizes 4096,16384] [--precision float|double|both] [--calls C] [--seconds S]
 *
 * N is the interior side: grids of (N+2)^2 nodes.  Each method runs C
 * compute calls (default 6) of as many steps as make about S seconds each
 * (default 0.05, from a short pilot); calls 2 .. C-1 are timed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pyrgrid.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct {
    double t[64];
    int n;
} calls_t;

static int on_call(void *user, int64_t done, int64_t total)
{
    (void)done;
    (void)total;
    calls_t *c = user;
    if (c->n < 64) c->t[c->n] = now_s();
    c->n++;
    return 0;
}

/* Seconds per step of method m over calls 2 .. calls-1 of h steps each; the kernel variant into kernel. */
static int time_method(const pyr_problem_t *base, pyr_field_t *f, pyr_method_t m, int64_t h, int calls, double *per_step, char *kernel,
                       size_t ksize)
{
    pyr_problem_t p = *base;
    p.steps = h * calls;
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CUDA;
    o.method = m;
    o.height = h;
    pyr_plan_t *plan = NULL;
    if (pyr_plan_create(&p, &o, &plan) != PYR_OK) {
        fprintf(stderr, "bench_longvector: %s plan: %s\n", pyr_method_name(m), pyr_last_error());
        return 0;
    }
    pyr_plan_info_t info;
    pyr_plan_get_info(plan, &info);
    snprintf(kernel, ksize, "%s", info.kernel);
    calls_t c;
    c.n = 0;
    pyr_hooks_t hooks = {.progress = on_call, .user = &c};
    pyr_status_t st = pyr_execute(plan, f, &hooks, NULL);
    pyr_plan_destroy(&plan);
    if (st != PYR_OK) {
        fprintf(stderr, "bench_longvector: %s run: %s\n", pyr_method_name(m), pyr_last_error());
        return 0;
    }
    *per_step = (c.t[calls - 2] - c.t[0]) / (double)(h * (calls - 2));
    return 1;
}

int main(int argc, char **argv)
{
    char sizes[256] = "4096,16384";
    const char *prec = "float";
    int calls = 6;
    double seconds = 0.05;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc) snprintf(sizes, sizeof sizes, "%s", argv[++i]);
        else if (!strcmp(argv[i], "--precision") && i + 1 < argc) prec = argv[++i];
        else if (!strcmp(argv[i], "--calls") && i + 1 < argc) calls = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_longvector [--sizes 4096,16384] [--precision float|double|both] [--calls C] [--seconds S]\n");
            return 2;
        }
    }
    if (calls < 3 || calls > 60 || !(seconds > 0)) {
        fprintf(stderr, "bench_longvector: --calls 3..60, --seconds > 0\n");
        return 2;
    }
    if (!pyr_backend_available(PYR_BACKEND_CUDA)) {
        fprintf(stderr, "bench_longvector: no usable GPU\n");
        return 77;
    }
    char gpu[256] = "";
    pyr_gpu_describe(0, gpu, sizeof gpu);
    printf("GPU 0: %s\n", gpu);
    printf("%-6s %-7s %-11s %12s %12s %12s %10s   %s\n", "N", "prec", "method", "us/step", "Gcell/s", "GB/s moved", "values/node",
           "kernel");
    int rc = 0;
    for (int pi = 0; pi < 2; pi++) {
        const pyr_precision_t pr = pi ? PYR_DOUBLE : PYR_FLOAT;
        if (strcmp(prec, "both") && strcmp(prec, pyr_precision_name(pr))) continue;
        char list[256];
        snprintf(list, sizeof list, "%s", sizes);
        for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
            const int64_t n = atoll(tok);
            if (n < 1) continue;
            pyr_problem_t p;
            pyr_problem_default(&p);
            p.dims = 2;
            p.n[0] = p.n[1] = n + 2;
            p.precision = pr;
            p.init = PYR_INIT_RANDOM;
            p.seed = 1;
            p.heat.alpha = 1.0;
            const double h = 1.0 / (double)(n + 1);
            p.heat.dt = 0.2 * h * h; /* r = 0.2 per axis */
            p.steps = 1;
            pyr_field_t *f = NULL;
            if (pyr_field_create(&p, &f) != PYR_OK || pyr_field_init(f, &p) != PYR_OK) {
                fprintf(stderr, "bench_longvector: %s\n", pyr_last_error());
                pyr_field_destroy(&f);
                rc = 1;
                continue;
            }
            const double cells = (double)n * (double)n, elem = (double)pyr_precision_size(pr);
            double per[2] = {0, 0};
            int ok[2] = {0, 0};
            const pyr_method_t ms[2] = {PYR_METHOD_LONGVECTOR, PYR_METHOD_NAIVE};
            for (int mi = 0; mi < 2; mi++) {
                char kernel[32] = "";
                double pilot = 0;
                /* pilot: 3 calls of 2 steps, then calls of about `seconds` */
                if (!time_method(&p, f, ms[mi], 2, 3, &pilot, kernel, sizeof kernel)) {
                    rc = 1;
                    continue;
                }
                int64_t steps = (int64_t)ceil(seconds / pilot);
                if (steps < 2) steps = 2;
                if (steps > 100000) steps = 100000;
                if (!time_method(&p, f, ms[mi], steps, calls, &per[mi], kernel, sizeof kernel)) {
                    rc = 1;
                    continue;
                }
                ok[mi] = 1;
                /* values moved per node and step: longvector by its operations, naive 2 per launch of K fused steps */
                double values = 0;
                if (mi == 0) values = 25.0;
                else {
                    int k = 1;
                    if (!strncmp(kernel, "fused:", 6)) k = atoi(kernel + 6);
                    else if (!strcmp(kernel, "fused")) k = 5;
                    values = 2.0 / (k > 0 ? k : 1);
                }
                printf("%-6lld %-7s %-11s %12.4g %12.4g %12.4g %10.3g   %s\n", (long long)n, pyr_precision_name(pr), pyr_method_name(ms[mi]),
                       1e6 * per[mi], cells / per[mi] * 1e-9, values * elem * cells / per[mi] * 1e-9, values, kernel);
                fflush(stdout);
            }
            if (ok[0] && ok[1])
                printf("%-6lld %-7s naive/longvector rate ratio %.1f (values moved per node and step: 25 against about 2/K)\n",
                       (long long)n, pyr_precision_name(pr), per[0] / per[1]);
            pyr_field_destroy(&f);
        }
    }
    return rc;
}
