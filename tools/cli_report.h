/* The reports of `pyrgrid solve` and `pyrgrid frames` (cli_result.c):
 * written as JSON, staged when a stage of outputs is active. */
#ifndef PYR_TOOLS_CLI_REPORT_H
#define PYR_TOOLS_CLI_REPORT_H

#include <stdint.h>

#include "pyrgrid.h"
#include "pyrgrid_frames.h"
#include "pyrgrid_lgs.h"

pyr_status_t pyr_cli_report_solve(const char *path, const char *problem_file, const char *kind, const pyr_lgs_system_t *sys,
                                  const pyr_lgs_options_t *opt, const pyr_lgs_result_t *res, const char *const outputs[4],
                                  int exit_status);
pyr_status_t pyr_cli_report_frames(const char *path, const char *config, const char *const *inputs, int ninputs, int64_t nx, int64_t ny,
                                   int64_t nframes, const pyr_frames_options_t *o, const pyr_frames_stats_t *fs, double seconds,
                                   const char *const outputs[5]);

#endif
