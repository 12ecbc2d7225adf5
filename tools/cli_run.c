/* pyrgrid run / pyrgrid plan. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_run.h"
#include "pyrgrid.h"
#include "pyrgrid_output.h"


static void usage(FILE *out, const char *cmd)
{
    if (!strcmp(cmd, "run"))
        fprintf(out, "usage: pyrgrid run FILE [--set section.key=value]... [-v|-q]\n"
                     "  Solve the problem in FILE (INI; README.md has the keys) and write the outputs it names\n"
                     "  ([output] field, image, every).  One summary line on stdout; a progress bar on stderr\n"
                     "  when it is a terminal and the run takes over a second.\n"
                     "  -s, --set section.key=value  override a key of the file (repeatable, applied in order)\n"
                     "  --report FILE.json           also write a report: problem, plan, counters, timings per stage,\n"
                     "                               Gcell/s, versions, machine and GPU\n");
    else
        fprintf(out, "usage: pyrgrid plan FILE [--set section.key=value]... [-v|-q]\n"
                     "  Print the plan for FILE (method, pieces, passes, device memory, values moved and\n"
                     "  computed, the model's predicted time by height) without running it.\n"
                     "  -s, --set section.key=value  override a key of the file (repeatable)\n"
                     "  --json                       print the problem, options and plan as JSON instead\n");
    pyr_cli_print_common(out);
}

/* Options of run and plan beyond --set. */
typedef struct {
    const char *report; /* run --report FILE */
    int json;           /* plan --json */
} run_flags_t;

/* Parse FILE [--set k=v]... [-v|-q] into a config.  Returns an exit status,
 * or -1 after --help (the caller exits 0). */
static int parse_args(int argc, char **argv, const char *cmd, pyr_cli_config_t *cfg, int *quiet, run_flags_t *flags)
{
    const char *file = NULL;
    memset(flags, 0, sizeof *flags);
    *quiet = 0;
    const int run = !strcmp(cmd, "run");
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout, cmd);
            return -1;
        }
        if (pyr_cli_common_option(argv[i])) *quiet = pyr_cli_verbosity < 0;
        else if (run && !strcmp(argv[i], "--report")) {
            if (i + 1 >= argc || !argv[i + 1][0]) {
                fprintf(stderr, "pyrgrid: error: --report needs a file name, e.g. --report run.json\n");
                return 2;
            }
            flags->report = argv[++i];
        } else if (run && !strncmp(argv[i], "--report=", 9)) {
            flags->report = argv[i] + 9;
        } else if (!run && !strcmp(argv[i], "--json")) {
            flags->json = 1;
        }
        else if (!strcmp(argv[i], "--set") || !strcmp(argv[i], "-s")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "pyrgrid: error: --set needs section.key=value\n");
                return 2;
            }
            i++;
        } else if (!strncmp(argv[i], "--set=", 6)) {
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "pyrgrid: error: unknown option '%s' for %s; see pyrgrid %s --help\n", argv[i], cmd, cmd);
            return 2;
        } else if (!file) file = argv[i];
        else {
            fprintf(stderr, "pyrgrid: error: %s takes one problem file, got '%s' and '%s'\n", cmd, file, argv[i]);
            return 2;
        }
    }
    if (!file) {
        fprintf(stderr, "pyrgrid: error: %s needs a problem file: pyrgrid %s FILE.ini (examples/ has some)\n", cmd, cmd);
        return 2;
    }
    /* overrides in order, after the file */
    const char **sets = calloc((size_t)argc, sizeof *sets); /* argc > 0: there is a file */
    int nsets = 0;
    if (!sets) {
        fprintf(stderr, "pyrgrid: error: out of host memory\n");
        return 1;
    }
    for (int i = 0; i < argc; i++) {
        if (run && !strcmp(argv[i], "--report")) i++;
        else if (!strcmp(argv[i], "--set") || !strcmp(argv[i], "-s")) sets[nsets++] = argv[++i];
        else if (!strncmp(argv[i], "--set=", 6)) sets[nsets++] = argv[i] + 6;
    }
    /* the grid's size from initial.file and restarts too */
    const pyr_status_t st = pyr_cli_config_load(cfg, file, sets, nsets);
    free(sets);
    return st == PYR_OK ? 0 : pyr_cli_fail(NULL);
}

