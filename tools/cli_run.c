/* pyrgrid run / pyrgrid plan. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_run.h"
#include "pyrgrid.h"
#include "pyrgrid_output.h"
/* an HDF5 result over MPI ranks: the core writes it through the one-file route (multi/ranks.h) */
#include "../src/multi/ranks.h"


static void usage(FILE *out, const char *cmd)
{
    if (!strcmp(cmd, "run"))
        fprintf(out, "usage: pyrgrid run FILE [--set section.key=value]... [-v|-q]\n"
                     "  Solve the problem in FILE (INI; README.md has the keys) and write the outputs it names\n"
                     "  ([output] field, image, every).  One summary line on stdout; a progress bar on stderr\n"
                     "  when it is a terminal and the run takes over a second.\n"
                     "  -s, --set section.key=value  override a key of the file (repeatable, applied in order)\n"
                     "  --report FILE.json           also write a report: problem, plan, counters, timings per stage,\n"
                     "                               Gcell/s, versions, machine and GPU\n"
                     "  --parts                      under mpirun: each rank writes its part NAME.rankNNNN.npy and rank 0\n"
                     "                               their index NAME.parts.json (pyrgrid assemble joins them), for ranks\n"
                     "                               that share no file system; without it the ranks write output.field\n"
                     "                               as one file\n");
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
    int parts;          /* run --parts: over MPI ranks, each rank's part and an index instead of one file */
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
        } else if (run && !strcmp(argv[i], "--parts")) {
            flags->parts = 1;
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
        snprintf(cfg->spectra, sizeof cfg->spectra, "%s", cfg->out.spectra ? cfg->out.spectra : "");
        snprintf(cfg->probes_png, sizeof cfg->probes_png, "%s", cfg->out.probes_png ? cfg->out.probes_png : "");
        snprintf(cfg->spectra_png, sizeof cfg->spectra_png, "%s", cfg->out.spectra_png ? cfg->out.spectra_png : "");
        snprintf(cfg->source, sizeof cfg->source, "%s", cfg->out.source);
        snprintf(cfg->start_dataset, sizeof cfg->start_dataset, "%s", cfg->out.start_dataset);
        cfg->out.field = cfg->field;
        cfg->out.image = cfg->image;
        cfg->out.probes = cfg->probes;
        cfg->out.spectra = cfg->spectra;
        cfg->out.probes_png = cfg->probes_png;
        cfg->out.spectra_png = cfg->spectra_png;
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
    if (ri->mg_sweeps > 0)
        add(line, sizeof line, "%s cycles=%lld sweep_equivalents=%.1f", pyr_precision_name(p->precision), (long long)ri->steps, ri->mg_sweeps);
    else
        add(line, sizeof line, "%s %s=%lld", pyr_precision_name(p->precision), p->equation == PYR_EQ_POISSON ? "sweeps" : "steps", (long long)ri->steps);
    if (s->from > 0) add(line, sizeof line, "from=%lld", (long long)s->from);
    double dt = 0;
    if (p->equation == PYR_EQ_MAXWELL && pyr_problem_time_step(p, &dt) == PYR_OK) add(line, sizeof line, "dt=%.6g", dt);
    if (ri->checked)
        add(line, sizeof line, "%s=%.6g%s", ri->mg_sweeps > 0 ? "residual" : "change", ri->change, p->poisson.tolerance > 0 ? (ri->converged ? " converged=yes" : " converged=no") : "");
    /* how the host grid was reached */
    if (ri->host_memory == PYR_HOST_PIN) add(line, sizeof line, "host=pinned(%.1fs+%.1fs)", ri->pin_seconds, ri->unpin_seconds);
    else if (ri->host_memory == PYR_HOST_STAGE) add(line, sizeof line, "host=staged");
    add(line, sizeof line, "seconds=%.3f Gcell/s=%.3f uploaded=%llu downloaded=%llu computed=%llu redundant=%llu", s->seconds, s->gcells,
        (unsigned long long)s->counts.uploaded, (unsigned long long)s->counts.downloaded, (unsigned long long)s->counts.computed,
        (unsigned long long)s->counts.redundant);
    printf("pyrgrid: %s\n", line);
}


/* -------------------------------------------------------------------- run */

