/* pyrgrid run under mpirun (one grid over the ranks, include/pyrgrid_mpi.h)
 * and pyrgrid assemble (one .npy from the parts such a run writes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "core/error.h"
#include "io/atomic.h"
#include "io/config.h"
#include "io/npy.h"
#include "io/npy_part.h"
#include "pyrgrid.h"
#ifdef PYR_HAVE_MPI
#include "exec/mpi_internal.h"
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

/* -------------------------------------------------------------------- run */

int pyr_cli_run_mpi(pyr_config_t *cfg, int quiet, const char *unsupported)
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
    /* every output checked before the run: this rank's part (or, on one rank, the field), and the index */
    char part_path[PYR_PATH_MAX + 32] = "", index_path[PYR_PATH_MAX + 32] = "";
    if (st == PYR_OK && unsupported) st = pyr_fail(PYR_ERR_UNSUPPORTED, "%s", unsupported);
    if (st == PYR_OK && cfg->every > 0)
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
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (st == PYR_OK) st = pyr_execute_mpi(p, &cfg->options, comm, NULL, &part, &info);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (st == PYR_OK && cfg->field[0]) st = pyr_write_parts_mpi(cfg->field, part, &info, comm);
    if (st != PYR_OK) {
        if (rank == 0) fprintf(stderr, "pyrgrid: error: %s\n", pyr_last_error());
        rc = PYR_EXIT_ERROR;
    }
    pyr_field_destroy(&part);
    if (rc == PYR_EXIT_OK) {
        /* counters summed over the ranks */
        unsigned long long mine[5] = {info.run.counts.uploaded, info.run.counts.downloaded, info.run.counts.computed, info.run.halo_sent,
                                      info.run.halo_received},
                           all[5];
        MPI_Reduce(mine, all, 5, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, comm);
        double slowest = 0;
        MPI_Reduce(&secs, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
        if (rank == 0) {
            const pyr_run_info_t *ri = &info.run;
            double cells = (double)pyr_problem_interior(p) * (double)ri->steps;
            char grid[96];
            if (p->dims == 1) snprintf(grid, sizeof grid, "%lld", (long long)p->n[0]);
            else if (p->dims == 2) snprintf(grid, sizeof grid, "%lldx%lld", (long long)p->n[1], (long long)p->n[0]);
            else snprintf(grid, sizeof grid, "%lldx%lldx%lld", (long long)p->n[2], (long long)p->n[1], (long long)p->n[0]);
            char stop[160] = "";
            if (ri->checked)
                snprintf(stop, sizeof stop, " change=%.6g%s", ri->change,
                         p->poisson.tolerance > 0 ? (ri->converged ? " converged=yes" : " converged=no") : "");
            printf("pyrgrid: %sranks=%d parts=%d H=%lld exchanges=%lld halo_sent=%llu halo_received=%llu backend=%s grid=%s %s %s=%lld%s "
                   "seconds=%.3f Gcell/s=%.3f uploaded=%llu downloaded=%llu computed=%llu\n",
                   p->equation == PYR_EQ_HEAT ? "" : "equation=poisson ", size, ri->parts, (long long)ri->exchange_height,
                   (long long)ri->exchanges, all[3], all[4], pyr_backend_name(cfg->options.backend == PYR_BACKEND_AUTO
                                                                                  ? (pyr_backend_available(PYR_BACKEND_CUDA) ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU)
                                                                                  : cfg->options.backend),
                   grid, pyr_precision_name(p->precision), p->equation == PYR_EQ_POISSON ? "sweeps" : "steps", (long long)ri->steps, stop, slowest,
                   slowest > 0 ? cells / slowest * 1e-9 : 0.0, all[0], all[1], all[2]);
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
