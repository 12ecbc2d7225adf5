/* The [frames] section of a problem file and its --set overrides, for
 * `pyrgrid frames`.  Every option of pyr_frames_options_t by its name
 * (history, epsilon, weights, poly_degree, poly_window, reference,
 * reference_every, coarse, max_iterations, tolerance, border, threshold,
 * psf_fwhm, clean, clean_radius, noise_frames, warmup, max_candidates,
 * backend, device, threads), and the files: input (paths or glob patterns,
 * separated by spaces), residual (.fits or .npy; empty: none), shifts,
 * candidates (CSV), snr_image (PNG), max_snr (.fits or .npy), tracks (the
 * candidates linked into tracks: .ecsv, .fits or CSV; empty: none) and the
 * linking's keys link_min_detections, link_max_gap, link_max_speed,
 * link_min_speed, link_max_residual. */
#ifndef PYR_PIPELINES_FRAMES_CONFIG_H
#define PYR_PIPELINES_FRAMES_CONFIG_H

#include "pyrgrid.h"
#include "pyrgrid_frames.h"
#include "pyrgrid_frames_io.h"

typedef struct {
    pyr_frames_options_t o;
    char input[PYR_PATH_MAX];
    char residual[PYR_PATH_MAX], shifts[PYR_PATH_MAX], candidates[PYR_PATH_MAX];
    char snr_image[PYR_PATH_MAX], max_snr[PYR_PATH_MAX];
    char mask_bits[256]; /* the bits of a MASK plane that mark bad pixels (frames_io.h): "all", numbers or plane names */
    pyr_frames_link_options_t link; /* the link_* keys: candidates joined into tracks (frames_link.c) */
    char tracks[PYR_PATH_MAX];      /* the tracks' table ("": no linking) */
} fr_config_t;

void fr_config_default(fr_config_t *c);
/* Read the [frames] section of an INI file (other sections are errors). */
pyr_status_t fr_config_load(fr_config_t *c, const char *path);
/* "frames.key=value" (the section may be left out). */
pyr_status_t fr_config_set(fr_config_t *c, const char *assignment);
/* One key (without "frames.") set on the pipeline's options `o` or the linking's `link` (the other NULL)
 * through fr_config_set, with its checks and messages; they change only when it succeeds. */
pyr_status_t fr_config_set_one(const char *key, const char *value, pyr_frames_options_t *o, pyr_frames_link_options_t *link);

#endif
