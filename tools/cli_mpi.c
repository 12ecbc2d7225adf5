/* What pyrgrid run needs of MPI (one grid over the ranks,
 * include/pyrgrid_mpi.h): starting it, agreeing, the run of the ranks'
 * parts, writing them and summing the counters (the run itself is
 * cli_run.c's), and pyrgrid assemble (one .npy from the parts such a run
 * writes).
 *
 * The program links no MPI, so that a run in one process (and --version)
 * maps none of it: this file is built twice.  In the program it finds out
 * whether an MPI launcher started the process and, only then, loads the MPI
 * glue: this same file built with PYR_CLI_MPI_GLUE as a module
 * (pyrgrid_mpi_cli.so, linking libpyrgrid_mpi and MPI) from beside the
 * program (the build tree) or from LIBDIR/pyrgrid (installed), and calls it
 * through the table below. */
#ifdef PYR_CLI_MPI_GLUE
#include <mpi.h>
#endif
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_run.h"
#include "pyrgrid.h"
#include "pyrgrid_output.h"
#ifdef PYR_CLI_MPI_GLUE
#include "pyrgrid_mpi.h"
/* one file from every rank's part: what libpyrgrid_mpi hands the core beyond pyrgrid_mpi.h */
#include "../src/multi/ranks.h"
#endif

/* The glue's table: every call is collective over MPI_COMM_WORLD except
 * begin's failure, version and library. */
typedef struct {
    const char *version; /* PYR_VERSION_STRING the glue was built with: the program's */
    /* MPI_Init_thread (serialized): 0 and the rank and size of MPI_COMM_WORLD, or -1 */
    int (*begin)(int *rank, int *ranks);
    void (*end)(void);
    pyr_status_t (*agree)(pyr_status_t mine);
    pyr_status_t (*execute)(const pyr_problem_t *p, const pyr_options_t *o, const pyr_hooks_t *hooks, pyr_field_t **parts, int nfields,
                            pyr_run_info_t *run, int64_t origin[3]);
    pyr_status_t (*write_part)(const char *path, const pyr_field_t *part);
    /* one file at path (a .npy) from every rank's part of the last execute */
    pyr_status_t (*write_one)(const char *path, const pyr_field_t *part);
    /* the counters of every rank summed, the slowest rank's seconds, on rank 0 */
    void (*sum)(pyr_cli_summary_t *sum, double *seconds);
    const char *(*partition)(void);
    void (*library)(char *text, size_t size); /* the MPI library's name and version */
} cli_mpi_glue_t;

#define GLUE_SYMBOL "pyrgrid_cli_mpi_glue"

#ifdef PYR_CLI_MPI_GLUE
/* ------------------------------------------------------------ the module */

static pyr_mpi_info_t last; /* what the last execute did on this rank (one run per process) */

static int glue_begin(int *rank, int *ranks)
{
    int provided = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) return -1;
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, ranks);
    return 0;
}

static void glue_end(void) { MPI_Finalize(); }

static pyr_status_t glue_agree(pyr_status_t mine) { return pyr_mpi_agree(MPI_COMM_WORLD, mine); }

static pyr_status_t glue_execute(const pyr_problem_t *p, const pyr_options_t *o, const pyr_hooks_t *hooks, pyr_field_t **parts, int nfields,
                                 pyr_run_info_t *run, int64_t origin[3])
{
    memset(&last, 0, sizeof last);
    const pyr_status_t st = pyr_execute_mpi_fields(p, o, MPI_COMM_WORLD, hooks, parts, nfields, &last);
    *run = last.run;
    for (int a = 0; a < 3; a++) origin[a] = last.lo[a];
    return st;
}

static pyr_status_t glue_write_part(const char *path, const pyr_field_t *part) { return pyr_write_parts_mpi(path, part, &last, MPI_COMM_WORLD); }

static pyr_status_t glue_write_one(const char *path, const pyr_field_t *part)
{
    const pyr_ranks_core_t *c = pyr_private_ranks();
    const pyr_ranks_mpi_t *m = c && c->size == sizeof *c ? c->mpi() : NULL;
    pyr_status_t st = PYR_OK;
    if (!m) st = pyr_fail(PYR_ERR_INTERNAL, "libpyrgrid_mpi did not attach to libpyrgrid (two builds mixed?); write the parts (pyrgrid run --parts)");
    st = pyr_mpi_agree(MPI_COMM_WORLD, st);
    if (st != PYR_OK) return st;
    const MPI_Comm comm = MPI_COMM_WORLD;
    return m->write_one(path, part, last.lo, last.hi, &comm);
}

