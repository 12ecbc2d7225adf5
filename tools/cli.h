/* Sub-commands of the pyrgrid program, one file each under tools/. Each takes
 * the arguments after its name and returns the process exit status. */
#ifndef PYR_TOOLS_CLI_H
#define PYR_TOOLS_CLI_H

#include <stdio.h>

#include "plan/longvector.h"
#include "problem/config.h"

int pyr_cli_run(int argc, char **argv);       /* pyrgrid run FILE ...   (cli_run.c)   */
int pyr_cli_plan(int argc, char **argv);      /* pyrgrid plan FILE ...  (cli_run.c)   */
int pyr_cli_solve(int argc, char **argv);     /* pyrgrid solve FILE ... (cli_solve.c) */
int pyr_cli_calibrate(int argc, char **argv); /* pyrgrid calibrate ...  (cli_model.c) */
int pyr_cli_sweep(int argc, char **argv);     /* pyrgrid sweep FILE ... (cli_model.c) */
int pyr_cli_sweep_sizes(int argc, char **argv); /* pyrgrid sweep FILE --sizes ... (cli_sweep_sizes.c) */
int pyr_cli_frames(int argc, char **argv);    /* pyrgrid frames INPUT... (cli_frames.c) */
int pyr_cli_assemble(int argc, char **argv);  /* pyrgrid assemble INDEX OUT.npy (cli_mpi.c) */

/* MPI (cli_mpi.c): the process count an MPI launcher gave in the environment
 * (0: not started by one); `pyrgrid run` under it (returns an exit status,
 * or -1 for one process: the ordinary run goes on); a line for `info`. */
int pyr_cli_mpi_launched(void);
/* unsupported: NULL, or why this run cannot go over MPI ranks (an output or
 * input only one process can handle); every rank then fails with it. */
int pyr_cli_run_mpi(pyr_config_t *cfg, int quiet, const char *unsupported);
/* Maxwell's outputs (cli_maxwell.c): BASE_Ex.npy (step >= 0: BASE_Ex_000200.npy),
 * and the probes' series as CSV (series[k * nprobes + i] after step k + 1). */
void pyr_cli_maxwell_path(const char *base, int c, int64_t step, char *out, size_t size);
pyr_status_t pyr_cli_maxwell_write_probes(const char *path, const pyr_problem_t *p, const double *series, int64_t nseries, double dt);
void pyr_cli_mpi_describe(FILE *out);

/* Exit statuses of every command (documented in pyrgrid --help and README). */
#define PYR_EXIT_OK 0
#define PYR_EXIT_ERROR 1
#define PYR_EXIT_USAGE 2
#define PYR_EXIT_NOT_CONVERGED 3 /* solve: the iteration stopped before the tolerance was met */

/* Shared by the sub-commands (cli_common.c). */
extern int pyr_cli_verbosity; /* -1 --quiet, 0 default, 1 --verbose */
/* The common options and the exit statuses, for every command's --help. */
void pyr_cli_print_common(FILE *out);
/* Consumes -v/--verbose and -q/--quiet: returns 1 when arg was one. */
int pyr_cli_common_option(const char *arg);
/* Import the default wisdom file (pyr_wisdom_default_path) into the
 * process's store; a missing or rejected file is no error here. */
void pyr_cli_wisdom_import(void);
/* A list of positive integers "A,B:C,D:E:S" (B:C steps by 1, or by about
 * (C - B) / (spread - 1) when spread > 1), each at most `most`, into a sorted
 * list without repeats (*out, malloc'd; *n values).  0: not such a list. */
int pyr_cli_parse_ranges(const char *spec, int64_t most, int spread, int64_t **out, int *n);
/* Export the store to the default wisdom file when it changed since the
 * generation `since` (a plan = measure choice); warns on failure (returns 1). */
int pyr_cli_wisdom_export_if_changed(unsigned long since);

#endif
