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
};

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

static pyr_status_t fits_open_all(fr_source_t *s)
{
    pyr_fits_info_t info;
    PYR_TRY(pyr_fits_open(s->paths[0], &s->first_reader, &info));
    s->first = info;
    s->info.fits = &s->first;
    s->info.nx = info.nx;
    s->info.ny = info.ny;
    s->fits_type = info.native;
    if (s->npaths == 1) {
        s->kind = SRC_CUBE;
        s->info.kind = info.nframes > 1 ? "FITS cube" : "FITS file";
        s->info.nframes = info.nframes;
        s->info.type = from_fits(info.native);
        return PYR_OK;
    }
    s->kind = SRC_FILES;
    s->info.kind = "FITS files";
    s->info.nframes = s->npaths;
    if (info.nframes != 1)
        return pyr_fail(PYR_ERR_FORMAT, "%s holds %lld frames; give either one cube or a list of 2D images", s->paths[0],
                        (long long)info.nframes);
    /* every file: same size; a mix of pixel types is read as float */
    for (int i = 1; i < s->npaths; i++) {
        pyr_fits_reader_t *r = NULL;
        pyr_fits_info_t in;
        PYR_TRY(pyr_fits_open(s->paths[i], &r, &in));
        pyr_status_t st = PYR_OK;
        if (in.nx != info.nx || in.ny != info.ny)
            st = pyr_fail(PYR_ERR_FORMAT, "frames of different sizes in one sequence: %s is %lld x %lld, %s is %lld x %lld; "
                                          "crop or resample them to one size",
                          s->paths[0], (long long)info.nx, (long long)info.ny, s->paths[i], (long long)in.nx, (long long)in.ny);
        else if (in.nframes != 1)
            st = pyr_fail(PYR_ERR_FORMAT, "%s holds %lld frames; in a list every file must be one 2D image", s->paths[i],
                          (long long)in.nframes);
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
        PYR_TRY(pyr_fits_open(s->paths[i], &s->open_reader, &in));
        if (in.nx != s->info.nx || in.ny != s->info.ny) /* changed since it was opened */
            return pyr_fail(PYR_ERR_FORMAT, "%s is now %lld x %lld, not %lld x %lld", s->paths[i], (long long)in.nx,
                            (long long)in.ny, (long long)s->info.nx, (long long)s->info.ny);
        s->open_index = (int)i;
    }
    return pyr_fits_read_frame(s->open_reader, 0, s->fits_type, buf);
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
        if (pyr_fits_open(s->paths[i], &r, &in) != PYR_OK) return;
        use = &in;
    }
    char buf[80];
    if (pyr_fits_card_value(use, "DATE-OBS", buf, sizeof buf)) snprintf(date_obs, 25, "%.24s", buf);
    if (pyr_fits_card_value(use, "EXPTIME", buf, sizeof buf) || pyr_fits_card_value(use, "EXPOSURE", buf, sizeof buf) ||
        pyr_fits_card_value(use, "ITIME", buf, sizeof buf))
        *exptime = atof(buf);
    pyr_fits_close(&r);
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
