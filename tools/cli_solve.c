/* pyrgrid solve FILE [--set section.key=value]... [-v|-q]
 *
 * Block-tridiagonal systems by line Gauss–Seidel (pyrgrid_lgs.h).  Progress
 * (relative residual every report_every iterations) goes to stderr, one
 * summary line to stdout; outputs are written only after the solve, all of
 * them committed together (pyr_output_stage_t): a failure while writing one
 * leaves every earlier result as it was. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "pyrgrid.h"
#include "pyrgrid_output.h"

static int fail_msg(pyr_status_t st)
{
    fprintf(stderr, "pyrgrid: error: %s\n", st == PYR_OK ? "unknown failure" : pyr_last_error());
    return 1;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: pyrgrid solve FILE [--set section.key=value]... [-v|-q]\n"
            "  Solve the block-tridiagonal system that FILE (INI) describes by line Gauss-Seidel\n"
            "  with the Thomas algorithm; write the outputs named in its [output] section, all\n"
            "  together once the iteration has ended.\n"
            "  -s, --set section.key=value  override a key of the file (repeatable)\n"
            "  --report FILE.json           also write a report: system, options, result, timings, versions, machine\n");
    pyr_cli_print_common(out);
}

static int progress(void *user, int64_t it, double rel)
{
    (void)user;
    fprintf(stderr, "pyrgrid: solve: iteration %lld: relative residual %.6e\n", (long long)it, rel);
    return 0;
}

static pyr_status_t write_history_csv(const char *path, const pyr_lgs_result_t *r)
{
    pyr_output_file_t *af = NULL;
    pyr_status_t st = pyr_output_file_open(&af, path);
    if (st != PYR_OK) return st;
    fprintf(pyr_output_file_stream(af), "iteration,relative_residual\n");
    for (int64_t h = 0; h < r->history_len; h++)
        fprintf(pyr_output_file_stream(af), "%lld,%.17g\n", (long long)r->history_iteration[h], r->history_residual[h]);
    return pyr_output_file_commit(&af);
}

static pyr_status_t write_history_png(const char *path, const pyr_lgs_result_t *r, const char *title)
{
    int n = r->history_len > 2000000 ? 2000000 : (int)r->history_len;
    double *x = malloc((size_t)(n ? n : 1) * sizeof *x);
    if (!x) return pyr_fail(PYR_ERR_NOMEM, "out of memory plotting the residual history");
    for (int h = 0; h < n; h++) x[h] = (double)r->history_iteration[h];
    pyr_plot_series_t s = {"relative residual", x, r->history_residual, n, n <= 60 ? 2 : 0};
    pyr_plot_opts_t o;
    memset(&o, 0, sizeof o);
    o.title = title;
    o.xlabel = "iteration";
    o.ylabel = "||F - AY|| / ||F||";
    o.log_y = 1;
    pyr_status_t st = pyr_plot_write_png(path, &s, 1, &o);
    free(x);
    return st;
}

int pyr_cli_solve(int argc, char **argv)
{
    const char *file = NULL, *report = NULL;
    const char **sets = calloc((size_t)(argc > 0 ? argc : 1), sizeof *sets);
    int nsets = 0, quiet = 0;
    pyr_cli_verbosity = 0;
    if (!sets) {
        fprintf(stderr, "pyrgrid: error: out of memory\n");
        return 1;
    }
    for (int a = 0; a < argc; a++) {
        const char *arg = argv[a];
        if (pyr_cli_common_option(arg)) {
            quiet = pyr_cli_verbosity < 0;
        } else if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            usage(stdout);
            free(sets);
            return PYR_EXIT_OK;
        } else if (!strcmp(arg, "--set") || !strcmp(arg, "-s")) {
            if (a + 1 >= argc) {
                fprintf(stderr, "pyrgrid: error: --set needs section.key=value (e.g. --set system.omega=1.5)\n");
                free(sets);
                return PYR_EXIT_USAGE;
            }
            sets[nsets++] = argv[++a];
        } else if (!strncmp(arg, "--set=", 6)) {
            sets[nsets++] = arg + 6;
        } else if (!strcmp(arg, "--report") || !strncmp(arg, "--report=", 9)) {
            if (arg[8] == '=') report = arg + 9;
            else if (a + 1 < argc && argv[a + 1][0]) report = argv[++a];
            else {
                fprintf(stderr, "pyrgrid: error: --report needs a file name, e.g. --report solve.json\n");
                free(sets);
                return PYR_EXIT_USAGE;
            }
        } else if (arg[0] == '-' && arg[1]) {
            fprintf(stderr, "pyrgrid: error: unknown option '%s' for solve; the options are --set section.key=value, "
                            "--verbose, --quiet and --help\n", arg);
            free(sets);
            return PYR_EXIT_USAGE;
        } else if (file) {
            fprintf(stderr, "pyrgrid: error: solve takes one problem file; got '%s' and '%s'\n", file, arg);
            free(sets);
            return PYR_EXIT_USAGE;
        } else {
            file = arg;
        }
    }
    if (!file) {
        fprintf(stderr, "pyrgrid: error: solve needs a problem file\n");
        usage(stderr);
        free(sets);
        return PYR_EXIT_USAGE;
    }

    int rc = 1;
    pyr_lgs_file_t *cfg = NULL;
    pyr_lgs_system_t *sys = NULL;
    pyr_lgs_result_t *res = NULL;
    double *y = NULL;
    const char *hist_png = NULL, *solution = NULL, *history = NULL, *image = NULL, *kind = NULL;
    pyr_output_stage_t *stage = NULL;
    int staging = 0;
    pyr_status_t st = pyr_lgs_file_load(file, sets, nsets, &cfg);
    if (st != PYR_OK) goto out;
    hist_png = pyr_lgs_file_text(cfg, "output.history_image");
    solution = pyr_lgs_file_text(cfg, "output.solution");
    history = pyr_lgs_file_text(cfg, "output.history");
    image = pyr_lgs_file_text(cfg, "output.image");
    kind = pyr_lgs_file_text(cfg, "system.kind");
    {
        /* every output writable, none the same file as another or as an input */
        pyr_named_path_t outs[5] = {{"output.solution", solution}, {"output.history", history},
                                    {"output.image", image}, {"output.history_image", hist_png}, {"--report", report}};
        pyr_named_path_t ins[16];
        ins[0] = (pyr_named_path_t){"the problem file", file};
        const int nin = 1 + pyr_lgs_file_inputs(cfg, ins + 1, 15);
        if ((st = pyr_check_outputs(outs, 5, ins, nin < 16 ? nin : 16)) != PYR_OK) goto out;
    }
    st = pyr_lgs_file_system(cfg, &sys);
    if (st != PYR_OK) goto out;
    y = malloc((size_t)sys->n * (size_t)sys->m * sizeof *y);
    if (!y) {
        fprintf(stderr, "pyrgrid: error: out of memory for the %lld x %lld solution\n", (long long)sys->n,
                (long long)sys->m);
        goto done;
    }
    st = pyr_lgs_file_initial(cfg, sys, y);
    if (st != PYR_OK) goto out;
    pyr_lgs_options_t opt = *pyr_lgs_file_options(cfg);
    if (!quiet) opt.progress = progress;
    if (quiet) opt.report_every = 0;
    st = pyr_lgs_solve(sys, &opt, y, &res);
    if (res && res->warning[0] && !quiet) fprintf(stderr, "pyrgrid: warning: %s\n", res->warning);
    if (st != PYR_OK) goto out;

    /* outputs: all temporaries first, then all renamed */
    if ((st = pyr_output_stage_begin(&stage)) != PYR_OK) goto out;
    staging = 1;
    if (solution) {
        int64_t shape[2] = {sys->n, sys->m};
        if ((st = pyr_npy_write(solution, 2, shape, PYR_DOUBLE, y)) != PYR_OK) goto out;
    }
    if (history) {
        if ((st = write_history_csv(history, res)) != PYR_OK) goto out;
    }
    char title[256];
    snprintf(title, sizeof title, "%s %lld x %lld, line GS %s, omega = %g", sys->description, (long long)sys->n,
             (long long)sys->m, pyr_lgs_ordering_name(res->ordering), opt.omega);
    if (image) {
        pyr_heatmap_opts_t ho = {.title = title};
        if ((st = pyr_png_write_heatmap(image, y, PYR_DOUBLE, sys->m, sys->n, &ho)) != PYR_OK) goto out;
    }
    if (hist_png) {
        if ((st = write_history_png(hist_png, res, title)) != PYR_OK) goto out;
    }
    if (report) {
        const char *written[4] = {solution, history, image, hist_png};
        int status = res->stop == PYR_LGS_MAX_ITERATIONS && opt.tolerance > 0.0 ? PYR_EXIT_NOT_CONVERGED : PYR_EXIT_OK;
        if ((st = pyr_solve_report_write(report, file, kind, sys, &opt, res, written, status)) != PYR_OK) goto out;
    }
    staging = 0;
    if ((st = pyr_output_stage_commit(&stage)) != PYR_OK) goto out;

    if (res->stop == PYR_LGS_MAX_ITERATIONS && opt.tolerance > 0.0 && !quiet)
        fprintf(stderr, "pyrgrid: warning: max_iterations = %lld reached with relative residual %.3e above "
                        "tolerance = %g\n", (long long)opt.max_iterations, res->rel_residual, opt.tolerance);
    {
        char backend[160];
        if (res->backend == PYR_BACKEND_CUDA)
            snprintf(backend, sizeof backend, "cuda (%s)", res->device);
        else
            snprintf(backend, sizeof backend, "cpu (%d thread%s)", res->threads, res->threads == 1 ? "" : "s");
        double per = res->iterations > 0 ? res->iterate_seconds / (double)res->iterations : 0.0;
        printf("solve: line Gauss-Seidel %s, omega %g, precondition %s, backend %s, %s %lld x %lld: "
               "%lld iterations, relative residual %.3e (%s), %.3f s, %.4g ms/iteration\n",
               pyr_lgs_ordering_name(res->ordering), opt.omega, pyr_lgs_precond_name(opt.precondition), backend,
               sys->description, (long long)sys->n, (long long)sys->m, (long long)res->iterations,
               res->rel_residual, pyr_lgs_stop_name(res->stop), res->seconds, per * 1e3);
    }
    /* the outputs hold the last iterate, but the tolerance was not met: say so in the exit status */
    rc = res->stop == PYR_LGS_MAX_ITERATIONS && opt.tolerance > 0.0 ? PYR_EXIT_NOT_CONVERGED : PYR_EXIT_OK;
    goto done;
out:
    fail_msg(st);
    if (st == PYR_ERR_DIVERGED) rc = PYR_EXIT_NOT_CONVERGED; /* diverged or stagnated */
    if (staging) pyr_output_stage_abort(&stage); /* the new temporaries go; no old file is touched */
done:
    pyr_lgs_result_destroy(&res);
    pyr_lgs_system_destroy(&sys);
    pyr_lgs_file_destroy(&cfg);
    free(y);
    free(sets);
    return rc;
}
