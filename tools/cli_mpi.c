/* pyrgrid run under mpirun (one grid over the ranks, include/pyrgrid_mpi.h)
 * and pyrgrid assemble (one .npy from the parts such a run writes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_run.h"
#include "pyrgrid.h"
#include "pyrgrid_output.h"
#ifdef PYR_HAVE_MPI
#include "pyrgrid_mpi.h"
#endif

/* The process count an MPI launcher (mpirun, mpiexec, srun with PMI) said
 * in the environment before MPI_Init; 0 when none started this process. */
int pyr_cli_mpi_launched(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE", "MPI_LOCALNRANKS", "PMIX_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && atoi(v) >= 1) return atoi(v);
    }
    return getenv("PMIX_RANK") || getenv("PMI_RANK") ? 1 : 0;
}

void pyr_cli_mpi_describe(FILE *out)
{
#ifdef PYR_HAVE_MPI
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(v, &len);
    char *nl = strchr(v, '\n');
    if (nl) *nl = 0;
    char *comma = strchr(v, ',');
    if (comma) *comma = 0;
    fprintf(out, "mpi: compiled in (%s): mpirun -np P pyrgrid run FILE\n", v);
#else
    fprintf(out, "mpi: not compiled in (no MPI at build time; Debian: apt install libopenmpi-dev openmpi-bin, then rebuild)\n");
#endif
}

/* ---------------------------------------------------------------- assemble */

int pyr_cli_assemble(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: pyrgrid assemble INDEX.parts.json OUT.npy [-v|-q]\n"
                   "  One .npy from the parts an MPI run wrote (NAME.rankNNNN.npy and their index\n"
                   "  NAME.parts.json): checks that the parts tile the array once, then streams them\n"
                   "  row by row (no process holds the whole array).\n");
            pyr_cli_print_common(stdout);
            return PYR_EXIT_OK;
        }
        if (pyr_cli_common_option(argv[i])) continue;
        if (argv[i][0] == '-') {
            fprintf(stderr, "pyrgrid: error: unknown option '%s' for assemble; see pyrgrid assemble --help\n", argv[i]);
            return PYR_EXIT_USAGE;
        }
        if (!in) in = argv[i];
        else if (!out) out = argv[i];
        else {
            fprintf(stderr, "pyrgrid: error: assemble takes an index and an output, got a third argument '%s'\n", argv[i]);
            return PYR_EXIT_USAGE;
        }
    }
    if (!in || !out) {
        fprintf(stderr, "pyrgrid: error: assemble needs INDEX.parts.json OUT.npy (see pyrgrid assemble --help)\n");
        return PYR_EXIT_USAGE;
    }
    pyr_named_path_t outs[1] = {{"the output", out}}, ins[1] = {{"the index", in}};
    if (pyr_check_outputs(outs, 1, ins, 1) != PYR_OK || pyr_npy_assemble(in, out) != PYR_OK) {
        fprintf(stderr, "pyrgrid: error: %s\n", pyr_last_error());
        return PYR_EXIT_ERROR;
    }
    if (pyr_cli_verbosity >= 0) fprintf(stderr, "pyrgrid: assembled %s from the parts of %s\n", out, in);
    return PYR_EXIT_OK;
}


#ifdef PYR_HAVE_MPI
typedef struct {
    const pyr_cli_config_t *cfg;
    double *series;
    int64_t n, cap;
} mpi_probes_t;

static pyr_status_t keep_probes(void *user, int64_t first, int64_t count, const double *values, int nprobes)
{
    mpi_probes_t *s = user;
    if (first != s->n) return pyr_fail(PYR_ERR_INTERNAL, "probes: steps from %lld, expected %lld", (long long)first, (long long)s->n);
    CLI_TRY(pyr_cli_check_probes(s->cfg, first, count, values, nprobes));
    if (s->n + count > s->cap) {
        int64_t cap = s->cap ? 2 * s->cap : 1024;
        while (cap < s->n + count) cap *= 2;
        double *g = realloc(s->series, (size_t)(cap * nprobes) * sizeof *g);
        if (!g) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the probes' series");
        s->series = g;
        s->cap = cap;
    }
    memcpy(s->series + s->n * nprobes, values, (size_t)(count * nprobes) * sizeof *values);
    s->n += count;
    return PYR_OK;
}

/* Before a rank writes its part: none of the fields of its box diverged
 * (checked where every rank comes with the same status; the ranks agree, so
 * every one fails with the lowest failing rank's message and none writes). */
