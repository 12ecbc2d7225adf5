/* Parts of .npy files: hyperslab reads, streamed writes, the parts index of
 * an MPI run and its assembly into one array (npy_part.h). */
/* realpath() is XSI */
#define _XOPEN_SOURCE 700

#include "io/npy_part.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "io/atomic.h"
#include "io/json.h"
#include "io/npy.h"

static int little_endian(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

static void swap_values(void *data, int64_t count, size_t elem)
{
    unsigned char *p = data;
    for (int64_t i = 0; i < count; i++, p += elem)
        for (size_t a = 0, b = elem - 1; a < b; a++, b--) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

static void shape_text(char *out, size_t size, int ndim, const int64_t *shape)
{
    size_t k = (size_t)snprintf(out, size, "(");
    for (int i = 0; i < ndim && k < size; i++)
        k += (size_t)snprintf(out + k, size - k, "%s%" PRId64, i ? ", " : "", shape[i]);
    if (k < size) snprintf(out + k, size - k, ndim == 1 ? ",)" : ")");
}

/* Read `bytes` at `offset` of fd, all of them. */
static pyr_status_t read_at(int fd, const char *path, int64_t offset, void *dst, size_t bytes)
{
    size_t done = 0;
    while (done < bytes) {
        ssize_t got = pread(fd, (char *)dst + done, bytes - done, (off_t)(offset + (int64_t)done));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return pyr_fail(PYR_ERR_IO, "reading %s at byte %" PRId64 ": %s", path, offset + (int64_t)done, strerror(errno));
        if (got == 0) return pyr_fail(PYR_ERR_FORMAT, "%s ends at byte %" PRId64 ": the file is truncated; re-create it", path, offset + (int64_t)done);
        done += (size_t)got;
    }
    return PYR_OK;
}

pyr_status_t pyr_npy_read_part(const char *path, int dims, const int64_t n[3], const int64_t origin[3], const int64_t count[3],
                               pyr_precision_t p, void *data)
{
    pyr_npy_info_t info;
    PYR_TRY(pyr_npy_read_info(path, &info));
    int64_t want[3];
    for (int d = 0; d < dims; d++) want[d] = n[dims - 1 - d];
    int same = info.ndim == dims;
    for (int d = 0; same && d < dims; d++) same = info.shape[d] == want[d];
    if (!same) {
        char found[128], need[128];
        shape_text(found, sizeof found, info.ndim, info.shape);
        shape_text(need, sizeof need, dims, want);
        return pyr_fail(PYR_ERR_FORMAT, "%s has shape %s, expected %s (NumPy order, slowest axis first)", path, found, need);
    }
    if (info.precision != p)
        return pyr_fail(PYR_ERR_FORMAT, "%s holds %s, needs %s; convert with a.astype(np.%s)", path,
                        info.precision == PYR_DOUBLE ? "float64 (<f8)" : "float32 (<f4)", p == PYR_DOUBLE ? "float64 (<f8)" : "float32 (<f4)",
                        p == PYR_DOUBLE ? "float64" : "float32");
    for (int d = 0; d < 3; d++)
        if (origin[d] < 0 || count[d] < 1 || origin[d] + count[d] > n[d])
            return pyr_fail(PYR_ERR_ARG, "reading part of %s: nodes %" PRId64 "..%" PRId64 " of axis %d are outside its %" PRId64, path, origin[d],
                            origin[d] + count[d] - 1, d, n[d]);
    FILE *fp = NULL;
    PYR_TRY(pyr_open_input(path, ".npy input", &fp, NULL, NULL));
    const size_t elem = pyr_precision_size(p);
    const size_t row = (size_t)count[0] * elem;
    pyr_status_t st = PYR_OK;
    char *dst = data;
    for (int64_t z = 0; z < count[2] && st == PYR_OK; z++)
        for (int64_t y = 0; y < count[1] && st == PYR_OK; y++) {
            const int64_t node = ((origin[2] + z) * n[1] + (origin[1] + y)) * n[0] + origin[0];
            st = read_at(fileno(fp), path, (int64_t)info.data_offset + node * (int64_t)elem, dst, row);
            dst += row;
        }
    fclose(fp);
    if (st == PYR_OK && !little_endian()) swap_values(data, count[0] * count[1] * count[2], elem);
    return st;
}

pyr_status_t pyr_npy_write_header(FILE *fp, const char *path, int ndim, const int64_t *shape, pyr_precision_t p)
{
    char dims[160];
    shape_text(dims, sizeof dims, ndim, shape);
    char header[512];
    int len = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", p == PYR_DOUBLE ? "<f8" : "<f4", dims);
    if (len < 0 || (size_t)len + 80 > sizeof header) return pyr_fail(PYR_ERR_INTERNAL, "writing %s: header too long", path);
    /* magic (6) + version (2) + length (2) + dict + spaces + '\n': a multiple of 64 */
    size_t total = 10 + (size_t)len + 1, padded = (total + 63) / 64 * 64, hlen = (size_t)len + (padded - total);
    memset(header + len, ' ', padded - total);
    header[hlen++] = '\n';
    unsigned char prefix[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff), (unsigned char)(hlen >> 8)};
    if (fwrite(prefix, 1, sizeof prefix, fp) != sizeof prefix || fwrite(header, 1, hlen, fp) != hlen)
        return pyr_fail(PYR_ERR_IO, "writing %s: %s", path, strerror(errno));
    return PYR_OK;
}

/* ------------------------------------------------------------------ index */

pyr_status_t pyr_npy_index_write(const char *path, const pyr_npy_index_t *x)
{
    pyr_atomic_file_t af;
    PYR_TRY(pyr_atomic_open(&af, path));
    FILE *f = af.fp;
    fprintf(f, "{\"format\": \"pyrgrid-parts\", \"version\": 1, \"dims\": %d, \"shape\": [", x->dims);
    for (int d = 0; d < x->dims; d++) fprintf(f, "%s%" PRId64, d ? ", " : "", x->shape[d]);
    fprintf(f, "], \"dtype\": \"%s\",\n \"parts\": [", x->precision == PYR_DOUBLE ? "<f8" : "<f4");
    for (int i = 0; i < x->nparts; i++) {
        fprintf(f, "%s\n  {\"file\": \"", i ? "," : "");
        for (const char *c = x->parts[i].file; *c; c++) {
            const size_t n = pyr_utf8_char_len(c);
            if (*c == '"' || *c == '\\') fprintf(f, "\\%c", *c);
            else if ((unsigned char)*c < 0x20) fprintf(f, "\\u%04x", (unsigned)(unsigned char)*c);
            /* a byte of a name that is not UTF-8: \udcXX as Python's
             * surrogateescape, so that JSON readers take the index and
             * js_string gives the byte back */
            else if (n == 0) fprintf(f, "\\udc%02x", (unsigned)(unsigned char)*c);
            else {
                fwrite(c, 1, n, f);
                c += n - 1;
            }
        }
        fprintf(f, "\", \"offset\": [");
        for (int d = 0; d < x->dims; d++) fprintf(f, "%s%" PRId64, d ? ", " : "", x->parts[i].offset[d]);
        fprintf(f, "], \"shape\": [");
        for (int d = 0; d < x->dims; d++) fprintf(f, "%s%" PRId64, d ? ", " : "", x->parts[i].shape[d]);
        fprintf(f, "]}");
    }
    fprintf(f, "\n ]}\n");
    if (ferror(f)) {
        pyr_atomic_abort(&af);
        return pyr_fail(PYR_ERR_IO, "writing %s: %s", path, strerror(errno));
    }
    return pyr_atomic_commit(&af);
}

/* A small JSON reader for the index: objects, arrays, strings, integers. */
typedef struct {
    const char *s, *start, *end, *path;
} js_t;

/* Lists and objects may nest this deep: an index nests three levels, and
 * deeper values (of keys this reader skips) would only cost stack. */
#define JS_MAX_DEPTH 200

static void js_ws(js_t *j)
{
    while (j->s < j->end && isspace((unsigned char)*j->s)) j->s++;
}

static pyr_status_t js_bad(js_t *j, const char *what)
{
    return pyr_fail(PYR_ERR_FORMAT, "%s is not a pyrgrid parts index: %s at byte %ld; it is written by 'mpirun ... pyrgrid run'", j->path,
                    what, (long)(j->s - j->start));
}

static int js_eat(js_t *j, char c)
{
    js_ws(j);
    if (j->s < j->end && *j->s == c) {
        j->s++;
        return 1;
    }
    return 0;
}

static int js_hex4(const char *s, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        const char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return 0;
        *v = *v << 4 | (unsigned)d;
    }
    return 1;
}

