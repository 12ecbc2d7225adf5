/* Inputs of a problem file, once every key is read: the grid's size from
 * initial.file where the file gives none, and restarts, which continue the
 * step count and time of the field they start from.
 *
 * A restart starts from a result: an HDF5 file written by pyrgrid (its step
 * and t; initial.step picks one of its snapshots), or a .npy file with
 * initial.step (and initial.t; heat: default initial.step * dt).
 * scheme.steps (iterations) stays the step the run ends at, so a run
 * restarted from step k runs scheme.steps - k steps, numbers its snapshots
 * from k and records the step and time it reached; it equals the straight
 * run bit for bit.  The checks of a Poisson run with a tolerance, and the
 * snapshots, fall on multiples of check_every and output.every counted from
 * step 0, so a restart must start at such a multiple (an error says so). */
#ifndef PYR_PROBLEM_RESTART_H
#define PYR_PROBLEM_RESTART_H

#include "problem/config.h"

/* After pyr_config_finish: reads initial.file's header (not its values),
 * sets the grid's dims and n from it where the file gives none (a clear
 * error when given ones differ), fills start_step, start_t,
 * start_dataset and end_step, and leaves problem.steps at the steps that
 * remain.  Touches no file unless initial.kind = file. */
pyr_status_t pyr_config_finish_inputs(pyr_config_t *cfg);

#endif
