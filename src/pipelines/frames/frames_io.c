/* Frame sequences on disk (frames_io.h). */
#include "pipelines/frames/frames_io.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"
#include "io/atomic.h"

enum { SRC_NPY, SRC_CUBE, SRC_FILES };

struct fr_source {
    int kind;
    fr_source_info_t info;
    char notice[256];
    /* npy */
    FILE *fp;
    char *path;
    char descr[8];
    long data_offset;
    size_t elem;
    void *conv; /* frame of the file's type, for f8 */
    /* FITS */
    char **paths;
    int npaths;
    pyr_fits_reader_t *open_reader; /* the cube, or the file read last */
    int open_index;
    pyr_fits_info_t first; /* copy of the first file's info; cards owned by first_reader */
    pyr_fits_reader_t *first_reader;
    pyr_fits_type_t fits_type;
    /* calexp layout: per file the HDUs of IMAGE, MASK, VARIANCE (0: none),
     * and the MASK bits that mark a pixel bad */
    int calexp;
    int (*hdus)[3];
    uint32_t *bits;
    pyr_fits_reader_t *plane_reader[3]; /* MASK, VARIANCE (index 1, 2) of file plane_index[] */
    int plane_index[3];
    uint32_t *bitbuf;
    pyr_fits_reader_t *header_reader; /* fr_source_frame_header's file */
    pyr_fits_info_t header_info;
};

enum { PLANE_IMAGE = 0, PLANE_MASK, PLANE_VARIANCE };
static const char *const plane_names[3] = {"IMAGE", "MASK", "VARIANCE"};

size_t fr_dtype_size(pyr_frames_dtype_t t) { return t == PYR_FRAMES_F32 ? 4 : 2; }

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcasecmp(s + n - m, suffix);
}

/* ---------------------------------------------------------------- npy */

