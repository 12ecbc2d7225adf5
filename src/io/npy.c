/* NumPy .npy reader and writer.  The format: the magic "\x93NUMPY", a major
 * and a minor version byte, the header length (2 bytes little-endian in 1.0,
 * 4 bytes in 2.0 and 3.0), then a Python dict literal such as
 *   {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }
 * padded with spaces and ended by '\n' so that the data start on a 64-byte
 * boundary, then the raw values. */
#include "io/npy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "io/atomic.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_ALIGN 64
/* Largest header dict accepted when reading: real headers are ~120 bytes. */
#define NPY_MAX_HEADER (1 << 20)
/* Data move through stdio in pieces of this size. */
#define NPY_CHUNK ((size_t)64 << 20)

static int host_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* Reverse the bytes of each of n values of size sz, in place. */
static void swap_bytes(unsigned char *p, size_t n, size_t sz)
{
    for (size_t i = 0; i < n; i++, p += sz)
        for (size_t a = 0, b = sz - 1; a < b; a++, b--) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

/* "(100, 200)", "(5,)", "()" as NumPy prints a shape. */
static void format_shape(char *buf, size_t cap, int ndim, const int64_t *shape)
{
    size_t k = 0;
    k += (size_t)snprintf(buf + k, cap - k, "(");
    for (int i = 0; i < ndim && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%" PRId64, i ? ", " : "", shape[i]);
    if (k < cap) snprintf(buf + k, cap - k, ndim == 1 ? ",)" : ")");
}

static const char *dtype_str(pyr_precision_t p) { return p == PYR_DOUBLE ? "<f8" : "<f4"; }
static const char *dtype_name(pyr_precision_t p) { return p == PYR_DOUBLE ? "float64" : "float32"; }

/* Count of elements, or -1 when a dimension is negative or the byte size of
 * the array would overflow. */
static int64_t shape_count(int ndim, const int64_t *shape, size_t elem)
{
    int64_t count = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) return -1;
        if (shape[i] == 0) {
            count = 0;
            continue;
        }
        if (count > INT64_MAX / shape[i]) return -1;
        count *= shape[i];
    }
    if (count > 0 && ((uint64_t)count > (uint64_t)INT64_MAX / elem || (uint64_t)count > SIZE_MAX / elem))
        return -1;
    return count;
}

/* ------------------------------------------------------------------ write */