static pyr_status_t check_parts(const pyr_cli_config_t *cfg, pyr_field_t *const *part, int nfields, const pyr_mpi_info_t *info, MPI_Comm comm)
{
    const pyr_problem_t *p = &cfg->problem;
    pyr_problem_t box = *p; /* the rank's box of the grid: the nodes' numbers in messages are the whole grid's */
    for (int a = 0; a < 3; a++) box.origin[a] = p->origin[a] + info->lo[a];
    pyr_status_t st = PYR_OK;
    for (int c = 0; c < nfields && st == PYR_OK; c++)
        if (part[c])
            st = pyr_cli_check_finite(&box, part[c], pyr_scheme_field_name(p->equation, c), pyr_result_step_of(&cfg->out, info->run.steps),
                                      "the end of the run");
    return pyr_mpi_agree(comm, st);
}

/* Maxwell over the ranks: each rank writes its box of every component
 * (BASE_Ex.rankNNNN.npy ... and BASE_Ex.parts.json), rank 0 the probes'
 * series (every rank has them; the owner of each probe's node sent it). */
/* The summary line's numbers of a run over the ranks: the counts and the halo
 * traffic summed on rank 0. */
static void summed(pyr_cli_summary_t *sum, const pyr_problem_t *p, const pyr_mpi_info_t *info, int size, MPI_Comm comm)
{
    const pyr_run_info_t *ri = &info->run;
    unsigned long long mine[6] = {ri->counts.uploaded, ri->counts.downloaded, ri->counts.computed, ri->counts.redundant, ri->halo_sent,
                                  ri->halo_received},
                       all[6] = {0, 0, 0, 0, 0, 0};
    MPI_Reduce(mine, all, 6, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, comm);
    memset(sum, 0, sizeof *sum);
    sum->problem = p;
    sum->run = ri;
    sum->ranks = size;
    sum->counts.uploaded = all[0];
    sum->counts.downloaded = all[1];
    sum->counts.computed = all[2];
    sum->counts.redundant = all[3];
    sum->halo_sent = all[4];
    sum->halo_received = all[5];
}

/* The backend the ranks ran on: the one asked for, or the automatic choice. */
static pyr_backend_kind_t backend_of(const pyr_options_t *o)
{
    if (o->backend != PYR_BACKEND_AUTO) return o->backend;
    return pyr_backend_available(PYR_BACKEND_CUDA) ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU;
}