static pyr_status_t npy_open(fr_source_t *s, const char *path)
{
    int64_t size = 0;
    /* a regular file only: a FIFO would block the open until a writer came */
    PYR_TRY(pyr_open_input(path, ".npy frame stack", &s->fp, &size, NULL));
    unsigned char pre[10];
    if (fread(pre, 1, 10, s->fp) != 10 || memcmp(pre, "\x93NUMPY", 6))
        return pyr_fail(PYR_ERR_FORMAT, "%s is not a .npy file (no \\x93NUMPY magic)", path);
    int major = pre[6];
    size_t hlen;
    long off;
    if (major == 1) {
        hlen = (size_t)pre[8] | ((size_t)pre[9] << 8);
        off = 10;
    } else if (major == 2 || major == 3) {
        unsigned char b[2];
        if (fread(b, 1, 2, s->fp) != 2) return pyr_fail(PYR_ERR_FORMAT, "%s: truncated .npy header", path);
        hlen = (size_t)pre[8] | ((size_t)pre[9] << 8) | ((size_t)b[0] << 16) | ((size_t)b[1] << 24);
        off = 12;
    } else {
        return pyr_fail(PYR_ERR_FORMAT, "%s: .npy format version %d is not supported", path, major);
    }
    if (hlen > 65536) return pyr_fail(PYR_ERR_FORMAT, "%s: .npy header of %zu bytes is implausible", path, hlen);
    char *h = calloc(hlen + 1, 1);
    if (!h) return pyr_fail(PYR_ERR_NOMEM, "out of memory");
    if (fread(h, 1, hlen, s->fp) != hlen) {
        free(h);
        return pyr_fail(PYR_ERR_FORMAT, "%s: truncated .npy header", path);
    }
    s->data_offset = off + (long)hlen;
    const char *d = strstr(h, "'descr'"), *fo = strstr(h, "'fortran_order'"), *sh = strstr(h, "'shape'");
    pyr_status_t st = PYR_OK;
    if (!d || !fo || !sh) st = pyr_fail(PYR_ERR_FORMAT, "%s: .npy header lacks descr, fortran_order or shape", path);
    if (st == PYR_OK) {
        const char *q = strchr(d + 7, '\'');
        if (!q || sscanf(q + 1, "%7[^']", s->descr) != 1) st = pyr_fail(PYR_ERR_FORMAT, "%s: malformed descr in the .npy header", path);
    }
    if (st == PYR_OK && strstr(fo, "True"))
        st = pyr_fail(PYR_ERR_FORMAT, "%s: the array is in Fortran order; save it with np.save(path, np.ascontiguousarray(a))", path);
    int64_t shape[4] = {0};
    int nd = 0;
    if (st == PYR_OK) {
        const char *p = strchr(sh, '(');
        if (!p) st = pyr_fail(PYR_ERR_FORMAT, "%s: malformed shape in the .npy header", path);
        else {
            p++;
            while (*p && *p != ')') {
                while (*p == ' ' || *p == ',') p++;
                if (*p == ')') break;
                char *end;
                long long v = strtoll(p, &end, 10);
                if (end == p || v < 0 || nd == 4) {
                    st = pyr_fail(PYR_ERR_FORMAT, "%s: malformed shape in the .npy header", path);
                    break;
                }
                shape[nd++] = v;
                p = end;
            }
        }
    }
    free(h);
    if (st != PYR_OK) return st;
    if (nd != 3 && nd != 2)
        return pyr_fail(PYR_ERR_FORMAT, "%s: a frame stack must have shape (T, ny, nx) (or (ny, nx) for one frame); this array has %d axes",
                        path, nd);
    if (nd == 2) {
        shape[2] = shape[1];
        shape[1] = shape[0];
        shape[0] = 1;
    }
    if (!strcmp(s->descr, "<u2") || !strcmp(s->descr, "|u2")) s->info.type = PYR_FRAMES_U16, s->elem = 2;
    else if (!strcmp(s->descr, "<i2")) s->info.type = PYR_FRAMES_I16, s->elem = 2;
    else if (!strcmp(s->descr, "<f4")) s->info.type = PYR_FRAMES_F32, s->elem = 4;
    else if (!strcmp(s->descr, "<f8")) s->info.type = PYR_FRAMES_F32, s->elem = 8;
    else
        return pyr_fail(PYR_ERR_FORMAT, "%s: dtype '%s' is not read; frames are uint16, int16, float32 or float64 "
                                        "(convert with a.astype(np.float32))",
                        path, s->descr);
    s->info.nframes = shape[0];
    s->info.ny = shape[1];
    s->info.nx = shape[2];
    if (shape[0] < 1 || shape[1] < 1 || shape[2] < 1) return pyr_fail(PYR_ERR_FORMAT, "%s: the stack is empty", path);
    double need = (double)s->data_offset + (double)shape[0] * (double)shape[1] * (double)shape[2] * (double)s->elem;
    if ((double)size < need)
        return pyr_fail(PYR_ERR_FORMAT, "%s: the file holds %lld bytes, its header promises %.0f: it is truncated", path,
                        (long long)size, need);
    if (s->elem == 8) {
        s->conv = malloc((size_t)(shape[1] * shape[2]) * 8);
        if (!s->conv) return pyr_fail(PYR_ERR_NOMEM, "out of memory");
    }
    s->info.kind = "npy stack";
    return PYR_OK;
}

static pyr_status_t npy_read(fr_source_t *s, int64_t i, void *buf)
{
    int64_t n = s->info.nx * s->info.ny;
    long off = s->data_offset + (long)(i * n * (int64_t)s->elem);
    if (fseek(s->fp, off, SEEK_SET) != 0) return pyr_fail(PYR_ERR_IO, "%s: cannot seek to frame %lld", s->path, (long long)i);
    void *dst = s->elem == 8 ? s->conv : buf;
    if (fread(dst, s->elem, (size_t)n, s->fp) != (size_t)n)
        return pyr_fail(PYR_ERR_FORMAT, "%s: frame %lld is truncated", s->path, (long long)i);
    if (s->elem == 8) {
        const double *d = s->conv;
        float *f = buf;
        for (int64_t k = 0; k < n; k++) f[k] = (float)d[k];
    }
    return PYR_OK;
}

/* ---------------------------------------------------------------- FITS */

static pyr_frames_dtype_t from_fits(pyr_fits_type_t t)
{
    return t == PYR_FITS_U16 ? PYR_FRAMES_U16 : t == PYR_FITS_I16 ? PYR_FRAMES_I16 : PYR_FRAMES_F32;
}

/* Plane `plane` of file f: its extension in the calexp layout, else the
 * file's first image. */
static pyr_status_t open_plane(fr_source_t *s, int f, int plane, pyr_fits_reader_t **r, pyr_fits_info_t *in)
{
    int hdu = s->hdus[f][plane];
    return hdu ? pyr_fits_open_hdu(s->paths[f], hdu, r, in) : pyr_fits_open(s->paths[f], r, in);
}

