/* Run reports (pyrgrid run|solve|frames --report FILE.json, pyrgrid plan
 * --json) and the JSON descriptions of the public API (pyr_problem_json,
 * pyr_plan_json, pyr_run_info_json): the pieces, each written as a member
 * `key` of the object being built (NULL: a value at the top). */
#ifndef PYR_OUTPUTS_REPORT_H
#define PYR_OUTPUTS_REPORT_H

#include "io/json.h"
#include "pyrgrid.h"

void pyr_report_problem(pyr_json_t *j, const char *key, const pyr_problem_t *p);
void pyr_report_options(pyr_json_t *j, const char *key, const pyr_options_t *o);
/* The plan: the whole run, and over several devices each part (api/json.c:
 * the public view of a plan is api/'s). */
void pyr_report_plan(pyr_json_t *j, const char *key, const pyr_plan_t *plan);
/* pyr_plan_info_t's members by name, into the object being built. */
void pyr_report_plan_info(pyr_json_t *j, const pyr_plan_info_t *info, int dims);
void pyr_report_run(pyr_json_t *j, const char *key, const pyr_run_info_t *run);
/* pyrgrid's version, the compiler, HDF5's version, the backends built in. */
void pyr_report_versions(pyr_json_t *j, const char *key);
/* The host (name, CPU threads) and, for the CUDA backend, the GPU. */
void pyr_report_machine(pyr_json_t *j, const char *key, pyr_backend_kind_t backend, int device);

/* The text built in j copied out snprintf-style (pyr_problem_json and the
 * like), j freed; "null" when building it failed. */
size_t pyr_report_finish(pyr_json_t *j, char *text, size_t size);

/* Write a JSON text to path, atomically (io/atomic.h; staged when a stage is
 * active), ending in a newline. */
pyr_status_t pyr_report_write(const char *path, const char *json);

#endif