/* One run of a problem of any scheme, in one process or over MPI ranks. */
typedef struct {
    pyr_cli_config_t *cfg;
    pyr_cli_outputs_t o;
    int rank, ranks;      /* ranks 0: one process */
    int parts;            /* over ranks: each rank's part and an index (--parts), not one file */
    pyr_cli_progress_t bar;
    pyr_result_t *result; /* an HDF5 output.field */
    double *series;       /* the probes' series, nseries steps */
    int64_t nseries, cap;
    int64_t stopped_at;   /* steps done when Ctrl-C stopped the run; -1 before */
    /* the files it names, checked before it runs */
    char outs[PYR_CLI_FIELDS][PYR_PATH_MAX + 96], indexes[PYR_CLI_FIELDS][PYR_PATH_MAX + 96], ins[PYR_CLI_FIELDS][PYR_PATH_MAX + 16];
    char prefixes[PYR_CLI_FIELDS][PYR_PATH_MAX + 16], sidecar[PYR_PATH_MAX + 8], sidecar_name[PYR_PATH_MAX + 64];
} run_t;

/* cli_mpi.c: one file at path from every rank's part of the last run (collective) */
pyr_status_t pyr_cli_mpi_write_one(const char *path, const pyr_field_t *part);

static int on_progress(void *user, int64_t done, int64_t total)
{
    pyr_cli_progress_draw(&((run_t *)user)->bar, done, total);
    return 0;
}

/* Ctrl-C during a run with an HDF5 result (pyr_interrupt_catch): stop at the
 * next step the fields hold whole, so that the result keeps what the run has. */
static int on_cancel(void *user, int64_t done, int64_t total)
{
    (void)total;
    run_t *r = user;
    if (!pyr_interrupt_requested()) return 0;
    r->stopped_at = done;
    return 1;
}

/* The state fields before they are written: none diverged.  origin: where
 * the fields' box lies in the grid (a rank's part), so that messages give the
 * whole grid's node. */
static pyr_status_t check_states(const run_t *r, pyr_field_t *const *fields, const int64_t origin[3], int64_t step, const char *when)
{
    const pyr_problem_t *p = &r->cfg->problem;
    pyr_problem_t box = *p;
    for (int a = 0; a < 3; a++) box.origin[a] = p->origin[a] + origin[a];
    for (int k = 0; k < r->o.nstate; k++) {
        const int i = r->o.state[k];
        if (fields[i]) CLI_TRY(pyr_cli_check_finite(&box, fields[i], pyr_scheme_field_name(p->equation, i), step, when));
    }
    return PYR_OK;
}

static pyr_status_t write_npy(const char *path, const pyr_field_t *f)
{
    int64_t shape[3];
    for (int d = 0; d < f->dims; d++) shape[d] = f->n[f->dims - 1 - d];
    return pyr_npy_write(path, f->dims, shape, f->precision, f->data);
}

static pyr_status_t on_snapshot(void *user, pyr_field_t *const *fields, int nfields, int64_t done)
{
    run_t *r = user;
    const pyr_problem_t *p = &r->cfg->problem;
    const int64_t step = pyr_result_step_of(&r->cfg->out, done), at[3] = {0, 0, 0};
    CLI_TRY(check_states(r, fields, at, step, "at a snapshot"));
    if (r->o.h5) return pyr_result_snapshot(r->result, done);
    for (int k = 0; k < r->o.nstate; k++) {
        const int i = r->o.state[k];
        if (i >= nfields || !fields[i]) continue;
        char path[PYR_PATH_MAX + 96];
        pyr_cli_state_path(&r->o, p, r->cfg->field, r->o.base, i, step, path, sizeof path);
        const pyr_status_t w = write_npy(path, fields[i]);
        if (w != PYR_OK) return pyr_fail_context(w, "output.every: ");
    }
    return PYR_OK;
}

static pyr_status_t on_probe(void *user, int64_t first, int64_t count, const double *values, int nprobes)
{
    run_t *r = user;
    if (first != r->nseries) return pyr_fail(PYR_ERR_INTERNAL, "probes: steps from %lld, expected %lld", (long long)first, (long long)r->nseries);
    CLI_TRY(pyr_cli_check_probes(r->cfg, first, count, values, nprobes));
    if (r->nseries + count > r->cap) {
        int64_t cap = r->cap ? 2 * r->cap : 1024;
        while (cap < r->nseries + count) cap *= 2;
        double *g = realloc(r->series, (size_t)(cap * nprobes) * sizeof *g);
        if (!g) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the probes' series (%lld steps)", (long long)(r->nseries + count));
        r->series = g;
        r->cap = cap;
    }
    memcpy(r->series + r->nseries * nprobes, values, (size_t)(count * nprobes) * sizeof *values);
    r->nseries += count;
    return PYR_OK;
}

/* Before anything is computed: every output writable, none the same file as
 * another or as an input, snapshots included.  One process writes the state
 * fields (or the HDF5 result and its sidecar), the image, the probes and the
 * report; over MPI ranks each rank its parts, rank 0 the parts' indexes and
 * the probes. */