/* File f's extensions by name; the calexp layout needs its science plane,
 * and every file of a list the planes the first one has. */
static pyr_status_t find_planes(fr_source_t *s, int f)
{
    PYR_TRY(pyr_fits_find_extensions(s->paths[f], plane_names, 3, s->hdus[f]));
    const int *h = s->hdus[f];
    int calexp = h[PLANE_IMAGE] || h[PLANE_MASK] || h[PLANE_VARIANCE];
    if (calexp && !h[PLANE_IMAGE])
        return pyr_fail(PYR_ERR_FORMAT, "%s has a %s extension (HDU %d) but no science plane: a calibrated exposure holds its "
                                        "image in the extension EXTNAME = 'IMAGE' (beside MASK and VARIANCE)",
                        s->paths[f], h[PLANE_MASK] ? "MASK" : "VARIANCE", h[PLANE_MASK] ? h[PLANE_MASK] : h[PLANE_VARIANCE]);
    if (f == 0) {
        s->calexp = calexp;
        return PYR_OK;
    }
    if (calexp != s->calexp)
        return pyr_fail(PYR_ERR_FORMAT, "%s %s a calibrated exposure (IMAGE, MASK, VARIANCE extensions) and %s %s: give files of "
                                        "one layout",
                        s->paths[0], s->calexp ? "is" : "is not", s->paths[f], calexp ? "is" : "is not");
    for (int p = PLANE_MASK; p <= PLANE_VARIANCE; p++)
        if (!h[p] != !s->hdus[0][p])
            return pyr_fail(PYR_ERR_FORMAT, "%s has a %s plane and %s has none: the exposures of one sequence must have the same "
                                            "planes",
                            h[p] ? s->paths[f] : s->paths[0], plane_names[p], h[p] ? s->paths[0] : s->paths[f]);
    return PYR_OK;
}

/* The MASK and VARIANCE planes of file f against its science plane `img`:
 * one shape, and the mask of integer bits. */
static pyr_status_t check_planes(fr_source_t *s, int f, const pyr_fits_info_t *img)
{
    for (int p = PLANE_MASK; p <= PLANE_VARIANCE; p++) {
        if (!s->hdus[f][p]) continue;
        pyr_fits_reader_t *r = NULL;
        pyr_fits_info_t in;
        PYR_TRY(open_plane(s, f, p, &r, &in));
        pyr_status_t st = PYR_OK;
        if (in.nx != img->nx || in.ny != img->ny || in.nframes != img->nframes)
            st = pyr_fail(PYR_ERR_FORMAT, "%s: the %s plane (HDU %d) is %lld x %lld x %lld pixels and the IMAGE plane (HDU %d) %lld x "
                                          "%lld x %lld: the planes of one exposure must have one shape",
                          s->paths[f], plane_names[p], in.hdu, (long long)in.nx, (long long)in.ny, (long long)in.nframes, img->hdu,
                          (long long)img->nx, (long long)img->ny, (long long)img->nframes);
        else if (p == PLANE_MASK && (in.bitpix < 0 || in.bitpix > 32 || in.bscale != 1 ||
                                     !(in.bzero == 0 || (in.bitpix == 16 && in.bzero == 32768) ||
                                       (in.bitpix == 32 && in.bzero == 2147483648.0))))
            st = pyr_fail(PYR_ERR_FORMAT, "%s: the MASK plane (HDU %d) has BITPIX %d, BSCALE %g, BZERO %g; a mask is a plane of "
                                          "integer bits (BITPIX 8, 16 or 32, unscaled)",
                          s->paths[f], in.hdu, in.bitpix, in.bscale, in.bzero);
        pyr_fits_close(&r);
        if (st != PYR_OK) return st;
    }
    return PYR_OK;
}