pyr_status_t pyr_npy_write(const char *path, int ndim, const int64_t *shape, pyr_precision_t p,
                           const void *data)
{
    if (!path) return pyr_fail(PYR_ERR_ARG, "pyr_npy_write: path is NULL");
    if (ndim < 0 || ndim > PYR_NPY_MAX_NDIM)
        return pyr_fail(PYR_ERR_ARG, "writing %s: ndim = %d; must be 0..%d", path, ndim, PYR_NPY_MAX_NDIM);
    if (ndim > 0 && !shape) return pyr_fail(PYR_ERR_ARG, "writing %s: shape is NULL", path);
    if (p != PYR_FLOAT && p != PYR_DOUBLE)
        return pyr_fail(PYR_ERR_ARG, "writing %s: precision %d is neither PYR_FLOAT nor PYR_DOUBLE", path,
                        (int)p);
    size_t elem = pyr_precision_size(p);
    int64_t count = shape_count(ndim, shape, elem);
    char shape_text[256];
    format_shape(shape_text, sizeof shape_text, ndim, shape);
    if (count < 0)
        return pyr_fail(PYR_ERR_ARG, "writing %s: shape %s has a negative dimension or is too large to address",
                        path, shape_text);
    if (count > 0 && !data) return pyr_fail(PYR_ERR_ARG, "writing %s: data is NULL", path);

    /* Header: prefix (10 bytes) + dict + spaces + '\n', total a multiple of 64. */
    char header[512];
    int len = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                       dtype_str(p), shape_text);
    if (len < 0 || (size_t)len + NPY_ALIGN + 1 > sizeof header)
        return pyr_fail(PYR_ERR_INTERNAL, "writing %s: header too long", path);
    size_t total = NPY_MAGIC_LEN + 4 + (size_t)len + 1;
    size_t padded = (total + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
    size_t hlen = (size_t)len + (padded - total);
    memset(header + len, ' ', padded - total);
    header[hlen] = '\n';
    hlen += 1; /* includes the newline; < 65536, so version 1.0 always fits */

    unsigned char prefix[NPY_MAGIC_LEN + 4];
    memcpy(prefix, NPY_MAGIC, NPY_MAGIC_LEN);
    prefix[6] = 1;
    prefix[7] = 0;
    prefix[8] = (unsigned char)(hlen & 0xff);
    prefix[9] = (unsigned char)(hlen >> 8);

    pyr_atomic_file_t af;
    PYR_TRY(pyr_atomic_open(&af, path));
    int ok = fwrite(prefix, 1, sizeof prefix, af.fp) == sizeof prefix &&
             fwrite(header, 1, hlen, af.fp) == hlen;
    size_t bytes = (size_t)count * elem;
    const unsigned char *src = data;
    if (host_little_endian()) {
        for (size_t off = 0; ok && off < bytes; off += NPY_CHUNK) {
            size_t n = bytes - off < NPY_CHUNK ? bytes - off : NPY_CHUNK;
            ok = fwrite(src + off, 1, n, af.fp) == n;
        }
    } else {
        size_t cap = bytes < NPY_CHUNK ? bytes : NPY_CHUNK;
        unsigned char *tmp = cap ? malloc(cap) : NULL;
        if (cap && !tmp) {
            pyr_atomic_abort(&af);
            return pyr_fail(PYR_ERR_NOMEM, "writing %s: out of memory for a %zu-byte buffer", path, cap);
        }
        for (size_t off = 0; ok && off < bytes; off += cap) {
            size_t n = bytes - off < cap ? bytes - off : cap;
            memcpy(tmp, src + off, n);
            swap_bytes(tmp, n / elem, elem);
            ok = fwrite(tmp, 1, n, af.fp) == n;
        }
        free(tmp);
    }
    if (!ok) {
        int err = errno;
        pyr_atomic_abort(&af);
        return pyr_fail(PYR_ERR_IO, "writing %s (%zu bytes of data): %s (nothing was written)", path, bytes,
                        strerror(err));
    }
    return pyr_atomic_commit(&af);
}

/* ------------------------------------------------------------------- read */

typedef enum { DT_OK, DT_BIG_ENDIAN, DT_OTHER } dtype_class_t;

typedef struct {
    pyr_npy_info_t info;
    char descr[64];       /* as written in the header */
    dtype_class_t dclass; /* DT_OK: info.precision is set */
    int fortran;
    int64_t file_size;
} npy_header_t;

/* NumPy's name for a simple descr ("<i8" -> "int64"), else NULL. */
static const char *numpy_type_name(const char *descr, char *buf, size_t cap)
{
    const char *d = descr;
    if (*d == '<' || *d == '>' || *d == '|' || *d == '=') d++;
    char kind = *d;
    int size = atoi(d + 1);
    switch (kind) {
    case 'f':
        if (size == 2 || size == 4 || size == 8 || size == 16) {
            snprintf(buf, cap, size == 16 ? "float128 (longdouble)" : "float%d", size * 8);
            return buf;
        }
        break;
    case 'i':
        if (size == 1 || size == 2 || size == 4 || size == 8) {
            snprintf(buf, cap, "int%d", size * 8);
            return buf;
        }
        break;
    case 'u':
        if (size == 1 || size == 2 || size == 4 || size == 8) {
            snprintf(buf, cap, "uint%d", size * 8);
            return buf;
        }
        break;
    case 'c':
        if (size == 8 || size == 16 || size == 32) {
            snprintf(buf, cap, "complex%d", size * 8);
            return buf;
        }
        break;
    case 'b': return "bool";
    case 'U': return "unicode strings";
    case 'S': return "byte strings";
    case 'O': return "Python objects";
    case 'M': return "datetime64";
    case 'm': return "timedelta64";
    case 'V': return "raw void records";
    default: break;
    }
    return NULL;
}

