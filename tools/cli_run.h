/* pyrgrid run: what its files share.  One run (cli_run.c) drives every
 * scheme, in one process or over MPI ranks (cli_mpi.c's glue), through the
 * scheme's outputs (cli_result.c). */
#ifndef PYR_TOOLS_CLI_RUN_H
#define PYR_TOOLS_CLI_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "pyrgrid.h"
#include "pyrgrid_output.h"

/* The most fields of a scheme the run holds (Maxwell's are 21). */
#define PYR_CLI_FIELDS 32

/* A problem file as run reads it: the problem and options (copies the
 * command may change) and the [output] keys and restart (out). */
typedef struct {
    pyr_problem_t problem;
    pyr_options_t options;
    char field[PYR_PATH_MAX], image[PYR_PATH_MAX], probes[PYR_PATH_MAX], spectra[PYR_PATH_MAX], source[PYR_PATH_MAX];
    char probes_png[PYR_PATH_MAX], spectra_png[PYR_PATH_MAX];
    char start_dataset[128];
    pyr_problem_outputs_t out; /* strings pointing at the arrays above */
} pyr_cli_config_t;

/* Read FILE with the overrides in order and what its inputs decide
 * (pyr_problem_file_load, pyr_problem_file_read_inputs) into cfg. */
pyr_status_t pyr_cli_config_load(pyr_cli_config_t *cfg, const char *path, const char *const *sets, int nsets);

/* The progress bar of a run on stderr (a terminal only, after
 * PYRGRID_PROGRESS_AFTER seconds, default 1): begin before the run, draw from
 * the progress hook, end after it (cli_run.c). */
typedef struct {
    double start, last_draw, after;
    int tty, quiet, drawn;
} pyr_cli_progress_t;
void pyr_cli_progress_begin(pyr_cli_progress_t *bar, int quiet);
void pyr_cli_progress_draw(pyr_cli_progress_t *bar, int64_t done, int64_t total);
/* The seconds since begin; ends the bar's line. */
double pyr_cli_progress_end(pyr_cli_progress_t *bar);

/* What a run's one summary line says (pyr_cli_print_summary, cli_run.c):
 * every run, one process or MPI ranks, every scheme, prints it in the one
 * format docs/cli.md describes. */
typedef struct {
    const pyr_problem_t *problem;
    const pyr_plan_info_t *plan; /* the method and its decomposition; NULL where no plan is at hand (MPI ranks) */
    pyr_backend_kind_t backend;
    const pyr_run_info_t *run;   /* steps, the stopping test, parts and H, how the host grid was reached */
    int ranks;                   /* MPI ranks, 0 in one process */
    pyr_counters_t counts;       /* summed over the ranks */
    uint64_t halo_sent, halo_received;
    int64_t from;                /* the restart's step (0: none) */
    double seconds, gcells;
} pyr_cli_summary_t;
void pyr_cli_print_summary(const pyr_cli_summary_t *s);

/* ------------------------------------------- the scheme's outputs (cli_result.c) */

/* What a run of the problem writes, from the scheme's fields as the public
 * API describes them: its state fields (pyr_scheme_field_updated) that the
 * problem uses (pyr_problem_field_used), each written as output.field's
 * .npy (a scheme with one state field: output.field itself; with several:
 * NAME_<field>.npy, NAME being output.field less ".npy") or all in one HDF5
 * result; the field output.image shows; the probes' series. */
typedef struct {
    int h5;                       /* output.field is HDF5: every field in it (pyr_result_t) */
    int several;                  /* the scheme has several state fields: .npy names carry the field's */
    int nstate;                   /* state fields the problem uses ... */
    int state[PYR_CLI_FIELDS];    /* ... their numbers in the scheme */
    char base[PYR_PATH_MAX];      /* output.field less ".npy" ("" for none or HDF5) */
    int image;                    /* the field output.image shows */
    int nprobes;                  /* the problem's probes */
} pyr_cli_outputs_t;
/* The outputs of cfg's problem; 0, or PYR_ERR_CONFIG for an output.component
 * that is not a field of the problem. */
pyr_status_t pyr_cli_outputs_of(const pyr_cli_config_t *cfg, pyr_cli_outputs_t *o);
/* The .npy of state field i named after `whole` (output.field, or the
 * prefix of initial.file's components): `whole` itself for a scheme with one
 * state field, else BASE_<field>.npy; step >= 0: its snapshot, BASE_000200.npy
 * or BASE_<field>_000200.npy. */
