/* pyrgrid sweep FILE --sizes 10:7000: the long-vector method
 * (docs/theory.md#the-long-vector-method) over square grids of N interior nodes per axis, measured
 * against the paper's staircase model, as the paper's Figure 1: time per step
 * against N, the accuracy figures emax and ebar (as the height sweep's), and
 * where the first step of the staircase falls, measured and predicted. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "pyrgrid.h"
#include "pyrgrid_output.h"

#define MAX_N 200000

/* "10:7000", "10:7000:20", "100,4096,16384", mixed -> sorted unique sizes. */
static int parse_sizes(const char *spec, int64_t **out, int *n)
{
    return pyr_cli_parse_ranges(spec, MAX_N, 200, out, n); /* A:B: about 200 sizes */
}

typedef struct {
    double t[64];
    int n;
} passes_t;

static int on_pass(void *user, int64_t done, int64_t total)
{
    (void)done;
    (void)total;
    passes_t *p = user;
    if (p->n < 64) p->t[p->n] = pyr_seconds_now();
    p->n++;
    return 0;
}

typedef struct {
    int64_t n, pitch, length, waves, steps;
    double measured, predicted; /* seconds per step */
} row_t;

static const char csv_header[] = "N,nx,ny,pitch,vector_length,waves,steps_timed,measured_s_per_step,predicted_s_per_step,rel_error";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: pyrgrid sweep FILE --sizes LIST [--set section.key=value]... [--passes P] [--repeat K]\n"
            "                     [--pass-ms MS] [--csv OUT.csv] [--png OUT.png] [-v|-q]\n"
            "  The long-vector method (method = longvector: cuBLAS whole-vector steps, CUDA backend) on\n"
            "  square grids of N interior nodes per axis ((N+2)^2 nodes) for each N of LIST, FILE's\n"
            "  2D heat problem otherwise (its lengths, alpha, r = alpha^2 dt / h^2 kept: dt follows h),\n"
            "  measured time per step against the paper's staircase model, the accuracy (emax, ebar)\n"
            "  and the first step of the staircase, measured and predicted.\n"
            "  --sizes LIST  sizes and ranges: 10:7000 (about 200 sizes), 10:7000:20, 1024,4096\n"
            "  --passes P    compute calls per size (>= 3; default 4): the second to the one before\n"
            "                the last are timed (the first makes the cuBLAS handle, the last downloads)\n"
            "  --pass-ms MS  milliseconds a compute call should take (default 15): sets steps per call\n"
            "  --repeat K    best of K runs per size\n"
            "  --csv, --png  the table and the plot of time per step against N, written together\n");
    pyr_cli_print_common(out);
}

/* Square N-grid of the file's problem: r per axis as the file's, dt following h. */
static void resize(const pyr_problem_t *file, int64_t n, pyr_problem_t *q)
{
    *q = *file;
    q->n[0] = q->n[1] = n + 2;
    const double a2 = file->heat.alpha * file->heat.alpha;
    if (a2 > 0) {
        double r = 0, inv = 0;
        for (int d = 0; d < 2; d++) {
            r += pyr_problem_r(file, d);
            double h = q->length[d] / (double)(q->n[d] - 1);
            inv += 1.0 / (h * h);
        }
        q->heat.dt = r / (a2 * inv);
    }
}

