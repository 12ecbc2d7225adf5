/* The benchmarks plan as the pyrgrid program does: with the wisdom file's
 * calibrated constants ($PYRGRID_WISDOM, else the user's cache; the library
 * reads no file by itself, pyrgrid.h), so their automatic choices and model
 * columns are the calibrated ones.  Says on stdout which file was used, or
 * why none was (plans then state that they run on the default constants). */
#ifndef PYR_BENCH_WISDOM_H
#define PYR_BENCH_WISDOM_H

#include <stdio.h>

#include "pyrgrid.h"

static void bench_wisdom_import(void)
{
    char path[4096];
    if (pyr_wisdom_default_path(path, sizeof path) != PYR_OK) {
        printf("wisdom: none (%s): default model constants\n", pyr_last_error());
        return;
    }
    if (pyr_wisdom_import_file(path) != PYR_OK) printf("wisdom: %s rejected (%s): default model constants\n", path, pyr_last_error());
    else printf("wisdom: %s (the calibrated constants where it has them)\n", path);
}

#endif
