/* pyrgrid — grid equations of difference schemes on GPUs and CPUs, including
 * grids larger than the GPU's memory (the pyramid method).
 *
 * The whole public C API.  The life of a run:
 *
 *     problem (what to solve) --> plan (how: method, decomposition, height,
 *     memory budget, backend) --> execute (a driver walks the plan, calling a
 *     backend's operations)
 *
 * Every fallible function returns a pyr_status_t; pyr_last_error() gives a
 * thread-local message a person can act on.  Library code never prints or
 * exits.  Functions that allocate say who owns the result; destroy functions
 * take T ** and set the caller's pointer to NULL. */
#ifndef PYRGRID_H
#define PYRGRID_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PYR_VERSION_MAJOR 0
#define PYR_VERSION_MINOR 1
#define PYR_VERSION_PATCH 0
#define PYR_VERSION_STRING "0.1.0"

/* ------------------------------------------------------------------ status */

/* One list, expanded into the enum and into pyr_status_string(). */
#define PYR_STATUS_LIST(X)                                                   \
    X(PYR_OK, "success")                                                     \
    X(PYR_ERR_ARG, "invalid argument")                                       \
    X(PYR_ERR_CONFIG, "invalid problem file or setting")                     \
    X(PYR_ERR_SIZE, "invalid grid size")                                     \
    X(PYR_ERR_UNSTABLE, "unstable time step")                                \
    X(PYR_ERR_IO, "file could not be read or written")                       \
    X(PYR_ERR_FORMAT, "malformed input file")                                \
    X(PYR_ERR_NOMEM, "out of host memory")                                   \
    X(PYR_ERR_BUDGET, "memory budget too small")                             \
    X(PYR_ERR_NODEVICE, "no usable GPU")                                     \
    X(PYR_ERR_DEVICE, "GPU error")                                           \
    X(PYR_ERR_DEVICE_NOMEM, "out of GPU memory")                             \
    X(PYR_ERR_UNSUPPORTED, "not supported")                                  \
    X(PYR_ERR_NUMERIC, "numerical failure")                                  \
    X(PYR_ERR_DIVERGED, "iteration diverged or stagnated")                   \
    X(PYR_ERR_CANCELLED, "cancelled")                                        \
    X(PYR_ERR_INTERNAL, "internal error")

typedef enum {
#define PYR_X_ENUM(name, text) name,
    PYR_STATUS_LIST(PYR_X_ENUM)
#undef PYR_X_ENUM
    PYR_STATUS_COUNT
} pyr_status_t;

/* Short fixed text of a status code ("memory budget too small"). */
const char *pyr_status_string(pyr_status_t status);
/* Name of a status code ("PYR_ERR_BUDGET"). */
const char *pyr_status_name(pyr_status_t status);
/* Detail of the last failure on this thread: what is wrong, the limit, and
 * what would work.  Valid until the next failing call on this thread. */
const char *pyr_last_error(void);
/* Drop the last error message of this thread. */
void pyr_clear_error(void);

/* --------------------------------------------------------------- precision */

typedef enum { PYR_FLOAT = 0, PYR_DOUBLE = 1 } pyr_precision_t;

/* Bytes of one value: 4 or 8. */
size_t pyr_precision_size(pyr_precision_t p);
/* "float" / "double". */
const char *pyr_precision_name(pyr_precision_t p);
