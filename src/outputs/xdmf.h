/* The XDMF sidecar of an HDF5 result (NAME.xmf): the result's fields as a
 * time series on the problem's grid, which ParaView and VisIt open
 * directly. */
#ifndef PYR_OUTPUTS_XDMF_H
#define PYR_OUTPUTS_XDMF_H

#include <stdint.h>

#include "pyrgrid.h"

/* One time of the series: its step and time, and the HDF5 group holding
 * the updated fields of that step ("snapshots/000200"; "": the root). */
typedef struct {
    int64_t step;
    double t;
    char group[64];
} pyr_xdmf_step_t;

typedef struct {
    const pyr_problem_t *problem;
    const char *h5_path;       /* the HDF5 file (the sidecar names its base name) */
    int nfields;
    const char *const *name;   /* each field's dataset name */
    const int *updated;        /* 1: a dataset per step, in the step's group; 0: one at the root */
    unsigned inputs;           /* bit i: input field i was written (inputs not written are left out) */
    const pyr_xdmf_step_t *steps;
    int nsteps;
} pyr_xdmf_t;

/* Write the sidecar to xmf_path (atomically, io/atomic.h). */
pyr_status_t pyr_xdmf_write(const char *xmf_path, const pyr_xdmf_t *x);

#endif
