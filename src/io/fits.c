/* FITS reading and writing through cfitsio (fits.h). */
#include "io/fits.h"

#include <fitsio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"
#include "io/atomic.h"

struct pyr_fits_reader {
    fitsfile *fp;
    char *path;
    pyr_fits_info_t info;
};

struct pyr_fits_writer {
    fitsfile *fp;
    pyr_atomic_file_t af;
    int64_t nx, ny, nframes;
};

static const char *fits_reason(int status, char *buf)
{
    fits_get_errstatus(status, buf);
    return buf;
}

static int structural(const char *card)
{
    static const char *const keys[] = {"SIMPLE", "BITPIX", "NAXIS", "EXTEND", "BSCALE", "BZERO", "BLANK", "XTENSION",
                                       "PCOUNT", "GCOUNT", "CHECKSUM", "DATASUM", "END", "ZIMAGE", "ZBITPIX", "ZNAXIS",
                                       "ZTILE", "ZCMPTYPE", "ZQUANTIZ", "TFIELDS", "TTYPE", "TFORM"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (!strncmp(card, keys[k], strlen(keys[k]))) return 1;
    return 0;
}

pyr_status_t pyr_fits_open(const char *path, pyr_fits_reader_t **reader, pyr_fits_info_t *info)
{
    if (!reader || !info || !path) return pyr_fail(PYR_ERR_ARG, "pyr_fits_open: NULL argument");
    *reader = NULL;
    memset(info, 0, sizeof *info);
    FILE *probe = fopen(path, "rb");
    if (!probe) return pyr_fail(PYR_ERR_IO, "cannot open FITS file %s: no such file or not readable", path);
    char head[10] = {0};
    size_t got = fread(head, 1, 9, probe);
    fclose(probe);
    if (got < 9 || strncmp(head, "SIMPLE  =", 9))
        return pyr_fail(PYR_ERR_FORMAT, "%s is not a FITS file (it does not start with \"SIMPLE  =\"); "
                                        "give FITS images (.fits, .fit, .fts) or a .npy stack",
                        path);
    int status = 0;
    char why[FLEN_STATUS];
    fitsfile *fp = NULL;
    /* fits_open_image moves to the first HDU with an image of NAXIS > 0 */
    if (fits_open_image(&fp, path, READONLY, &status)) {
        if (fp) {
            int s2 = 0;
            fits_close_file(fp, &s2);
        }
        return pyr_fail(PYR_ERR_FORMAT, "cannot read FITS file %s: %s (cfitsio status %d); the file is damaged, "
                                        "truncated or holds no image",
                        path, fits_reason(status, why), status);
    }
    int bitpix = 0, naxis = 0;
    long naxes[9] = {0};
    fits_get_img_param(fp, 9, &bitpix, &naxis, naxes, &status);
    int hdu = 0;
    fits_get_hdu_num(fp, &hdu);
    pyr_status_t st = PYR_OK;
    if (status) {
        st = pyr_fail(PYR_ERR_FORMAT, "cannot read the image header of %s: %s", path, fits_reason(status, why));
    } else if (naxis < 2) {
        st = pyr_fail(PYR_ERR_FORMAT, "%s: HDU %d has a %d-dimensional image; frames need NAXIS = 2 (one frame) or 3 (a cube)",
                      path, hdu, naxis);
    } else {
        for (int a = 3; a < naxis; a++)
            if (naxes[a] > 1) {
                st = pyr_fail(PYR_ERR_FORMAT, "%s: image has NAXIS%d = %ld; only 2D frames and 3D cubes (NAXIS3 = frames) are read",
                              path, a + 1, naxes[a]);
                break;
            }
        if (st == PYR_OK && (naxes[0] < 1 || naxes[1] < 1))
            st = pyr_fail(PYR_ERR_FORMAT, "%s: empty image (%ld x %ld)", path, naxes[0], naxes[1]);
    }
    if (st != PYR_OK) {
        int s2 = 0;
        fits_close_file(fp, &s2);
        return st;
    }
    pyr_fits_reader_t *r = calloc(1, sizeof *r);
    if (!r) {
        int s2 = 0;
        fits_close_file(fp, &s2);
        return pyr_fail(PYR_ERR_NOMEM, "out of memory opening %s", path);
    }
    r->fp = fp;
    r->path = strdup(path);
    pyr_fits_info_t *in = &r->info;
    in->nx = naxes[0];
    in->ny = naxes[1];
    in->nframes = naxis >= 3 ? naxes[2] : 1;
    in->bitpix = bitpix;
    in->hdu = hdu;
    in->bscale = 1;
    in->bzero = 0;
    int s2 = 0;
    fits_read_key(fp, TDOUBLE, "BSCALE", &in->bscale, NULL, &s2);
    s2 = 0;
    fits_read_key(fp, TDOUBLE, "BZERO", &in->bzero, NULL, &s2);
    in->native = PYR_FITS_F32;
    if (bitpix == SHORT_IMG && in->bscale == 1) {
        if (in->bzero == 32768) in->native = PYR_FITS_U16;
        else if (in->bzero == 0) in->native = PYR_FITS_I16;
    }
    /* keep the descriptive cards of this HDU, and of an empty primary HDU
     * before an image extension (where observatories put DATE-OBS etc.) */
    int nkeys = 0;
    s2 = 0;
    fits_get_hdrspace(fp, &nkeys, NULL, &s2);
    int nprim = 0;
    if (hdu > 1) {
        int s3 = 0, type;
        fits_movabs_hdu(fp, 1, &type, &s3);
        fits_get_hdrspace(fp, &nprim, NULL, &s3);
        fits_movabs_hdu(fp, hdu, &type, &s3);
    }
    in->cards = calloc((size_t)(nkeys + nprim + 1), sizeof *in->cards);
    if (!in->cards || !r->path) {
        pyr_fits_close(&r);
        return pyr_fail(PYR_ERR_NOMEM, "out of memory reading the header of %s", path);
    }
    for (int pass = 0; pass < 2; pass++) {
        int which = pass == 0 ? 1 : hdu;
        if (pass == 0 && hdu == 1) continue;
        int s3 = 0, type, n = pass == 0 ? nprim : nkeys;
        fits_movabs_hdu(fp, which, &type, &s3);
        for (int k = 1; k <= n; k++) {
            char card[FLEN_CARD];
            s3 = 0;
            if (fits_read_record(fp, k, card, &s3)) break;
            if (structural(card) || !card[0]) continue;
            /* an extension's own value replaces the primary's */
            int dup = -1;
            for (int c = 0; c < in->ncards; c++)
                if (strncmp(card, "COMMENT", 7) && strncmp(card, "HISTORY", 7) && !strncmp(in->cards[c], card, 8)) dup = c;
            int at = dup >= 0 ? dup : in->ncards++;
            snprintf(in->cards[at], 81, "%s", card);
        }
    }
    *info = *in;
    *reader = r;
    return PYR_OK;
}

pyr_status_t pyr_fits_read_frame(pyr_fits_reader_t *r, int64_t index, pyr_fits_type_t type, void *out)
{
    if (!r || !out) return pyr_fail(PYR_ERR_ARG, "pyr_fits_read_frame: NULL argument");
    pyr_fits_info_t *in = &r->info;
    if (index < 0 || index >= in->nframes)
        return pyr_fail(PYR_ERR_ARG, "%s: frame %lld is outside 0..%lld", r->path, (long long)index, (long long)in->nframes - 1);
    if (type != PYR_FITS_F32 && type != in->native)
        return pyr_fail(PYR_ERR_ARG, "%s: the pixels are not %s integers; read them as float", r->path,
                        type == PYR_FITS_U16 ? "unsigned 16-bit" : "signed 16-bit");
    long long n = (long long)in->nx * in->ny;
    long fpixel[3] = {1, 1, (long)index + 1};
    int status = 0, anynul = 0;
    char why[FLEN_STATUS];
    if (type == PYR_FITS_F32) {
        float nul = NAN;
        fits_read_pix(r->fp, TFLOAT, fpixel, (LONGLONG)n, &nul, out, &anynul, &status);
    } else if (type == PYR_FITS_U16) {
        fits_read_pix(r->fp, TUSHORT, fpixel, (LONGLONG)n, NULL, out, &anynul, &status);
    } else {
        fits_read_pix(r->fp, TSHORT, fpixel, (LONGLONG)n, NULL, out, &anynul, &status);
    }
    if (status)
        return pyr_fail(PYR_ERR_FORMAT, "%s: cannot read frame %lld: %s (cfitsio status %d); the file is probably truncated",
                        r->path, (long long)index, fits_reason(status, why), status);
    return PYR_OK;
}

void pyr_fits_close(pyr_fits_reader_t **reader)
{
    if (!reader || !*reader) return;
    pyr_fits_reader_t *r = *reader;
    int status = 0;
    if (r->fp) fits_close_file(r->fp, &status);
    free(r->info.cards);
    free(r->path);
    free(r);
    *reader = NULL;
}

int pyr_fits_card_value(const pyr_fits_info_t *info, const char *key, char *buf, size_t size)
{
    size_t kl = strlen(key);
    for (int c = 0; c < info->ncards; c++) {
        const char *card = info->cards[c];
        if (strncasecmp(card, key, kl) || (card[kl] != ' ' && card[kl] != '=')) continue;
        const char *eq = strchr(card, '=');
        if (!eq || eq - card > 9) continue;
        char value[FLEN_VALUE], comment[FLEN_COMMENT];
        int status = 0;
        if (fits_parse_value((char *)card, value, comment, &status)) return 0;
        char *v = value;
        size_t n = strlen(v);
        if (n >= 2 && v[0] == '\'') { /* 'text   ' */
            v++;
            n -= 2;
            v[n] = 0;
            while (n > 0 && v[n - 1] == ' ') v[--n] = 0;
        }
        snprintf(buf, size, "%s", v);
        return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------- writer */

static pyr_status_t writer_fail(pyr_fits_writer_t *w, int status, const char *what)
{
    char why[FLEN_STATUS];
    fits_get_errstatus(status, why);
    return pyr_fail(PYR_ERR_IO, "writing %s: %s failed: %s (cfitsio status %d)", w->af.path ? w->af.path : "FITS file", what,
                    why, status);
}

pyr_status_t pyr_fits_writer_open(const char *path, int64_t nx, int64_t ny, int64_t nframes, const char (*cards)[81],
                                  int ncards, const char *const *history, int nhistory, pyr_fits_writer_t **writer)
{
    if (!writer) return pyr_fail(PYR_ERR_ARG, "pyr_fits_writer_open: NULL writer");
    *writer = NULL;
    if (nx < 1 || ny < 1 || nframes < 1)
        return pyr_fail(PYR_ERR_ARG, "FITS image %lld x %lld x %lld: every axis needs at least 1 pixel", (long long)nx,
                        (long long)ny, (long long)nframes);
    pyr_fits_writer_t *w = calloc(1, sizeof *w);
    if (!w) return pyr_fail(PYR_ERR_NOMEM, "out of memory opening %s", path);
    pyr_status_t st = pyr_atomic_open(&w->af, path);
    if (st != PYR_OK) {
        free(w);
        return st;
    }
    /* cfitsio writes the temporary by name; the atomic file supplies the
     * unique name, the rename and the clean-up */
    fclose(w->af.fp);
    w->af.fp = NULL;
    size_t len = strlen(w->af.tmp_path) + 2;
    char *name = malloc(len);
    if (!name) {
        pyr_atomic_abort(&w->af);
        free(w);
        return pyr_fail(PYR_ERR_NOMEM, "out of memory opening %s", path);
    }
    snprintf(name, len, "!%s", w->af.tmp_path); /* '!': replace the empty temporary */
    int status = 0;
    fits_create_file(&w->fp, name, &status);
    free(name);
    long naxes[3] = {(long)nx, (long)ny, (long)nframes};
    if (!status) fits_create_img(w->fp, FLOAT_IMG, nframes > 1 ? 3 : 2, naxes, &status);
    for (int c = 0; c < ncards && !status; c++) {
        char card[81];
        snprintf(card, sizeof card, "%s", cards[c]);
        fits_write_record(w->fp, card, &status);
    }
    for (int h = 0; h < nhistory && !status; h++) fits_write_history(w->fp, history[h], &status);
    w->nx = nx;
    w->ny = ny;
    w->nframes = nframes;
    if (status) {
        st = writer_fail(w, status, "creating the image");
        pyr_fits_writer_abort(&w);
        return st;
    }
    *writer = w;
    return PYR_OK;
}

pyr_status_t pyr_fits_writer_frame(pyr_fits_writer_t *w, int64_t index, const float *data)
{
    if (!w || !data) return pyr_fail(PYR_ERR_ARG, "pyr_fits_writer_frame: NULL argument");
    if (index < 0 || index >= w->nframes)
        return pyr_fail(PYR_ERR_ARG, "FITS frame %lld outside 0..%lld", (long long)index, (long long)w->nframes - 1);
    long fpixel[3] = {1, 1, (long)index + 1};
    int status = 0;
    fits_write_pix(w->fp, TFLOAT, fpixel, (LONGLONG)(w->nx * w->ny), (void *)data, &status);
    if (status) return writer_fail(w, status, "writing a frame");
    return PYR_OK;
}

pyr_status_t pyr_fits_writer_frames_table(pyr_fits_writer_t *w, int64_t n, const float *dx, const float *dy,
                                          const int *iterations, const char (*date_obs)[25], const double *exptime)
{
    char *ttype[6] = {"FRAME", "DX", "DY", "ITER", "DATE-OBS", "EXPTIME"};
    char *tform[6] = {"1J", "1E", "1E", "1J", "24A", "1D"};
    char *tunit[6] = {"", "pixel", "pixel", "", "", "s"};
    int ncol = 4 + (date_obs ? 1 : 0);
    if (exptime) {
        if (!date_obs) {
            ttype[4] = ttype[5];
            tform[4] = tform[5];
            tunit[4] = tunit[5];
        }
        ncol++;
    }
    int status = 0;
    fits_create_tbl(w->fp, BINARY_TBL, (LONGLONG)n, ncol, ttype, tform, tunit, "FRAMES", &status);
    int *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof *idx);
    if (!idx) return pyr_fail(PYR_ERR_NOMEM, "out of memory writing the FRAMES table");
    for (int64_t i = 0; i < n; i++) idx[i] = (int)i;
    fits_write_col(w->fp, TINT, 1, 1, 1, (LONGLONG)n, idx, &status);
    fits_write_col(w->fp, TFLOAT, 2, 1, 1, (LONGLONG)n, (void *)dx, &status);
    fits_write_col(w->fp, TFLOAT, 3, 1, 1, (LONGLONG)n, (void *)dy, &status);
    fits_write_col(w->fp, TINT, 4, 1, 1, (LONGLONG)n, (void *)iterations, &status);
    int col = 5;
    if (date_obs && !status) {
        for (int64_t i = 0; i < n && !status; i++) {
            char *s = (char *)date_obs[i];
            fits_write_col(w->fp, TSTRING, col, (LONGLONG)i + 1, 1, 1, &s, &status);
        }
        col++;
    }
    if (exptime) fits_write_col(w->fp, TDOUBLE, col, 1, 1, (LONGLONG)n, (void *)exptime, &status);
    free(idx);
    if (status) return writer_fail(w, status, "writing the FRAMES table");
    return PYR_OK;
}

pyr_status_t pyr_fits_writer_commit(pyr_fits_writer_t **writer)
{
    if (!writer || !*writer) return pyr_fail(PYR_ERR_ARG, "pyr_fits_writer_commit: no writer");
    pyr_fits_writer_t *w = *writer;
    int status = 0;
    fits_close_file(w->fp, &status);
    w->fp = NULL;
    if (status) {
        pyr_status_t st = writer_fail(w, status, "closing");
        pyr_fits_writer_abort(writer);
        return st;
    }
    /* the atomic file syncs, closes and renames through its own handle */
    w->af.fp = fopen(w->af.tmp_path, "rb");
    if (!w->af.fp) {
        pyr_status_t st = pyr_fail(PYR_ERR_IO, "writing %s: the finished temporary file vanished", w->af.path);
        pyr_fits_writer_abort(writer);
        return st;
    }
    pyr_status_t st = pyr_atomic_commit(&w->af);
    free(w);
    *writer = NULL;
    return st;
}

void pyr_fits_writer_abort(pyr_fits_writer_t **writer)
{
    if (!writer || !*writer) return;
    pyr_fits_writer_t *w = *writer;
    int status = 0;
    if (w->fp) fits_close_file(w->fp, &status);
    pyr_atomic_abort(&w->af);
    free(w);
    *writer = NULL;
}