static void glue_sum(pyr_cli_summary_t *sum, double *seconds)
{
    const pyr_run_info_t *ri = &last.run;
    unsigned long long mine[6] = {ri->counts.uploaded, ri->counts.downloaded, ri->counts.computed, ri->counts.redundant, ri->halo_sent,
                                  ri->halo_received},
                       all[6] = {0, 0, 0, 0, 0, 0};
    MPI_Reduce(mine, all, 6, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    double slowest = 0;
    MPI_Reduce(seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    *seconds = slowest;
    sum->ranks = last.ranks;
    sum->counts.uploaded = all[0];
    sum->counts.downloaded = all[1];
    sum->counts.computed = all[2];
    sum->counts.redundant = all[3];
    sum->halo_sent = all[4];
    sum->halo_received = all[5];
}

static const char *glue_partition(void) { return last.partition; }

static void glue_library(char *text, size_t size)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(v, &len);
    char *nl = strchr(v, '\n');
    if (nl) *nl = 0;
    char *comma = strchr(v, ',');
    if (comma) *comma = 0;
    snprintf(text, size, "%s", v);
}

__attribute__((visibility("default"))) const cli_mpi_glue_t pyrgrid_cli_mpi_glue = {
    PYR_VERSION_STRING, glue_begin, glue_end, glue_agree, glue_execute, glue_write_part, glue_write_one, glue_sum, glue_partition, glue_library,
};

#else
/* ----------------------------------------------------------- the program */

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

#ifdef PYR_HAVE_MPI
static const cli_mpi_glue_t *glue;

/* Load the glue once (RTLD_GLOBAL: Open MPI's own plug-ins look for MPI's
 * symbols in the global scope); NULL with the reason in why. */
static const cli_mpi_glue_t *load_glue(char *why, size_t size)
{
    if (glue) return glue;
    char exe[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(why, size, "the program's own path is unknown (/proc/self/exe)");
        return NULL;
    }
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) slash[1] = 0;
    /* the build tree (the module beside the program), then the installed layout */
    const char *const rel[] = {"pyrgrid_mpi_cli.so", PYR_CLI_MPI_MODULE};
    int len = 0;
    why[0] = 0;
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s%s", exe, rel[i]);
        if (access(path, F_OK) != 0) {
            if (len >= 0 && (size_t)len < size) len += snprintf(why + len, size - (size_t)len, "%s%s: not found", len ? "; " : "", path);
            continue;
        }
        void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
        const cli_mpi_glue_t *g = h ? (const cli_mpi_glue_t *)dlsym(h, GLUE_SYMBOL) : NULL;
        if (g && !strcmp(g->version, PYR_VERSION_STRING)) return glue = g;
        if (len >= 0 && (size_t)len < size)
            len += snprintf(why + len, size - (size_t)len, "%s%s: %s", len ? "; " : "", path,
                            !h ? dlerror() : !g ? "not pyrgrid's MPI module" : "of another pyrgrid version (install the program and its module together)");
        if (h) dlclose(h);
    }
    return NULL;
}
#endif