/* Parser state over the header dict text. */
typedef struct {
    const char *s;
    size_t n, i;
    const char *path;
} hparse_t;

static void skip_ws(hparse_t *h)
{
    while (h->i < h->n && (h->s[h->i] == ' ' || h->s[h->i] == '\t' || h->s[h->i] == '\n' ||
                           h->s[h->i] == '\r' || h->s[h->i] == '\0'))
        h->i++;
}

static pyr_status_t malformed(const hparse_t *h, const char *what)
{
    char shown[100];
    size_t k = 0, j = 0;
    for (; j < h->n && k < 80; j++) {
        unsigned char c = (unsigned char)h->s[j];
        if (c == '\n') break;
        shown[k++] = (c >= 32 && c < 127) ? (char)c : '?';
    }
    int cut = 0; /* more text (not padding) follows what is shown */
    for (; j < h->n; j++)
        if (h->s[j] != ' ' && h->s[j] != '\n' && h->s[j] != '\0') cut = 1;
    while (k > 0 && shown[k - 1] == ' ') k--; /* padding */
    shown[k] = '\0';
    return pyr_fail(PYR_ERR_FORMAT,
                    "%s: malformed .npy header: %s at character %zu of \"%s%s\"; the file is damaged or "
                    "not written by NumPy, re-save it with np.save",
                    h->path, what, h->i, shown, cut ? "..." : "");
}

static pyr_status_t expect_char(hparse_t *h, char c, const char *what)
{
    skip_ws(h);
    if (h->i >= h->n || h->s[h->i] != c) return malformed(h, what);
    h->i++;
    return PYR_OK;
}

/* A quoted Python string (no escapes in valid headers) into out. */
static pyr_status_t parse_string(hparse_t *h, char *out, size_t cap, const char *what)
{
    skip_ws(h);
    if (h->i >= h->n || (h->s[h->i] != '\'' && h->s[h->i] != '"')) return malformed(h, what);
    char q = h->s[h->i++];
    size_t k = 0;
    while (h->i < h->n && h->s[h->i] != q) {
        if (h->s[h->i] == '\\' || k + 1 >= cap) return malformed(h, "unexpected string contents");
        out[k++] = h->s[h->i++];
    }
    if (h->i >= h->n) return malformed(h, "unterminated string");
    h->i++;
    out[k] = '\0';
    return PYR_OK;
}

static int match_word(hparse_t *h, const char *w)
{
    size_t len = strlen(w);
    if (h->n - h->i >= len && memcmp(h->s + h->i, w, len) == 0) {
        h->i += len;
        return 1;
    }
    return 0;
}

static pyr_status_t parse_shape(hparse_t *h, npy_header_t *hd)
{
    PYR_TRY(expect_char(h, '(', "expected '(' starting the shape tuple"));
    int nd = 0;
    for (;;) {
        skip_ws(h);
        if (h->i < h->n && h->s[h->i] == ')') {
            h->i++;
            break;
        }
        if (h->i >= h->n || h->s[h->i] < '0' || h->s[h->i] > '9')
            return malformed(h, "expected a non-negative integer in the shape tuple");
        int64_t v = 0;
        while (h->i < h->n && h->s[h->i] >= '0' && h->s[h->i] <= '9') {
            int dgt = h->s[h->i++] - '0';
            if (v > (INT64_MAX - dgt) / 10) return malformed(h, "shape dimension too large");
            v = v * 10 + dgt;
        }
        if (h->i < h->n && h->s[h->i] == 'L') h->i++; /* Python 2 long */
        if (nd >= PYR_NPY_MAX_NDIM)
            return pyr_fail(PYR_ERR_FORMAT, "%s has more than %d dimensions; at most %d are supported",
                            h->path, PYR_NPY_MAX_NDIM, PYR_NPY_MAX_NDIM);
        hd->info.shape[nd++] = v;
        skip_ws(h);
        if (h->i < h->n && h->s[h->i] == ',') {
            h->i++;
            continue;
        }
        if (h->i < h->n && h->s[h->i] == ')') {
            h->i++;
            break;
        }
        return malformed(h, "expected ',' or ')' in the shape tuple");
    }
    hd->info.ndim = nd;
    return PYR_OK;
}

