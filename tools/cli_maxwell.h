/* pyrgrid run for the Maxwell scheme (cli_maxwell.c). */
#ifndef PYR_TOOLS_CLI_MAXWELL_H
#define PYR_TOOLS_CLI_MAXWELL_H

#include "problem/config.h"

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
