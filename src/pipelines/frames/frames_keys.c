/* Frames options by their [frames] keys (pyrgrid_frames.h): the same
 * handling as a configuration file's line (frames_config.c), for bindings
 * that must not depend on pyr_frames_options_t's layout. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"
#include "pipelines/frames/frames_config.h"
#include "pyrgrid_frames.h"

pyr_status_t pyr_frames_options_create(pyr_frames_options_t **options)
{
    if (!options) return pyr_fail(PYR_ERR_ARG, "pyr_frames_options_create: options is NULL");
    *options = malloc(sizeof **options);
    if (!*options) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    pyr_frames_options_default(*options);
    return PYR_OK;
}

void pyr_frames_options_destroy(pyr_frames_options_t **options)
{
    if (!options) return;
    free(*options);
    *options = NULL;
}

pyr_status_t pyr_frames_options_set(pyr_frames_options_t *options, const char *key, const char *value)
{
    if (!options || !key || !value) return pyr_fail(PYR_ERR_ARG, "pyr_frames_options_set: options, key and value are required");
    const char *k = strncasecmp(key, "frames.", 7) ? key : key + 7;
    if (!strcasecmp(k, "mask_bits"))
        return pyr_fail(PYR_ERR_CONFIG, "frames.mask_bits chooses the bits of the MASK plane that the pyrgrid program reads from "
                                        "calibrated exposures; the library takes no files (mark bad pixels as NaN in the frames)");
    if (!strncasecmp(k, "link_", 5))
        return pyr_fail(PYR_ERR_CONFIG, "frames.%s is a key of the linking, not of the pipeline: set it with "
                                        "pyr_frames_link_options_set (pyrgrid_frames_io.h)",
                        k);
    static const char *const files[] = {"input", "residual", "shifts", "candidates", "snr_image", "max_snr", "tracks"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (!strcasecmp(k, files[i]))
            return pyr_fail(PYR_ERR_CONFIG,
                            "frames.%s names a file: these options take none (the pyrgrid program, and in C "
                            "pyr_frames_config_t of pyrgrid_frames_io.h, read a [frames] file with its files)",
                            k);
    return fr_config_set_one(k, value, options, NULL);
}