static pyr_status_t check_files(run_t *r, const char *report)
{
    const pyr_cli_config_t *cfg = r->cfg;
    const pyr_problem_t *p = &cfg->problem;
    pyr_named_path_t outs[2 * PYR_CLI_FIELDS + 7], ins[PYR_CLI_FIELDS + 6];
    int nout = 0, nin = 0;
    for (int k = 0; k < r->o.nstate && cfg->field[0] && !r->o.h5; k++) {
        char *path = r->outs[k];
        pyr_cli_state_path(&r->o, p, cfg->field, r->o.base, r->o.state[k], -1, path, sizeof r->outs[k]);
        if (r->ranks > 0 && !r->parts) {
            /* one file, which rank 0 makes (under a temporary) and renames */
            outs[nout++] = (pyr_named_path_t){"output.field", r->rank == 0 ? path : NULL};
            continue;
        }
        if (r->ranks > 0) {
            char whole[PYR_PATH_MAX + 96];
            snprintf(whole, sizeof whole, "%s", path);
            pyr_npy_part_names(whole, r->rank, path, sizeof r->outs[k], r->indexes[k], sizeof r->indexes[k]);
        }
        outs[nout++] = (pyr_named_path_t){"output.field", path};
        if (r->ranks > 0) outs[nout++] = (pyr_named_path_t){"the parts index", r->rank == 0 ? r->indexes[k] : NULL};
    }
    /* over ranks, rank 0 writes the HDF5 result and its sidecar */
    if (r->o.h5) outs[nout++] = (pyr_named_path_t){"output.field", r->rank == 0 ? cfg->field : NULL};
    if (r->ranks == 0) outs[nout++] = (pyr_named_path_t){"output.image", cfg->image};
    if (r->sidecar[0]) {
        snprintf(r->sidecar_name, sizeof r->sidecar_name, "the XDMF sidecar of output.field (%s)", cfg->field);
        outs[nout++] = (pyr_named_path_t){r->sidecar_name, r->rank == 0 ? r->sidecar : NULL};
    }
    if (r->rank == 0) outs[nout++] = (pyr_named_path_t){"output.probes", cfg->probes};
    if (r->rank == 0) outs[nout++] = (pyr_named_path_t){"output.probes_png", cfg->probes_png};
    if (r->rank == 0) outs[nout++] = (pyr_named_path_t){"output.spectra", cfg->spectra};
    if (r->rank == 0) outs[nout++] = (pyr_named_path_t){"output.spectra_png", cfg->spectra_png};
    outs[nout++] = (pyr_named_path_t){"--report", report};
    if (p->init == PYR_INIT_FILE)
        for (int k = 0; k < r->o.nstate; k++) {
            pyr_cli_state_path(&r->o, p, p->init_file, p->init_file, r->o.state[k], -1, r->ins[k], sizeof r->ins[k]);
            ins[nin++] = (pyr_named_path_t){"initial.file", r->ins[k]};
        }
    ins[nin++] = (pyr_named_path_t){"the problem file", cfg->source};
    if (p->equation == PYR_EQ_POISSON && p->poisson.rhs == PYR_RHS_FILE) ins[nin++] = (pyr_named_path_t){"rhs.file", p->poisson.rhs_file};
    ins[nin++] = (pyr_named_path_t){"material.eps_file", p->maxwell.eps_file};
    ins[nin++] = (pyr_named_path_t){"material.sigma_file", p->maxwell.sigma_file};
    ins[nin++] = (pyr_named_path_t){"material.mu_file", p->maxwell.mu_file};
    ins[nin++] = (pyr_named_path_t){"material.map", p->maxwell.map_file};
    CLI_TRY(pyr_check_outputs(outs, nout, ins, nin));
    if (cfg->out.every <= 0 || r->o.h5) return PYR_OK;
    /* .npy snapshots: NAME_000010.npy, NAME_Ez_000010.npy ... */
    const char *prefixes[PYR_CLI_FIELDS];
    for (int k = 0; k < r->o.nstate; k++) {
        pyr_cli_state_prefix(&r->o, p, r->o.state[k], r->prefixes[k], sizeof r->prefixes[k]);
        prefixes[k] = r->prefixes[k];
    }
    return pyr_result_check_snapshots(&cfg->out, prefixes, r->o.nstate, outs, nout, ins, nin);
}

/* The backend the ranks ran on: the one asked for, or the automatic choice. */
static pyr_backend_kind_t backend_of(const pyr_options_t *o)
{
    if (o->backend != PYR_BACKEND_AUTO) return o->backend;
    return pyr_backend_available(PYR_BACKEND_CUDA) ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU;
}

