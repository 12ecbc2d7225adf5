/* Performance model of a plan (SEEDS.md section A): time from the values a
 * plan moves and computes and machine constants tau_c (per value moved
 * host<->device) and tau_a (per value computed). */
#ifndef PYR_PLAN_MODEL_H
#define PYR_PLAN_MODEL_H

#include "pyrgrid.h"

typedef struct {
    double tau_c; /* seconds per value moved host <-> device */
    double tau_a; /* seconds per value computed */
} pyr_model_constants_t;

/* Documented defaults when nothing was measured on this machine. */
pyr_model_constants_t pyr_model_default(pyr_backend_kind_t backend, int dims, pyr_precision_t precision);

/* Serial form (transfers, then compute): tau = (up + down) tau_c + computed tau_a. */
double pyr_model_serial(const pyr_counters_t *counts, const pyr_model_constants_t *k);

#endif
