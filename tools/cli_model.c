/* pyrgrid calibrate / pyrgrid sweep: the performance model's constants, and
 * measured-versus-predicted sweeps over the pyramid height. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "pyrgrid.h"
#include "pyrgrid_output.h"

static int need_value(int argc, char **argv, int i, const char *cmd)
{
    if (i + 1 >= argc) {
        fprintf(stderr, "pyrgrid: error: %s %s needs a value (see pyrgrid --help)\n", cmd, argv[i]);
        return 0;
    }
    return 1;
}

static int parse_count(const char *opt, const char *v, int lo, int hi, int *out)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (end == v || *end || x < lo || x > hi) {
        fprintf(stderr, "pyrgrid: error: %s %s: use a whole number from %d to %d\n", opt, v, lo, hi);
        return 0;
    }
    *out = (int)x;
    return 1;
}

/* ------------------------------------------------------------- calibrate */

/* Whether wisdom could be written at `path`, checked before minutes of
 * measuring: pyr_check_writable, or, where the directory it names does not
 * exist yet (the export makes it), whether the nearest directory above that
 * exists can take new ones. */
static pyr_status_t check_wisdom_target(const char *what, const char *path)
{
    char dir[PYR_PATH_MAX];
    struct stat sb;
    int missing = 0;
    snprintf(dir, sizeof dir, "%s", path);
    for (;;) {
        char *slash = strrchr(dir, '/');
        if (!slash) {
            snprintf(dir, sizeof dir, ".");
            break;
        }
        if (slash == dir) {
            dir[1] = 0;
            break;
        }
        *slash = 0;
        if (stat(dir, &sb) == 0 || errno != ENOENT) break;
        missing = 1;
    }
    pyr_status_t st = PYR_OK;
    if (!missing) st = pyr_check_writable(path);
    else if (stat(dir, &sb) != 0)
        st = pyr_fail(PYR_ERR_IO, "cannot write %s: its directories would be made in %s: %s", path, dir, strerror(errno));
    else if (!S_ISDIR(sb.st_mode))
        st = pyr_fail(PYR_ERR_IO, "cannot write %s: its directories would be made in %s, which is not a directory; choose another name",
                      path, dir);
    else if (access(dir, W_OK | X_OK) != 0)
        st = pyr_fail(PYR_ERR_IO, "cannot write %s: its directories would be made in %s: %s; choose a directory you may write", path, dir,
                      strerror(errno));
    return st == PYR_OK ? PYR_OK : pyr_fail_context(st, "%s: ", what);
}

static void calibrate_usage(FILE *out)
{
    char schemes[256] = "";
    for (int e = 0; strcmp(pyr_equation_name((pyr_equation_t)e), "unknown"); e++)
        snprintf(schemes + strlen(schemes), sizeof schemes - strlen(schemes), "%s%s", e ? ", " : "", pyr_equation_name((pyr_equation_t)e));
    fprintf(out,
            "usage: pyrgrid calibrate [--backend cpu|cuda|auto] [--scheme LIST] [--precision LIST] [--dims LIST]\n"
            "                         [--kernel VARIANT] [--threads N] [--device N] [--effort X]\n"
            "                         [--import FILE] [--export FILE] [--show]\n"
            "  Measure the performance model's constants on this machine (seconds per set of scheme,\n"
            "  precision and dimension) and save them as wisdom in $PYRGRID_WISDOM or\n"
            "  ~/.cache/pyrgrid/wisdom, merged under a lock with what the file holds.\n"
            "  --backend B        cpu, cuda or auto (default: cuda where a GPU is usable, else cpu)\n"
            "  --scheme LIST      schemes to calibrate, comma-separated, of %s (default all)\n"
            "  --precision LIST   float, double (default all)\n"
            "  --dims LIST        grid dimensions such as 2,3 (default all; sets a scheme does not have are\n"
            "                     left out: Maxwell's grids are 2D or 3D)\n"
            "  --kernel VARIANT   time this kernel variant and record it, so that plans run it (pyrgrid info lists\n"
            "                     the variants); default: each kernel's own, left implicit\n"
            "  --threads N        CPU threads (default 0: all)\n"
            "  --device N         the GPU to calibrate (default 0)\n"
            "  --effort X         measure X times as long as by default (0 < X <= 100)\n"
            "  --import FILE      merge another wisdom file of this machine into the wisdom file\n"
            "  --export FILE      write the wisdom to FILE too\n"
            "  --show             print the wisdom\n"
            "  With --import, --export or --show, nothing is measured unless --backend, --scheme,\n"
            "  --precision, --dims or --kernel is given too.\n",
            schemes);
    pyr_cli_print_common(out);
}

