/* Sub-commands of the pyrgrid program, one file each under tools/. Each takes
 * the arguments after its name and returns the process exit status. */
#ifndef PYR_TOOLS_CLI_H
#define PYR_TOOLS_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "pyrgrid.h"

int pyr_cli_run(int argc, char **argv);       /* pyrgrid run FILE ...   (cli_run.c)   */
int pyr_cli_plan(int argc, char **argv);      /* pyrgrid plan FILE ...  (cli_run.c)   */
int pyr_cli_solve(int argc, char **argv);     /* pyrgrid solve FILE ... (cli_solve.c) */
int pyr_cli_calibrate(int argc, char **argv); /* pyrgrid calibrate ...  (cli_model.c) */
int pyr_cli_sweep(int argc, char **argv);     /* pyrgrid sweep FILE ... (cli_model.c) */
int pyr_cli_sweep_sizes(int argc, char **argv); /* pyrgrid sweep FILE --sizes ... (cli_sweep_sizes.c) */
int pyr_cli_frames(int argc, char **argv);    /* pyrgrid frames INPUT... (cli_frames.c) */
int pyr_cli_assemble(int argc, char **argv);  /* pyrgrid assemble INDEX OUT.npy (cli_mpi.c) */

/* MPI (cli_mpi.c): the process count an MPI launcher gave in the environment
 * (0: not started by one); a line for `info`.  The run under MPI:
 * cli_run.h. */
int pyr_cli_mpi_launched(void);
void pyr_cli_mpi_describe(FILE *out);

/* Exit statuses of every command (documented in pyrgrid --help and README). */
#define PYR_EXIT_OK 0
#define PYR_EXIT_ERROR 1
#define PYR_EXIT_USAGE 2
#define PYR_EXIT_NOT_CONVERGED 3 /* solve: the iteration stopped before the tolerance was met */
#define PYR_EXIT_INTERRUPTED 130 /* run: Ctrl-C stopped it (the shell's status of a SIGINT) */

/* Propagate a failing status unchanged. */
#define CLI_TRY(expr)                                                        \
    do {                                                                     \
        pyr_status_t cli_try_status_ = (expr);                               \
        if (cli_try_status_ != PYR_OK) return cli_try_status_;               \
    } while (0)

/* Shared by the sub-commands (cli_common.c). */
extern int pyr_cli_verbosity;
/* "pyrgrid: error: " WHAT and the library's last message on stderr; returns
 * PYR_EXIT_ERROR. */
int pyr_cli_fail(const char *what);
/* Read the problem FILE with argv's --set/-s overrides in order (the values
 * of the options in `valued`, a NULL-terminated list, are skipped), import
 * the wisdom, and copy the problem and options out.  0, or 1 after printing
 * the error. */
int pyr_cli_load_problem(const char *file, int argc, char **argv, const char *const *valued, pyr_problem_t *problem, pyr_options_t *options); /* -1 --quiet, 0 default, 1 --verbose */
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