static pyr_status_t parse_dict(hparse_t *h, npy_header_t *hd)
{
    int have_descr = 0, have_fortran = 0, have_shape = 0;
    PYR_TRY(expect_char(h, '{', "expected '{' starting the header dict"));
    for (;;) {
        skip_ws(h);
        if (h->i < h->n && h->s[h->i] == '}') {
            h->i++;
            break;
        }
        char key[32];
        PYR_TRY(parse_string(h, key, sizeof key, "expected a quoted key"));
        PYR_TRY(expect_char(h, ':', "expected ':' after a key"));
        skip_ws(h);
        if (strcmp(key, "descr") == 0) {
            if (h->i < h->n && h->s[h->i] == '[')
                return pyr_fail(PYR_ERR_FORMAT,
                                "%s holds a structured (record) dtype; needs a plain float32 (<f4) or "
                                "float64 (<f8) array; save a single field, e.g. np.save(f, a['name'])",
                                h->path);
            PYR_TRY(parse_string(h, hd->descr, sizeof hd->descr, "expected a quoted dtype after 'descr'"));
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (match_word(h, "True")) hd->fortran = 1;
            else if (match_word(h, "False")) hd->fortran = 0;
            else return malformed(h, "expected True or False after 'fortran_order'");
            have_fortran = 1;
        } else if (strcmp(key, "shape") == 0) {
            PYR_TRY(parse_shape(h, hd));
            have_shape = 1;
        } else {
            char msg[80];
            snprintf(msg, sizeof msg, "unexpected key '%s'", key);
            return malformed(h, msg);
        }
        skip_ws(h);
        if (h->i < h->n && h->s[h->i] == ',') {
            h->i++;
            continue;
        }
        if (h->i < h->n && h->s[h->i] == '}') {
            h->i++;
            break;
        }
        return malformed(h, "expected ',' or '}' after a value");
    }
    skip_ws(h);
    if (h->i != h->n) return malformed(h, "unexpected text after the header dict");
    if (!have_descr || !have_fortran || !have_shape)
        return malformed(h, !have_descr ? "no 'descr' key" : !have_fortran ? "no 'fortran_order' key"
                                                                              : "no 'shape' key");
    return PYR_OK;
}

static void classify_dtype(npy_header_t *hd)
{
    const char *d = hd->descr;
    char order = '<';
    if (*d == '<' || *d == '>' || *d == '|' || *d == '=') order = *d++;
    if (order == '=') order = host_little_endian() ? '<' : '>';
    int is_f4 = strcmp(d, "f4") == 0, is_f8 = strcmp(d, "f8") == 0;
    if (!is_f4 && !is_f8) {
        hd->dclass = DT_OTHER;
        return;
    }
    hd->info.precision = is_f8 ? PYR_DOUBLE : PYR_FLOAT;
    hd->dclass = order == '>' ? DT_BIG_ENDIAN : DT_OK;
}

static pyr_status_t open_for_reading(const char *path, FILE **fp, int64_t *size)
{
    return pyr_open_input(path, ".npy input", fp, size, NULL);
}