/* Progress of the calibration: what each set measured, as it comes. */
static int print_report(void *user, int done, int total, const char *text)
{
    (void)user;
    (void)done;
    (void)total;
    if (pyr_cli_verbosity >= 0) {
        fputs(text, stdout);
        fflush(stdout);
    }
    return 0;
}

/* Stops before anything is measured: the arguments are then checked. */
static int stop_at_start(void *user, int done, int total, const char *text)
{
    (void)user;
    (void)done;
    (void)total;
    (void)text;
    return 1;
}

int pyr_cli_calibrate(int argc, char **argv)
{
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_AUTO;
    o.device = 0;
    o.threads = 0;
    o.kernel[0] = 0; /* --kernel: the variant to calibrate (and plan with), "" = the default */
    int show = 0, measure = 0, any_action = 0;
    const char *schemes = NULL, *precisions = NULL, *dims = NULL; /* lists; NULL = all */
    double effort = 1.0;
    const char *export_path = NULL, *import_path = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (pyr_cli_common_option(a)) continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            calibrate_usage(stdout);
            return PYR_EXIT_OK;
        }
        if (!strcmp(a, "--backend")) {
            if (!need_value(argc, argv, i, "calibrate")) return 2;
            const char *v = argv[++i];
            if (!strcmp(v, "cpu")) o.backend = PYR_BACKEND_CPU;
            else if (!strcmp(v, "cuda")) o.backend = PYR_BACKEND_CUDA;
            else if (!strcmp(v, "auto")) o.backend = PYR_BACKEND_AUTO;
            else {
                fprintf(stderr, "pyrgrid: error: calibrate --backend %s: use cpu, cuda or auto\n", v);
                return 2;
            }
            measure = 1;
        } else if (!strcmp(a, "--precision") || !strcmp(a, "--scheme") || !strcmp(a, "--dims")) {
            /* lists the library checks (below, before anything is read or measured) */
            if (!need_value(argc, argv, i, "calibrate")) return 2;
            const char *v = argv[++i];
            if (!strcmp(a, "--precision")) precisions = v;
            else if (!strcmp(a, "--scheme")) schemes = v;
            else dims = v;
            measure = 1;
        } else if (!strcmp(a, "--kernel")) {
            if (!need_value(argc, argv, i, "calibrate")) return 2;
            if (strlen(argv[i + 1]) >= sizeof o.kernel) {
                fprintf(stderr, "pyrgrid: error: calibrate --kernel %s: a variant is at most %zu characters (pyrgrid info lists them)\n",
                        argv[i + 1], sizeof o.kernel - 1);
                return 2;
            }
            snprintf(o.kernel, sizeof o.kernel, "%s", argv[++i]);
            measure = 1;
        } else if (!strcmp(a, "--device")) {
            if (!need_value(argc, argv, i, "calibrate") || !parse_count(a, argv[i + 1], 0, 1024, &o.device)) return 2;
            i++;
        } else if (!strcmp(a, "--threads")) {
            if (!need_value(argc, argv, i, "calibrate") || !parse_count(a, argv[i + 1], 0, 4096, &o.threads)) return 2;
            i++;
        } else if (!strcmp(a, "--effort")) {
            if (!need_value(argc, argv, i, "calibrate")) return 2;
            effort = atof(argv[++i]);
            if (!(effort > 0 && effort <= 100)) {
                fprintf(stderr, "pyrgrid: error: calibrate --effort %s: use a number in (0, 100]\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(a, "--export")) {
            if (!need_value(argc, argv, i, "calibrate")) return 2;
            export_path = argv[++i];
            any_action = 1;
        } else if (!strcmp(a, "--import")) {
            if (!need_value(argc, argv, i, "calibrate")) return 2;
            import_path = argv[++i];
            any_action = 1;
        } else if (!strcmp(a, "--show")) {
            show = 1;
            any_action = 1;
        } else {
            fprintf(stderr, "pyrgrid: error: unknown option '%s' for calibrate; see pyrgrid calibrate --help\n", a);
            return 2;
        }
    }
    if (!any_action) measure = 1;
    if (measure) {
        /* every set checked (names, kernel variant, backend) before any file is read: the library
         * checks them all before its first report, where this stops it */
        pyr_status_t st = pyr_wisdom_calibrate(&o, schemes, precisions, dims, effort, stop_at_start, NULL);
        if (st != PYR_ERR_CANCELLED) {
            pyr_cli_fail(NULL);
            return st == PYR_ERR_ARG ? 2 : 1;
        }
        pyr_clear_error();
    }

    /* The wisdom file: imported now, the measurements added to the process's
     * store, and the store exported back under the file's lock, merged with
     * whatever another process wrote meanwhile (two calibrations at once lose
     * nothing). */
    char path[PYR_PATH_MAX];
    if (pyr_wisdom_default_path(path, sizeof path) != PYR_OK) return pyr_cli_fail(NULL);
    /* before measuring for minutes: --export may not replace the file it imports, nor be the
     * wisdom file, which is written anyway (a character device excepted: both are written in place) */
    if (export_path && import_path && pyr_same_file(export_path, import_path)) {
        pyr_fail(PYR_ERR_IO, "--export %s is the same file as the input --import %s; writing it would replace the file being "
                 "imported; give --export another name", export_path, import_path);
        return pyr_cli_fail(NULL);
    }
    if (export_path && pyr_same_file(export_path, path) && !pyr_is_char_device(export_path)) {
        pyr_fail(PYR_ERR_IO, "--export %s is the same file as the wisdom file %s, which calibrate writes anyway; leave --export "
                 "out or give it another name", export_path, path);
        return pyr_cli_fail(NULL);
    }
    /* and every file it writes could be written (the wisdom file only when it is written) */
    if (export_path && check_wisdom_target("--export", export_path) != PYR_OK) return pyr_cli_fail(NULL);
    if ((measure || import_path) && check_wisdom_target("the wisdom file", path) != PYR_OK) return pyr_cli_fail(NULL);
    int rc = 0, found = 0, changed = 0;
    if (pyr_wisdom_store_import_default(path, sizeof path, &found) != PYR_OK)
        fprintf(stderr, "pyrgrid: warning: %s%s\n", pyr_last_error(), measure || import_path ? "; it will be replaced" : "");
    if (import_path) {
        int f2 = 0;
        struct stat st;
        if (stat(import_path, &st) != 0) {
            fprintf(stderr, "pyrgrid: error: --import %s: %s\n", import_path, strerror(errno));
            return 1;
        }
        int nconstants = 0, nchoices = 0;
        if (pyr_wisdom_file_count(import_path, &nconstants, &nchoices) != PYR_OK || pyr_wisdom_store_import(import_path, &f2) != PYR_OK)
            return pyr_cli_fail("--import: ");
        printf("imported %d sets of constants and %d measured choices from %s\n", nconstants, nchoices, import_path);
        changed = 1;
    }
    if (measure) {
        double t0 = pyr_seconds_now();
        if (pyr_wisdom_calibrate(&o, schemes, precisions, dims, effort, print_report, NULL) != PYR_OK) return pyr_cli_fail(NULL);
        if (pyr_cli_verbosity >= 0) printf("calibration took %.1f s\n", pyr_seconds_now() - t0);
        changed = 1;
    }
    if (changed) {
        /* calibrate replaces a file that was rejected (foreign, corrupt, another version) */
        if (pyr_wisdom_store_export(path, 1) != PYR_OK) return pyr_cli_fail(NULL);
        if (pyr_cli_verbosity >= 0) printf("wrote %s\n", path);
    }
    int nconstants = 0, nchoices = 0;
    if (pyr_wisdom_store_count(&nconstants, &nchoices) != PYR_OK) return pyr_cli_fail(NULL);
    if (export_path) {
        if (pyr_wisdom_export_file(export_path) != PYR_OK) {
            rc = pyr_cli_fail("--export: ");
            goto done;
        }
        printf("exported %d sets of constants and %d measured choices to %s\n", nconstants, nchoices, export_path);
    }
    if (show) {
        char *text = NULL;
        if (pyr_wisdom_store_text(&text) != PYR_OK) {
            rc = pyr_cli_fail(NULL);
            goto done;
        }
        struct stat sb;
        const int sink = stat(path, &sb) == 0 && (S_ISCHR(sb.st_mode) || S_ISFIFO(sb.st_mode));
        printf("# %s%s\n%s", path,
               found || changed ? "" : sink ? " (a device or FIFO: nothing is read from it)" : " (no such file yet)", text);
        free(text);
    }
done:
    return rc;
}