void pyr_cli_state_path(const pyr_cli_outputs_t *o, const pyr_problem_t *p, const char *whole, const char *base, int i, int64_t step,
                        char *out, size_t size);
/* The snapshots' prefix of state field i of output.field (NAME, NAME_Ez). */
void pyr_cli_state_prefix(const pyr_cli_outputs_t *o, const pyr_problem_t *p, int i, char *out, size_t size);
/* Cell updates a step of the problem makes, for the rate the summary line
 * and the report give (interior nodes; Maxwell: Yee cells). */
double pyr_cli_cells(const pyr_problem_t *p);
/* The image of field i, f (heat map of 2D or the middle z-plane of 3D, line
 * plot of 1D), titled with its name and the step and time t it holds (a
 * scheme without time, Poisson's: its name instead). */
pyr_status_t pyr_cli_write_image(const char *path, const pyr_field_t *f, const pyr_problem_t *p, int i, int64_t step, double t);
/* The same drawn as the outputs say (output.image_width, output.colormap;
 * o NULL: the defaults): a heat map in the grid's coordinates, y upward. */
pyr_status_t pyr_cli_write_image_with(const pyr_problem_outputs_t *o, const char *path, const pyr_field_t *f, const pyr_problem_t *p, int i,
                                      int64_t step, double t);
/* The probes' series as CSV (step,t,then a column per probe;
 * series[k * nprobes + i] after step k + 1). */
pyr_status_t pyr_cli_write_probes(const char *path, const pyr_problem_t *p, const double *series, int64_t nseries, double dt);
/* output.probes_png: a line plot of the same series, one line per probe
 * against t, with a legend (output.image_width wide). */
pyr_status_t pyr_cli_write_probes_png(const pyr_problem_outputs_t *o, const char *path, const pyr_problem_t *p, const double *series,
                                      int64_t nseries, double dt);

/* A run's field before it is written (at a snapshot, at the end):
 * PYR_ERR_NUMERIC, "the fields diverged (non-finite) by step `step`
 * (`when`)" with the first bad node and what would help, when a value is
 * NaN or an infinity. */
pyr_status_t pyr_cli_check_finite(const pyr_problem_t *p, const pyr_field_t *f, const char *name, int64_t step, const char *when);
/* The probes' values of steps first + 1 .. first + count (values[k * nprobes
 * + i]) as a probe hook gets them: PYR_ERR_NUMERIC at the first one that is
 * not finite, naming the step, the probe and what would help. */
pyr_status_t pyr_cli_check_probes(const pyr_cli_config_t *cfg, int64_t first, int64_t count, const double *values, int nprobes);

/* ------------------------------------------------ MPI ranks (cli_mpi.c) */

/* A run started by an MPI launcher: *rank and *ranks of MPI_COMM_WORLD, and
 * 0 (MPI is started: pyr_cli_mpi_end finishes it); -1 for one process (not
 * launched, or one rank: the ordinary run); else an exit status after saying
 * why (a build without MPI, another MPI's launcher). */
int pyr_cli_mpi_begin(int *rank, int *ranks);
void pyr_cli_mpi_end(void);
/* Every rank's status agreed (pyr_mpi_agree; one process: mine). */
pyr_status_t pyr_cli_mpi_agree(int ranks, pyr_status_t mine);
/* pyr_execute_mpi_fields over the ranks: parts[i] this rank's box of state
 * field i, *run what it did, origin[] where its box lies in the grid. */
pyr_status_t pyr_cli_mpi_execute(const pyr_problem_t *p, const pyr_options_t *o, const pyr_hooks_t *hooks, pyr_field_t **parts, int nfields,
                                 pyr_run_info_t *run, int64_t origin[3]);
/* pyr_write_parts_mpi of the last execute's part (collective). */
pyr_status_t pyr_cli_mpi_write_part(const char *path, const pyr_field_t *part);
/* On rank 0: the counts and halo traffic summed over the ranks into sum and
 * the slowest rank's seconds (collective). */
void pyr_cli_mpi_sum(pyr_cli_summary_t *sum, double *seconds);
/* How the last execute cut the grid. */
const char *pyr_cli_mpi_partition(void);

#endif