/* Open path, read and parse the header, leave *fp positioned at the data. */
static pyr_status_t read_header(const char *path, FILE **fp, npy_header_t *hd)
{
    memset(hd, 0, sizeof *hd);
    FILE *f;
    PYR_TRY(open_for_reading(path, &f, &hd->file_size));
    unsigned char pre[12];
    size_t got = fread(pre, 1, 10, f);
    if (got < NPY_MAGIC_LEN || memcmp(pre, NPY_MAGIC, NPY_MAGIC_LEN) != 0) {
        fclose(f);
        if (got >= 4 && memcmp(pre, "PK\x03\x04", 4) == 0)
            return pyr_fail(PYR_ERR_FORMAT,
                            "%s is a .npz archive, not a .npy file; save one array with np.save(file, a)",
                            path);
        return pyr_fail(PYR_ERR_FORMAT,
                        "%s is not a .npy file: it does not start with the magic \"\\x93NUMPY\"%s; "
                        "write it with np.save(file, a)",
                        path, got == 0 ? " (the file is empty)" : "");
    }
    if (got < 8) {
        fclose(f);
        return pyr_fail(PYR_ERR_FORMAT, "%s: .npy file truncated inside its header (%zu bytes long)", path, got);
    }
    int major = pre[6], minor = pre[7];
    if (!((major == 1 || major == 2 || major == 3) && minor == 0)) {
        fclose(f);
        return pyr_fail(PYR_ERR_FORMAT,
                        "%s is .npy format version %d.%d; this reader supports 1.0, 2.0 and 3.0; "
                        "re-save it with an older NumPy or np.lib.format.write_array(f, a, version=(1, 0))",
                        path, major, minor);
    }
    size_t lenbytes = major == 1 ? 2 : 4;
    if (major != 1) got += fread(pre + 10, 1, 2, f);
    if (got < 8 + lenbytes) {
        fclose(f);
        return pyr_fail(PYR_ERR_FORMAT, "%s: .npy file truncated inside its header (%zu bytes long)", path, got);
    }
    uint32_t hlen = (uint32_t)pre[8] | (uint32_t)pre[9] << 8;
    if (lenbytes == 4) hlen |= (uint32_t)pre[10] << 16 | (uint32_t)pre[11] << 24;
    if (hlen > NPY_MAX_HEADER) {
        fclose(f);
        return pyr_fail(PYR_ERR_FORMAT, "%s: .npy header claims %" PRIu32 " bytes; at most %d are accepted; "
                        "the file is damaged, re-save it with np.save",
                        path, hlen, NPY_MAX_HEADER);
    }
    char *text = malloc(hlen + 1);
    if (!text) {
        fclose(f);
        return pyr_fail(PYR_ERR_NOMEM, "reading %s: out of memory for the header", path);
    }
    size_t hgot = fread(text, 1, hlen, f);
    if (hgot != hlen) {
        free(text);
        fclose(f);
        return pyr_fail(PYR_ERR_FORMAT, "%s: .npy header truncated: has %zu of %" PRIu32 " bytes", path, hgot,
                        hlen);
    }
    text[hlen] = '\0';
    hparse_t h = {text, hlen, 0, path};
    pyr_status_t st = parse_dict(&h, hd);
    free(text);
    if (st != PYR_OK) {
        fclose(f);
        return st;
    }
    classify_dtype(hd);
    hd->info.data_offset = (long)(8 + lenbytes + hlen);
    *fp = f;
    return PYR_OK;
}

/* dtype and order must be a usable float array; `need` is the required
 * precision or -1 for either. */