static pyr_status_t fits_open_all(fr_source_t *s)
{
    s->hdus = calloc((size_t)s->npaths, sizeof *s->hdus);
    s->bits = malloc((size_t)s->npaths * sizeof *s->bits);
    if (!s->hdus || !s->bits) return pyr_fail(PYR_ERR_NOMEM, "out of memory");
    for (int i = 0; i < s->npaths; i++) s->bits[i] = 0xffffffffu;
    for (int p = 0; p < 3; p++) s->plane_index[p] = -1;
    PYR_TRY(find_planes(s, 0));
    pyr_fits_info_t info;
    PYR_TRY(open_plane(s, 0, PLANE_IMAGE, &s->first_reader, &info));
    s->first = info;
    s->info.fits = &s->first;
    s->info.nx = info.nx;
    s->info.ny = info.ny;
    s->fits_type = info.native;
    if (s->calexp) {
        PYR_TRY(check_planes(s, 0, &info));
        s->info.has_mask = s->hdus[0][PLANE_MASK] != 0;
        s->info.has_variance = s->hdus[0][PLANE_VARIANCE] != 0;
        if (s->info.has_mask && !(s->bitbuf = malloc((size_t)(info.nx * info.ny) * sizeof *s->bitbuf)))
            return pyr_fail(PYR_ERR_NOMEM, "out of memory for a mask of %lld x %lld pixels", (long long)info.nx, (long long)info.ny);
    }
    if (s->npaths == 1) {
        s->kind = SRC_CUBE;
        s->info.kind = s->calexp ? (info.nframes > 1 ? "calexp cube" : "calexp file") : info.nframes > 1 ? "FITS cube" : "FITS file";
        s->info.nframes = info.nframes;
        s->info.type = from_fits(s->fits_type);
        return PYR_OK;
    }
    s->kind = SRC_FILES;
    s->info.kind = s->calexp ? "calexp files" : "FITS files";
    s->info.nframes = s->npaths;
    if (info.nframes != 1)
        return pyr_fail(PYR_ERR_FORMAT, "%s holds %lld frames; give either one cube or a list of 2D images", s->paths[0],
                        (long long)info.nframes);
    /* every file: same size; a mix of pixel types is read as float */
    for (int i = 1; i < s->npaths; i++) {
        PYR_TRY(find_planes(s, i));
        pyr_fits_reader_t *r = NULL;
        pyr_fits_info_t in;
        PYR_TRY(open_plane(s, i, PLANE_IMAGE, &r, &in));
        pyr_status_t st = PYR_OK;
        if (in.nx != info.nx || in.ny != info.ny)
            st = pyr_fail(PYR_ERR_FORMAT, "frames of different sizes in one sequence: %s is %lld x %lld, %s is %lld x %lld; "
                                          "crop or resample them to one size",
                          s->paths[0], (long long)info.nx, (long long)info.ny, s->paths[i], (long long)in.nx, (long long)in.ny);
        else if (in.nframes != 1)
            st = pyr_fail(PYR_ERR_FORMAT, "%s holds %lld frames; in a list every file must be one 2D image", s->paths[i],
                          (long long)in.nframes);
        if (st == PYR_OK && s->calexp) st = check_planes(s, i, &in);
        if (st == PYR_OK && in.native != s->fits_type && s->fits_type != PYR_FITS_F32) {
            snprintf(s->notice, sizeof s->notice,
                     "frames of different pixel types (%s has BITPIX %d, %s BITPIX %d): all are read as float", s->paths[0],
                     info.bitpix, s->paths[i], in.bitpix);
            s->fits_type = PYR_FITS_F32;
        }
        pyr_fits_close(&r);
        if (st != PYR_OK) return st;
    }
    s->info.type = from_fits(s->fits_type);
    return PYR_OK;
}

static pyr_status_t fits_read(fr_source_t *s, int64_t i, void *buf)
{
    if (s->kind == SRC_CUBE) return pyr_fits_read_frame(s->first_reader, i, s->fits_type, buf);
    if (i == 0) return pyr_fits_read_frame(s->first_reader, 0, s->fits_type, buf);
    if (s->open_index != (int)i) {
        pyr_fits_close(&s->open_reader);
        pyr_fits_info_t in;
        PYR_TRY(open_plane(s, (int)i, PLANE_IMAGE, &s->open_reader, &in));
        if (in.nx != s->info.nx || in.ny != s->info.ny) /* changed since it was opened */
            return pyr_fail(PYR_ERR_FORMAT, "%s is now %lld x %lld, not %lld x %lld", s->paths[i], (long long)in.nx,
                            (long long)in.ny, (long long)s->info.nx, (long long)s->info.ny);
        s->open_index = (int)i;
    }
    return pyr_fits_read_frame(s->open_reader, 0, s->fits_type, buf);
}

