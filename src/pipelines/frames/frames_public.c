/* The frames pipeline's files on the public API (pyrgrid_frames_io.h):
 * handles over the configuration reader (frames_config.c), the sources and
 * the .npy stack writer (frames_io.c), the FITS writer (io/fits.c), the
 * candidates' table (frames_table.c) and the WCS (frames_wcs.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"
#include "io/fits.h"
#include "io/npy.h"
#include "pipelines/frames/frames_config.h"
#include "pipelines/frames/frames_io.h"
#include "pipelines/frames/frames_table.h"
#include "pipelines/frames/frames_wcs.h"
#include "pyrgrid_frames_io.h"

static int is_npy(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && !strcasecmp(path + n - 4, ".npy");
}

/* ----------------------------------------------------------- configuration */

struct pyr_frames_config {
    fr_config_t c;
};

pyr_status_t pyr_frames_config_create(pyr_frames_config_t **config)
{
    if (!config) return pyr_fail(PYR_ERR_ARG, "pyr_frames_config_create: config is NULL");
    *config = malloc(sizeof **config);
    if (!*config) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    fr_config_default(&(*config)->c);
    return PYR_OK;
}

void pyr_frames_config_destroy(pyr_frames_config_t **config)
{
    if (!config) return;
    free(*config);
    *config = NULL;
}

pyr_status_t pyr_frames_config_load(pyr_frames_config_t *config, const char *path)
{
    if (!config || !path) return pyr_fail(PYR_ERR_ARG, "pyr_frames_config_load: config and path are required");
    return fr_config_load(&config->c, path);
}

pyr_status_t pyr_frames_config_set(pyr_frames_config_t *config, const char *assignment)
{
    if (!config || !assignment) return pyr_fail(PYR_ERR_ARG, "pyr_frames_config_set: config and assignment are required");
    return fr_config_set(&config->c, assignment);
}

const pyr_frames_options_t *pyr_frames_config_options(const pyr_frames_config_t *config) { return config ? &config->c.o : NULL; }

const char *pyr_frames_config_text(const pyr_frames_config_t *config, const char *key)
{
    if (!config || !key) return NULL;
    const char *k = strncasecmp(key, "frames.", 7) ? key : key + 7;
    const fr_config_t *c = &config->c;
    const struct {
        const char *key, *text;
    } keys[] = {{"input", c->input},       {"residual", c->residual}, {"shifts", c->shifts},       {"candidates", c->candidates},
                {"snr_image", c->snr_image}, {"max_snr", c->max_snr},   {"mask_bits", c->mask_bits},
                {"tracks", c->tracks}};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (!strcasecmp(k, keys[i].key)) return keys[i].text;
    return NULL;
}

const pyr_frames_link_options_t *pyr_frames_config_link_options(const pyr_frames_config_t *config)
{
    return config ? &config->c.link : NULL;
}

/* ------------------------------------------------------------------ source */

struct pyr_frames_source {
    fr_source_t *src;
    fr_source_info_t info;
};

pyr_status_t pyr_frames_source_open(const char *const *paths, int npaths, pyr_frames_source_t **source)
{
    if (!source) return pyr_fail(PYR_ERR_ARG, "pyr_frames_source_open: source is NULL");
    *source = NULL;
    if (!paths && npaths > 0) return pyr_fail(PYR_ERR_ARG, "pyr_frames_source_open: paths is NULL");
    pyr_frames_source_t *s = calloc(1, sizeof *s);
    if (!s) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    pyr_status_t st = fr_source_open(paths, npaths, &s->src, &s->info);
    if (st != PYR_OK) {
        free(s);
        return st;
    }
    *source = s;
    return PYR_OK;
}

void pyr_frames_source_close(pyr_frames_source_t **source)
{
    if (!source || !*source) return;
    fr_source_close(&(*source)->src);
    free(*source);
    *source = NULL;
}

void pyr_frames_source_get_info(const pyr_frames_source_t *source, pyr_frames_source_info_t *info)
{
    if (!info) return;
    memset(info, 0, sizeof *info);
    if (!source) return;
    const fr_source_info_t *in = &source->info;
    info->nx = in->nx;
    info->ny = in->ny;
    info->nframes = in->nframes;
    info->type = in->type;
    info->kind = in->kind;
    info->notice = in->notice ? in->notice : "";
    info->has_mask = in->has_mask;
    info->has_variance = in->has_variance;
    info->has_header = in->fits != NULL;
}