static pyr_status_t check_dtype(const char *path, const npy_header_t *hd, int need)
{
    const char *needed_text = need < 0 ? "float32 (<f4) or float64 (<f8)"
                              : need == PYR_DOUBLE ? "float64 (<f8)" : "float32 (<f4)";
    const char *target = need == PYR_FLOAT ? "np.float32" : "np.float64";
    if (hd->dclass == DT_BIG_ENDIAN) {
        /* name the one dtype that would be read: without a required
         * precision, the file's own in little-endian order */
        if (need < 0)
            return pyr_fail(PYR_ERR_FORMAT, "%s holds big-endian %s ('%s'); pyrgrid reads little-endian data only; convert with a.astype('%s')",
                            path, dtype_name(hd->info.precision), hd->descr, dtype_str(hd->info.precision));
        return pyr_fail(PYR_ERR_FORMAT, "%s holds big-endian %s ('%s'); needs little-endian %s (%s); convert with a.astype('%s')", path,
                        dtype_name(hd->info.precision), hd->descr, dtype_name((pyr_precision_t)need), dtype_str((pyr_precision_t)need),
                        dtype_str((pyr_precision_t)need));
    }
    if (hd->dclass == DT_OTHER) {
        char buf[40];
        const char *name = numpy_type_name(hd->descr, buf, sizeof buf);
        if (name)
            return pyr_fail(PYR_ERR_FORMAT, "%s holds %s (%s), needs %s; convert with a.astype(%s)", path, name,
                            hd->descr, needed_text, target);
        return pyr_fail(PYR_ERR_FORMAT, "%s holds dtype '%s', needs %s; convert with a.astype(%s)", path,
                        hd->descr, needed_text, target);
    }
    if (need >= 0 && (int)hd->info.precision != need)
        return pyr_fail(PYR_ERR_FORMAT, "%s holds %s (%s), needs %s; convert with a.astype(%s)", path,
                        dtype_name(hd->info.precision), dtype_str(hd->info.precision), needed_text, target);
    if (hd->fortran)
        return pyr_fail(PYR_ERR_FORMAT,
                        "%s is stored in Fortran (column-major) order; needs C (row-major) order; save "
                        "np.ascontiguousarray(a) instead",
                        path);
    return PYR_OK;
}

/* Count and whether the data are all there. */
static pyr_status_t check_size(const char *path, npy_header_t *hd)
{
    size_t elem = pyr_precision_size(hd->info.precision);
    int64_t count = shape_count(hd->info.ndim, hd->info.shape, elem);
    char shape_text[256];
    format_shape(shape_text, sizeof shape_text, hd->info.ndim, hd->info.shape);
    if (count < 0)
        return pyr_fail(PYR_ERR_FORMAT, "%s: shape %s is too large to address", path, shape_text);
    hd->info.count = count;
    int64_t need = count * (int64_t)elem;
    int64_t have = hd->file_size - hd->info.data_offset;
    if (have < 0) have = 0;
    if (have < need)
        return pyr_fail(PYR_ERR_FORMAT,
                        "%s has %" PRId64 " of %" PRId64 " bytes of data (shape %s, %s): the file is "
                        "truncated; re-create it",
                        path, have, need, shape_text, dtype_name(hd->info.precision));
    return PYR_OK;
}

static pyr_status_t read_data(const char *path, FILE *f, const npy_header_t *hd, void *data)
{
    size_t elem = pyr_precision_size(hd->info.precision);
    size_t bytes = (size_t)hd->info.count * elem;
    unsigned char *dst = data;
    for (size_t off = 0; off < bytes; off += NPY_CHUNK) {
        size_t n = bytes - off < NPY_CHUNK ? bytes - off : NPY_CHUNK;
        size_t got = fread(dst + off, 1, n, f);
        if (got != n) {
            if (ferror(f))
                return pyr_fail(PYR_ERR_IO, "reading %s: %s after %zu of %zu bytes of data", path,
                                strerror(errno), off + got, bytes);
            return pyr_fail(PYR_ERR_FORMAT, "%s has %zu of %zu bytes of data: the file is truncated; re-create it",
                            path, off + got, bytes);
        }
    }
    if (!host_little_endian()) swap_bytes(data, (size_t)hd->info.count, elem);
    return PYR_OK;
}

pyr_status_t pyr_npy_read_info(const char *path, pyr_npy_info_t *info)
{
    if (!info) return pyr_fail(PYR_ERR_ARG, "pyr_npy_read_info: info is NULL");
    npy_header_t hd;
    FILE *f;
    PYR_TRY(read_header(path, &f, &hd));
    pyr_status_t st = check_dtype(path, &hd, -1);
    if (st == PYR_OK) st = check_size(path, &hd);
    fclose(f);
    if (st == PYR_OK) *info = hd.info;
    return st;
}

