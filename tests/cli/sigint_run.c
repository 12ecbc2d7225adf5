/* A heat or Poisson run of a problem file through the public API, as a
 * program that honours Ctrl-C runs it: SIGINT is caught for the run
 * (pyr_interrupt_catch), the cancel hook stops the run when it came, and
 * output.field is closed with what the run has (pyr_result_interrupted)
 * inside a stage; the note goes to stderr and the exit status is 130.
 * test_sigint_h5.sh sends the signal.
 *
 * usage: sigint_run PROBLEM.ini [--set section.key=value]... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pyrgrid.h"
#include "pyrgrid_output.h"

typedef struct {
    int64_t stopped_at; /* steps done when the interrupt stopped the run; -1 before */
    pyr_result_t *result;
} run_t;

static pyr_status_t on_snapshot(void *user, const pyr_field_t *field, int64_t done)
{
    (void)field;
    return pyr_result_snapshot(((run_t *)user)->result, done);
}

static int on_cancel(void *user, int64_t done, int64_t total)
{
    (void)total;
    run_t *r = user;
    if (!pyr_interrupt_requested()) return 0;
    r->stopped_at = done;
    return 1;
}

static int fail(const char *what)
{
    fprintf(stderr, "sigint_run: error: %s%s\n", what, pyr_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: sigint_run PROBLEM.ini [--set section.key=value]...\n");
        return 2;
    }
    const char *sets[64];
    int nsets = 0;
    for (int i = 2; i < argc && nsets < 64; i++)
        if (strcmp(argv[i], "--set")) sets[nsets++] = argv[i];
    pyr_atomic_cleanup_on_signals(); /* as the program: a second Ctrl-C removes the temporaries and ends it */
    pyr_problem_file_t *pf = NULL;
    if (pyr_problem_file_load(argv[1], sets, nsets, &pf) != PYR_OK || pyr_problem_file_read_inputs(pf) != PYR_OK)
        return fail("");
    pyr_problem_t *p = pyr_problem_file_problem(pf);
    pyr_problem_outputs_t out;
    if (pyr_problem_file_outputs(pf, &out) != PYR_OK) return fail("");
    pyr_plan_t *plan = NULL;
    if (pyr_plan_create(p, pyr_problem_file_options(pf), &plan) != PYR_OK) return fail("");
    const int nf = pyr_scheme_field_count(p->equation);
    pyr_field_t *fields[8] = {NULL};
    if (nf > 8) return fail("too many fields");
    pyr_status_t st = pyr_field_create(p, &fields[0]);
    if (st == PYR_OK)
        st = out.start_dataset && out.start_dataset[0] ? pyr_field_init_file(fields[0], p, p->init_file, out.start_dataset) : pyr_field_init(fields[0], p);
    pyr_result_t *result = NULL;
    if (st == PYR_OK) st = pyr_result_open(&result, p, &out, plan, fields, nf);
    if (st != PYR_OK) return fail("");
    run_t run = {.stopped_at = -1, .result = result};
    pyr_hooks_t hooks = {.cancel = on_cancel, .snapshot = out.every > 0 ? on_snapshot : NULL, .user = &run};
    pyr_run_info_t ri;
    memset(&ri, 0, sizeof ri);
    pyr_interrupt_catch();
    fprintf(stderr, "sigint_run: running\n");
    st = pyr_execute_fields(plan, fields, nf, &hooks, &ri);
    pyr_interrupt_release();
    int rc = 0;
    pyr_output_stage_t *stage = NULL;
    if (st == PYR_ERR_CANCELLED && run.stopped_at >= 0) {
        char note[1024];
        if (pyr_output_stage_begin(&stage) != PYR_OK || pyr_result_interrupted(result, run.stopped_at, note, sizeof note) != PYR_OK ||
            pyr_output_stage_commit(&stage) != PYR_OK)
            rc = fail("");
        else rc = 130;
        fprintf(stderr, "sigint_run: %s\n", note);
    } else if (st != PYR_OK) {
        rc = fail("");
    } else if (pyr_output_stage_begin(&stage) != PYR_OK || pyr_result_final(result, &ri) != PYR_OK || pyr_output_stage_commit(&stage) != PYR_OK) {
        rc = fail("output.field: ");
    } else {
        fprintf(stderr, "sigint_run: finished at step %lld\n", (long long)pyr_result_step_of(&out, ri.steps));
    }
    pyr_output_stage_abort(&stage);
    pyr_result_abort(&result);
    for (int i = 0; i < 8; i++) pyr_field_destroy(&fields[i]);
    pyr_plan_destroy(&plan);
    pyr_problem_file_destroy(&pf);
    return rc;
}