/* Code point u (not a surrogate, below 0x110000) as UTF-8; its length. */
static size_t js_utf8(char *out, unsigned u)
{
    if (u < 0x80) {
        out[0] = (char)u;
        return 1;
    }
    if (u < 0x800) {
        out[0] = (char)(0xc0 | u >> 6);
        out[1] = (char)(0x80 | (u & 0x3f));
        return 2;
    }
    if (u < 0x10000) {
        out[0] = (char)(0xe0 | u >> 12);
        out[1] = (char)(0x80 | (u >> 6 & 0x3f));
        out[2] = (char)(0x80 | (u & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | u >> 18);
    out[1] = (char)(0x80 | (u >> 12 & 0x3f));
    out[2] = (char)(0x80 | (u >> 6 & 0x3f));
    out[3] = (char)(0x80 | (u & 0x3f));
    return 4;
}

/* A string into out (size bytes with the NUL), or skipped (out NULL).  The
 * escapes are JSON's; \udc80..\udcff alone stand for the byte 0x80..0xff of
 * a name that is not UTF-8 (pyr_npy_index_write, as Python's
 * surrogateescape).  A NUL, raw or escaped, is refused: it would cut a
 * file name short. */
static pyr_status_t js_string(js_t *j, char *out, size_t size)
{
    if (!js_eat(j, '"')) return js_bad(j, "a string expected");
    size_t k = 0;
    for (;;) {
        if (j->s >= j->end) return js_bad(j, "an unterminated string");
        const char c = *j->s;
        if (c == '"') break;
        if (c == 0) return js_bad(j, "a NUL byte in a string");
        char ch[4] = {c};
        size_t n = 1;
        if (c == '\\') {
            if (j->end - j->s < 2) return js_bad(j, "an unterminated string");
            switch (j->s[1]) {
            case '"': case '\\': case '/': ch[0] = j->s[1]; break;
            case 'b': ch[0] = '\b'; break;
            case 'f': ch[0] = '\f'; break;
            case 'n': ch[0] = '\n'; break;
            case 'r': ch[0] = '\r'; break;
            case 't': ch[0] = '\t'; break;
            case 'u': {
                unsigned u, low;
                if (j->end - j->s < 6 || !js_hex4(j->s + 2, &u)) return js_bad(j, "a \\u escape without four hex digits");
                if (u >= 0xd800 && u <= 0xdbff) { /* a pair of surrogates: one code point */
                    if (j->end - j->s < 12 || j->s[6] != '\\' || j->s[7] != 'u' || !js_hex4(j->s + 8, &low) || low < 0xdc00 || low > 0xdfff)
                        return js_bad(j, "a \\u escape of an unpaired surrogate");
                    n = js_utf8(ch, 0x10000 + ((u - 0xd800) << 10) + (low - 0xdc00));
                    j->s += 6;
                } else if (u >= 0xdc80 && u <= 0xdcff) {
                    ch[0] = (char)(u - 0xdc00);
                } else if (u >= 0xdc00 && u <= 0xdfff) {
                    return js_bad(j, "a \\u escape of an unpaired surrogate");
                } else if (u == 0) {
                    return js_bad(j, "a NUL (\\u0000) in a string");
                } else {
                    n = js_utf8(ch, u);
                }
                j->s += 4;
                break;
            }
            default: return js_bad(j, "an unknown escape in a string");
            }
            j->s++;
        }
        j->s++;
        if (out) {
            if (k + n >= size) return js_bad(j, "a string too long");
            memcpy(out + k, ch, n);
        }
        k += n;
    }
    j->s++;
    if (out) out[k] = 0;
    return PYR_OK;
}

static pyr_status_t js_int(js_t *j, int64_t *v)
{
    js_ws(j);
    if (j->s >= j->end || !(isdigit((unsigned char)*j->s) || *j->s == '-')) return js_bad(j, "an integer expected");
    char *e;
    errno = 0;
    long long x = strtoll(j->s, &e, 10);
    if (e == j->s || e > j->end) return js_bad(j, "an integer expected");
    if (errno == ERANGE) return js_bad(j, "an integer out of range");
    j->s = e;
    *v = x;
    return PYR_OK;
}

static pyr_status_t js_ints(js_t *j, int64_t *v, int max, int *n)
{
    *n = 0;
    if (!js_eat(j, '[')) return js_bad(j, "a list expected");
    if (js_eat(j, ']')) return PYR_OK;
    do {
        if (*n >= max) return js_bad(j, "a list too long");
        PYR_TRY(js_int(j, &v[(*n)++]));
    } while (js_eat(j, ','));
    if (!js_eat(j, ']')) return js_bad(j, "']' expected");
    return PYR_OK;
}

/* Skip any value (for keys this reader does not use); `depth`: the lists
 * and objects around it. */
static pyr_status_t js_skip(js_t *j, int depth)
{
    js_ws(j);
    if (j->s >= j->end) return js_bad(j, "a value expected");
    char c = *j->s;
    if (c == '"') return js_string(j, NULL, 0);
    if (c == '[' || c == '{') {
        if (depth >= JS_MAX_DEPTH) return js_bad(j, "lists or objects nested more than 200 levels deep");
        char close = c == '[' ? ']' : '}';
        j->s++;
        if (js_eat(j, close)) return PYR_OK;
        do {
            if (c == '{') {
                PYR_TRY(js_string(j, NULL, 0));
                if (!js_eat(j, ':')) return js_bad(j, "':' expected");
            }
            PYR_TRY(js_skip(j, depth + 1));
        } while (js_eat(j, ','));
        if (!js_eat(j, close)) return js_bad(j, "a closing bracket expected");
        return PYR_OK;
    }
    const char *from = j->s;
    while (j->s < j->end && (isalnum((unsigned char)*j->s) || *j->s == '-' || *j->s == '+' || *j->s == '.')) j->s++;
    if (j->s == from) return js_bad(j, "a value expected");
    return PYR_OK;
}

static pyr_status_t js_part(js_t *j, pyr_npy_part_t *p, int *nshape, int *noffset)
{
    if (!js_eat(j, '{')) return js_bad(j, "a part object expected");
    *nshape = *noffset = -1;
    p->file[0] = 0;
    if (js_eat(j, '}')) return PYR_OK;
    do {
        char key[64];
        PYR_TRY(js_string(j, key, sizeof key));
        if (!js_eat(j, ':')) return js_bad(j, "':' expected");
        if (!strcmp(key, "file")) PYR_TRY(js_string(j, p->file, sizeof p->file));
        else if (!strcmp(key, "offset")) PYR_TRY(js_ints(j, p->offset, 3, noffset));
        else if (!strcmp(key, "shape")) PYR_TRY(js_ints(j, p->shape, 3, nshape));
        else PYR_TRY(js_skip(j, 3));
    } while (js_eat(j, ','));
    if (!js_eat(j, '}')) return js_bad(j, "'}' expected");
    return PYR_OK;
}

/* A part's file must lie in the index's directory or below it: a relative
 * name without "..", as the MPI writer gives (the part's base name), so that
 * an index cannot make assemble read files elsewhere. */
static pyr_status_t check_part_name(const char *path, int i, const char *file)
{
    static const char rule[] = "parts must be files in the index's directory or below it, named relative to it (as 'mpirun ... "
                               "pyrgrid run' writes them: NAME.rank0000.npy)";
    if (file[0] == '/') return pyr_fail(PYR_ERR_FORMAT, "%s: part %d names the absolute path %s; %s", path, i, file, rule);
    for (const char *c = file; *c;) {
        size_t n = strcspn(c, "/");
        if (n == 2 && c[0] == '.' && c[1] == '.')
            return pyr_fail(PYR_ERR_FORMAT, "%s: part %d names %s, which leads out of the index's directory (\"..\"); %s", path, i, file, rule);
        c += n;
        while (*c == '/') c++;
    }
    return PYR_OK;
}

pyr_status_t pyr_npy_index_read(const char *path, pyr_npy_index_t *x)
{
    memset(x, 0, sizeof *x);
    FILE *fp = NULL;
    int64_t size = 0;
    PYR_TRY(pyr_open_input(path, "parts index", &fp, &size, NULL));
    if (size > (64 << 20)) {
        fclose(fp);
        return pyr_fail(PYR_ERR_FORMAT, "%s is %" PRId64 " bytes, too large for a parts index", path, size);
    }
    char *text = malloc((size_t)size + 1);
    if (!text) {
        fclose(fp);
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory reading %s", path);
    }
    size_t got = fread(text, 1, (size_t)size, fp);
    fclose(fp);
    text[got] = 0;
    js_t j = {text, text, text + got, path};
    pyr_status_t st = PYR_OK;
    char format[64] = "", dtype[16] = "";
    int nshape = -1, cap = 0;
    int *nd = NULL; /* the length of each part's offset and shape */
    if (!js_eat(&j, '{')) st = js_bad(&j, "'{' expected");
    else if (js_eat(&j, '}')) st = js_bad(&j, "an empty object");
    while (st == PYR_OK) {
        char key[64];
        if ((st = js_string(&j, key, sizeof key)) != PYR_OK) break;
        if (!js_eat(&j, ':')) {
            st = js_bad(&j, "':' expected");
            break;
        }
        if (!strcmp(key, "format")) st = js_string(&j, format, sizeof format);
        else if (!strcmp(key, "dtype")) st = js_string(&j, dtype, sizeof dtype);
        else if (!strcmp(key, "shape")) st = js_ints(&j, x->shape, 3, &nshape);
        else if (!strcmp(key, "parts")) {
            if (!js_eat(&j, '[')) st = js_bad(&j, "a list of parts expected");
            else if (!js_eat(&j, ']')) {
                do {
                    if (x->nparts == cap) {
                        cap = cap ? 2 * cap : 16;
                        pyr_npy_part_t *g = realloc(x->parts, (size_t)cap * sizeof *g);
                        if (g) x->parts = g;
                        int *h = g ? realloc(nd, (size_t)cap * sizeof *h) : NULL;
                        if (h) nd = h;
                        if (!g || !h) {
                            st = pyr_fail(PYR_ERR_NOMEM, "out of host memory reading %s", path);
                            break;
                        }
                    }
                    int ns, no;
                    pyr_npy_part_t *p = &x->parts[x->nparts];
                    memset(p, 0, sizeof *p);
                    if ((st = js_part(&j, p, &ns, &no)) != PYR_OK) break;
                    if (!p->file[0] || ns < 1 || no != ns) {
                        st = pyr_fail(PYR_ERR_FORMAT, "%s: part %d lacks a file, or its offset and shape differ in length", path, x->nparts);
                        break;
                    }
                    nd[x->nparts++] = ns;
                } while (js_eat(&j, ','));
                if (st == PYR_OK && !js_eat(&j, ']')) st = js_bad(&j, "']' expected after the parts");
            }
        } else st = js_skip(&j, 1);
        if (st != PYR_OK) break;
        if (js_eat(&j, ',')) continue;
        if (!js_eat(&j, '}')) st = js_bad(&j, "',' or '}' expected");
        break;
    }
    js_ws(&j);
    if (st == PYR_OK && j.s < j.end) st = js_bad(&j, "text after the closing '}'");
    free(text);
    if (st == PYR_OK && strcmp(format, "pyrgrid-parts"))
        st = pyr_fail(PYR_ERR_FORMAT, "%s is not a pyrgrid parts index (its \"format\" is \"%s\", not \"pyrgrid-parts\")", path, format);
    if (st == PYR_OK && (nshape < 1 || nshape > 3))
        st = pyr_fail(PYR_ERR_FORMAT, "%s: \"shape\" must list 1 to 3 sizes", path);
    if (st == PYR_OK && strcmp(dtype, "<f8") && strcmp(dtype, "<f4"))
        st = pyr_fail(PYR_ERR_FORMAT, "%s: dtype \"%s\"; pyrgrid writes <f4 or <f8", path, dtype);
    if (st == PYR_OK) {
        x->dims = nshape;
        x->precision = !strcmp(dtype, "<f8") ? PYR_DOUBLE : PYR_FLOAT;
        /* the array's size in bytes must be a file size: every offset
         * computed from it then fits, and no product wraps */
        const int64_t elem = (int64_t)pyr_precision_size(x->precision);
        int64_t count = 1;
        for (int d = 0; d < x->dims && st == PYR_OK; d++) {
            if (x->shape[d] < 1)
                st = pyr_fail(PYR_ERR_FORMAT, "%s: \"shape\" has %" PRId64 " along axis %d; sizes are at least 1", path, x->shape[d], d);
            else if (count > INT64_MAX / elem / x->shape[d]) {
                char found[160];
                shape_text(found, sizeof found, x->dims, x->shape);
                st = pyr_fail(PYR_ERR_FORMAT, "%s: an array of shape %s would take more than 2^63 bytes, more than any file holds; the index is "
                              "damaged", path, found);
            } else count *= x->shape[d];
        }
    }
    for (int i = 0; i < x->nparts && st == PYR_OK; i++) {
        pyr_npy_part_t *p = &x->parts[i];
        if (nd[i] != x->dims) {
            st = pyr_fail(PYR_ERR_FORMAT, "%s: part %d (%s) has %d offsets and sizes, the array %d dimensions", path, i, p->file, nd[i], x->dims);
            break;
        }
        st = check_part_name(path, i, p->file);
        for (int d = 0; d < 3 && st == PYR_OK; d++) {
            if (d >= x->dims) {
                p->offset[d] = 0;
                p->shape[d] = 1;
                continue;
            }
            /* offset <= size - shape: no sum that could wrap */
            if (p->offset[d] < 0 || p->shape[d] < 1 || p->shape[d] > x->shape[d] || p->offset[d] > x->shape[d] - p->shape[d])
                st = pyr_fail(PYR_ERR_FORMAT, "%s: part %d (%s) lies outside the array along axis %d (offset %" PRId64 ", size %" PRId64
                              "; the array has %" PRId64 ")", path, i, p->file, d, p->offset[d], p->shape[d], x->shape[d]);
        }
    }
    free(nd);
    if (st != PYR_OK) {
        free(x->parts);
        x->parts = NULL;
        x->nparts = 0;
    }
    return st;
}

void pyr_npy_part_names(const char *path, int rank, char *part, size_t part_size, char *index, size_t index_size)
{
    size_t n = strlen(path);
    int stem = (int)(n > 4 && !strcmp(path + n - 4, ".npy") ? n - 4 : n);
    if (part) snprintf(part, part_size, "%.*s.rank%04d.npy", stem, path, rank);
    if (index) snprintf(index, index_size, "%.*s.parts.json", stem, path);
}

/* ---------------------------------------------------------------- assemble */

static void resolve(const char *index_path, const char *file, char *out, size_t size)
{
    const char *slash = strrchr(index_path, '/');
    if (file[0] == '/' || !slash) snprintf(out, size, "%s", file);
    else snprintf(out, size, "%.*s/%s", (int)(slash - index_path), index_path, file);
}

/* The index's directory as resolve() uses it, with links resolved (NULL when
 * out of memory or gone). */
static char *index_dir_real(const char *index_path)
{
    const char *slash = strrchr(index_path, '/');
    if (!slash) return realpath(".", NULL);
    if (slash == index_path) return realpath("/", NULL);
    size_t n = (size_t)(slash - index_path);
    char *dir = malloc(n + 1);
    if (!dir) return NULL;
    memcpy(dir, index_path, n);
    dir[n] = 0;
    char *real = realpath(dir, NULL);
    free(dir);
    return real;
}

/* Whether `path` (which exists) lies in `dir_real` or below it once symbolic
 * links are resolved: a link among the parts must not lead elsewhere. */
static int inside(const char *path, const char *dir_real, char **where)
{
    *where = realpath(path, NULL);
    if (!*where) return 1; /* gone: reading it says so */
    size_t n = strlen(dir_real);
    if (n == 1) return 1;  /* "/" */
    return !strncmp(*where, dir_real, n) && (*where)[n] == '/';
}

pyr_status_t pyr_npy_assemble(const char *index_path, const char *out)
{
    pyr_npy_index_t x;
    PYR_TRY(pyr_npy_index_read(index_path, &x));
    /* as 3D: (z, y, x) in NumPy order, padded with leading 1s */
    int64_t shape[3] = {1, 1, 1};
    for (int d = 0; d < x.dims; d++) shape[3 - x.dims + d] = x.shape[d];
    pyr_status_t st = PYR_OK;
    int64_t volume = 0;
    const int np = x.nparts;
    int64_t (*lo)[3] = calloc((size_t)(np ? np : 1), sizeof *lo), (*ext)[3] = calloc((size_t)(np ? np : 1), sizeof *ext);
    FILE **fps = calloc((size_t)(np ? np : 1), sizeof *fps);
    long *data_at = calloc((size_t)(np ? np : 1), sizeof *data_at);
    struct stat *ids = calloc((size_t)(np ? np : 1), sizeof *ids);
    char *dir_real = index_dir_real(index_path);
    const size_t elem = pyr_precision_size(x.precision);
    char *row = NULL;
    if (!lo || !ext || !fps || !data_at || !ids) st = pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    else if (!dir_real) st = pyr_fail(PYR_ERR_IO, "%s: cannot resolve the index's directory: %s", index_path, strerror(errno));
    for (int i = 0; i < np && st == PYR_OK; i++) {
        for (int d = 0; d < 3; d++) {
            lo[i][d] = d < 3 - x.dims ? 0 : x.parts[i].offset[d - (3 - x.dims)];
            ext[i][d] = d < 3 - x.dims ? 1 : x.parts[i].shape[d - (3 - x.dims)];
        }
        for (int k = 0; k < i && st == PYR_OK; k++) {
            int meet = 1;
            for (int d = 0; d < 3; d++) meet = meet && lo[i][d] < lo[k][d] + ext[k][d] && lo[k][d] < lo[i][d] + ext[i][d];
            if (meet) st = pyr_fail(PYR_ERR_FORMAT, "%s: parts %d (%s) and %d (%s) overlap", index_path, k, x.parts[k].file, i, x.parts[i].file);
        }
        if (st != PYR_OK) break;
        /* parts inside the array that do not overlap: their sum stays at
         * most the array's count, which the index reader bounded */
        volume += ext[i][0] * ext[i][1] * ext[i][2];
        char path[8200], *where = NULL;
        resolve(index_path, x.parts[i].file, path, sizeof path);
        if (!inside(path, dir_real, &where)) {
            st = pyr_fail(PYR_ERR_FORMAT, "%s: part %d (%s) is a link to %s, outside the index's directory %s; parts must lie in it or below it "
                          "(copy the file there)", index_path, i, x.parts[i].file, where, dir_real);
            free(where);
            break;
        }
        free(where);
        if (pyr_same_file(out, path)) {
            st = pyr_fail(PYR_ERR_IO, "the output %s is the same file as part %d (%s) of %s; writing it would destroy that part; choose another "
                          "output name", out, i, x.parts[i].file, index_path);
            break;
        }
        pyr_npy_info_t info;
        st = pyr_npy_read_info(path, &info);
        if (st != PYR_OK) {
            st = pyr_fail_context(st, "%s, part %d: ", index_path, i);
            break;
        }
        int same = info.ndim == x.dims && info.precision == x.precision;
        for (int d = 0; same && d < x.dims; d++) same = info.shape[d] == x.parts[i].shape[d];
        if (!same) {
            char want[128], found[128];
            shape_text(want, sizeof want, x.dims, x.parts[i].shape);
            shape_text(found, sizeof found, info.ndim, info.shape);
            st = pyr_fail(PYR_ERR_FORMAT, "%s holds shape %s %s; the index %s says %s %s", path, found,
                          info.precision == PYR_DOUBLE ? "<f8" : "<f4", index_path, want, x.precision == PYR_DOUBLE ? "<f8" : "<f4");
            break;
        }
        data_at[i] = info.data_offset;
        st = pyr_open_input(path, ".npy part", &fps[i], NULL, NULL);
        if (st != PYR_OK) break;
        /* one file twice (by another name, or a link) would put the same
         * data in two places */
        if (fstat(fileno(fps[i]), &ids[i]) != 0) {
            st = pyr_fail(PYR_ERR_IO, "%s: %s", path, strerror(errno));
            break;
        }
        for (int k = 0; k < i && st == PYR_OK; k++)
            if (ids[k].st_dev == ids[i].st_dev && ids[k].st_ino == ids[i].st_ino)
                st = pyr_fail(PYR_ERR_FORMAT, "%s: parts %d (%s) and %d (%s) are the same file; each part is a file of its own", index_path, k,
                              x.parts[k].file, i, x.parts[i].file);
    }
    /* with no overlap, the count equal to the array's proves that the parts
     * cover every value: no byte of the output is left unwritten */
    if (st == PYR_OK && volume != shape[0] * shape[1] * shape[2])
        st = pyr_fail(PYR_ERR_FORMAT, "%s: the parts hold %" PRId64 " values, the array %" PRId64 "; a part is missing", index_path, volume,
                      shape[0] * shape[1] * shape[2]);
    if (st == PYR_OK && !(row = calloc((size_t)shape[2], elem))) st = pyr_fail(PYR_ERR_NOMEM, "out of host memory for a row");
    pyr_atomic_file_t af;
    memset(&af, 0, sizeof af);
    if (st == PYR_OK) st = pyr_atomic_open(&af, out);
    if (st == PYR_OK) st = pyr_npy_write_header(af.fp, out, x.dims, x.shape, x.precision);
    /* rows in order; each row's segments from the parts that cover it */
    for (int64_t z = 0; z < shape[0] && st == PYR_OK; z++)
        for (int64_t y = 0; y < shape[1] && st == PYR_OK; y++) {
            for (int i = 0; i < np && st == PYR_OK; i++) {
                if (z < lo[i][0] || z >= lo[i][0] + ext[i][0] || y < lo[i][1] || y >= lo[i][1] + ext[i][1]) continue;
                const int64_t at = data_at[i] + (int64_t)(((z - lo[i][0]) * ext[i][1] + (y - lo[i][1])) * ext[i][2]) * (int64_t)elem;
                char path[8200];
                resolve(index_path, x.parts[i].file, path, sizeof path);
                st = read_at(fileno(fps[i]), path, at, row + lo[i][2] * (int64_t)elem, (size_t)ext[i][2] * elem);
            }
            if (st == PYR_OK && fwrite(row, elem, (size_t)shape[2], af.fp) != (size_t)shape[2])
                st = pyr_fail(PYR_ERR_IO, "writing %s: %s", out, strerror(errno));
        }
    if (st == PYR_OK) st = pyr_atomic_commit(&af);
    else pyr_atomic_abort(&af);
    for (int i = 0; i < np; i++)
        if (fps && fps[i]) fclose(fps[i]);
    free(row);
    free(fps);
    free(data_at);
    free(ids);
    free(dir_real);
    free(lo);
    free(ext);
    free(x.parts);
    return st;
}