static int run_maxwell(pyr_cli_config_t *cfg, int quiet, MPI_Comm comm, int rank, int size)
{
    pyr_problem_t *p = &cfg->problem;
    char base[PYR_PATH_MAX];
    snprintf(base, sizeof base, "%s", cfg->field);
    size_t bl = strlen(base);
    if (bl > 4 && !strcmp(base + bl - 4, ".npy")) base[bl - 4] = 0;
    pyr_status_t st = PYR_OK;
    if (cfg->out.every > 0)
        st = pyr_fail(PYR_ERR_UNSUPPORTED, "output.every (snapshots) is not supported in runs over several MPI ranks yet; leave it out");
    /* every output checked before the run: this rank's part of each component, the indexes, the probes */
    static char parts[6][PYR_PATH_MAX + 96], indexes[6][PYR_PATH_MAX + 96];
    pyr_named_path_t outs[13];
    int nout = 0;
    for (int c = 0; c < 6 && st == PYR_OK && base[0]; c++) {
        if (!pyr_problem_field_used(p, c)) continue;
        char comp[PYR_PATH_MAX + 32];
        pyr_cli_maxwell_path(base, c, -1, comp, sizeof comp);
        pyr_npy_part_names(comp, rank, parts[c], sizeof parts[c], indexes[c], sizeof indexes[c]);
        outs[nout++] = (pyr_named_path_t){"output.field", parts[c]};
        outs[nout++] = (pyr_named_path_t){"the parts index", rank == 0 ? indexes[c] : NULL};
    }
    if (cfg->probes[0]) outs[nout++] = (pyr_named_path_t){"output.probes", rank == 0 ? cfg->probes : NULL};
    pyr_named_path_t ins[4] = {{"material.eps_file", p->maxwell.eps_file[0] ? p->maxwell.eps_file : NULL},
                               {"material.sigma_file", p->maxwell.sigma_file[0] ? p->maxwell.sigma_file : NULL},
                               {"material.mu_file", p->maxwell.mu_file[0] ? p->maxwell.mu_file : NULL},
                               {"the problem file", cfg->source}};
    if (st == PYR_OK) st = pyr_check_outputs(outs, nout, ins, 4);
    st = pyr_mpi_agree(comm, st);
    if (st == PYR_OK && rank == 0 && !quiet && cfg->image[0])
        fprintf(stderr, "pyrgrid: output.image is not written by a run over %d ranks (no rank holds the whole grid); assemble a component's "
                        "parts (pyrgrid assemble) to look at it\n", size);
    if (st == PYR_OK) pyr_cli_wisdom_import(); /* (it clears the last error) */
    pyr_field_t *part[PYR_CLI_FIELDS] = {NULL};
    pyr_mpi_info_t info;
    memset(&info, 0, sizeof info);
    mpi_probes_t pr = {cfg, NULL, 0, 0};
    pyr_hooks_t hooks = {.user = &pr, .probe = p->maxwell.nprobes && rank == 0 ? keep_probes : NULL};
    const double t0 = pyr_seconds_now();
    if (st == PYR_OK) st = pyr_execute_mpi_fields(p, &cfg->options, comm, &hooks, part, pyr_scheme_field_count(p->equation), &info);
    double secs = pyr_seconds_now() - t0;
    if (st == PYR_OK) st = check_parts(cfg, part, 6, &info, comm);
    for (int c = 0; c < 6 && st == PYR_OK && base[0]; c++) {
        if (!part[c]) continue;
        char comp[PYR_PATH_MAX + 32];
        pyr_cli_maxwell_path(base, c, -1, comp, sizeof comp);
        st = pyr_write_parts_mpi(comp, part[c], &info, comm);
    }
    double dt = 0;
    (void)pyr_problem_time_step(p, &dt);
    pyr_status_t wp = PYR_OK;
    if (st == PYR_OK && rank == 0 && cfg->probes[0] && p->maxwell.nprobes) wp = pyr_cli_maxwell_write_probes(cfg->probes, p, pr.series, pr.n, dt);
    if (st == PYR_OK) st = pyr_mpi_agree(comm, wp);
    for (int c = 0; c < PYR_CLI_FIELDS; c++) pyr_field_destroy(&part[c]);
    free(pr.series);
    if (st != PYR_OK) {
        if (rank == 0) fprintf(stderr, "pyrgrid: error: %s\n", pyr_last_error());
        return PYR_EXIT_ERROR;
    }
    double slowest = 0;
    MPI_Reduce(&secs, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
    pyr_cli_summary_t sum;
    summed(&sum, p, &info, size, comm);
    if (rank == 0) {
        double cells = 1;
        for (int d = 0; d < p->dims; d++) cells *= (double)(p->n[d] - 1);
        cells *= (double)info.run.steps;
        sum.backend = backend_of(&cfg->options);
        sum.seconds = slowest;
        sum.gcells = slowest > 0 ? cells / slowest * 1e-9 : 0.0;
        pyr_cli_print_summary(&sum);
        if (pyr_cli_verbosity > 0) fprintf(stderr, "pyrgrid: %s\n", info.partition);
        if (base[0] && !quiet)
            fprintf(stderr, "pyrgrid: wrote %d parts of each component and their indexes %s_*.parts.json (one .npy: pyrgrid assemble)\n", size,
                    base);
    }
    return PYR_EXIT_OK;
}
#endif

/* -------------------------------------------------------------------- run */

int pyr_cli_run_mpi(pyr_cli_config_t *cfg, int quiet, const char *unsupported)
{
#ifndef PYR_HAVE_MPI
    const int n = pyr_cli_mpi_launched();
    if (n <= 1) return -1; /* one process: the ordinary run */
    (void)cfg;
    (void)quiet;
    (void)unsupported;
    fprintf(stderr, "pyrgrid: error: started by an MPI launcher for %d processes, but this pyrgrid was built without MPI; rebuild it with "
                    "MPI (Debian: apt install libopenmpi-dev openmpi-bin; scripts/setup.sh does), or run it without mpirun\n", n);
    return PYR_EXIT_ERROR;
#else
    int provided = 0, rank = 0, size = 1;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "pyrgrid: error: MPI_Init_thread failed: the MPI runtime could not start this process\n");
        return PYR_EXIT_ERROR;
    }
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const int launched = pyr_cli_mpi_launched();
    if (size == 1 && launched <= 1) {
        /* mpirun -np 1: the ordinary run (its field and image) */
        MPI_Finalize();
        return -1;
    }
    int rc = PYR_EXIT_OK;
    pyr_problem_t *p = &cfg->problem;
    pyr_status_t st = PYR_OK;
    if (launched > 1 && size != launched) {
        /* e.g. MPICH's mpiexec starting an Open MPI build: every process alone */
        if (rank == 0)
            fprintf(stderr, "pyrgrid: error: an MPI launcher started %d processes, but MPI here sees %d; this pyrgrid was built with another "
                            "MPI than the launcher's: use the mpirun of the MPI it was built with\n", launched, size);
        MPI_Finalize();
        return PYR_EXIT_ERROR;
    }
    if (rank != 0) {
        quiet = 1;
        pyr_cli_verbosity = -1; /* one voice: rank 0's (failures are agreed, so it has every rank's) */
    }
    st = pyr_problem_validate(p);
    if (st == PYR_OK && unsupported) st = pyr_fail(PYR_ERR_UNSUPPORTED, "%s", unsupported);
    if (st == PYR_OK && p->equation == PYR_EQ_MAXWELL) {
        rc = run_maxwell(cfg, quiet, comm, rank, size);
        MPI_Finalize();
        return rc;
    }
    /* every output checked before the run: this rank's part (or, on one rank, the field), and the index */
    char part_path[PYR_PATH_MAX + 32] = "", index_path[PYR_PATH_MAX + 32] = "";
    if (st == PYR_OK && cfg->out.every > 0)
        st = pyr_fail(PYR_ERR_UNSUPPORTED, "output.every (snapshots) is not supported in runs over several MPI ranks yet; leave it out");
    if (st == PYR_OK) {
        if (cfg->field[0]) pyr_npy_part_names(cfg->field, rank, part_path, sizeof part_path, index_path, sizeof index_path);
        pyr_named_path_t outs[2] = {{"output.field", part_path}, {"the parts index", rank == 0 ? index_path : NULL}};
        pyr_named_path_t ins[2] = {{"initial.file", p->init == PYR_INIT_FILE ? p->init_file : NULL}, {"the problem file", cfg->source}};
        st = pyr_check_outputs(outs, 2, ins, 2);
    }
    st = pyr_mpi_agree(comm, st);
    if (st == PYR_OK && rank == 0 && !quiet && cfg->image[0])
        fprintf(stderr, "pyrgrid: output.image is not written by a run over %d ranks (no rank holds the whole grid); assemble the parts "
                        "(pyrgrid assemble) to look at the field\n", size);
    if (st == PYR_OK) pyr_cli_wisdom_import(); /* (it clears the last error: not after a failure, whose message is printed below) */
    pyr_field_t *part = NULL;
    pyr_mpi_info_t info;
    memset(&info, 0, sizeof info);
    const double t0 = pyr_seconds_now();
    if (st == PYR_OK) st = pyr_execute_mpi(p, &cfg->options, comm, NULL, &part, &info);
    double secs = pyr_seconds_now() - t0;
    if (st == PYR_OK) st = check_parts(cfg, &part, 1, &info, comm);
    if (st == PYR_OK && cfg->field[0]) st = pyr_write_parts_mpi(cfg->field, part, &info, comm);
    if (st != PYR_OK) {
        if (rank == 0) fprintf(stderr, "pyrgrid: error: %s\n", pyr_last_error());
        rc = PYR_EXIT_ERROR;
    }
    pyr_field_destroy(&part);
    if (rc == PYR_EXIT_OK) {
        /* counters summed over the ranks */
        pyr_cli_summary_t sum;
        summed(&sum, p, &info, size, comm);
        double slowest = 0;
        MPI_Reduce(&secs, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
        if (rank == 0) {
            const pyr_run_info_t *ri = &info.run;
            double cells = (double)pyr_problem_interior(p) * (double)ri->steps;
            sum.backend = backend_of(&cfg->options);
            sum.seconds = slowest;
            sum.gcells = slowest > 0 ? cells / slowest * 1e-9 : 0.0;
            pyr_cli_print_summary(&sum);
            if (pyr_cli_verbosity > 0) fprintf(stderr, "pyrgrid: %s\n", info.partition);
            if (cfg->field[0] && !quiet)
                fprintf(stderr, "pyrgrid: wrote %d parts and their index %s (one .npy: pyrgrid assemble %s OUT.npy)\n", size, index_path, index_path);
            if (p->equation == PYR_EQ_POISSON && p->poisson.tolerance > 0 && !ri->converged) {
                fprintf(stderr, "pyrgrid: error: did not converge: after %lld sweeps (the most, scheme.iterations) a sweep still changes u by %.6g, "
                                "more than scheme.tolerance = %g; the result was written\n", (long long)ri->steps, ri->change, p->poisson.tolerance);
            }
        }
        if (p->equation == PYR_EQ_POISSON && p->poisson.tolerance > 0 && !info.run.converged) rc = PYR_EXIT_NOT_CONVERGED;
    }
    MPI_Finalize();
    return rc;
#endif
}
