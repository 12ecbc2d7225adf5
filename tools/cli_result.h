/* The field outputs of `pyrgrid run` (cli_result.c): output.field by its
 * extension (.npy, or .h5 with snapshots inside and an .xmf sidecar),
 * snapshots numbered from a restart's step, and the run report
 * (--report FILE.json).  cli_run.c drives them. */
#ifndef PYR_TOOLS_CLI_RESULT_H
#define PYR_TOOLS_CLI_RESULT_H

#include "problem/config.h"
#include "io/hdf5.h"
#include "io/json.h"
#include "outputs/h5_result.h"
#include "pyrgrid.h"
#include "pyrgrid_output.h"
#include "cli_report.h"

typedef struct {
    const pyr_config_t *cfg;
    pyr_field_t **fields; /* every field of the scheme, in its order (inputs may be NULL for .npy) */
    int nfields;
    int h5;               /* output.field is HDF5 */
    pyr_h5_writer_t *writer;
    int map[PYR_H5_MAX_FIELDS]; /* the file's field k is the scheme's field map[k] (Maxwell: those its problem uses) */
    int nmap;
    char snap_base[PYR_PATH_MAX]; /* .npy snapshots: NAME_000200.npy */
} pyr_cli_result_t;

/* 1 when output.field is HDF5 (its inputs are then made by the program, to be stored). */
int pyr_cli_result_is_h5(const pyr_config_t *cfg);
/* The XDMF sidecar of an HDF5 output.field, or "" (for the early output checks). */
void pyr_cli_result_sidecar(const pyr_config_t *cfg, char *out, size_t size);
/* output.field less a ".npy" ending: what .npy snapshots (NAME_000010.npy)
 * and Maxwell's components (NAME_Ez.npy) are named after. */
void pyr_cli_result_base(const pyr_config_t *cfg, char *out, size_t size);
/* Before the run: an HDF5 output's temporary, its attributes and inputs. */
pyr_status_t pyr_cli_result_open(pyr_cli_result_t *r, const pyr_config_t *cfg, const pyr_plan_t *plan, pyr_field_t **fields, int nfields);
/* A snapshot at step `done` of this run (the restart's step is added). */
pyr_status_t pyr_cli_result_snapshot(pyr_cli_result_t *r, int64_t done);
/* Before a run that writes .npy snapshots every output.every steps, named
 * PREFIX_000010.npy ... for each of `prefixes` (heat and Poisson: output.field
 * less ".npy"; Maxwell: one per component, NAME_Ez): refuses (PYR_ERR_IO) a
 * snapshot that is the same file as an input or another output, named as
 * one or reached through symbolic links, one that exists already as a link
 * to an input or output, and one that is a link to another snapshot. */
pyr_status_t pyr_cli_check_snapshots(const pyr_config_t *cfg, const char *const *prefixes, int nprefixes, const pyr_named_path_t *outs,
                                     int nout, const pyr_named_path_t *ins, int nin);
/* After the run (inside the caller's stage): the final fields. */
pyr_status_t pyr_cli_result_final(pyr_cli_result_t *r, const pyr_run_info_t *run);
void pyr_cli_result_abort(pyr_cli_result_t *r);

/* The step and time a run reaches after `done` steps of its own. */
int64_t pyr_cli_step_of(const pyr_config_t *cfg, int64_t done);
double pyr_cli_time_of(const pyr_config_t *cfg, int64_t done);

/* The body of `pyrgrid run`'s report: problem, options, restart, plan, run,
 * step and time, seconds (plan, initial, execute, output), the rate (cell updates per second), outputs,
 * exit status. */
void pyr_cli_report_run(pyr_json_t *j, const pyr_config_t *cfg, const pyr_plan_t *plan, const pyr_run_info_t *ri, const double t[4],
                        double gcells, const char *sidecar, int status);

/* The common head of a report: command, problem file, versions, machine. */
void pyr_cli_report_begin(pyr_json_t *j, const char *command, const char *source);
/* Its tail: versions and machine, then close and write (staged when a stage is active). */
pyr_status_t pyr_cli_report_end(pyr_json_t *j, const char *path, pyr_backend_kind_t backend, int device);

#endif
