/* Above the planner and the executor: plan creation with the wisdom,
 * MEASURE, calibration (tune/calibrate.h) and the wisdom itself
 * (tune/wisdom.h). */
#ifndef PYR_TUNE_TUNE_H
#define PYR_TUNE_TUNE_H

#include "plan/model.h"
#include "plan/planner.h"

/* pyr_plan_create of a plan of one device (options->device; run.devices
 * is api/'s and multi/'s, which call this once per part). */
pyr_status_t pyr_plan_create_one(const pyr_problem_t *problem, const pyr_options_t *options, pyr_plan_t **plan);
/* Plan with given model constants instead of this machine's wisdom (tests,
 * calibration, sweeps); otherwise as pyr_plan_create. */
pyr_status_t pyr_plan_create_with_model(const pyr_problem_t *problem, const pyr_options_t *options,
                                        const pyr_model_constants_t *k, pyr_model_form_t form, pyr_plan_t **plan);
/* The same on a given device runtime of options->backend's kind (a test's
 * variant of a backend: its slots, lanes, defaults), which must outlive the plan. */
pyr_status_t pyr_plan_create_on(const pyr_problem_t *problem, const pyr_options_t *options, const pyr_device_ops_t *runtime,
                                const pyr_model_constants_t *k, pyr_model_form_t form, pyr_plan_t **plan);
/* FFTW_MEASURE: time the best predicted candidate of each decomposition and
 * the next best overall (at most 4), then the kernel's variants on the
 * winner; sets the decomposition, height, slots and (unless the caller chose
 * one) the plan's variant. */
pyr_status_t pyr_tune_measure_best(pyr_plan_t *plan, candidates_t *cs, uint64_t budget, pyr_decomp_t *decomp, int64_t *h, int *slots);

/* The candidates worth trying among those a model search saw (sorted by it): `first` (the model's
 * choice), then the cheapest predicted within a factor of the cheapest whose height is well apart from
 * those of the same decomposition and slots already taken; at most max.  Returns how many. */
int pyr_tune_refine_pick(candidates_t *cs, const candidate_t *first, candidate_t *pick, int max);
/* "strips h=12 slots=3, blocks h=8 slots=3" */
void pyr_tune_refine_list(const candidate_t *pick, int n, char *out, size_t size);
/* The candidates a refine plan's run tries: those plan creation named (plan->refine), not a search
 * made again, whose choices could differ from the ones the notice names. */
pyr_status_t pyr_tune_refine_candidates(const pyr_plan_t *plan, candidate_t *pick, int max, int *n);
/* Whether the run can try the first *n candidates: the steps each trial takes (len[i], whole passes
 * ending at the checks and snapshots), *n lowered where the run is too short for all; 0 and *why
 * where it tries none (too short, or the scheme keeps state outside the fields the caller passes). */
int pyr_tune_refine_layout(const pyr_plan_t *plan, candidate_t *pick, int *n, int64_t *len, char *why, size_t size);
/* pyr_execute_fields of a plan of one device whose options.plan_mode is still PYR_PLAN_REFINE (plan
 * creation set it back to estimate where there is nothing to try): the trials, the rest of the steps
 * with the fastest, the winner recorded in the wisdom and made the plan's choice (its mode then
 * estimate), the notice's "refine: ..." telling what was tried and chosen, and why. */
pyr_status_t pyr_tune_refine_execute(pyr_plan_t *plan, pyr_field_t *const *fields, int nfields, const pyr_hooks_t *hooks,
                                     pyr_run_info_t *run);
/* A measured choice into the process's wisdom under the plan's problem and budget (not where the
 * plan's constants were given); fails with *why saying why it was not recorded. */
pyr_status_t pyr_tune_record_choice(const pyr_plan_t *plan, pyr_decomp_t decomp, int64_t h, int slots, char *why, size_t size);

/* The clock of a timed run (MEASURE, the calibration's pass of cubes): the
 * times of its first passes' ends, taken by the progress hook. */
typedef struct {
    double t[8];
    int n;
} pyr_pass_clock_t;
int pyr_pass_clock_hook(void *user, int64_t done, int64_t total);

#endif
