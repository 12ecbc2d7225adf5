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

/* The clock of a timed run (MEASURE, the calibration's pass of cubes): the
 * times of its first passes' ends, taken by the progress hook. */
typedef struct {
    double t[8];
    int n;
} pyr_pass_clock_t;
int pyr_pass_clock_hook(void *user, int64_t done, int64_t total);

#endif