/* A run Ctrl-C stopped after r->stopped_at steps: its HDF5 result closed with
 * what it has, marked incomplete, and committed in a stage; the line saying
 * where to restart from on stderr.  Returns the exit status. */
static int interrupted(run_t *r)
{
    char note[PYR_PATH_MAX + 256] = "";
    pyr_output_stage_t *stage = NULL;
    pyr_status_t st = pyr_output_stage_begin(&stage);
    if (st == PYR_OK && (st = pyr_result_interrupted(r->result, r->stopped_at, note, sizeof note)) != PYR_OK)
        pyr_fail_context(st, "output.field: ");
    if (st == PYR_OK) st = pyr_output_stage_commit(&stage);
    pyr_output_stage_abort(&stage);
    if (note[0]) fprintf(stderr, "pyrgrid: %s\n", note);
    return st == PYR_OK ? PYR_EXIT_INTERRUPTED : pyr_cli_fail(NULL);
}

/* Run cfg's problem and write what its scheme writes; one process (ranks =
 * 0), or this rank's part over MPI ranks (every rank calls it: the failures
 * are agreed, so all go on or stop together).  unsupported: NULL, or why the
 * run cannot go over the ranks.  Returns the exit status. */
static int run_problem(pyr_cli_config_t *cfg, int quiet, const char *report, const char *unsupported, int rank, int ranks, int parts)
{
    pyr_problem_t *p = &cfg->problem;
    run_t *r = calloc(1, sizeof *r);
    if (!r) return pyr_cli_fail("out of host memory");
    r->cfg = cfg;
    r->rank = rank;
    r->ranks = ranks;
    r->parts = parts;
    r->stopped_at = -1;
    quiet |= rank != 0; /* one voice: rank 0's (failures are agreed, so it has every rank's) */
    pyr_status_t st = pyr_problem_validate(p);
    if (st == PYR_OK && unsupported) st = pyr_fail(PYR_ERR_UNSUPPORTED, "%s", unsupported);
    if (st == PYR_OK) st = pyr_cli_outputs_of(cfg, &r->o);
    if (st == PYR_OK && cfg->out.every > 0 && ranks > 0)
        st = pyr_fail(PYR_ERR_UNSUPPORTED, "output.every (snapshots) is not supported in runs over several MPI ranks yet; leave it out");
    if (st == PYR_OK && parts && r->o.h5)
        st = pyr_fail(PYR_ERR_CONFIG, "--parts writes each rank's part as NAME.rankNNNN.npy, but output.field = %s is an HDF5 result, which the "
                      "ranks write as one file; leave --parts out, or set output.field = NAME.npy", cfg->field);
    if (st == PYR_OK && cfg->out.every > 0 && !cfg->field[0])
        st = pyr_fail(PYR_ERR_CONFIG, "output.every = %lld writes snapshots named after output.field, which is empty; set output.field = "
                      "NAME.npy (or NAME.h5)", (long long)cfg->out.every);
    if (st == PYR_OK && r->o.nprobes && !cfg->probes[0] && !cfg->probes_png[0] && !quiet)
        fprintf(stderr, "pyrgrid: note: [probe] is set but output.probes is not: the probes' series are not written\n");
    if (st == PYR_OK && !r->o.nprobes && cfg->probes_png[0])
        st = pyr_fail(PYR_ERR_CONFIG, "output.probes_png = %s: the problem has no [probe] (probe1 = Ez 10 20, ...) to plot; add one or "
                                      "leave output.probes_png out", cfg->probes_png);
    const int monitors = p->equation == PYR_EQ_MAXWELL && p->maxwell.ndft + p->maxwell.nflux > 0;
    if (st == PYR_OK && monitors && !cfg->spectra[0] && !r->o.h5 && !quiet)
        fprintf(stderr, "pyrgrid: note: [monitor] is set but neither output.spectra nor an HDF5 output.field is: the spectra are not "
                        "written\n");
    if (st == PYR_OK && !monitors && cfg->spectra[0])
        st = pyr_fail(PYR_ERR_CONFIG, "output.spectra = %s: the problem has no [monitor] (dft1 = ..., flux1 = ...) to take spectra of; "
                                      "add one or leave output.spectra out", cfg->spectra);
    if (st == PYR_OK && cfg->spectra_png[0] && p->maxwell.nflux == 0)
        st = pyr_fail(PYR_ERR_CONFIG, "output.spectra_png = %s: the problem has no flux monitor (flux1 = plane x 40 freqs=...) to plot; "
                                      "add one or leave output.spectra_png out",
                      cfg->spectra_png);
    if (st == PYR_OK) {
        pyr_result_sidecar(p, &cfg->out, r->sidecar, sizeof r->sidecar);
        st = check_files(r, report);
    }
    /* a name whose suffix the program does not write (out.xyz, a.jpg), before anything is computed (after the path checks: an
     * output that is an input is said as such) */
    if (st == PYR_OK) st = pyr_result_check_names(p, &cfg->out);
    st = pyr_cli_mpi_agree(ranks, st);
    if (st == PYR_OK && ranks > 0 && !quiet && cfg->image[0])
        fprintf(stderr, "pyrgrid: output.image is not written by a run over %d ranks (no rank holds the whole grid); %s\n", ranks,
                r->parts ? (r->o.several ? "assemble a component's parts (pyrgrid assemble) to look at it"
                                         : "assemble the parts (pyrgrid assemble) to look at the field")
                         : "draw it from output.field's .npy afterwards");
    if (st == PYR_OK) pyr_cli_wisdom_import(); /* (it clears the last error: not after a failure, whose message is printed below) */

    /* one process: the plan (MPI ranks plan their parts themselves) */
    double t0 = pyr_seconds_now(), seconds[4] = {0, 0, 0, 0}; /* plan, initial fields, execute, outputs */
    pyr_plan_t *plan = NULL;
    pyr_plan_info_t info;
    memset(&info, 0, sizeof info);
    /* where the run puts its monitors' transforms (written as output.spectra, and into an HDF5 result); over ranks, every
     * rank's spectra are made whole by the run (each node's from the rank that owns it), and rank 0 writes them */
    pyr_spectra_t *spectra = NULL;
    if (st == PYR_OK && monitors) {
        st = pyr_spectra_create(p, &spectra);
        if (st == PYR_OK) st = pyr_spectra_attach(p, spectra);
        st = pyr_cli_mpi_agree(ranks, st);
    }
    unsigned long wisdom_gen = 0; /* the wisdom as the plan found it: a plan = refine run records its choice as it runs */
    if (st == PYR_OK && ranks == 0) {
        const unsigned long wisdom_before = pyr_wisdom_store_generation();
        wisdom_gen = wisdom_before;
        st = pyr_plan_create(p, &cfg->options, &plan);
        if (st == PYR_OK) st = pyr_plan_get_info(plan, &info);
        if (st == PYR_OK) {
            if (info.notice && info.notice[0] && !quiet) fprintf(stderr, "pyrgrid: %s\n", info.notice);
            if (pyr_cli_verbosity > 0) {
                char line[256], model[PYR_PATH_MAX + 320];
                describe_plan(&info, line, sizeof line);
                pyr_plan_model_source(plan, model, sizeof model);
                fprintf(stderr, "pyrgrid: plan: %s; model: %s\n", line, model);
                print_parts(stderr, "pyrgrid: ", plan, 0);
            }
            if (cfg->out.start_step > 0 && !quiet && pyr_cli_verbosity > 0)
                fprintf(stderr, "pyrgrid: restart from step %lld of %s: %lld steps to run\n", (long long)cfg->out.start_step, p->init_file,
                        (long long)p->steps);
            pyr_cli_wisdom_export_if_changed(wisdom_before); /* plan = measure recorded its choice */
        }
    }
    seconds[0] = pyr_seconds_now() - t0;

    /* one process: the state fields it starts from, and for an HDF5 result the
     * inputs it stores (the run then uses these, not its own copies) */
    const int nf = pyr_scheme_field_count(p->equation);
    pyr_field_t *fields[PYR_CLI_FIELDS] = {NULL};
    /* Maxwell's fields of initial.kind = zero: pages that read as zero, which an in-core run sets on the
     * device instead of filling them here and uploading them */
    const pyr_ranks_core_t *core = pyr_private_ranks();
    const int zero_start = p->equation == PYR_EQ_MAXWELL && p->init == PYR_INIT_ZERO &&
                           core->size >= offsetof(pyr_ranks_core_t, field_zero) + sizeof core->field_zero && core->field_zero;
    /* heat's and Poisson's built-in initial kinds: the field as its recipe, which an in-core run makes on
     * each device instead of the program making it here and the run uploading it (a host reader before
     * the run makes it first) */
    const int made_later = !zero_start && !cfg->start_dataset[0] &&
                           core->size >= offsetof(pyr_ranks_core_t, field_initial) + sizeof core->field_initial && core->field_initial;
    for (int k = 0; k < r->o.nstate && st == PYR_OK && ranks == 0; k++) {
        const int i = r->o.state[k];
        if (zero_start) {
            st = core->field_zero(p, &fields[i]);
            continue;
        }
        if (made_later && (st = core->field_initial(p, i, &fields[i])) != PYR_OK) break;
        if (fields[i]) continue;
        st = pyr_field_create(p, &fields[i]);
        if (st == PYR_OK)
            st = i == 0 && p->init == PYR_INIT_FILE && cfg->start_dataset[0] ? pyr_field_init_file(fields[i], p, p->init_file, cfg->start_dataset)
                                                                              : pyr_field_init_state(fields[i], p, i);
    }
    for (int i = 0; i < nf && i < PYR_CLI_FIELDS && st == PYR_OK && r->o.h5 && ranks == 0; i++) {
        if (!pyr_scheme_field_input(p->equation, i) || !pyr_problem_field_used(p, i)) continue;
        st = pyr_field_create(p, &fields[i]);
        if (st == PYR_OK) st = pyr_field_init_input(fields[i], p, i);
    }
    if (st == PYR_OK && r->o.h5 && ranks == 0) st = pyr_result_open(&r->result, p, &cfg->out, plan, fields, nf);
    seconds[1] = pyr_seconds_now() - t0 - seconds[0];

    pyr_run_info_t ri;
    memset(&ri, 0, sizeof ri);
    int64_t origin[3] = {0, 0, 0};
    double secs = 0;
    int interrupted_rc = 0; /* Ctrl-C stopped the run: the exit status after closing its result */
    if (st == PYR_OK) {
        pyr_hooks_t hooks = {.progress = on_progress,
                             .user = r,
                             .snapshot_fields = cfg->out.every > 0 ? on_snapshot : NULL,
                             .probe = r->o.nprobes && rank == 0 ? on_probe : NULL,
                             .cancel = r->result ? on_cancel : NULL};
        pyr_cli_progress_begin(&r->bar, quiet);
        /* one process with an HDF5 result: the first Ctrl-C stops the run and the result keeps what it has (a second one ends
         * the program as before); ranks are ended by their launcher */
        if (r->result) pyr_interrupt_catch();
        st = ranks == 0 ? pyr_execute_fields(plan, fields, nf, &hooks, &ri) : pyr_cli_mpi_execute(p, &cfg->options, &hooks, fields, nf, &ri, origin);
        if (r->result) pyr_interrupt_release();
        secs = pyr_cli_progress_end(&r->bar);
        seconds[2] = secs;
        if (st == PYR_ERR_CANCELLED && r->stopped_at >= 0 && r->result) interrupted_rc = interrupted(r);
        /* plan = refine: the run tried candidates and kept the fastest; what it chose (the plan's notice now) and its
         * record in the wisdom */
        if (st == PYR_OK && ranks == 0 && cfg->options.plan_mode == PYR_PLAN_REFINE && pyr_plan_get_info(plan, &info) == PYR_OK) {
            if (info.notice && info.notice[0] && !quiet) fprintf(stderr, "pyrgrid: %s\n", info.notice);
            pyr_cli_wisdom_export_if_changed(wisdom_gen);
        }
        /* no output of diverged values (a grid near the precision's largest number, an oversized source) */
        if (st == PYR_OK) st = pyr_cli_mpi_agree(ranks, check_states(r, fields, origin, pyr_result_step_of(&cfg->out, ri.steps), "the end of the run"));
    }
    const int not_converged = p->equation == PYR_EQ_POISSON && p->poisson.tolerance > 0 && !ri.converged;
    double gcells = secs > 0 ? pyr_cli_cells(p) * (double)ri.steps / secs * 1e-9 : 0.0;

    if (st == PYR_OK && ranks == 0) {
        /* The fields, the sidecar, the image, the probes and the report are
         * committed together: all new, or (on a failure, e.g. a full disk)
         * all as they were. */
        pyr_output_stage_t *stage = NULL;
        st = pyr_output_stage_begin(&stage);
        const double t_out = pyr_seconds_now();
        const int64_t step = pyr_result_step_of(&cfg->out, ri.steps);
        if (st == PYR_OK && r->o.h5 && (st = pyr_result_final(r->result, &ri)) != PYR_OK) pyr_fail_context(st, "output.field: ");
        for (int k = 0; k < r->o.nstate && st == PYR_OK && !r->o.h5 && cfg->field[0]; k++) {
            const int i = r->o.state[k];
            char path[PYR_PATH_MAX + 96];
            pyr_cli_state_path(&r->o, p, cfg->field, r->o.base, i, -1, path, sizeof path);
            if ((st = write_npy(path, fields[i])) != PYR_OK) pyr_fail_context(st, "output.field: ");
        }
        if (st == PYR_OK && cfg->image[0] &&
            (st = pyr_cli_write_image_with(&cfg->out, cfg->image, fields[r->o.image], p, r->o.image, step,
                                          pyr_result_time_of(p, &cfg->out, ri.steps))) != PYR_OK)
            pyr_fail_context(st, "output.image: ");
        double dt = 0;
        if (pyr_problem_time_step(p, &dt) != PYR_OK) pyr_clear_error();
        if (st == PYR_OK && cfg->probes[0] && r->o.nprobes && (st = pyr_cli_write_probes(cfg->probes, p, r->series, r->nseries, dt)) != PYR_OK)
            pyr_fail_context(st, "output.probes: ");
        if (st == PYR_OK && cfg->probes_png[0] && r->o.nprobes &&
            (st = pyr_cli_write_probes_png(&cfg->out, cfg->probes_png, p, r->series, r->nseries, dt)) != PYR_OK)
            pyr_fail_context(st, "output.probes_png: ");
        if (st == PYR_OK && cfg->spectra[0] && spectra && (st = pyr_spectra_write_csv(spectra, cfg->spectra)) != PYR_OK)
            pyr_fail_context(st, "output.spectra: ");
        if (st == PYR_OK && cfg->spectra_png[0] && spectra &&
            (st = pyr_spectra_write_png(spectra, cfg->spectra_png, NULL, cfg->out.image_width)) != PYR_OK)
            pyr_fail_context(st, "output.spectra_png: ");
        if (st == PYR_OK && report) {
            seconds[3] = pyr_seconds_now() - t_out;
            if ((st = pyr_run_report_write(report, p, &cfg->out, &cfg->options, plan, &ri, seconds, gcells, r->sidecar,
                                           not_converged ? PYR_EXIT_NOT_CONVERGED : PYR_EXIT_OK)) != PYR_OK)
                pyr_fail_context(st, "--report: ");
        }
        if (st == PYR_OK) st = pyr_output_stage_commit(&stage);
        pyr_output_stage_abort(&stage);
    }
    if (st == PYR_OK && ranks > 0) {
        /* each rank its part of every state field, rank 0 the indexes and the probes; an HDF5 result in one file, which
         * rank 0 writes from every rank's boxes */
        if (r->o.h5) {
            const pyr_ranks_core_t *c = pyr_private_ranks();
            const pyr_ranks_h5_t job = {sizeof job, cfg->field, p, &cfg->out, fields, nf, &ri, pyr_cli_mpi_partition()};
            c->set_h5(&job);
            st = pyr_cli_mpi_write_one(cfg->field, fields[r->o.state[0]]);
            c->set_h5(NULL);
        }
        for (int k = 0; k < r->o.nstate && st == PYR_OK && cfg->field[0] && !r->o.h5; k++) {
            const int i = r->o.state[k];
            char path[PYR_PATH_MAX + 96];
            pyr_cli_state_path(&r->o, p, cfg->field, r->o.base, i, -1, path, sizeof path);
            st = parts ? pyr_cli_mpi_write_part(path, fields[i]) : pyr_cli_mpi_write_one(path, fields[i]);
        }
        double dt = 0;
        if (pyr_problem_time_step(p, &dt) != PYR_OK) pyr_clear_error();
        pyr_status_t wp = PYR_OK;
        if (st == PYR_OK && rank == 0 && cfg->probes[0] && r->o.nprobes) wp = pyr_cli_write_probes(cfg->probes, p, r->series, r->nseries, dt);
        if (st == PYR_OK && wp == PYR_OK && rank == 0 && cfg->probes_png[0] && r->o.nprobes)
            wp = pyr_cli_write_probes_png(&cfg->out, cfg->probes_png, p, r->series, r->nseries, dt);
        if (st == PYR_OK && wp == PYR_OK && rank == 0 && cfg->spectra[0] && spectra && (wp = pyr_spectra_write_csv(spectra, cfg->spectra)) != PYR_OK)
            pyr_fail_context(wp, "output.spectra: ");
        if (st == PYR_OK && wp == PYR_OK && rank == 0 && cfg->spectra_png[0] && spectra &&
            (wp = pyr_spectra_write_png(spectra, cfg->spectra_png, NULL, cfg->out.image_width)) != PYR_OK)
            pyr_fail_context(wp, "output.spectra_png: ");
        if (st == PYR_OK) st = pyr_cli_mpi_agree(ranks, wp);
    }
    pyr_result_abort(&r->result);
    pyr_plan_destroy(&plan);
    if (spectra) {
        pyr_spectra_attach(p, NULL);
        pyr_spectra_destroy(&spectra);
    }
    for (int i = 0; i < PYR_CLI_FIELDS; i++) pyr_field_destroy(&fields[i]);
    free(r->series);
    if (interrupted_rc) {
        free(r);
        return interrupted_rc;
    }
    if (st != PYR_OK) {
        if (rank == 0) pyr_cli_fail(NULL);
        free(r);
        return PYR_EXIT_ERROR;
    }

    pyr_cli_summary_t sum = {.problem = p, .plan = &info, .backend = info.backend, .run = &ri, .counts = ri.counts, .halo_sent = ri.halo_sent,
                             .halo_received = ri.halo_received};
    if (ranks > 0) {
        pyr_cli_mpi_sum(&sum, &secs); /* the counts and halo traffic of every rank, the slowest rank's seconds */
        sum.plan = NULL;
        sum.backend = backend_of(&cfg->options);
        gcells = secs > 0 ? pyr_cli_cells(p) * (double)ri.steps / secs * 1e-9 : 0.0;
    } else if (ri.host_memory == PYR_HOST_STAGE && info.host_memory == PYR_HOST_PIN && !quiet)
        fprintf(stderr, "pyrgrid: notice: %s\n", ri.host_note);
    sum.from = cfg->out.start_step;
    sum.seconds = secs;
    sum.gcells = gcells;
    if (rank == 0) {
        pyr_cli_print_summary(&sum);
        if (ranks > 0 && pyr_cli_verbosity > 0) fprintf(stderr, "pyrgrid: %s\n", pyr_cli_mpi_partition());
        if (ranks > 0 && cfg->field[0] && !quiet && !parts) {
            if (r->o.several && !r->o.h5)
                fprintf(stderr, "pyrgrid: wrote %s_*.npy, one file per component, from %d ranks\n", r->o.base, ranks);
            else
                fprintf(stderr, "pyrgrid: wrote %s from %d ranks\n", r->o.h5 ? cfg->field : r->outs[0], ranks);
        } else if (ranks > 0 && cfg->field[0] && !quiet) {
            if (r->o.several)
                fprintf(stderr, "pyrgrid: wrote %d parts of each component and their indexes %s_*.parts.json (one .npy: pyrgrid assemble)\n",
                        ranks, r->o.base);
            else
                fprintf(stderr, "pyrgrid: wrote %d parts and their index %s (one .npy: pyrgrid assemble %s OUT.npy)\n", ranks, r->indexes[0],
                        r->indexes[0]);
        }
        if (not_converged)
            fprintf(stderr,
                    "pyrgrid: error: did not converge: after %lld sweeps (the most, scheme.iterations) a sweep still changes u by "
                    "%.6g, more than scheme.tolerance = %g; the result was written. Use more iterations, a larger tolerance%s, or a "
                    "good initial guess (initial.kind = file)\n",
                    (long long)pyr_result_step_of(&cfg->out, ri.steps), ri.change, p->poisson.tolerance,
                    p->precision == PYR_FLOAT && ri.change < 1e-5 ? " (float rounding stops the change near 1e-7 of |u|: use precision = double)"
                                                                  : "");
    }
    free(r);
    return not_converged ? PYR_EXIT_NOT_CONVERGED : PYR_EXIT_OK;
}