/* ------------------------------------------------------------------ sweep */

/* "1:64", "1:64:4", "1,2,4,8", "1,2,4:16:4" -> sorted unique heights. */
static int parse_heights(const char *spec, int64_t **out, int *n)
{
    return pyr_cli_parse_ranges(spec, 1000000, 0, out, n);
}

typedef struct {
    double t[3]; /* first, second and last pass end */
    int n;
} sweep_times_t;

static int on_pass(void *user, int64_t done, int64_t total)
{
    (void)total;
    (void)done;
    sweep_times_t *s = user;
    double t = pyr_seconds_now();
    if (s->n == 0) s->t[0] = t;
    s->t[2] = t;
    s->n++;
    return 0;
}

typedef struct {
    pyr_decomp_t decomp;
    int64_t height, steps;
    double measured, predicted; /* seconds over the timed passes */
    double cells;               /* node updates in the timed passes (useful) */
    int is_auto;
} sweep_row_t;

/* The sweep CSV's columns (written by --csv, read by --replot). */
static const char sweep_csv_header[] = "backend,decomposition,height,steps,timed_steps,measured_s,predicted_s,measured_ns_per_node,"
                                       "predicted_ns_per_node,rel_error,auto";

/* Time per node-step against height, measured and predicted, one pair of
 * curves per decomposition (the paper's Figures 4-5). */