pyr_status_t pyr_npy_read_info_as(const char *path, pyr_precision_t p, pyr_npy_info_t *info)
{
    if (!info) return pyr_fail(PYR_ERR_ARG, "pyr_npy_read_info_as: info is NULL");
    if (p != PYR_FLOAT && p != PYR_DOUBLE)
        return pyr_fail(PYR_ERR_ARG, "pyr_npy_read_info_as: precision %d is neither PYR_FLOAT nor PYR_DOUBLE", (int)p);
    npy_header_t hd;
    FILE *f;
    PYR_TRY(read_header(path, &f, &hd));
    pyr_status_t st = check_dtype(path, &hd, (int)p);
    if (st == PYR_OK) st = check_size(path, &hd);
    fclose(f);
    if (st == PYR_OK) *info = hd.info;
    return st;
}

pyr_status_t pyr_npy_read_expect(const char *path, int ndim, const int64_t *shape, pyr_precision_t p, void *data)
{
    if (ndim < 0 || ndim > PYR_NPY_MAX_NDIM || (ndim > 0 && !shape))
        return pyr_fail(PYR_ERR_ARG, "pyr_npy_read_expect: ndim = %d; must be 0..%d with a shape", ndim,
                        PYR_NPY_MAX_NDIM);
    if (p != PYR_FLOAT && p != PYR_DOUBLE)
        return pyr_fail(PYR_ERR_ARG, "pyr_npy_read_expect: precision %d is neither PYR_FLOAT nor PYR_DOUBLE",
                        (int)p);
    npy_header_t hd;
    FILE *f;
    PYR_TRY(read_header(path, &f, &hd));
    pyr_status_t st = check_dtype(path, &hd, (int)p);
    if (st == PYR_OK) {
        int same = hd.info.ndim == ndim;
        for (int i = 0; same && i < ndim; i++) same = hd.info.shape[i] == shape[i];
        if (!same) {
            char found[256], want[256];
            format_shape(found, sizeof found, hd.info.ndim, hd.info.shape);
            format_shape(want, sizeof want, ndim, shape);
            st = pyr_fail(PYR_ERR_FORMAT, "%s has shape %s, expected %s (NumPy order, slowest axis first)", path,
                          found, want);
        }
    }
    if (st == PYR_OK) st = check_size(path, &hd);
    if (st == PYR_OK && hd.info.count > 0 && !data)
        st = pyr_fail(PYR_ERR_ARG, "pyr_npy_read_expect: data is NULL");
    if (st == PYR_OK) st = read_data(path, f, &hd, data);
    fclose(f);
    return st;
}

pyr_status_t pyr_npy_read_alloc(const char *path, pyr_npy_info_t *info, void **data)
{
    if (!info || !data) return pyr_fail(PYR_ERR_ARG, "pyr_npy_read_alloc: info or data is NULL");
    *data = NULL;
    npy_header_t hd;
    FILE *f;
    PYR_TRY(read_header(path, &f, &hd));
    pyr_status_t st = check_dtype(path, &hd, -1);
    if (st == PYR_OK) st = check_size(path, &hd);
    void *buf = NULL;
    if (st == PYR_OK) {
        size_t bytes = (size_t)hd.info.count * pyr_precision_size(hd.info.precision);
        buf = malloc(bytes ? bytes : 1);
        if (!buf) {
            char shape_text[256];
            format_shape(shape_text, sizeof shape_text, hd.info.ndim, hd.info.shape);
            st = pyr_fail(PYR_ERR_NOMEM, "reading %s: cannot allocate %zu bytes for shape %s %s", path, bytes,
                          shape_text, dtype_name(hd.info.precision));
        }
    }
    if (st == PYR_OK) st = read_data(path, f, &hd, buf);
    fclose(f);
    if (st != PYR_OK) {
        free(buf);
        return st;
    }
    *info = hd.info;
    *data = buf;
    return PYR_OK;
}

/* ------------------------------------------------------------ integer labels */

