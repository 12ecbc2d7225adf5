/* The device list of a run (run.devices): parsed where the problem file is
 * read, used by the parts of a run over several devices. */
#include "problem/devices.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

pyr_status_t pyr_parts_parse_devices(const char *text, int *devices, int max, int *n)
{
    *n = 0;
    const char *s = text;
    while (isspace((unsigned char)*s)) s++;
    if (!*s) return PYR_OK;
    if (!strncmp(s, "all", 3)) {
        const char *e = s + 3;
        while (isspace((unsigned char)*e)) e++;
        if (*e) return pyr_fail(PYR_ERR_CONFIG, "run.devices = '%s': write all, or GPU indices such as 0,1", text);
        *n = -1;
        return PYR_OK;
    }
    for (;;) {
        while (isspace((unsigned char)*s)) s++;
        if (!isdigit((unsigned char)*s))
            return pyr_fail(PYR_ERR_CONFIG, "run.devices = '%s': '%s' is not a device index; write all, or indices such as 0,1 "
                            "(an index may repeat: 0,0 runs two parts on GPU 0)", text, s);
        char *e;
        long v = strtol(s, &e, 10);
        if (v > 1024) return pyr_fail(PYR_ERR_CONFIG, "run.devices = '%s': %ld is not a device index", text, v);
        if (*n >= max) return pyr_fail(PYR_ERR_CONFIG, "run.devices = '%s': more than %d devices", text, max);
        devices[(*n)++] = (int)v;
        s = e;
        while (isspace((unsigned char)*s)) s++;
        if (!*s) return PYR_OK;
        if (*s != ',') return pyr_fail(PYR_ERR_CONFIG, "run.devices = '%s': separate the indices with commas (0,1)", text);
        s++;
    }
}