const pyr_fits_info_t *fr_source_frame_header(fr_source_t *s, int64_t i)
{
    if (s->kind == SRC_NPY || i < 0 || i >= s->info.nframes) return NULL;
    if (s->kind == SRC_CUBE || i == 0) return &s->first;
    pyr_fits_close(&s->header_reader);
    if (open_plane(s, (int)i, PLANE_IMAGE, &s->header_reader, &s->header_info) != PYR_OK) return NULL;
    return &s->header_info;
}

const char *fr_source_frame_path(const fr_source_t *s, int64_t i)
{
    if (s->kind == SRC_NPY) return s->path;
    return s->paths[s->npaths > 1 && i >= 0 && i < s->npaths ? i : 0];
}

void fr_source_frame_keys(const fr_source_t *s, int64_t i, char date_obs[25], double *exptime)
{
    date_obs[0] = 0;
    *exptime = NAN;
    if (s->kind == SRC_NPY) return;
    pyr_fits_info_t in;
    pyr_fits_reader_t *r = NULL;
    const pyr_fits_info_t *use = &s->first;
    if (s->kind == SRC_FILES && i > 0) {
        if (open_plane((fr_source_t *)s, (int)i, PLANE_IMAGE, &r, &in) != PYR_OK) return;
        use = &in;
    }
    char buf[80];
    if (pyr_fits_card_value(use, "DATE-OBS", buf, sizeof buf)) snprintf(date_obs, 25, "%.24s", buf);
    if (pyr_fits_card_value(use, "EXPTIME", buf, sizeof buf) || pyr_fits_card_value(use, "EXPOSURE", buf, sizeof buf) ||
        pyr_fits_card_value(use, "ITIME", buf, sizeof buf))
        *exptime = atof(buf);
    pyr_fits_close(&r);
}

/* The reader of plane p (MASK, VARIANCE) holding frame i, and the frame's
 * index in it. */
static pyr_status_t plane_at(fr_source_t *s, int p, int64_t i, pyr_fits_reader_t **r, int64_t *index)
{
    if (s->kind == SRC_NPY || !s->hdus || !s->hdus[0][p])
        return pyr_fail(PYR_ERR_ARG, "the input has no %s plane", plane_names[p]);
    int f = s->kind == SRC_CUBE ? 0 : (int)i;
    *index = s->kind == SRC_CUBE ? i : 0;
    if (s->plane_index[p] != f) {
        pyr_fits_close(&s->plane_reader[p]);
        s->plane_index[p] = -1;
        pyr_fits_info_t in;
        PYR_TRY(open_plane(s, f, p, &s->plane_reader[p], &in));
        if (in.nx != s->info.nx || in.ny != s->info.ny) /* changed since it was opened */
            return pyr_fail(PYR_ERR_FORMAT, "%s: the %s plane is now %lld x %lld, not %lld x %lld", s->paths[f], plane_names[p],
                            (long long)in.nx, (long long)in.ny, (long long)s->info.nx, (long long)s->info.ny);
        s->plane_index[p] = f;
    }
    *r = s->plane_reader[p];
    return PYR_OK;
}

pyr_status_t fr_source_read_mask(fr_source_t *s, int64_t i, uint8_t *mask)
{
    if (i < 0 || i >= s->info.nframes) return pyr_fail(PYR_ERR_ARG, "frame %lld out of range", (long long)i);
    pyr_fits_reader_t *r = NULL;
    int64_t index = 0;
    PYR_TRY(plane_at(s, PLANE_MASK, i, &r, &index));
    PYR_TRY(pyr_fits_read_bits(r, index, s->bitbuf));
    const uint32_t bits = s->bits[s->kind == SRC_CUBE ? 0 : i];
    const int64_t n = s->info.nx * s->info.ny;
    for (int64_t k = 0; k < n; k++) mask[k] = (s->bitbuf[k] & bits) != 0;
    return PYR_OK;
}

pyr_status_t fr_source_read_variance(fr_source_t *s, int64_t i, float *variance)
{
    if (i < 0 || i >= s->info.nframes) return pyr_fail(PYR_ERR_ARG, "frame %lld out of range", (long long)i);
    pyr_fits_reader_t *r = NULL;
    int64_t index = 0;
    PYR_TRY(plane_at(s, PLANE_VARIANCE, i, &r, &index));
    return pyr_fits_read_frame(r, index, PYR_FITS_F32, variance);
}

/* The bit of mask plane `name` in a MASK header (MP_<name> = bit), -1 when
 * it names none. */
