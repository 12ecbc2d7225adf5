/* pyrgrid run: what its files share (cli_run.c, cli_maxwell.c, cli_mpi.c). */
#ifndef PYR_TOOLS_CLI_RUN_H
#define PYR_TOOLS_CLI_RUN_H

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
    char field[PYR_PATH_MAX], image[PYR_PATH_MAX], probes[PYR_PATH_MAX], source[PYR_PATH_MAX];
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
 * every path of `pyrgrid run` (one process or MPI ranks, every scheme)
 * prints it in the one format docs/cli.md describes. */
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

/* Run a parsed and validated Maxwell problem (cli_maxwell.c); report:
 * --report's path, or NULL; returns the exit status. */
int pyr_cli_run_maxwell(pyr_cli_config_t *cfg, int quiet, const char *report);

/* `pyrgrid run` under an MPI launcher (cli_mpi.c): returns an exit status,
 * or -1 for one process (the ordinary run goes on).  unsupported: NULL, or
 * why this run cannot go over MPI ranks (an output or input only one process
 * can handle); every rank then fails with it. */
int pyr_cli_run_mpi(pyr_cli_config_t *cfg, int quiet, const char *unsupported);

/* Maxwell's outputs (cli_maxwell.c): BASE_Ex.npy (step >= 0: BASE_Ex_000200.npy),
 * and the probes' series as CSV (series[k * nprobes + i] after step k + 1). */
void pyr_cli_maxwell_path(const char *base, int c, int64_t step, char *out, size_t size);
pyr_status_t pyr_cli_maxwell_write_probes(const char *path, const pyr_problem_t *p, const double *series, int64_t nseries, double dt);

/* A run's field before it is written (at a snapshot, at the end):
 * PYR_ERR_NUMERIC, "the fields diverged (non-finite) by step `step`
 * (`when`)" with the first bad node and what would help, when a value is
 * NaN or an infinity. */
pyr_status_t pyr_cli_check_finite(const pyr_problem_t *p, const pyr_field_t *f, const char *name, int64_t step, const char *when);
/* The probes' values of steps first + 1 .. first + count (values[k * nprobes
 * + i]) as a probe hook gets them: PYR_ERR_NUMERIC at the first one that is
 * not finite, naming the step, the probe and what would help. */
pyr_status_t pyr_cli_check_probes(const pyr_cli_config_t *cfg, int64_t first, int64_t count, const double *values, int nprobes);

#endif