/* Why a run cannot go over MPI ranks (an output or input only a process
 * holding the whole grid handles), or NULL. */
static const char *unsupported_over_ranks(const pyr_cli_config_t *cfg, const char *report)
{
    const char *state = pyr_scheme_field_name(cfg->problem.equation, 0);
    if (report) return "--report is not written by runs over several MPI ranks yet; leave it out (rank 0 prints the summary line)";
    if (cfg->start_dataset[0] && state && strcmp(cfg->start_dataset, state) != 0)
        return "initial.step picks a snapshot of an HDF5 result, which runs over several MPI ranks do not read; restart from its final "
               "field (leave initial.step out) or run in one process";
    return NULL;
}

int pyr_cli_run(int argc, char **argv)
{
    pyr_cli_config_t cfg;
    int quiet;
    run_flags_t flags;
    int rc = parse_args(argc, argv, "run", &cfg, &quiet, &flags);
    if (rc) return rc < 0 ? PYR_EXIT_OK : rc;
    /* started by mpirun: one grid over the ranks (cli_mpi.c starts MPI) */
    int rank = 0, ranks = 0;
    const int mpi = pyr_cli_mpi_begin(&rank, &ranks);
    if (mpi > 0) return mpi;
    if (mpi < 0) return run_problem(&cfg, quiet, flags.report, NULL, 0, 0, 0);
    rc = run_problem(&cfg, quiet, flags.report, unsupported_over_ranks(&cfg, flags.report), rank, ranks, flags.parts);
    pyr_cli_mpi_end();
    return rc;
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