static pyr_status_t plot_rows(const char *png, const char *title, const sweep_row_t *rows, int nrows, const pyr_decomp_t *ds, int nd)
{
    pyr_plot_series_t series[4];
    double *xy = malloc((size_t)(4 * nd * nrows + 4) * sizeof *xy);
    char labels[4][64];
    int ns = 0;
    if (!xy) return pyr_fail(PYR_ERR_NOMEM, "out of host memory plotting");
    double *cur = xy;
    double hmin = INFINITY, hmax = 0;
    for (int di = 0; di < nd && di < 2; di++) {
        for (int kind = 0; kind < 2; kind++) {
            double *x = cur, *y = cur + nrows;
            int n = 0;
            /* rows of one decomposition in height order */
            for (int pass = 0; pass < nrows; pass++) {
                int pick = -1;
                for (int r = 0; r < nrows; r++) {
                    if (rows[r].decomp != ds[di]) continue;
                    if (n > 0 && rows[r].height <= x[n - 1]) continue;
                    if (pick < 0 || rows[r].height < rows[pick].height) pick = r;
                }
                if (pick < 0) break;
                x[n] = (double)rows[pick].height;
                y[n] = 1e9 * (kind ? rows[pick].predicted : rows[pick].measured) / rows[pick].cells;
                if (x[n] < hmin) hmin = x[n];
                if (x[n] > hmax) hmax = x[n];
                n++;
            }
            cur += 2 * nrows;
            snprintf(labels[ns], sizeof labels[ns], "%s, %s", pyr_decomp_name(ds[di]), kind ? "model" : "measured");
            series[ns] = (pyr_plot_series_t){labels[ns], x, y, n, kind ? 0 : 2};
            ns++;
        }
    }
    pyr_plot_opts_t po = {.title = title, .xlabel = "pyramid height n (steps per pass)", .ylabel = "ns per node and step",
                          .log_x = hmax >= 16 * hmin, .log_y = 1};
    pyr_status_t st = pyr_plot_write_png(png, series, ns, &po);
    free(xy);
    return st;
}

/* pyrgrid sweep --replot CSV --png F: the plot of an earlier sweep from its
 * CSV (as written by --csv). */
static int replot(const char *csv, const char *png)
{
    if (!png) {
        fprintf(stderr, "pyrgrid: error: sweep --replot %s needs --png FILE for the plot\n", csv);
        return 2;
    }
    {
        pyr_named_path_t outs[1] = {{"--png", png}}, ins[1] = {{"--replot", csv}};
        if (pyr_check_outputs(outs, 1, ins, 1) != PYR_OK) return pyr_cli_fail(NULL);
    }
    FILE *f = NULL;
    if (pyr_open_input(csv, "sweep CSV", &f, NULL, NULL) != PYR_OK) return pyr_cli_fail("--replot: ");
    char line[512], backend[32] = "";
    int nrows = 0, cap = 0, lineno = 0, rc = 0;
    sweep_row_t *rows = NULL;
    pyr_decomp_t ds[2];
    int nd = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = 0;
        if (lineno == 1) {
            if (strcmp(line, sweep_csv_header)) {
                fprintf(stderr, "pyrgrid: error: --replot %s: not a sweep CSV (its first line should be '%s')\n", csv, sweep_csv_header);
                rc = 1;
                break;
            }
            continue;
        }
        if (!line[0]) continue;
        char be[32], dn[32];
        long long h, steps, timed;
        double ms, ps, mn, pn, err;
        int is_auto;
        if (sscanf(line, "%31[^,],%31[^,],%lld,%lld,%lld,%lf,%lf,%lf,%lf,%lf,%d", be, dn, &h, &steps, &timed, &ms, &ps, &mn, &pn, &err,
                   &is_auto) != 11 || h < 1 || !(ms > 0) || !(mn > 0)) {
            fprintf(stderr, "pyrgrid: error: --replot %s: line %d is not a sweep row: '%s'\n", csv, lineno, line);
            rc = 1;
            break;
        }
        pyr_decomp_t d;
        if (!pyr_decomp_from_name(dn, 0, &d)) {
            fprintf(stderr, "pyrgrid: error: --replot %s: line %d: unknown decomposition '%s'\n", csv, lineno, dn);
            rc = 1;
            break;
        }
        int known = 0;
        for (int i = 0; i < nd; i++) known |= ds[i] == d;
        if (!known && nd < 2) ds[nd++] = d;
        if (nrows == cap) {
            cap = cap ? 2 * cap : 32;
            sweep_row_t *g = realloc(rows, (size_t)cap * sizeof *g);
            if (!g) {
                rc = pyr_cli_fail(NULL);
                break;
            }
            rows = g;
        }
        sweep_row_t *w = &rows[nrows++];
        memset(w, 0, sizeof *w);
        w->decomp = d;
        w->height = h;
        w->steps = steps;
        w->measured = ms;
        w->predicted = ps;
        w->cells = 1e9 * ms / mn; /* node updates timed, from the per-node figure */
        w->is_auto = is_auto;
        snprintf(backend, sizeof backend, "%s", be);
    }
    fclose(f);
    if (rc == 0 && nrows == 0) {
        fprintf(stderr, "pyrgrid: error: --replot %s: no rows\n", csv);
        rc = 1;
    }
    if (rc == 0) {
        char title[300];
        const char *base = strrchr(csv, '/');
        snprintf(title, sizeof title, "%s backend: time per node and step (%s)", backend, base ? base + 1 : csv);
        if (plot_rows(png, title, rows, nrows, ds, nd) != PYR_OK) rc = pyr_cli_fail("--png: ");
        else printf("wrote %s\n", png);
    }
    free(rows);
    return rc;
}

