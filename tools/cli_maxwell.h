/* pyrgrid run for the Maxwell scheme (cli_maxwell.c). */
#ifndef PYR_TOOLS_CLI_MAXWELL_H
#define PYR_TOOLS_CLI_MAXWELL_H

#include "io/config.h"

/* Run a parsed and validated Maxwell problem; report: --report's path, or
 * NULL; returns the exit status. */
int pyr_cli_run_maxwell(pyr_config_t *cfg, int quiet, const char *report);

#endif