void pyr_cli_mpi_describe(FILE *out)
{
#ifdef PYR_HAVE_MPI
    char why[2 * PATH_MAX + 256], v[256];
    const cli_mpi_glue_t *g = load_glue(why, sizeof why);
    if (g) {
        g->library(v, sizeof v);
        fprintf(out, "mpi: compiled in (%s): mpirun -np P pyrgrid run FILE\n", v);
    } else {
        fprintf(out, "mpi: compiled in, but the program's MPI module cannot be loaded: %s\n", why);
    }
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
/* The run itself is cli_run.c's, for one process and for ranks alike; here
 * is what MPI adds: starting it, agreeing, the parts and the sums. */

int pyr_cli_mpi_begin(int *rank, int *ranks)
{
    *rank = 0;
    *ranks = 0;
    const int launched = pyr_cli_mpi_launched();
#ifndef PYR_HAVE_MPI
    if (launched <= 1) return -1; /* one process: the ordinary run */
    fprintf(stderr, "pyrgrid: error: started by an MPI launcher for %d processes, but this pyrgrid was built without MPI; rebuild it with "
                    "MPI (Debian: apt install libopenmpi-dev openmpi-bin; scripts/setup.sh does), or run it without mpirun\n", launched);
    return PYR_EXIT_ERROR;
#else
    if (!launched) return -1;
    char why[2 * PATH_MAX + 256];
    if (!load_glue(why, sizeof why)) {
        if (launched <= 1) return -1; /* one process: the ordinary run needs no MPI */
        fprintf(stderr, "pyrgrid: error: started by an MPI launcher for %d processes, but the program's MPI module (which links "
                        "libpyrgrid_mpi and MPI) cannot be loaded: %s; install pyrgrid with cmake --install, or run it without mpirun\n",
                launched, why);
        return PYR_EXIT_ERROR;
    }
    int r = 0, size = 1;
    if (glue->begin(&r, &size) != 0) {
        fprintf(stderr, "pyrgrid: error: MPI_Init_thread failed: the MPI runtime could not start this process\n");
        return PYR_EXIT_ERROR;
    }
    if (size == 1 && launched <= 1) {
        /* mpirun -np 1: the ordinary run (its field and image) */
        glue->end();
        return -1;
    }
    if (launched > 1 && size != launched) {
        /* e.g. MPICH's mpiexec starting an Open MPI build: every process alone */
        if (r == 0)
            fprintf(stderr, "pyrgrid: error: an MPI launcher started %d processes, but MPI here sees %d; this pyrgrid was built with another "
                            "MPI than the launcher's: use the mpirun of the MPI it was built with\n", launched, size);
        glue->end();
        return PYR_EXIT_ERROR;
    }
    if (r != 0) pyr_cli_verbosity = -1; /* one voice: rank 0's */
    *rank = r;
    *ranks = size;
    return 0;
#endif
}

void pyr_cli_mpi_end(void)
{
#ifdef PYR_HAVE_MPI
    if (glue) glue->end();
#endif
}

pyr_status_t pyr_cli_mpi_agree(int ranks, pyr_status_t mine)
{
#ifdef PYR_HAVE_MPI
    if (ranks > 0 && glue) return glue->agree(mine);
#endif
    (void)ranks;
    return mine;
}

pyr_status_t pyr_cli_mpi_execute(const pyr_problem_t *p, const pyr_options_t *o, const pyr_hooks_t *hooks, pyr_field_t **parts, int nfields,
                                 pyr_run_info_t *run, int64_t origin[3])
{
#ifdef PYR_HAVE_MPI
    if (glue) return glue->execute(p, o, hooks, parts, nfields, run, origin);
#endif
    (void)p, (void)o, (void)hooks, (void)parts, (void)nfields, (void)run, (void)origin;
    return pyr_fail(PYR_ERR_UNSUPPORTED, "this pyrgrid was built without MPI");
}

pyr_status_t pyr_cli_mpi_write_part(const char *path, const pyr_field_t *part)
{
#ifdef PYR_HAVE_MPI
    if (glue) return glue->write_part(path, part);
#endif
    (void)path, (void)part;
    return pyr_fail(PYR_ERR_UNSUPPORTED, "this pyrgrid was built without MPI");
}

pyr_status_t pyr_cli_mpi_write_one(const char *path, const pyr_field_t *part)
{
#ifdef PYR_HAVE_MPI
    if (glue) return glue->write_one(path, part);
#endif
    (void)path, (void)part;
    return pyr_fail(PYR_ERR_UNSUPPORTED, "this pyrgrid was built without MPI");
}

void pyr_cli_mpi_sum(pyr_cli_summary_t *sum, double *seconds)
{
#ifdef PYR_HAVE_MPI
    if (glue) glue->sum(sum, seconds);
#endif
    (void)sum, (void)seconds;
}

const char *pyr_cli_mpi_partition(void)
{
#ifdef PYR_HAVE_MPI
    if (glue) return glue->partition();
#endif
    return "";
}

#endif