pyr_status_t pyr_cli_config_load(pyr_cli_config_t *cfg, const char *path, const char *const *sets, int nsets)
{
    memset(cfg, 0, sizeof *cfg);
    pyr_problem_file_t *pf = NULL;
    pyr_status_t st = pyr_problem_file_load(path, sets, nsets, &pf);
    if (st == PYR_OK) st = pyr_problem_file_read_inputs(pf);
    if (st == PYR_OK) st = pyr_problem_file_outputs(pf, &cfg->out);
    if (st == PYR_OK) {
        cfg->problem = *pyr_problem_file_problem(pf);
        cfg->options = *pyr_problem_file_options(pf);
        /* the strings are the file's: copied, so that the file can go now */
        snprintf(cfg->field, sizeof cfg->field, "%s", cfg->out.field);
        snprintf(cfg->image, sizeof cfg->image, "%s", cfg->out.image);
        snprintf(cfg->probes, sizeof cfg->probes, "%s", cfg->out.probes);
        snprintf(cfg->source, sizeof cfg->source, "%s", cfg->out.source);
        snprintf(cfg->start_dataset, sizeof cfg->start_dataset, "%s", cfg->out.start_dataset);
        cfg->out.field = cfg->field;
        cfg->out.image = cfg->image;
        cfg->out.probes = cfg->probes;
        cfg->out.source = cfg->source;
        cfg->out.start_dataset = cfg->start_dataset;
    }
    pyr_problem_file_destroy(&pf);
    return st;
}

/* ---------------------------------------------------------------- progress */

void pyr_cli_progress_begin(pyr_cli_progress_t *bar, int quiet)
{
    memset(bar, 0, sizeof *bar);
    bar->tty = isatty(fileno(stderr));
    bar->quiet = quiet;
    /* PYRGRID_PROGRESS_AFTER: seconds before the bar appears (default 1; 0 always shows it) */
    const char *after = getenv("PYRGRID_PROGRESS_AFTER");
    bar->after = after && *after ? atof(after) : 1.0;
    if (!(bar->after >= 0)) bar->after = 1.0;
    bar->start = pyr_seconds_now();
}

void pyr_cli_progress_draw(pyr_cli_progress_t *bar, int64_t done, int64_t total)
{
    if (bar->quiet || !bar->tty) return;
    double t = pyr_seconds_now(), el = t - bar->start;
    if (el < bar->after || (t - bar->last_draw < 0.1 && done < total)) return;
    bar->last_draw = t;
    double frac = total ? (double)done / (double)total : 1;
    int width = 30, full = (int)(frac * width);
    char line[64];
    for (int i = 0; i < width; i++) line[i] = i < full ? '#' : '.';
    line[width] = 0;
    double eta = frac > 0 ? el * (1 - frac) / frac : 0;
    fprintf(stderr, "\r[%s] %5.1f%%  step %lld/%lld  %.0fs elapsed, ETA %.0fs ", line, 100 * frac, (long long)done, (long long)total, el,
            eta);
    bar->drawn = 1;
}

double pyr_cli_progress_end(pyr_cli_progress_t *bar)
{
    if (bar->drawn) fputc('\n', stderr);
    return pyr_seconds_now() - bar->start;
}

typedef struct {
    pyr_cli_progress_t bar;
    const pyr_cli_config_t *cfg;
    pyr_result_t *result; /* output.field: .npy or HDF5, snapshots */
} run_state_t;

static int on_progress(void *user, int64_t done, int64_t total)
{
    pyr_cli_progress_draw(&((run_state_t *)user)->bar, done, total);
    return 0;
}

static pyr_status_t on_snapshot(void *user, const pyr_field_t *field, int64_t step)
{
    run_state_t *s = user;
    /* the result holds every field of the scheme; the state (u) is the one that can diverge */
    CLI_TRY(pyr_cli_check_finite(&s->cfg->problem, field, "u", pyr_result_step_of(&s->cfg->out, step), "at a snapshot"));
    return pyr_result_snapshot(s->result, step);
}

