/* The benchmarks plan as the pyrgrid program does: with the wisdom file's
 * calibrated constants ($PYRGRID_WISDOM, else the user's cache; the library
 * reads no file by itself, pyrgrid.h), imported as the program imports it
 * (pyr_wisdom_store_import_default), so their automatic choices and model
 * columns are the calibrated ones.  Says on stdout which file was used, or
 * why none was (plans then state that they run on the default constants). */
#ifndef PYR_BENCH_WISDOM_H
#define PYR_BENCH_WISDOM_H

#include <stdio.h>

#include "pyrgrid.h"
#include "tune/wisdom.h"

static void bench_wisdom_import(void)
{
    char path[4096];
    int found = 0;
    if (pyr_wisdom_store_import_default(path, sizeof path, &found) != PYR_OK)
        printf("wisdom: %s%s (%s): default model constants\n", path[0] ? path : "none", path[0] ? " rejected" : "", pyr_last_error());
    else printf("wisdom: %s (%s)\n", path, found ? "the calibrated constants where it has them" : "no such file yet: default model constants");
}

#endif
