/* The candidates table (frames_table.h). */
#include "pipelines/frames/frames_table.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"
#include "io/atomic.h"
#include "io/fits.h"

enum { T_CSV, T_ECSV, T_FITS };

struct fr_table {
    int format;
    fr_table_opts_t o;
    char *path;
    pyr_atomic_file_t af; /* CSV, ECSV: rows as they come */
    fr_table_row_t *rows; /* FITS: written whole at commit */
    char wcs[96], positions[96]; /* the options' strings, kept */
    int64_t n, cap;
};

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcasecmp(s + n - m, suffix);
}

static int format_of(const char *path)
{
    if (ends_with(path, ".ecsv")) return T_ECSV;
    if (ends_with(path, ".fits") || ends_with(path, ".fit")) return T_FITS;
    return T_CSV;
}

int fr_table_is_rich(const char *path) { return format_of(path) != T_CSV; }

/* The columns, in order, with their units and descriptions. */
typedef struct {
    const char *name, *unit, *ecsv_type;
    char fits_type;
    char description[160];
} column_t;

static int columns(const fr_table_opts_t *o, column_t *c)
{
    int n = 0;
    c[n++] = (column_t){"frame", NULL, "int64", 'J', "index of the frame in the sequence (0-based)"};
    if (o->mjd) {
        c[n] = (column_t){"mjd", "d", "float64", 'D', ""};
        snprintf(c[n++].description, sizeof c[0].description,
                 "time of the frame: MJD-OBS or DATE-OBS of its header (a cube's frames share its header)");
    }
    c[n] = (column_t){"x", "pix", "float64", 'D', ""};
    snprintf(c[n++].description, sizeof c[0].description,
             "position along NAXIS1 in %s pixel grid, 0-based (the first pixel's centre is 0; FITS's is 1)",
             o->positions);
    c[n] = (column_t){"y", "pix", "float64", 'D', ""};
    snprintf(c[n++].description, sizeof c[0].description, "position along NAXIS2, 0-based like x");
    if (o->sky) {
        c[n] = (column_t){"ra", "deg", "float64", 'D', ""};
        snprintf(c[n++].description, sizeof c[0].description, "right ascension of (x, y) by the WCS (%s, wcslib)", o->wcs);
        c[n] = (column_t){"dec", "deg", "float64", 'D', ""};
        snprintf(c[n++].description, sizeof c[0].description, "declination of (x, y) by the WCS");
    }
    c[n++] = (column_t){"flux", NULL, "float64", 'E', "matched-filter flux: the object's sum over pixels in the frames' unit"};
    c[n++] = (column_t){"snr", NULL, "float64", 'E', "matched-filter signal to noise"};
    if (o->track) c[n++] = (column_t){"track", NULL, "int64", 'J', "the track's id in the tracks table (-1: in none)"};
    return n;
}

/* A YAML single-quoted scalar: quotes doubled. */
static void yaml_quoted(FILE *fp, const char *s)
{
    fputc('\'', fp);
    for (; *s; s++) {
        if (*s == '\'') fputc('\'', fp);
        fputc(*s, fp);
    }
    fputc('\'', fp);
}

pyr_status_t fr_table_open(const char *path, const fr_table_opts_t *opts, fr_table_t **tp)
{
    *tp = NULL;
    fr_table_t *t = calloc(1, sizeof *t);
    if (!t || !(t->path = strdup(path))) {
        free(t);
        return pyr_fail(PYR_ERR_NOMEM, "out of memory");
    }
    t->format = format_of(path);
    t->o = *opts;
    if (t->format == T_CSV) t->o.sky = t->o.mjd = 0; /* today's columns (and the track's, when linked) */
    snprintf(t->wcs, sizeof t->wcs, "%s", opts->wcs ? opts->wcs : "");
    snprintf(t->positions, sizeof t->positions, "%s", opts->positions ? opts->positions : "the frame's");
    t->o.wcs = t->wcs;
    t->o.positions = t->positions;
    if (t->format == T_FITS) {
        *tp = t;
        return pyr_fits_check_output(path);
    }
    pyr_status_t st = pyr_atomic_open(&t->af, path);
    if (st != PYR_OK) {
        free(t->path);
        free(t);
        return st;
    }
    FILE *fp = t->af.fp;
    if (t->format == T_CSV) {
        fprintf(fp, "frame,x,y,flux,snr%s\n", t->o.track ? ",track" : "");
    } else {
        column_t c[10];
        int n = columns(&t->o, c);
        fprintf(fp, "# %%ECSV 1.0\n# ---\n# datatype:\n");
        for (int i = 0; i < n; i++) {
            fprintf(fp, "# - {name: %s, ", c[i].name);
            if (c[i].unit) fprintf(fp, "unit: %s, ", c[i].unit);
            fprintf(fp, "datatype: %s, description: ", c[i].ecsv_type);
            yaml_quoted(fp, c[i].description);
            fprintf(fp, "}\n");
        }
        fprintf(fp, "# meta: !!omap\n# - {pixel_origin: 0}\n# - {source: 'pyrgrid %s frames'}\n# schema: astropy-2.0\n",
                PYR_VERSION_STRING);
        for (int i = 0; i < n; i++) fprintf(fp, "%s%s", i ? " " : "", c[i].name);
        fputc('\n', fp);
    }
    *tp = t;
    return PYR_OK;
}