/* The image of a result: heat map (2D, or the middle z-plane of 3D), or a
 * line plot of u(x) in 1D. */
static pyr_status_t write_image(const char *path, const pyr_field_t *f, const pyr_problem_t *p)
{
    char title[160];
    if (f->dims == 1) {
        int64_t n = f->n[0];
        double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
        if (!x || !y) {
            free(x);
            free(y);
            return PYR_ERR_NOMEM;
        }
        for (int64_t i = 0; i < n; i++) {
            x[i] = p->length[0] * (double)i / (double)(n - 1);
            y[i] = f->precision == PYR_DOUBLE ? ((double *)f->data)[i] : ((float *)f->data)[i];
        }
        if (p->equation == PYR_EQ_HEAT)
            snprintf(title, sizeof title, "u(x) after %lld steps (t = %.4g)", (long long)p->steps, (double)p->steps * p->heat.dt);
        else snprintf(title, sizeof title, "u(x), Poisson");
        pyr_plot_series_t s = {.label = "u", .x = x, .y = y, .n = (int)(n < 2147483647 ? n : 2147483647)};
        pyr_plot_opts_t o = {.title = title, .xlabel = "x", .ylabel = "u"};
        pyr_status_t st = pyr_plot_write_png(path, &s, 1, &o);
        free(x);
        free(y);
        return st;
    }
    size_t elem = pyr_precision_size(f->precision);
    const char *plane = f->data;
    if (f->dims == 3) {
        plane += (size_t)(f->n[2] / 2) * (size_t)(f->n[0] * f->n[1]) * elem;
        if (p->equation == PYR_EQ_HEAT)
            snprintf(title, sizeof title, "u, plane z = %lld, after %lld steps", (long long)(f->n[2] / 2), (long long)p->steps);
        else snprintf(title, sizeof title, "u, plane z = %lld, Poisson", (long long)(f->n[2] / 2));
    } else {
        if (p->equation == PYR_EQ_HEAT)
            snprintf(title, sizeof title, "u after %lld steps (t = %.4g)", (long long)p->steps, (double)p->steps * p->heat.dt);
        else snprintf(title, sizeof title, "u, Poisson");
    }
    pyr_heatmap_opts_t o = {.title = title};
    return pyr_png_write_heatmap(path, plane, f->precision, f->n[0], f->n[1], &o);
}

/* What a plan (or one part of it) does, in one line. */
static void describe_plan(const pyr_plan_info_t *info, char *out, size_t size)
{
    char dev[32], bud[32], height[32];
    pyr_format_bytes(info->device_bytes, dev, sizeof dev);
    pyr_format_bytes(info->budget_bytes, bud, sizeof bud);
    /* a whole run whose parts chose differently says so (0 and auto in the info) */
    if (info->height > 0) snprintf(height, sizeof height, "height %lld", (long long)info->height);
    else snprintf(height, sizeof height, "heights by part");
    snprintf(out, size, "method %s, %s, %s, %lld passes of %lld tasks, %s of device memory (budget %s)",
             info->method == PYR_METHOD_AUTO ? "by part" : pyr_method_name(info->method),
             info->decomposition == PYR_DECOMP_AUTO && info->height == 0 ? "decompositions by part" : pyr_decomp_name(info->decomposition),
             height, (long long)info->passes, (long long)info->tasks_per_pass, dev, bud);
}

/* A plan over several devices: how the grid was cut, the whole run (unless
 * said already), then one line per part. */
static void print_parts(FILE *out, const char *prefix, const pyr_plan_t *plan, int whole)
{
    const int n = pyr_plan_part_count(plan);
    if (n <= 1) return;
    char cut[320], line[256];
    pyr_plan_partition(plan, cut, sizeof cut);
    fprintf(out, "%sparts: %s\n", prefix, cut);
    pyr_plan_info_t info;
    if (whole && pyr_plan_get_info(plan, &info) == PYR_OK) {
        describe_plan(&info, line, sizeof line);
        fprintf(out, "%swhole run: %s\n", prefix, line);
    }
    for (int i = 0; i < n; i++) {
        if (pyr_plan_part_info(plan, i, &info) != PYR_OK) continue;
        describe_plan(&info, line, sizeof line);
        fprintf(out, "%spart %d: %s, kernel %s\n", prefix, i, line, info.kernel);
    }
}