size_t pyr_frames_dtype_size(pyr_frames_dtype_t type) { return fr_dtype_size(type); }

pyr_status_t pyr_frames_source_read(pyr_frames_source_t *source, int64_t i, void *buf)
{
    if (!source || !buf) return pyr_fail(PYR_ERR_ARG, "pyr_frames_source_read: source and buf are required");
    return fr_source_read(source->src, i, buf);
}

pyr_status_t pyr_frames_source_set_mask_bits(pyr_frames_source_t *source, const char *spec)
{
    if (!source) return pyr_fail(PYR_ERR_ARG, "pyr_frames_source_set_mask_bits: source is NULL");
    return fr_source_set_mask_bits(source->src, spec ? spec : "");
}

pyr_status_t pyr_frames_source_read_mask(pyr_frames_source_t *source, int64_t i, uint8_t *mask)
{
    if (!source || !mask) return pyr_fail(PYR_ERR_ARG, "pyr_frames_source_read_mask: source and mask are required");
    return fr_source_read_mask(source->src, i, mask);
}

pyr_status_t pyr_frames_source_read_variance(pyr_frames_source_t *source, int64_t i, float *variance)
{
    if (!source || !variance) return pyr_fail(PYR_ERR_ARG, "pyr_frames_source_read_variance: source and variance are required");
    return fr_source_read_variance(source->src, i, variance);
}

void pyr_frames_source_frame_keys(const pyr_frames_source_t *source, int64_t i, char date_obs[25], double *exptime)
{
    date_obs[0] = 0;
    *exptime = NAN;
    if (source && i >= 0 && i < source->info.nframes) fr_source_frame_keys(source->src, i, date_obs, exptime);
}

/* Frame i's header, or a message saying why it cannot be read. */
static pyr_status_t frame_header(pyr_frames_source_t *source, int64_t i, const pyr_fits_info_t **header)
{
    *header = NULL;
    if (i < 0 || i >= source->info.nframes)
        return pyr_fail(PYR_ERR_ARG, "frame %lld is out of range: the sequence has %lld frames", (long long)i,
                        (long long)source->info.nframes);
    if (!source->info.fits) return PYR_OK;
    *header = fr_source_frame_header(source->src, i);
    if (!*header) return pyr_fail_context(PYR_ERR_IO, "frame %lld's header: ", (long long)i);
    return PYR_OK;
}

pyr_status_t pyr_frames_source_frame_mjd(pyr_frames_source_t *source, int64_t i, double *mjd)
{
    if (!source || !mjd) return pyr_fail(PYR_ERR_ARG, "pyr_frames_source_frame_mjd: source and mjd are required");
    *mjd = NAN;
    const pyr_fits_info_t *h;
    PYR_TRY(frame_header(source, i, &h));
    if (h && !fr_header_mjd(h, mjd)) *mjd = NAN;
    return PYR_OK;
}

void pyr_frames_source_frame_name(pyr_frames_source_t *source, int64_t i, char *out, size_t size)
{
    if (!out || !size) return;
    out[0] = 0;
    if (!source) return;
    const char *path = fr_source_frame_path(source->src, i);
    const pyr_fits_info_t *h = source->info.fits && i >= 0 && i < source->info.nframes ? fr_source_frame_header(source->src, i) : NULL;
    if (h) snprintf(out, size, "%s (HDU %d)", path, h->hdu);
    else snprintf(out, size, "%s", path);
}

/* --------------------------------------------------------------------- WCS */

struct pyr_frames_wcs {
    fr_wcs_t *w;
};

pyr_status_t pyr_frames_source_frame_wcs(pyr_frames_source_t *source, int64_t i, pyr_frames_wcs_t **wcs)
{
    if (!source || !wcs) return pyr_fail(PYR_ERR_ARG, "pyr_frames_source_frame_wcs: source and wcs are required");
    *wcs = NULL;
    const pyr_fits_info_t *h;
    PYR_TRY(frame_header(source, i, &h));
    if (!h) return PYR_OK;
    char where[PYR_PATH_MAX + 32];
    snprintf(where, sizeof where, "%s (HDU %d)", fr_source_frame_path(source->src, i), h->hdu);
    fr_wcs_t *w = NULL;
    PYR_TRY(fr_wcs_open(h, where, &w));
    if (!w) return PYR_OK;
    if (!(*wcs = malloc(sizeof **wcs))) {
        fr_wcs_close(&w);
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    }
    (*wcs)->w = w;
    return PYR_OK;
}

