/* Parts of .npy files: hyperslab reads, streamed writes, the parts index of
 * an MPI run and its assembly into one array (npy_part.h). */
#include "io/npy_part.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "io/atomic.h"
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
            if (*c == '"' || *c == '\\') fputc('\\', f);
            if ((unsigned char)*c < 0x20) fprintf(f, "\\u%04x", (unsigned)(unsigned char)*c);
            else fputc(*c, f);
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
    const char *s, *end, *path;
} js_t;

static void js_ws(js_t *j)
{
    while (j->s < j->end && isspace((unsigned char)*j->s)) j->s++;
}

static pyr_status_t js_bad(js_t *j, const char *what)
{
    return pyr_fail(PYR_ERR_FORMAT, "%s is not a pyrgrid parts index: %s near byte %ld; it is written by 'mpirun ... pyrgrid run'", j->path, what,
                    (long)(j->end - j->s));
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

static pyr_status_t js_string(js_t *j, char *out, size_t size)
{
    if (!js_eat(j, '"')) return js_bad(j, "a string expected");
    size_t k = 0;
    while (j->s < j->end && *j->s != '"') {
        char c = *j->s++;
        if (c == '\\') {
            if (j->s >= j->end) break;
            c = *j->s++;
            if (c == 'u') {
                if (j->end - j->s < 4) return js_bad(j, "a short \\u escape");
                char hex[5] = {j->s[0], j->s[1], j->s[2], j->s[3], 0};
                j->s += 4;
                c = (char)strtol(hex, NULL, 16);
            } else if (c == 'n') c = '\n';
            else if (c == 't') c = '\t';
        }
        if (k + 1 >= size) return js_bad(j, "a string too long");
        out[k++] = c;
    }
    if (!js_eat(j, '"')) return js_bad(j, "an unterminated string");
    out[k] = 0;
    return PYR_OK;
}

static pyr_status_t js_int(js_t *j, int64_t *v)
{
    js_ws(j);
    char *e;
    errno = 0;
    long long x = strtoll(j->s, &e, 10);
    if (e == j->s || errno || e > j->end) return js_bad(j, "an integer expected");
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

/* Skip any value (for keys this reader does not use). */
static pyr_status_t js_skip(js_t *j)
{
    js_ws(j);
    if (j->s >= j->end) return js_bad(j, "a value expected");
    char c = *j->s;
    if (c == '"') {
        char tmp[4096];
        return js_string(j, tmp, sizeof tmp);
    }
    if (c == '[' || c == '{') {
        char close = c == '[' ? ']' : '}';
        j->s++;
        if (js_eat(j, close)) return PYR_OK;
        do {
            if (c == '{') {
                char key[256];
                PYR_TRY(js_string(j, key, sizeof key));
                if (!js_eat(j, ':')) return js_bad(j, "':' expected");
            }
            PYR_TRY(js_skip(j));
        } while (js_eat(j, ','));
        if (!js_eat(j, close)) return js_bad(j, "a closing bracket expected");
        return PYR_OK;
    }
    while (j->s < j->end && (isalnum((unsigned char)*j->s) || *j->s == '-' || *j->s == '+' || *j->s == '.')) j->s++;
    return PYR_OK;
}

static pyr_status_t js_part(js_t *j, pyr_npy_part_t *p, int *nshape, int *noffset)
{
    if (!js_eat(j, '{')) return js_bad(j, "a part object expected");
    *nshape = *noffset = -1;
    p->file[0] = 0;
    do {
        char key[64];
        PYR_TRY(js_string(j, key, sizeof key));
        if (!js_eat(j, ':')) return js_bad(j, "':' expected");
        if (!strcmp(key, "file")) PYR_TRY(js_string(j, p->file, sizeof p->file));
        else if (!strcmp(key, "offset")) PYR_TRY(js_ints(j, p->offset, 3, noffset));
        else if (!strcmp(key, "shape")) PYR_TRY(js_ints(j, p->shape, 3, nshape));
        else PYR_TRY(js_skip(j));
    } while (js_eat(j, ','));
    if (!js_eat(j, '}')) return js_bad(j, "'}' expected");
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
    js_t j = {text, text + got, path};
    pyr_status_t st = PYR_OK;
    char format[64] = "", dtype[16] = "";
    int nshape = -1, cap = 0;
    if (!js_eat(&j, '{')) st = js_bad(&j, "'{' expected");
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
            if (!js_eat(&j, '[')) {
                st = js_bad(&j, "a list of parts expected");
                break;
            }
            if (js_eat(&j, ']')) continue;
            do {
                if (x->nparts == cap) {
                    cap = cap ? 2 * cap : 16;
                    pyr_npy_part_t *g = realloc(x->parts, (size_t)cap * sizeof *g);
                    if (!g) {
                        st = pyr_fail(PYR_ERR_NOMEM, "out of host memory reading %s", path);
                        break;
                    }
                    x->parts = g;
                }
                int ns, no;
                pyr_npy_part_t *p = &x->parts[x->nparts];
                memset(p, 0, sizeof *p);
                if ((st = js_part(&j, p, &ns, &no)) != PYR_OK) break;
                if (!p->file[0] || ns < 1 || no != ns) {
                    st = pyr_fail(PYR_ERR_FORMAT, "%s: part %d lacks a file, or its offset and shape differ in length", path, x->nparts);
                    break;
                }
                x->nparts++;
            } while (js_eat(&j, ','));
            if (st == PYR_OK && !js_eat(&j, ']')) st = js_bad(&j, "']' expected after the parts");
        } else st = js_skip(&j);
        if (st != PYR_OK) break;
        if (js_eat(&j, ',')) continue;
        if (!js_eat(&j, '}')) st = js_bad(&j, "'}' expected");
        break;
    }
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
        for (int i = 0; i < x->nparts && st == PYR_OK; i++)
            for (int d = 0; d < 3 && st == PYR_OK; d++) {
                if (d >= x->dims) {
                    x->parts[i].offset[d] = 0;
                    x->parts[i].shape[d] = 1;
                    continue;
                }
                if (x->parts[i].offset[d] < 0 || x->parts[i].shape[d] < 1 || x->parts[i].offset[d] + x->parts[i].shape[d] > x->shape[d])
                    st = pyr_fail(PYR_ERR_FORMAT, "%s: part %d (%s) lies outside the array along axis %d", path, i, x->parts[i].file, d);
            }
    }
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
    const size_t elem = pyr_precision_size(x.precision);
    char *row = NULL;
    if (!lo || !ext || !fps || !data_at) st = pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    for (int i = 0; i < np && st == PYR_OK; i++) {
        for (int d = 0; d < 3; d++) {
            lo[i][d] = d < 3 - x.dims ? 0 : x.parts[i].offset[d - (3 - x.dims)];
            ext[i][d] = d < 3 - x.dims ? 1 : x.parts[i].shape[d - (3 - x.dims)];
        }
        volume += ext[i][0] * ext[i][1] * ext[i][2];
        for (int k = 0; k < i && st == PYR_OK; k++) {
            int meet = 1;
            for (int d = 0; d < 3; d++) meet = meet && lo[i][d] < lo[k][d] + ext[k][d] && lo[k][d] < lo[i][d] + ext[i][d];
            if (meet) st = pyr_fail(PYR_ERR_FORMAT, "%s: parts %d (%s) and %d (%s) overlap", index_path, k, x.parts[k].file, i, x.parts[i].file);
        }
        if (st != PYR_OK) break;
        char path[8200];
        resolve(index_path, x.parts[i].file, path, sizeof path);
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
    }
    if (st == PYR_OK && volume != shape[0] * shape[1] * shape[2])
        st = pyr_fail(PYR_ERR_FORMAT, "%s: the parts hold %" PRId64 " values, the array %" PRId64 "; a part is missing", index_path, volume,
                      shape[0] * shape[1] * shape[2]);
    if (st == PYR_OK && !(row = malloc((size_t)shape[2] * elem))) st = pyr_fail(PYR_ERR_NOMEM, "out of host memory for a row");
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
    free(lo);
    free(ext);
    free(x.parts);
    return st;
}