/* One token after another, space-separated. */
static void add(char *line, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(char *line, size_t size, const char *fmt, ...)
{
    const size_t n = strlen(line);
    if (n + 1 >= size) return;
    if (n) {
        line[n] = ' ';
        line[n + 1] = 0;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + strlen(line), size - strlen(line), fmt, ap);
    va_end(ap);
}

void pyr_cli_print_summary(const pyr_cli_summary_t *s)
{
    const pyr_problem_t *p = s->problem;
    const pyr_run_info_t *ri = s->run;
    char line[1024] = "";
    if (p->equation != PYR_EQ_HEAT) add(line, sizeof line, "equation=%s", pyr_equation_name(p->equation));
    if (p->equation == PYR_EQ_MAXWELL && p->dims == 2) add(line, sizeof line, "mode=%s", p->maxwell.te ? "te" : "tm");
    if (s->plan) {
        add(line, sizeof line, "method=%s", pyr_method_name(s->plan->method));
        if (s->plan->method != PYR_METHOD_NAIVE && s->plan->method != PYR_METHOD_LONGVECTOR) /* those keep the whole grid */
            add(line, sizeof line, "%s height=%lld", pyr_decomp_name(s->plan->decomposition), (long long)s->plan->height);
    }
    if (s->ranks > 0) add(line, sizeof line, "ranks=%d", s->ranks);
    /* several devices or ranks: parts, H and the halo traffic */
    if (ri->parts > 1 || s->ranks > 0)
        add(line, sizeof line, "parts=%d H=%lld exchanges=%lld halo_sent=%llu halo_received=%llu", ri->parts, (long long)ri->exchange_height,
            (long long)ri->exchanges, (unsigned long long)s->halo_sent, (unsigned long long)s->halo_received);
    add(line, sizeof line, "backend=%s", pyr_backend_name(s->backend));
    if (p->dims == 1) add(line, sizeof line, "grid=%lld", (long long)p->n[0]);
    else if (p->dims == 2) add(line, sizeof line, "grid=%lldx%lld", (long long)p->n[1], (long long)p->n[0]);
    else add(line, sizeof line, "grid=%lldx%lldx%lld", (long long)p->n[2], (long long)p->n[1], (long long)p->n[0]);
    add(line, sizeof line, "%s %s=%lld", pyr_precision_name(p->precision), p->equation == PYR_EQ_POISSON ? "sweeps" : "steps", (long long)ri->steps);
    if (s->from > 0) add(line, sizeof line, "from=%lld", (long long)s->from);
    double dt = 0;
    if (p->equation == PYR_EQ_MAXWELL && pyr_problem_time_step(p, &dt) == PYR_OK) add(line, sizeof line, "dt=%.6g", dt);
    if (ri->checked)
        add(line, sizeof line, "change=%.6g%s", ri->change, p->poisson.tolerance > 0 ? (ri->converged ? " converged=yes" : " converged=no") : "");
    /* how the host grid was reached */
    if (ri->host_memory == PYR_HOST_PIN) add(line, sizeof line, "host=pinned(%.1fs+%.1fs)", ri->pin_seconds, ri->unpin_seconds);
    else if (ri->host_memory == PYR_HOST_STAGE) add(line, sizeof line, "host=staged");
    add(line, sizeof line, "seconds=%.3f Gcell/s=%.3f uploaded=%llu downloaded=%llu computed=%llu redundant=%llu", s->seconds, s->gcells,
        (unsigned long long)s->counts.uploaded, (unsigned long long)s->counts.downloaded, (unsigned long long)s->counts.computed,
        (unsigned long long)s->counts.redundant);
    printf("pyrgrid: %s\n", line);
}

int pyr_cli_run(int argc, char **argv)
{
    pyr_cli_config_t cfg;
    int quiet;
    run_flags_t flags;
    int rc = parse_args(argc, argv, "run", &cfg, &quiet, &flags);
    if (rc) return rc < 0 ? PYR_EXIT_OK : rc;
    /* started by mpirun: one grid over the ranks (cli_mpi.c) */
    if (pyr_cli_mpi_launched()) {
        /* what only a process holding the whole grid writes or reads (HDF5 is not parallel here) */
        const char *state = pyr_scheme_field_name(cfg.problem.equation, 0);
        const char *unsupported = NULL;
        if (pyr_result_is_h5(&cfg.out))
            unsupported = "output.field = NAME.h5: HDF5 results are not written by runs over several MPI ranks (each rank writes its "
                          "part as .npy); use output.field = NAME.npy and pyrgrid assemble";
        else if (flags.report)
            unsupported = "--report is not written by runs over several MPI ranks yet; leave it out (rank 0 prints the summary line)";
        else if (cfg.start_dataset[0] && state && strcmp(cfg.start_dataset, state) != 0)
            unsupported = "initial.step picks a snapshot of an HDF5 result, which runs over several MPI ranks do not read; restart "
                          "from its final field (leave initial.step out) or run in one process";
        if ((rc = pyr_cli_run_mpi(&cfg, quiet, unsupported)) >= 0) return rc;
    }
    pyr_problem_t *p = &cfg.problem;
    if (pyr_problem_validate(p) != PYR_OK) return pyr_cli_fail(NULL);
    /* its own outputs (cli_maxwell.c): a .npy per component or one HDF5 file, probes */
    if (p->equation == PYR_EQ_MAXWELL) return pyr_cli_run_maxwell(&cfg, quiet, flags.report);
    if (cfg.out.every > 0 && !cfg.field[0]) {
        fprintf(stderr, "pyrgrid: error: output.every = %lld writes snapshots named after output.field, which is empty; set output.field = NAME.npy\n",
                (long long)cfg.out.every);
        return 1;
    }
    char sidecar[PYR_PATH_MAX + 8];
    pyr_result_sidecar(&cfg.problem, &cfg.out, sidecar, sizeof sidecar);
    const int h5 = pyr_result_is_h5(&cfg.out);
    /* Fail before a long run, not after it: every output writable, none the
     * same file as another or as an input, snapshots included. */
    {
        char sidecar_name[PYR_PATH_MAX + 64];
        snprintf(sidecar_name, sizeof sidecar_name, "the XDMF sidecar of output.field (%s)", cfg.field);
        pyr_named_path_t outs[4] = {{"output.field", cfg.field}, {"output.image", cfg.image}, {sidecar_name, sidecar},
                                    {"--report", flags.report}};
        pyr_named_path_t ins[3] = {{"initial.file", p->init == PYR_INIT_FILE ? p->init_file : NULL}, {"the problem file", cfg.source},
                                   {"rhs.file", p->equation == PYR_EQ_POISSON && p->poisson.rhs == PYR_RHS_FILE ? p->poisson.rhs_file : NULL}};
        if (pyr_check_outputs(outs, 4, ins, 3) != PYR_OK) return pyr_cli_fail(NULL);
        if (cfg.out.every > 0 && !h5) {
            /* NAME_000010.npy ... of output.field = NAME.npy */
            char base[PYR_PATH_MAX];
            pyr_result_base(&cfg.out, base, sizeof base);
            const char *prefix = base;
            if (pyr_result_check_snapshots(&cfg.out, &prefix, 1, outs, 4, ins, 3) != PYR_OK) return pyr_cli_fail(NULL);
        }
    }

    double t0 = pyr_seconds_now(), seconds[4] = {0, 0, 0, 0}; /* plan, initial field, execute, outputs */
    pyr_cli_wisdom_import();
    unsigned long wisdom_before = pyr_wisdom_store_generation();
    pyr_plan_t *plan = NULL;
    if (pyr_plan_create(p, &cfg.options, &plan) != PYR_OK) return pyr_cli_fail(NULL);
    pyr_plan_info_t info;
    pyr_plan_get_info(plan, &info);
    if (info.notice && info.notice[0] && !quiet) fprintf(stderr, "pyrgrid: %s\n", info.notice);
    if (pyr_cli_verbosity > 0) {
        char line[256], model[PYR_PATH_MAX + 320];
        describe_plan(&info, line, sizeof line);
        pyr_plan_model_source(plan, model, sizeof model);
        fprintf(stderr, "pyrgrid: plan: %s; model: %s\n", line, model);
        print_parts(stderr, "pyrgrid: ", plan, 0);
    }
    if (cfg.out.start_step > 0 && !quiet && pyr_cli_verbosity > 0)
        fprintf(stderr, "pyrgrid: restart from step %lld of %s: %lld steps to run\n", (long long)cfg.out.start_step, p->init_file, (long long)p->steps);
    pyr_cli_wisdom_export_if_changed(wisdom_before); /* plan = measure recorded its choice */
    seconds[0] = pyr_seconds_now() - t0;

    const int nf = pyr_scheme_field_count(p->equation);
    pyr_field_t *fields[PYR_CLI_FIELDS] = {NULL}; /* inputs (Poisson's f): made by the library from the problem, unless stored in an HDF5 result */
    pyr_status_t s = pyr_field_create(p, &fields[0]);
    if (s == PYR_OK)
        s = p->init == PYR_INIT_FILE && cfg.start_dataset[0] ? pyr_field_init_file(fields[0], p, p->init_file, cfg.start_dataset)
                                                             : pyr_field_init(fields[0], p);
    for (int i = 1; i < nf && i < PYR_CLI_FIELDS && s == PYR_OK && h5; i++) {
        if (pyr_scheme_field_updated(p->equation, i) || (p->equation == PYR_EQ_POISSON && p->poisson.rhs == PYR_RHS_ZERO)) continue;
        s = pyr_field_create(p, &fields[i]);
        if (s == PYR_OK) s = pyr_field_init_input(fields[i], p, i);
    }
    run_state_t st = {0};
    if (s == PYR_OK) s = pyr_result_open(&st.result, &cfg.problem, &cfg.out, plan, fields, nf);
    if (s != PYR_OK) {
        pyr_plan_destroy(&plan);
        for (int i = 0; i < PYR_CLI_FIELDS; i++) pyr_field_destroy(&fields[i]);
        return pyr_cli_fail(NULL);
    }
    pyr_field_t *field = fields[0];
    seconds[1] = pyr_seconds_now() - t0 - seconds[0];
    st.cfg = &cfg;
    pyr_hooks_t hooks = {.progress = on_progress, .snapshot = cfg.out.every > 0 ? on_snapshot : NULL, .user = &st};
    pyr_run_info_t ri;
    pyr_cli_progress_begin(&st.bar, quiet);
    s = pyr_execute_fields(plan, fields, nf, &hooks, &ri);
    const pyr_counters_t cnt = ri.counts;
    double secs = pyr_cli_progress_end(&st.bar);
    seconds[2] = secs;
    /* no output of diverged values (a heat grid near the precision's largest number, a Poisson guess or right side too large) */
    if (s == PYR_OK) s = pyr_cli_check_finite(p, field, "u", pyr_result_step_of(&cfg.out, ri.steps), "the end of the run");
    if (s != PYR_OK) {
        pyr_plan_destroy(&plan);
        pyr_result_abort(&st.result);
        for (int i = 0; i < PYR_CLI_FIELDS; i++) pyr_field_destroy(&fields[i]);
        return pyr_cli_fail(NULL);
    }
    const int not_converged = p->equation == PYR_EQ_POISSON && p->poisson.tolerance > 0 && !ri.converged;
    double cells = (double)pyr_problem_interior(p) * (double)ri.steps;
    const double gcells = secs > 0 ? cells / secs * 1e-9 : 0.0;
    /* The field, its sidecar, the image and the report are committed
     * together: all new, or (on a failure, e.g. a full disk) all as they were. */
    pyr_output_stage_t *stage = NULL;
    const char *failed = pyr_output_stage_begin(&stage) != PYR_OK ? "" : NULL;
    double t_out = pyr_seconds_now();
    pyr_problem_t shown = *p; /* the image's title counts the steps from 0 */
    shown.steps = pyr_result_step_of(&cfg.out, ri.steps);
    if (cfg.field[0] && pyr_result_final(st.result, &ri) != PYR_OK)
        failed = "output.field: ";
    else if (cfg.image[0] && write_image(cfg.image, field, &shown) != PYR_OK)
        failed = "output.image: ";
    if (!failed && flags.report) {
        seconds[3] = pyr_seconds_now() - t_out;
        if (pyr_run_report_write(flags.report, &cfg.problem, &cfg.out, &cfg.options, plan, &ri, seconds, gcells, sidecar,
                                 not_converged ? 3 : 0) != PYR_OK)
            failed = "--report: ";
    }
    if (!failed && pyr_output_stage_commit(&stage) != PYR_OK) failed = "";
    pyr_output_stage_abort(&stage);
    pyr_result_abort(&st.result);
    pyr_plan_destroy(&plan);
    for (int i = 0; i < PYR_CLI_FIELDS; i++) pyr_field_destroy(&fields[i]);
    if (failed) return pyr_cli_fail(failed);

    if (ri.host_memory == PYR_HOST_STAGE && info.host_memory == PYR_HOST_PIN && !quiet) fprintf(stderr, "pyrgrid: notice: %s\n", ri.host_note);
    pyr_cli_summary_t sum = {.problem = p, .plan = &info, .backend = info.backend, .run = &ri, .counts = cnt, .halo_sent = ri.halo_sent,
                             .halo_received = ri.halo_received, .from = cfg.out.start_step, .seconds = secs, .gcells = gcells};
    pyr_cli_print_summary(&sum);
    if (not_converged) {
        fprintf(stderr,
                "pyrgrid: error: did not converge: after %lld sweeps (the most, scheme.iterations) a sweep still changes u by "
                "%.6g, more than scheme.tolerance = %g; the result was written. Use more iterations, a larger tolerance%s, or a "
                "good initial guess (initial.kind = file)\n",
                (long long)pyr_result_step_of(&cfg.out, ri.steps), ri.change, p->poisson.tolerance,
                p->precision == PYR_FLOAT && ri.change < 1e-5 ? " (float rounding stops the change near 1e-7 of |u|: use precision = double)" : "");
        return 3;
    }
    return 0;
}

int pyr_cli_plan(int argc, char **argv)
{
    pyr_cli_config_t cfg;
    int quiet;
    run_flags_t flags;
    int rc = parse_args(argc, argv, "plan", &cfg, &quiet, &flags);
    if (rc) return rc < 0 ? PYR_EXIT_OK : rc;
    pyr_cli_wisdom_import();
    unsigned long wisdom_before = pyr_wisdom_store_generation();
    pyr_plan_t *plan = NULL;
    if (pyr_plan_create(&cfg.problem, &cfg.options, &plan) != PYR_OK) return pyr_cli_fail(NULL);
    pyr_cli_wisdom_export_if_changed(wisdom_before);
    if (flags.json) {
        /* the problem as the file states it, the options, the plan of the steps that remain */
        pyr_problem_t whole = cfg.problem;
        whole.steps = cfg.out.end_step;
        const size_t len = pyr_plan_report_json(&whole, &cfg.options, plan, NULL, 0);
        char *text = len ? malloc(len + 1) : NULL;
        if (text) pyr_plan_report_json(&whole, &cfg.options, plan, text, len + 1);
        else pyr_fail(PYR_ERR_NOMEM, "out of host memory writing the plan as JSON");
        if (text) printf("%s\n", text);
        free(text);
        pyr_plan_destroy(&plan);
        return text ? 0 : pyr_cli_fail(NULL);
    }
    pyr_plan_print(plan, stdout);
    /* what `run` says on stderr about the plan's choices (an automatic budget from the host's memory, a missing GPU) */
    pyr_plan_info_t info;
    pyr_plan_get_info(plan, &info);
    if (info.notice && info.notice[0]) printf("notice       %s\n", info.notice);
    print_parts(stdout, "", plan, 1);
    pyr_plan_destroy(&plan);
    return 0;
}
