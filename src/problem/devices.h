/* The device list of options->devices (run.devices): "all", or GPU indices. */
#ifndef PYR_PROBLEM_DEVICES_H
#define PYR_PROBLEM_DEVICES_H

#include "pyrgrid.h"

/* The most devices one list may name. */
#define PYR_DEVICES_MAX 64

/* The device list of options->devices: "all", or indices "0,1,1".  *n gets
 * the count (at most max); "" gives 0; "all" gives -1.  The message names
 * the entry that is wrong. */
pyr_status_t pyr_parts_parse_devices(const char *text, int *devices, int max, int *n);

#endif
