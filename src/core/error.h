/* Internal error helpers: set the thread's message and return the code. */
#ifndef PYR_CORE_ERROR_H
#define PYR_CORE_ERROR_H

#include "pyrgrid.h"

#if defined(__GNUC__)
#define PYR_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PYR_PRINTF(a, b)
#endif

/* Record a message for pyr_last_error() and return status, so that a failing
 * path reads `return pyr_fail(PYR_ERR_SIZE, "nx = %lld ...", ...);`. */
pyr_status_t pyr_fail(pyr_status_t status, const char *fmt, ...) PYR_PRINTF(2, 3);

/* Prefix the current message with context ("reading init.npy: " + old). */
pyr_status_t pyr_fail_context(pyr_status_t status, const char *fmt, ...) PYR_PRINTF(2, 3);

/* Propagate a failing status unchanged. */
#define PYR_TRY(expr)                                                        \
    do {                                                                     \
        pyr_status_t pyr_try_status_ = (expr);                               \
        if (pyr_try_status_ != PYR_OK) return pyr_try_status_;               \
    } while (0)

#endif