static int mask_plane_bit(const pyr_fits_info_t *in, const char *name)
{
    char key[80], value[80];
    snprintf(key, sizeof key, "MP_%s", name);
    if (strlen(key) > 8) { /* longer names are HIERARCH cards */
        char hier[96];
        snprintf(hier, sizeof hier, "HIERARCH %s", key);
        if (!pyr_fits_card_value(in, hier, value, sizeof value)) return -1;
    } else if (!pyr_fits_card_value(in, key, value, sizeof value)) {
        return -1;
    }
    char *end;
    long b = strtol(value, &end, 10);
    return end != value && !*end && b >= 0 && b < 32 ? (int)b : -1;
}

/* The names of a MASK header's planes, for a message. */
static void mask_plane_names(const pyr_fits_info_t *in, char *out, size_t size)
{
    out[0] = 0;
    for (int c = 0; c < in->ncards; c++) {
        const char *card = in->cards[c];
        if (!strncmp(card, "HIERARCH ", 9)) card += 9;
        if (strncmp(card, "MP_", 3)) continue;
        size_t len = strcspn(card + 3, " =");
        if (strlen(out) + len + 3 >= size) break;
        if (out[0]) strcat(out, ", ");
        strncat(out, card + 3, len);
    }
    if (!out[0]) snprintf(out, size, "none (no MP_ cards)");
}

pyr_status_t fr_source_set_mask_bits(fr_source_t *s, const char *spec)
{
    if (!spec || !*spec || !strcasecmp(spec, "all")) return PYR_OK;
    if (!s->info.has_mask) return PYR_OK;
    int nfiles = s->kind == SRC_CUBE ? 1 : s->npaths;
    char *copy = strdup(spec);
    if (!copy) return pyr_fail(PYR_ERR_NOMEM, "out of memory");
    pyr_status_t st = PYR_OK;
    for (int f = 0; f < nfiles && st == PYR_OK; f++) {
        pyr_fits_reader_t *r = NULL;
        pyr_fits_info_t in;
        int opened = 0;
        uint32_t bits = 0;
        strcpy(copy, spec);
        char *save = NULL;
        for (char *w = strtok_r(copy, ", ", &save); w && st == PYR_OK; w = strtok_r(NULL, ", ", &save)) {
            char *end;
            unsigned long long v = strtoull(w, &end, 0);
            if (end != w && !*end && w[0] != '-') {
                if (v > 0xffffffffull)
                    st = pyr_fail(PYR_ERR_CONFIG, "frames.mask_bits = %s: %s is more than 32 bits", spec, w);
                bits |= (uint32_t)v;
                continue;
            }
            if (!opened) {
                st = open_plane(s, f, PLANE_MASK, &r, &in);
                opened = st == PYR_OK;
                if (!opened) break;
            }
            int b = mask_plane_bit(&in, w);
            if (b < 0) {
                char names[512];
                mask_plane_names(&in, names, sizeof names);
                st = pyr_fail(PYR_ERR_CONFIG, "frames.mask_bits = %s: %s (HDU %d) defines no mask plane %s (MP_%s); it defines %s; "
                                              "give those names, bit values (0x28) or all",
                              spec, s->paths[f], in.hdu, w, w, names);
            } else {
                bits |= 1u << b;
            }
        }
        pyr_fits_close(&r);
        s->bits[f] = bits;
    }
    free(copy);
    return st;
}

/* ---------------------------------------------------------------- common */

pyr_status_t fr_source_open(const char *const *paths, int npaths, fr_source_t **src, fr_source_info_t *info)
{
    *src = NULL;
    if (npaths < 1) return pyr_fail(PYR_ERR_ARG, "no input frames given");
    fr_source_t *s = calloc(1, sizeof *s);
    if (!s) return pyr_fail(PYR_ERR_NOMEM, "out of memory");
    s->open_index = -1;
    s->info.notice = s->notice;
    pyr_status_t st;
    if (ends_with(paths[0], ".npy")) {
        s->kind = SRC_NPY;
        s->path = strdup(paths[0]);
        if (npaths > 1) st = pyr_fail(PYR_ERR_ARG, "a .npy input is one stack (T, ny, nx); got %d inputs", npaths);
        else st = npy_open(s, paths[0]);
    } else {
        s->paths = calloc((size_t)npaths, sizeof *s->paths);
        s->npaths = npaths;
        st = s->paths ? PYR_OK : pyr_fail(PYR_ERR_NOMEM, "out of memory");
        for (int i = 0; st == PYR_OK && i < npaths; i++) {
            if (ends_with(paths[i], ".npy")) st = pyr_fail(PYR_ERR_ARG, "cannot mix .npy (%s) and FITS inputs", paths[i]);
            else if (!(s->paths[i] = strdup(paths[i]))) st = pyr_fail(PYR_ERR_NOMEM, "out of memory");
        }
        if (st == PYR_OK) st = fits_open_all(s);
    }
    if (st != PYR_OK) {
        fr_source_close(&s);
        return st;
    }
    *info = s->info;
    *src = s;
    return PYR_OK;
}

