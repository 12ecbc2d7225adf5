/* Minimal assertion helpers for pyrgrid's CTest programs.  A failed CHECK
 * prints file:line and the message and counts a failure; CHECK_OK also prints
 * pyr_last_error().  Finish main() with `return check_report();`. */
#ifndef PYR_TESTS_CHECK_H
#define PYR_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "pyrgrid.h"

static int check_failures_ = 0;
static int check_count_ = 0;

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        check_count_++;                                                       \
        if (!(cond)) {                                                        \
            check_failures_++;                                                \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__,  \
                    #cond);                                                   \
            fprintf(stderr, __VA_ARGS__);                                     \
            fputc('\n', stderr);                                              \
        }                                                                     \
    } while (0)

#define CHECK_OK(expr)                                                        \
    do {                                                                      \
        pyr_status_t check_st_ = (expr);                                      \
        check_count_++;                                                       \
        if (check_st_ != PYR_OK) {                                            \
            check_failures_++;                                                \
            fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__,          \
                    __LINE__, #expr, pyr_status_name(check_st_),              \
                    pyr_last_error());                                        \
        }                                                                     \
    } while (0)

/* Expect a specific failing status and that the message mentions `needle`. */
#define CHECK_FAILS(expr, status, needle)                                     \
    do {                                                                      \
        pyr_status_t check_st_ = (expr);                                      \
        check_count_++;                                                       \
        if (check_st_ != (status)) {                                          \
            check_failures_++;                                                \
            fprintf(stderr, "%s:%d: %s returned %s, expected %s (%s)\n",      \
                    __FILE__, __LINE__, #expr, pyr_status_name(check_st_),    \
                    pyr_status_name(status), pyr_last_error());               \
        } else if ((needle) && !strstr(pyr_last_error(), (needle))) {         \
            check_failures_++;                                                \
            fprintf(stderr, "%s:%d: message \"%s\" lacks \"%s\"\n", __FILE__, \
                    __LINE__, pyr_last_error(), (const char *)(needle));      \
        }                                                                     \
    } while (0)

static inline int check_report(void)
{
    if (check_failures_) {
        fprintf(stderr, "%d of %d checks failed\n", check_failures_, check_count_);
        return 1;
    }
    printf("all %d checks passed\n", check_count_);
    return 0;
}

#endif