pyr_status_t pyr_frames_wcs_sky(pyr_frames_wcs_t *wcs, double x, double y, double *ra, double *dec)
{
    if (!wcs || !ra || !dec) return pyr_fail(PYR_ERR_ARG, "pyr_frames_wcs_sky: wcs, ra and dec are required");
    return fr_wcs_sky(wcs->w, x, y, ra, dec);
}

const char *pyr_frames_wcs_describe(const pyr_frames_wcs_t *wcs) { return wcs ? fr_wcs_describe(wcs->w) : ""; }

void pyr_frames_wcs_destroy(pyr_frames_wcs_t **wcs)
{
    if (!wcs || !*wcs) return;
    fr_wcs_close(&(*wcs)->w);
    free(*wcs);
    *wcs = NULL;
}

/* ----------------------------------------------------------- cubes, images */

struct pyr_frames_cube {
    pyr_fits_writer_t *fits;
    fr_npy_writer_t *npy;
    int64_t next; /* .npy: the frame written next */
};

pyr_status_t pyr_frames_cube_check_output(const char *path)
{
    if (!path || !path[0]) return pyr_fail(PYR_ERR_ARG, "pyr_frames_cube_check_output: no path given");
    return is_npy(path) ? PYR_OK : pyr_fits_check_output(path);
}

static pyr_status_t fits_open(const char *path, int64_t nx, int64_t ny, int64_t nframes, const pyr_frames_source_t *header,
                              const char *const *history, int nhistory, pyr_fits_writer_t **w)
{
    const pyr_fits_info_t *h = header ? header->info.fits : NULL;
    return pyr_fits_writer_open(path, nx, ny, nframes, h ? (const char(*)[81])h->cards : NULL, h ? h->ncards : 0, history,
                                history ? nhistory : 0, w);
}

pyr_status_t pyr_frames_cube_open(const char *path, int64_t nx, int64_t ny, int64_t nframes, const pyr_frames_source_t *header,
                                  const char *const *history, int nhistory, pyr_frames_cube_t **cube)
{
    if (!cube) return pyr_fail(PYR_ERR_ARG, "pyr_frames_cube_open: cube is NULL");
    *cube = NULL;
    if (!path || !path[0]) return pyr_fail(PYR_ERR_ARG, "pyr_frames_cube_open: no path given");
    if (nx < 1 || ny < 1 || nframes < 1)
        return pyr_fail(PYR_ERR_ARG, "%s: a cube of %lld x %lld x %lld values: every side must be at least 1", path, (long long)nx,
                        (long long)ny, (long long)nframes);
    pyr_frames_cube_t *c = calloc(1, sizeof *c);
    if (!c) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    pyr_status_t st = is_npy(path) ? fr_npy_writer_open(path, nframes, ny, nx, &c->npy)
                                   : fits_open(path, nx, ny, nframes, header, history, nhistory, &c->fits);
    if (st != PYR_OK) {
        free(c);
        return st;
    }
    *cube = c;
    return PYR_OK;
}

pyr_status_t pyr_frames_cube_write(pyr_frames_cube_t *cube, int64_t index, const float *data)
{
    if (!cube || !data) return pyr_fail(PYR_ERR_ARG, "pyr_frames_cube_write: cube and data are required");
    if (cube->fits) return pyr_fits_writer_frame(cube->fits, index, data);
    if (index != cube->next)
        return pyr_fail(PYR_ERR_ARG, "a .npy stack is written in order: frame %lld given where frame %lld comes next", (long long)index,
                        (long long)cube->next);
    PYR_TRY(fr_npy_writer_frame(cube->npy, data));
    cube->next++;
    return PYR_OK;
}