static void sweep_usage(FILE *out)
{
    fprintf(out,
            "usage: pyrgrid sweep FILE [--set section.key=value]... [--heights 1:64] [--decomposition D|all]\n"
            "                     [--passes P] [--repeat K] [--csv OUT.csv] [--png OUT.png] [-v|-q]\n"
            "       pyrgrid sweep --replot SWEEP.csv --png OUT.png\n"
            "  Run FILE's problem with the pyramid method at each height: measured against predicted\n"
            "  time, the model's accuracy (emax, ebar), the automatic choice against the best height.\n"
            "  --heights LIST   heights and ranges: 1:64, 1:64:4, 1,2,4,8 (at most 1000000)\n"
            "  --decomposition  strips, blocks, slabs, segments, skewed or all (the grid's kinds)\n"
            "  --passes P       passes per height, all but the first timed (default 4; 0: the file's steps); --repeat K: best of K runs\n"
            "  --csv, --png     the table and the plot, written together at the end\n"
            "  --replot CSV     the plot of an earlier sweep's CSV, running nothing\n");
    pyr_cli_print_common(out);
}

int pyr_cli_sweep(int argc, char **argv)
{
    /* over grid sizes: the long-vector method's staircase (cli_sweep_sizes.c) */
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "--sizes")) return pyr_cli_sweep_sizes(argc, argv);
    const char *file = NULL, *csv = NULL, *png = NULL, *heights_spec = "1:64", *decomp_spec = NULL, *replot_csv = NULL;
    int repeat = 1, passes = 4, quiet = 0; /* four passes: the last three timed */
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--set") || !strcmp(a, "-s") || !strcmp(a, "--heights") || !strcmp(a, "--decomposition") ||
            !strcmp(a, "--csv") || !strcmp(a, "--png") || !strcmp(a, "--repeat") || !strcmp(a, "--passes") || !strcmp(a, "--replot")) {
            if (!need_value(argc, argv, i, "sweep")) return 2;
            const char *v = argv[++i];
            if (!strcmp(a, "--replot")) replot_csv = v;
            if (!strcmp(a, "--heights")) heights_spec = v;
            else if (!strcmp(a, "--decomposition")) decomp_spec = v;
            else if (!strcmp(a, "--csv")) csv = v;
            else if (!strcmp(a, "--png")) png = v;
            else if (!strcmp(a, "--repeat") && !parse_count(a, v, 1, 100, &repeat)) return 2;
            else if (!strcmp(a, "--passes") && !parse_count(a, v, 0, 1000, &passes)) return 2;
        } else if (pyr_cli_common_option(a)) {
            quiet = pyr_cli_verbosity < 0;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            sweep_usage(stdout);
            return PYR_EXIT_OK;
        } else if (a[0] == '-') {
            fprintf(stderr, "pyrgrid: error: unknown option '%s' for sweep; see pyrgrid sweep --help\n", a);
            return 2;
        } else if (!file) {
            file = a;
        } else {
            fprintf(stderr, "pyrgrid: error: sweep takes one problem file, got '%s' and '%s'\n", file, a);
            return 2;
        }
    }
    if (replot_csv) {
        if (file) {
            fprintf(stderr, "pyrgrid: error: sweep --replot plots an earlier sweep's CSV; it runs nothing, so give no problem file ('%s')\n", file);
            return 2;
        }
        return replot(replot_csv, png);
    }
    if (!file) {
        fprintf(stderr, "pyrgrid: error: sweep needs a problem file: pyrgrid sweep FILE.ini --heights 1:64\n");
        return 2;
    }
    /* the file, then the overrides in order */
    static const char *const valued[] = {"--heights", "--decomposition", "--csv", "--png", "--repeat", "--passes", NULL};
    struct {
        pyr_problem_t problem;
        pyr_options_t options;
    } cfg;
    if (pyr_cli_load_problem(file, argc, argv, valued, &cfg.problem, &cfg.options)) return 1;
    pyr_problem_t *p = &cfg.problem;
    if (pyr_problem_validate(p) != PYR_OK) return pyr_cli_fail(NULL);
    if (cfg.options.method == PYR_METHOD_NAIVE || cfg.options.method == PYR_METHOD_TRIVIAL || cfg.options.method == PYR_METHOD_LONGVECTOR) {
        fprintf(stderr, "pyrgrid: error: sweep compares pyramid heights; the file asks for method = %s (use auto or pyramid%s)\n",
                pyr_method_name(cfg.options.method),
                cfg.options.method == PYR_METHOD_LONGVECTOR ? "; the long-vector method sweeps grid sizes: --sizes 10:7000" : "");
        return 2;
    }
    {
        pyr_named_path_t outs[2] = {{"--csv", csv}, {"--png", png}};
        pyr_named_path_t ins[2] = {{"the problem file", file}, {"initial.file", p->init == PYR_INIT_FILE ? p->init_file : NULL}};
        if (pyr_check_outputs(outs, 2, ins, 2) != PYR_OK) return pyr_cli_fail(NULL);
    }

    int64_t *heights = NULL;
    int nh = 0;
    if (!parse_heights(heights_spec, &heights, &nh)) {
        fprintf(stderr, "pyrgrid: error: --heights %s: use a list of heights and ranges such as 1:64, 1:64:4 or 1,2,4,8,16\n",
                heights_spec);
        return 2;
    }
    pyr_decomp_t ds[2];
    int nd = 0;
    const char *dspec = decomp_spec ? decomp_spec : cfg.options.decomposition != PYR_DECOMP_AUTO ? pyr_decomp_name(cfg.options.decomposition) : "all";
    if (!strcmp(dspec, "all")) {
        if (p->dims == 1) ds[nd++] = PYR_DECOMP_SEGMENTS;
        else if (p->dims == 3) {
            ds[nd++] = PYR_DECOMP_SLABS;
            ds[nd++] = PYR_DECOMP_BLOCKS;
        } else {
            ds[nd++] = PYR_DECOMP_STRIPS;
            ds[nd++] = PYR_DECOMP_BLOCKS;
        }
    } else {
        if (pyr_decomp_from_name(dspec, 0, &ds[0]) && pyr_decomp_fits(ds[0], p->dims)) nd = 1;
        if (nd != 1) {
            fprintf(stderr, "pyrgrid: error: --decomposition %s does not apply to a %dD grid; use %s or all\n", dspec, p->dims,
                    p->dims == 1 ? "segments" : p->dims == 2 ? "strips, blocks" : "slabs, blocks");
            free(heights);
            return 2;
        }
    }

    int cap = (nh + 2) * nd + 2, nrows = 0, rc = 0, staging = 0;
    pyr_output_stage_t *stage = NULL;
    sweep_row_t *rows = calloc((size_t)cap, sizeof *rows);
    pyr_field_t *field = NULL;
    if (!rows || pyr_field_create(p, &field) != PYR_OK || pyr_field_init(field, p) != PYR_OK) {
        free(rows);
        free(heights);
        pyr_field_destroy(&field);
        return pyr_cli_fail(NULL);
    }
    double interior = (double)pyr_problem_interior(p);
    char source[PYR_PATH_MAX + 320] = "";
    const char *backend_name = "";
    int printed_notice = 0;

    /* Run one (decomposition, height); fills a row. */