pyr_status_t pyr_npy_read_labels(const char *path, int ndim, const int64_t *shape, int32_t **labels)
{
    *labels = NULL;
    npy_header_t hd;
    FILE *f;
    PYR_TRY(read_header(path, &f, &hd));
    const char *d = hd.descr;
    char order = '<';
    if (*d == '<' || *d == '>' || *d == '|' || *d == '=') order = *d++;
    if (order == '=') order = host_little_endian() ? '<' : '>';
    const char kind = d[0];
    const int size = atoi(d + 1);
    char buf[40], want[256], got[256];
    const char *name = numpy_type_name(hd.descr, buf, sizeof buf);
    pyr_status_t st = PYR_OK;
    if ((kind != 'i' && kind != 'u') || (size != 1 && size != 2 && size != 4 && size != 8))
        st = pyr_fail(PYR_ERR_FORMAT, "%s holds %s ('%s'); a label map needs an integer per node (int8 .. int64, uint8 .. uint64); "
                                      "convert with a.astype(np.int32)",
                      path, name ? name : "another dtype", hd.descr);
    else if (order == '>' && size > 1)
        st = pyr_fail(PYR_ERR_FORMAT, "%s holds big-endian %s ('%s'); pyrgrid reads little-endian data only; convert with a.astype('<i4')", path,
                      name ? name : "integers", hd.descr);
    else if (hd.fortran)
        st = pyr_fail(PYR_ERR_FORMAT, "%s is stored in Fortran (column-major) order; needs C (row-major) order; save np.ascontiguousarray(a) instead",
                      path);
    int same = st == PYR_OK && hd.info.ndim == ndim;
    for (int i = 0; same && i < ndim; i++) same = hd.info.shape[i] == shape[i];
    if (st == PYR_OK && !same) {
        format_shape(want, sizeof want, ndim, shape);
        format_shape(got, sizeof got, hd.info.ndim, hd.info.shape);
        st = pyr_fail(PYR_ERR_FORMAT, "%s has shape %s; the grid's label map needs shape %s (NumPy's order: slowest axis first)", path, got, want);
    }
    int64_t count = 1;
    for (int i = 0; i < ndim; i++) count *= shape[i];
    const int64_t have = hd.file_size - hd.info.data_offset;
    if (st == PYR_OK && have < count * size)
        st = pyr_fail(PYR_ERR_FORMAT, "%s has %" PRId64 " of %" PRId64 " bytes of data: the file is truncated; re-create it", path,
                      have < 0 ? (int64_t)0 : have, count * size);
    unsigned char *raw = NULL;
    int32_t *out = NULL;
    if (st == PYR_OK) {
        raw = malloc((size_t)(count * size));
        out = malloc((size_t)count * sizeof *out);
        if (!raw || !out) st = pyr_fail(PYR_ERR_NOMEM, "reading %s: out of host memory for %" PRId64 " labels", path, count);
    }
    if (st == PYR_OK && fread(raw, (size_t)size, (size_t)count, f) != (size_t)count)
        st = pyr_fail(PYR_ERR_IO, "reading %s: the data end early", path);
    fclose(f);
    for (int64_t k = 0; st == PYR_OK && k < count; k++) {
        /* little-endian bytes to a value, the sign from the top byte for signed types */
        uint64_t u = 0;
        for (int b = 0; b < size; b++) u |= (uint64_t)raw[k * size + b] << (8 * b);
        int64_t v = (int64_t)u;
        if (kind == 'i' && size < 8 && (u >> (8 * size - 1)) & 1) v = (int64_t)(u | (~(uint64_t)0 << (8 * size)));
        if (kind == 'u' && size == 8 && u > (uint64_t)INT32_MAX) v = INT64_MAX;
        if (v < INT32_MIN || v > INT32_MAX) v = v < 0 ? INT32_MIN : INT32_MAX; /* out of any label's range: refused by the caller */
        out[k] = (int32_t)v;
    }
    free(raw);
    if (st != PYR_OK) {
        free(out);
        return st;
    }
    *labels = out;
    return PYR_OK;
}