pyr_status_t fr_table_add(fr_table_t *t, const fr_table_row_t *r)
{
    if (t->format == T_FITS) {
        if (t->n == t->cap) {
            int64_t cap = t->cap ? 2 * t->cap : 1024;
            fr_table_row_t *nr = realloc(t->rows, (size_t)cap * sizeof *nr);
            if (!nr) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for %lld candidates", (long long)cap);
            t->rows = nr;
            t->cap = cap;
        }
        t->rows[t->n++] = *r;
        return PYR_OK;
    }
    FILE *fp = t->af.fp;
    if (t->format == T_CSV) {
        fprintf(fp, "%lld,%.3f,%.3f,%.6g,%.3f", (long long)r->frame, r->x, r->y, r->flux, r->snr);
        if (t->o.track) fprintf(fp, ",%lld", (long long)r->track);
        fputc('\n', fp);
    } else {
        /* positions as the pipeline gave them (float: 9 digits are exact),
         * sky positions to 1e-12 degrees */
        fprintf(fp, "%lld", (long long)r->frame);
        if (t->o.mjd) {
            if (isfinite(r->mjd)) fprintf(fp, " %.8f", r->mjd);
            else fprintf(fp, " nan");
        }
        fprintf(fp, " %.9g %.9g", r->x, r->y);
        if (t->o.sky) fprintf(fp, " %.12f %.12f", r->ra, r->dec);
        fprintf(fp, " %.9g %.9g", r->flux, r->snr);
        if (t->o.track) fprintf(fp, " %lld", (long long)r->track);
        fputc('\n', fp);
    }
    t->n++;
    return PYR_OK;
}

pyr_status_t fr_table_commit(fr_table_t **tp)
{
    fr_table_t *t = *tp;
    pyr_status_t st;
    if (t->format != T_FITS) {
        st = pyr_atomic_commit(&t->af);
    } else {
        const int64_t n = t->n;
        double *d = malloc((size_t)(n > 0 ? n : 1) * 6 * sizeof *d);
        float *f = malloc((size_t)(n > 0 ? n : 1) * 2 * sizeof *f);
        int *frame = malloc((size_t)(n > 0 ? n : 1) * 2 * sizeof *frame);
        if (!d || !f || !frame) {
            st = pyr_fail(PYR_ERR_NOMEM, "out of host memory writing %lld candidates", (long long)n);
        } else {
            double *mjd = d, *x = d + n, *y = d + 2 * n, *ra = d + 3 * n, *dec = d + 4 * n;
            float *flux = f, *snr = f + n;
            for (int64_t i = 0; i < n; i++) {
                const fr_table_row_t *r = &t->rows[i];
                frame[i] = (int)r->frame;
                frame[n + i] = (int)r->track;
                mjd[i] = r->mjd;
                x[i] = r->x;
                y[i] = r->y;
                ra[i] = r->ra;
                dec[i] = r->dec;
                flux[i] = (float)r->flux;
                snr[i] = (float)r->snr;
            }
            column_t c[10];
            pyr_fits_column_t fc[10];
            const void *data[10];
            int k = 0, nc = columns(&t->o, c);
            data[k++] = frame;
            if (t->o.mjd) data[k++] = mjd;
            data[k++] = x;
            data[k++] = y;
            if (t->o.sky) {
                data[k++] = ra;
                data[k++] = dec;
            }
            data[k++] = flux;
            data[k++] = snr;
            if (t->o.track) data[k++] = frame + n;
            for (int i = 0; i < nc; i++) fc[i] = (pyr_fits_column_t){c[i].name, c[i].unit, c[i].description, c[i].fits_type, data[i]};
            char cards[2][81];
            snprintf(cards[0], 81, "%-8s= %20d / %-47s", "PIXORIGN", 0, "x, y count pixels from 0 (FITS counts from 1)");
            snprintf(cards[1], 81, "HISTORY pyrgrid %s frames: candidates", PYR_VERSION_STRING);
            st = pyr_fits_write_table(t->path, "CANDIDATES", fc, nc, n, (const char(*)[81])cards, 2);
        }
        free(d);
        free(f);
        free(frame);
    }
    free(t->rows);
    free(t->path);
    free(t);
    *tp = NULL;
    return st;
}

void fr_table_abort(fr_table_t **tp)
{
    if (!tp || !*tp) return;
    fr_table_t *t = *tp;
    if (t->format != T_FITS) pyr_atomic_abort(&t->af);
    free(t->rows);
    free(t->path);
    free(t);
    *tp = NULL;
}