pyr_status_t pyr_frames_cube_shifts(pyr_frames_cube_t *cube, int64_t nframes, const float *dx, const float *dy, const int *iterations,
                                    const pyr_frames_source_t *source)
{
    if (!cube || !dx || !dy || !iterations) return pyr_fail(PYR_ERR_ARG, "pyr_frames_cube_shifts: cube, dx, dy and iterations are required");
    if (!cube->fits) return PYR_OK;
    if (!source || !source->info.fits) return pyr_fits_writer_frames_table(cube->fits, nframes, dx, dy, iterations, NULL, NULL);
    char(*dates)[25] = calloc((size_t)nframes, 25);
    double *exp = calloc((size_t)nframes, sizeof *exp);
    pyr_status_t st;
    if (dates && exp) {
        int any_date = 0, any_exp = 0;
        for (int64_t i = 0; i < nframes; i++) {
            pyr_frames_source_frame_keys(source, i, dates[i], &exp[i]);
            any_date |= dates[i][0] != 0;
            any_exp |= isfinite(exp[i]);
        }
        st = pyr_fits_writer_frames_table(cube->fits, nframes, dx, dy, iterations, any_date ? (const char(*)[25])dates : NULL,
                                          any_exp ? exp : NULL);
    } else {
        st = pyr_fail(PYR_ERR_NOMEM, "out of host memory for the FRAMES table of %lld frames", (long long)nframes);
    }
    free(dates);
    free(exp);
    return st;
}

pyr_status_t pyr_frames_cube_commit(pyr_frames_cube_t **cube)
{
    if (!cube || !*cube) return pyr_fail(PYR_ERR_ARG, "pyr_frames_cube_commit: no cube");
    pyr_frames_cube_t *c = *cube;
    pyr_status_t st = c->fits ? pyr_fits_writer_commit(&c->fits) : fr_npy_writer_commit(&c->npy);
    free(c);
    *cube = NULL;
    return st;
}

void pyr_frames_cube_abort(pyr_frames_cube_t **cube)
{
    if (!cube || !*cube) return;
    pyr_fits_writer_abort(&(*cube)->fits);
    fr_npy_writer_abort(&(*cube)->npy);
    free(*cube);
    *cube = NULL;
}

pyr_status_t pyr_frames_image_write(const char *path, int64_t nx, int64_t ny, const float *data, const pyr_frames_source_t *header,
                                    const char *const *history, int nhistory)
{
    if (!path || !path[0] || !data) return pyr_fail(PYR_ERR_ARG, "pyr_frames_image_write: path and data are required");
    if (nx < 1 || ny < 1)
        return pyr_fail(PYR_ERR_ARG, "%s: an image of %lld x %lld values: both sides must be at least 1", path, (long long)nx,
                        (long long)ny);
    if (is_npy(path)) {
        int64_t shape[2] = {ny, nx};
        return pyr_npy_write(path, 2, shape, PYR_FLOAT, data);
    }
    pyr_fits_writer_t *w = NULL;
    PYR_TRY(fits_open(path, nx, ny, 1, header, history, nhistory, &w));
    pyr_status_t st = pyr_fits_writer_frame(w, 0, data);
    if (st == PYR_OK) return pyr_fits_writer_commit(&w);
    pyr_fits_writer_abort(&w);
    return st;
}

/* ------------------------------------------------------------------- table */

struct pyr_frames_table {
    fr_table_t *t;
};

int pyr_frames_table_is_rich(const char *path) { return path ? fr_table_is_rich(path) : 0; }

pyr_status_t pyr_frames_table_open(const char *path, const pyr_frames_table_opts_t *opts, pyr_frames_table_t **table)
{
    if (!table) return pyr_fail(PYR_ERR_ARG, "pyr_frames_table_open: table is NULL");
    *table = NULL;
    if (!path || !path[0]) return pyr_fail(PYR_ERR_ARG, "pyr_frames_table_open: no path given");
    const pyr_frames_table_opts_t none = {0, 0, NULL, NULL, 0};
    pyr_frames_table_t *t = calloc(1, sizeof *t);
    if (!t) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    pyr_status_t st = fr_table_open(path, opts ? opts : &none, &t->t);
    if (st != PYR_OK) {
        free(t);
        return st;
    }
    *table = t;
    return PYR_OK;
}

pyr_status_t pyr_frames_table_add(pyr_frames_table_t *table, const pyr_frames_table_row_t *row)
{
    if (!table || !row) return pyr_fail(PYR_ERR_ARG, "pyr_frames_table_add: table and row are required");
    return fr_table_add(table->t, row);
}

pyr_status_t pyr_frames_table_commit(pyr_frames_table_t **table)
{
    if (!table || !*table) return pyr_fail(PYR_ERR_ARG, "pyr_frames_table_commit: no table");
    pyr_status_t st = fr_table_commit(&(*table)->t);
    free(*table);
    *table = NULL;
    return st;
}

void pyr_frames_table_abort(pyr_frames_table_t **table)
{
    if (!table || !*table) return;
    fr_table_abort(&(*table)->t);
    free(*table);
    *table = NULL;
}
