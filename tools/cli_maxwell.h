/* pyrgrid run for the Maxwell scheme (cli_maxwell.c). */
#ifndef PYR_TOOLS_CLI_MAXWELL_H
#define PYR_TOOLS_CLI_MAXWELL_H

#include "problem/config.h"

/* `pyrgrid run` under an MPI launcher (cli_mpi.c): returns an exit status,
 * or -1 for one process (the ordinary run goes on).  unsupported: NULL, or
 * why this run cannot go over MPI ranks (an output or input only one process
 * can handle); every rank then fails with it. */
int pyr_cli_run_mpi(pyr_config_t *cfg, int quiet, const char *unsupported);
/* Maxwell's outputs (cli_maxwell.c): BASE_Ex.npy (step >= 0: BASE_Ex_000200.npy),
 * and the probes' series as CSV (series[k * nprobes + i] after step k + 1). */
void pyr_cli_maxwell_path(const char *base, int c, int64_t step, char *out, size_t size);
pyr_status_t pyr_cli_maxwell_write_probes(const char *path, const pyr_problem_t *p, const double *series, int64_t nseries, double dt);

/* Run a parsed and validated Maxwell problem; report: --report's path, or
 * NULL; returns the exit status. */
int pyr_cli_run_maxwell(pyr_config_t *cfg, int quiet, const char *report);

/* A run's field before it is written (at a snapshot, at the end; cli_run.c
 * too): PYR_ERR_NUMERIC, "the fields diverged (non-finite) by step `step`
 * (`when`)" with the first bad node and what would help, when a value is
 * NaN or an infinity. */
pyr_status_t pyr_cli_check_finite(const pyr_problem_t *p, const pyr_field_t *f, const char *name, int64_t step, const char *when);
/* The probes' values of steps first + 1 .. first + count (values[k * nprobes
 * + i]) as a probe hook gets them: PYR_ERR_NUMERIC at the first one that is
 * not finite, naming the step, the probe and what would help. */
pyr_status_t pyr_cli_check_probes(const pyr_config_t *cfg, int64_t first, int64_t count, const double *values, int nprobes);

#endif