int pyr_cli_sweep_sizes(int argc, char **argv)
{
    const char *file = NULL, *csv = NULL, *png = NULL, *spec = NULL;
    int repeat = 1, passes = 4, quiet = 0;
    double pass_ms = 15;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--set") || !strcmp(a, "-s") || !strcmp(a, "--sizes") || !strcmp(a, "--csv") || !strcmp(a, "--png") ||
            !strcmp(a, "--repeat") || !strcmp(a, "--passes") || !strcmp(a, "--pass-ms")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "pyrgrid: error: sweep %s needs a value (see pyrgrid sweep --sizes --help)\n", a);
                return 2;
            }
            const char *v = argv[++i];
            char *end = NULL;
            if (!strcmp(a, "--sizes")) spec = v;
            else if (!strcmp(a, "--csv")) csv = v;
            else if (!strcmp(a, "--png")) png = v;
            else if (!strcmp(a, "--repeat")) {
                long x = strtol(v, &end, 10);
                if (end == v || *end || x < 1 || x > 100) {
                    fprintf(stderr, "pyrgrid: error: --repeat %s: use a whole number from 1 to 100\n", v);
                    return 2;
                }
                repeat = (int)x;
            } else if (!strcmp(a, "--passes")) {
                long x = strtol(v, &end, 10);
                if (end == v || *end || x < 3 || x > 60) {
                    fprintf(stderr, "pyrgrid: error: --passes %s: use a whole number from 3 to 60\n", v);
                    return 2;
                }
                passes = (int)x;
            } else if (!strcmp(a, "--pass-ms")) {
                pass_ms = strtod(v, &end);
                if (end == v || *end || !(pass_ms > 0 && pass_ms <= 10000)) {
                    fprintf(stderr, "pyrgrid: error: --pass-ms %s: use milliseconds in (0, 10000]\n", v);
                    return 2;
                }
            }
        } else if (pyr_cli_common_option(a)) {
            quiet = pyr_cli_verbosity < 0;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return PYR_EXIT_OK;
        } else if (a[0] == '-') {
            fprintf(stderr, "pyrgrid: error: unknown option '%s' for sweep --sizes; see pyrgrid sweep --sizes --help\n", a);
            return 2;
        } else if (!file) {
            file = a;
        } else {
            fprintf(stderr, "pyrgrid: error: sweep takes one problem file, got '%s' and '%s'\n", file, a);
            return 2;
        }
    }
    if (!file) {
        fprintf(stderr, "pyrgrid: error: sweep --sizes needs a problem file: pyrgrid sweep heat2d.ini --sizes 10:7000\n");
        return 2;
    }
    int64_t *sizes = NULL;
    int nsz = 0;
    if (!spec || !parse_sizes(spec, &sizes, &nsz)) {
        fprintf(stderr, "pyrgrid: error: --sizes %s: use sizes and ranges of N (interior nodes per axis, 1 to %d) such as 10:7000, "
                        "10:7000:20 or 1024,4096\n",
                spec ? spec : "", MAX_N);
        return 2;
    }
    int rc = 0;
    /* the file, then the overrides in order */
    static const char *const valued[] = {"--sizes", "--csv", "--png", "--repeat", "--passes", "--pass-ms", NULL};
    struct {
        pyr_problem_t problem;
        pyr_options_t options;
    } cfg;
    if (pyr_cli_load_problem(file, argc, argv, valued, &cfg.problem, &cfg.options)) {
        free(sizes);
        return 1;
    }
    pyr_problem_t *p = &cfg.problem;
    if (p->dims != 2 || p->equation != PYR_EQ_HEAT || (cfg.options.method != PYR_METHOD_AUTO && cfg.options.method != PYR_METHOD_LONGVECTOR)) {
        fprintf(stderr,
                "pyrgrid: error: sweep --sizes runs the long-vector method on square grids of the 2D heat equation; %s asks for a "
                "%dD %s problem with method = %s (use dims = 2, equation = heat, method = auto or longvector)\n",
                file, p->dims, pyr_equation_name(p->equation), pyr_method_name(cfg.options.method));
        free(sizes);
        return 2;
    }
    if (p->init == PYR_INIT_FILE) {
        fprintf(stderr, "pyrgrid: error: sweep --sizes makes grids of every size: initial.kind = file has one size; use sine, gauss, "
                        "random or zero\n");
        free(sizes);
        return 2;
    }
    {
        pyr_named_path_t outs[2] = {{"--csv", csv}, {"--png", png}};
        pyr_named_path_t ins[1] = {{"the problem file", file}};
        if (pyr_check_outputs(outs, 2, ins, 1) != PYR_OK) {
            free(sizes);
            return pyr_cli_fail(NULL);
        }
    }
    pyr_options_t o = cfg.options;
    o.method = PYR_METHOD_LONGVECTOR;

    const int64_t nmax = sizes[nsz - 1];
    const size_t elem = pyr_precision_size(p->precision);
    void *grid = malloc((size_t)(nmax + 2) * (size_t)(nmax + 2) * elem);
    row_t *rows = calloc((size_t)nsz, sizeof *rows);
    int nrows = 0, staging = 0;
    pyr_output_stage_t *stage = NULL;
    char source[PYR_PATH_MAX + 320] = "";
    pyr_longvector_model_t lv;
    memset(&lv, 0, sizeof lv);
    int64_t align = 1;
    if (!grid || !rows) {
        fprintf(stderr, "pyrgrid: error: out of host memory for a grid of %lld^2 nodes\n", (long long)(nmax + 2));
        rc = 1;
        goto out;
    }
    double t_start = pyr_seconds_now();
    for (int i = 0; i < nsz; i++) {
        pyr_problem_t q;
        resize(p, sizes[i], &q);
        q.steps = 1;
        pyr_plan_t *plan = NULL;
        if (pyr_plan_create(&q, &o, &plan) != PYR_OK) {
            rc = pyr_cli_fail(NULL);
            goto out;
        }
        /* steps per compute call: about pass_ms each, by the model */
        pyr_longvector_model_t mod;
        if (pyr_plan_longvector_model(plan, &mod) != PYR_OK) {
            pyr_plan_destroy(&plan);
            rc = pyr_cli_fail(NULL);
            goto out;
        }
        const int64_t m = mod.length;
        const double pred = mod.step_seconds;
        int64_t h = (int64_t)ceil(1e-3 * pass_ms / pred);
        if (h < 2) h = 2;
        if (h > 5000) h = 5000;
        if (i == 0) {
            pyr_plan_model_source(plan, source, sizeof source);
            lv = mod;
            align = mod.align;
            if (!quiet) {
                printf("long-vector method, %s, model: %s\n", pyr_precision_name(p->precision), source);
                printf("per step %d calls x t_kernel %.3g us + (%d t_add %.3g + %d t_saxpy %.3g + %d t_scal %.3g us) x ceil(M / %.0f)\n",
                       lv.calls, 1e6 * lv.t_kernel, lv.adds, 1e6 * lv.t_add, lv.axpys, 1e6 * lv.t_saxpy, lv.scals,
                       1e6 * lv.t_scal, lv.threads);
            }
        }
        const int64_t pitch = mod.pitch;
        pyr_plan_destroy(&plan);
        q.steps = h * passes;
        o.height = h;
        if (pyr_plan_create(&q, &o, &plan) != PYR_OK) {
            rc = pyr_cli_fail(NULL);
            goto out;
        }
        pyr_field_t f = {2, {q.n[0], q.n[1], 1}, q.precision, grid};
        if (pyr_field_init(&f, &q) != PYR_OK) {
            pyr_plan_destroy(&plan);
            rc = pyr_cli_fail(NULL);
            goto out;
        }
        double best = INFINITY;
        for (int r = 0; r < repeat; r++) {
            passes_t pt;
            pt.n = 0;
            pyr_hooks_t hooks = {.progress = on_pass, .user = &pt};
            if (pyr_execute(plan, &f, &hooks, NULL) != PYR_OK) {
                pyr_plan_destroy(&plan);
                rc = pyr_cli_fail(NULL);
                goto out;
            }
            /* calls 2 .. passes-1: after the first (handle, work vectors, upload) and before the last (download) */
            const double t = (pt.t[passes - 2] - pt.t[0]) / (double)(h * (passes - 2));
            if (t < best) best = t;
        }
        pyr_plan_destroy(&plan);
        row_t *w = &rows[nrows++];
        w->n = sizes[i];
        w->pitch = pitch;
        w->length = m;
        w->waves = mod.waves;
        w->steps = h * (passes - 2);
        w->measured = best;
        w->predicted = pred;
        if (!quiet) {
            printf("N %6lld  M %10lld  waves %5lld  measured %10.4g us  predicted %10.4g us per step  error %+6.1f%%\n", (long long)w->n,
                   (long long)m, (long long)w->waves, 1e6 * w->measured, 1e6 * w->predicted, 100 * (w->measured - w->predicted) / w->measured);
            fflush(stdout);
        }
    }

    /* accuracy, as the height sweep (the paper's emax and ebar), and the RMS relative error */
    double emax = 0, sum2 = 0;
    for (int r = 0; r < nrows; r++) {
        double e = (rows[r].measured - rows[r].predicted) / rows[r].measured;
        if (fabs(e) > emax) emax = fabs(e);
        sum2 += e * e;
    }
    printf("sizes: %d (N = %lld..%lld), %.1f s; emax = %.3f, ebar = %.4f (the paper's (1/m) sqrt(sum e^2)), RMS relative error %.3f\n", nrows,
           (long long)rows[0].n, (long long)rows[nrows - 1].n, pyr_seconds_now() - t_start, emax, sqrt(sum2) / nrows, sqrt(sum2 / nrows));
    {
        /* the first step of the staircase: predicted, the first size with more waves than the smallest; measured, the
         * first size whose time (and the next size's) exceeds the smallest sizes' (the least of the first three) by
         * the model's rise, as calibration finds where the operations' staircase starts */
        int pi = -1, mi = -1;
        for (int r = 1; r < nrows && pi < 0; r++)
            if (rows[r].waves > rows[0].waves) pi = r;
        double floor_t = INFINITY;
        for (int r = 0; r < nrows && r < 3; r++) floor_t = fmin(floor_t, rows[r].measured);
        const double thr = floor_t * (1.0 + lv.rise);
        for (int r = 1; r < nrows && mi < 0; r++)
            if (rows[r].measured > thr && (r + 1 == nrows || rows[r + 1].measured > thr)) mi = r;
        int64_t exact[1];
        int ne = pyr_longvector_staircase(lv.threads, align, rows[0].n, rows[nrows - 1].n, exact, 1);
        printf("first staircase step: predicted at N = ");
        if (pi >= 0) printf("%lld (sample %d; the model's step lies at N = %lld)", (long long)rows[pi].n, pi, (long long)(ne ? exact[0] : 0));
        else printf("none in the range");
        printf(", measured at N = ");
        if (mi >= 0) printf("%lld (sample %d; time above %.4g us, %.0f%% over the smallest sizes')", (long long)rows[mi].n, mi, 1e6 * thr,
                            100 * lv.rise);
        else printf("none (no size's time rose %.0f%% above the smallest sizes')", 100 * lv.rise);
        if (pi >= 0 && mi >= 0) printf("; %d sample%s apart", abs(pi - mi), abs(pi - mi) == 1 ? "" : "s");
        printf("\n");
    }

    if (pyr_output_stage_begin(&stage) != PYR_OK) {
        rc = pyr_cli_fail(NULL);
        goto out;
    }
    staging = 1;
    if (csv) {
        pyr_output_file_t *af = NULL;
        if (pyr_output_file_open(&af, csv) != PYR_OK) {
            rc = pyr_cli_fail("--csv: ");
            goto out;
        }
        fprintf(pyr_output_file_stream(af), "%s\n", csv_header);
        for (int r = 0; r < nrows; r++) {
            const row_t *w = &rows[r];
            fprintf(pyr_output_file_stream(af), "%lld,%lld,%lld,%lld,%lld,%lld,%lld,%.6g,%.6g,%.5f\n", (long long)w->n, (long long)(w->n + 2),
                    (long long)(w->n + 2), (long long)w->pitch, (long long)w->length, (long long)w->waves, (long long)w->steps,
                    w->measured, w->predicted, (w->measured - w->predicted) / w->measured);
        }
        if (pyr_output_file_commit(&af) != PYR_OK) {
            rc = pyr_cli_fail("--csv: ");
            goto out;
        }
    }
    if (png) {
        double *xy = malloc((size_t)nrows * 3 * sizeof *xy);
        if (!xy) {
            fprintf(stderr, "pyrgrid: error: out of host memory plotting\n");
            rc = 1;
            goto out;
        }
        double *x = xy, *ym = xy + nrows, *yp = xy + 2 * nrows;
        for (int r = 0; r < nrows; r++) {
            x[r] = (double)rows[r].n;
            ym[r] = 1e6 * rows[r].measured;
            yp[r] = 1e6 * rows[r].predicted;
        }
        pyr_plot_series_t series[2] = {{"measured", x, ym, nrows, 1}, {"model (staircase)", x, yp, nrows, 0}};
        char title[200];
        snprintf(title, sizeof title, "long-vector method (cuBLAS), heat 2D %s: time per step", pyr_precision_name(p->precision));
        pyr_plot_opts_t po = {.title = title, .xlabel = "N (grid of (N+2)^2 nodes)", .ylabel = "microseconds per step", .log_y = 1};
        pyr_status_t st = pyr_plot_write_png(png, series, 2, &po);
        free(xy);
        if (st != PYR_OK) {
            rc = pyr_cli_fail("--png: ");
            goto out;
        }
    }
    staging = 0;
    if (pyr_output_stage_commit(&stage) != PYR_OK) {
        rc = pyr_cli_fail(NULL);
        goto out;
    }
    if (!quiet && csv) printf("wrote %s\n", csv);
    if (!quiet && png) printf("wrote %s\n", png);
out:
    if (staging) pyr_output_stage_abort(&stage);
    free(grid);
    free(rows);
    free(sizes);
    return rc;
}