pyr_status_t fr_source_read(fr_source_t *s, int64_t i, void *buf)
{
    if (i < 0 || i >= s->info.nframes) return pyr_fail(PYR_ERR_ARG, "frame %lld out of range", (long long)i);
    return s->kind == SRC_NPY ? npy_read(s, i, buf) : fits_read(s, i, buf);
}

void fr_source_close(fr_source_t **src)
{
    if (!src || !*src) return;
    fr_source_t *s = *src;
    if (s->fp) fclose(s->fp);
    free(s->path);
    free(s->conv);
    pyr_fits_close(&s->open_reader);
    pyr_fits_close(&s->first_reader);
    pyr_fits_close(&s->header_reader);
    for (int p = 0; p < 3; p++) pyr_fits_close(&s->plane_reader[p]);
    free(s->hdus);
    free(s->bits);
    free(s->bitbuf);
    for (int i = 0; s->paths && i < s->npaths; i++) free(s->paths[i]);
    free(s->paths);
    free(s);
    *src = NULL;
}

/* ---------------------------------------------------------------- npy writer */

struct fr_npy_writer {
    pyr_atomic_file_t af;
    int64_t nframes, written, n;
};

pyr_status_t fr_npy_writer_open(const char *path, int64_t nframes, int64_t ny, int64_t nx, fr_npy_writer_t **wp)
{
    *wp = NULL;
    fr_npy_writer_t *w = calloc(1, sizeof *w);
    if (!w) return pyr_fail(PYR_ERR_NOMEM, "out of memory");
    pyr_status_t st = pyr_atomic_open(&w->af, path);
    if (st != PYR_OK) {
        free(w);
        return st;
    }
    char h[256];
    int len = snprintf(h, sizeof h, "{'descr': '<f4', 'fortran_order': False, 'shape': (%lld, %lld, %lld), }", (long long)nframes,
                       (long long)ny, (long long)nx);
    int total = 10 + len + 1;
    int pad = (64 - total % 64) % 64;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
    int hl = len + pad + 1;
    pre[8] = (unsigned char)(hl & 0xff);
    pre[9] = (unsigned char)(hl >> 8);
    fwrite(pre, 1, 10, w->af.fp);
    fwrite(h, 1, (size_t)len, w->af.fp);
    for (int i = 0; i < pad; i++) fputc(' ', w->af.fp);
    fputc('\n', w->af.fp);
    w->nframes = nframes;
    w->n = nx * ny;
    *wp = w;
    return PYR_OK;
}

pyr_status_t fr_npy_writer_frame(fr_npy_writer_t *w, const float *data)
{
    if (w->written >= w->nframes) return pyr_fail(PYR_ERR_ARG, "%s: more frames than the header's %lld", w->af.path, (long long)w->nframes);
    if (fwrite(data, sizeof(float), (size_t)w->n, w->af.fp) != (size_t)w->n)
        return pyr_fail(PYR_ERR_IO, "writing %s: %s", w->af.path, strerror(errno));
    w->written++;
    return PYR_OK;
}

pyr_status_t fr_npy_writer_commit(fr_npy_writer_t **wp)
{
    fr_npy_writer_t *w = *wp;
    pyr_status_t st;
    if (w->written != w->nframes) {
        st = pyr_fail(PYR_ERR_INTERNAL, "%s: %lld of %lld frames written", w->af.path, (long long)w->written, (long long)w->nframes);
        pyr_atomic_abort(&w->af);
    } else {
        st = pyr_atomic_commit(&w->af);
    }
    free(w);
    *wp = NULL;
    return st;
}

void fr_npy_writer_abort(fr_npy_writer_t **wp)
{
    if (!wp || !*wp) return;
    pyr_atomic_abort(&(*wp)->af);
    free(*wp);
    *wp = NULL;
}