#define SWEEP_FAIL(msg)                                                                                                            \
    do {                                                                                                                           \
        rc = pyr_cli_fail(msg);                                                                                                            \
        goto out;                                                                                                                  \
    } while (0)

    for (int di = 0; di < nd + (nd > 1 ? 1 : 0); di++) {
        /* di == nd: the automatic choice over all decompositions */
        pyr_decomp_t d = di < nd ? ds[di] : PYR_DECOMP_AUTO;
        pyr_options_t o = cfg.options;
        o.method = PYR_METHOD_PYRAMID;
        o.decomposition = d;
        o.height = 0;
        o.plan_mode = PYR_PLAN_ESTIMATE;
        pyr_plan_t *plan = NULL;
        if (pyr_plan_create(p, &o, &plan) != PYR_OK) SWEEP_FAIL("automatic plan: ");
        pyr_plan_info_t info;
        pyr_plan_get_info(plan, &info);
        if (!printed_notice && info.notice && info.notice[0] && !quiet) fprintf(stderr, "pyrgrid: %s\n", info.notice);
        printed_notice = 1;
        int64_t h_auto = info.height;
        pyr_decomp_t d_auto = info.decomposition;
        pyr_plan_model_source(plan, source, sizeof source);
        backend_name = pyr_backend_name(info.backend);
        pyr_plan_destroy(&plan);
        if (di == nd) {
            if (!quiet) printf("automatic choice over all decompositions: %s, height %lld\n", pyr_decomp_name(d_auto), (long long)h_auto);
            int found = 0;
            for (int r = 0; r < nrows; r++) found |= rows[r].decomp == d_auto && rows[r].height == h_auto;
            if (found) break;
            d = d_auto;
        }
        int nlist = di < nd ? nh : 0;
        for (int i = 0; i <= nlist; i++) {
            int64_t h = i < nlist ? heights[i] : h_auto;
            int is_auto = h == h_auto;
            if (i == nlist) {
                /* the automatic height, unless the list had it */
                int seen = 0;
                for (int r = 0; r < nrows; r++)
                    if (rows[r].decomp == d && rows[r].height == h) {
                        rows[r].is_auto = 1;
                        seen = 1;
                    }
                if (seen) break;
            }
            pyr_problem_t q = *p;
            if (passes > 0) q.steps = (int64_t)passes * h;
            pyr_options_t oh = cfg.options;
            oh.method = PYR_METHOD_PYRAMID;
            oh.decomposition = d;
            oh.height = h;
            oh.plan_mode = PYR_PLAN_ESTIMATE;
            if (pyr_plan_create(&q, &oh, &plan) != PYR_OK) {
                if (!quiet) printf("%-8s height %5lld  does not fit: %s\n", pyr_decomp_name(d), (long long)h, pyr_last_error());
                pyr_clear_error();
                if (i < nlist) continue;
                break;
            }
            pyr_plan_get_info(plan, &info);
            int timed_from_pass2 = info.passes >= 2;
            pyr_prediction_t pr;
            if (pyr_plan_predict(plan, timed_from_pass2 ? h : 0, &pr) != PYR_OK) {
                pyr_plan_destroy(&plan);
                SWEEP_FAIL(NULL);
            }
            double best = INFINITY;
            for (int r = 0; r < repeat; r++) {
                sweep_times_t st = {{0}, 0};
                pyr_hooks_t hooks = {.progress = on_pass, .user = &st};
                double t0 = pyr_seconds_now();
                pyr_status_t s = pyr_execute(plan, field, &hooks, NULL);
                double t1 = pyr_seconds_now();
                if (s != PYR_OK) {
                    pyr_plan_destroy(&plan);
                    SWEEP_FAIL(NULL);
                }
                double t = timed_from_pass2 ? st.t[2] - st.t[0] : t1 - t0;
                if (t < best) best = t;
            }
            pyr_plan_destroy(&plan);
            sweep_row_t *row = &rows[nrows++];
            row->decomp = d;
            row->height = h;
            row->steps = q.steps;
            row->measured = best;
            row->predicted = pr.seconds;
            row->cells = interior * (double)(timed_from_pass2 ? q.steps - h : q.steps);
            row->is_auto = is_auto;
            if (!quiet) {
                /* the model's engines per timed pass: where the prediction comes from */
                const double np = (double)(q.steps - (timed_from_pass2 ? h : 0)) / (double)h, ms = 1e3 / (np > 0 ? np : 1);
                printf("%-8s height %5lld  measured %10.4g s  predicted %10.4g s  %8.4f vs %8.4f ns per node-step  error %+6.1f%%%s"
                       "  [model per pass: up %.1f, compute %.1f, down %.1f ms]\n",
                       pyr_decomp_name(d), (long long)h, row->measured, row->predicted, 1e9 * row->measured / row->cells,
                       1e9 * row->predicted / row->cells, 100 * (row->measured - row->predicted) / row->measured,
                       is_auto ? "  (auto)" : "", pr.upload * ms, pr.compute * ms, pr.download * ms);
            }
            fflush(stdout);
        }
    }

    /* Accuracy (the paper's metrics) and the automatic choice, per decomposition. */
    printf("model: %s\n", source);
    for (int di = 0; di < nd; di++) {
        double emax = 0, sum2 = 0, best = INFINITY, autov = -1;
        int n = 0;
        int64_t hbest = 0, hauto = 0;
        for (int r = 0; r < nrows; r++) {
            if (rows[r].decomp != ds[di]) continue;
            double e = (rows[r].measured - rows[r].predicted) / rows[r].measured;
            if (fabs(e) > emax) emax = fabs(e);
            sum2 += e * e;
            n++;
            double per = rows[r].measured / rows[r].cells;
            if (per < best) {
                best = per;
                hbest = rows[r].height;
            }
            if (rows[r].is_auto) {
                autov = per;
                hauto = rows[r].height;
            }
        }
        if (!n) continue;
        printf("%-8s %d heights: emax = %.3f, ebar = %.3f;", pyr_decomp_name(ds[di]), n, emax, sqrt(sum2) / n);
        if (autov > 0)
            printf(" auto height %lld: %.4f ns per node-step, best measured height %lld: %.4f, auto/best = %.3f\n", (long long)hauto,
                   1e9 * autov, (long long)hbest, 1e9 * best, autov / best);
        else printf(" auto height not measured\n");
    }
    if (nd > 1) {
        double best = INFINITY, autov = -1;
        for (int r = 0; r < nrows; r++) {
            double per = rows[r].measured / rows[r].cells;
            if (per < best) best = per;
        }
        /* the overall automatic choice is the row measured last for di == nd, or an earlier equal row */
        pyr_options_t o = cfg.options;
        o.method = PYR_METHOD_PYRAMID;
        o.decomposition = PYR_DECOMP_AUTO;
        o.height = 0;
        pyr_plan_t *plan = NULL;
        if (pyr_plan_create(p, &o, &plan) == PYR_OK) {
            pyr_plan_info_t info;
            pyr_plan_get_info(plan, &info);
            for (int r = 0; r < nrows; r++)
                if (rows[r].decomp == info.decomposition && rows[r].height == info.height) autov = rows[r].measured / rows[r].cells;
            if (autov > 0)
                printf("overall  auto %s height %lld: %.4f ns per node-step, best measured %.4f, auto/best = %.3f\n",
                       pyr_decomp_name(info.decomposition), (long long)info.height, 1e9 * autov, 1e9 * best, autov / best);
            pyr_plan_destroy(&plan);
        }
        pyr_clear_error();
    }

    /* the CSV and the plot are committed together */
    if (pyr_output_stage_begin(&stage) != PYR_OK) SWEEP_FAIL(NULL);
    staging = 1;
    if (csv) {
        pyr_output_file_t *af = NULL;
        if (pyr_output_file_open(&af, csv) != PYR_OK) SWEEP_FAIL("--csv: ");
        fprintf(pyr_output_file_stream(af), "%s\n", sweep_csv_header);
        for (int r = 0; r < nrows; r++) {
            const sweep_row_t *w = &rows[r];
            fprintf(pyr_output_file_stream(af), "%s,%s,%lld,%lld,%lld,%.6g,%.6g,%.6g,%.6g,%.5f,%d\n", backend_name, pyr_decomp_name(w->decomp),
                    (long long)w->height, (long long)w->steps, (long long)(w->cells / interior + 0.5), w->measured, w->predicted,
                    1e9 * w->measured / w->cells, 1e9 * w->predicted / w->cells, (w->measured - w->predicted) / w->measured, w->is_auto);
        }
        if (pyr_output_file_commit(&af) != PYR_OK) SWEEP_FAIL("--csv: ");
    }
    if (png) {
        char title[200], grid[96];
        if (p->dims == 1) snprintf(grid, sizeof grid, "1D %lld", (long long)p->n[0]);
        else if (p->dims == 2) snprintf(grid, sizeof grid, "2D %lldx%lld", (long long)p->n[1], (long long)p->n[0]);
        else snprintf(grid, sizeof grid, "3D %lldx%lldx%lld", (long long)p->n[2], (long long)p->n[1], (long long)p->n[0]);
        snprintf(title, sizeof title, "%s %s %s, %s backend: time per node and %s", pyr_equation_name(p->equation), grid,
                 pyr_precision_name(p->precision), backend_name, p->equation == PYR_EQ_POISSON ? "sweep" : "step");
        if (plot_rows(png, title, rows, nrows, ds, nd) != PYR_OK) SWEEP_FAIL("--png: ");
    }
    staging = 0;
    if (pyr_output_stage_commit(&stage) != PYR_OK) SWEEP_FAIL(NULL);
    if (!quiet && csv) printf("wrote %s\n", csv);
    if (!quiet && png) printf("wrote %s\n", png);
out:
    if (staging) pyr_output_stage_abort(&stage);
    pyr_field_destroy(&field);
    free(rows);
    free(heights);
    return rc;
}
