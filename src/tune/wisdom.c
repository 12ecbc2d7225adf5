/* Wisdom files (format in wisdom.h). */
#include "tune/wisdom.h"
#include "schemes/scheme.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "io/atomic.h"

#define MAGIC "pyrgrid-wisdom"
#define MAX_FIELDS 32

/* ------------------------------------------------------------------ keys */

pyr_status_t pyr_wisdom_default_path(char *path, size_t size)
{
    if (!path || size == 0) return pyr_fail(PYR_ERR_ARG, "pyr_wisdom_default_path: no buffer");
    const char *env = getenv("PYRGRID_WISDOM");
    if (env && *env) {
        if (strlen(env) >= size)
            return pyr_fail(PYR_ERR_CONFIG, "PYRGRID_WISDOM = %.60s... is longer than %zu bytes; use a shorter path", env, size - 1);
        snprintf(path, size, "%s", env);
        return PYR_OK;
    }
    const char *xdg = getenv("XDG_CACHE_HOME");
    int n;
    if (xdg && *xdg == '/') n = snprintf(path, size, "%s/pyrgrid/wisdom", xdg);
    else {
        const char *home = getenv("HOME");
        if (!home || !*home)
            return pyr_fail(PYR_ERR_CONFIG, "no place for the wisdom file: HOME and XDG_CACHE_HOME are unset; set PYRGRID_WISDOM=FILE");
        n = snprintf(path, size, "%s/.cache/pyrgrid/wisdom", home);
    }
    if (n < 0 || (size_t)n >= size)
        return pyr_fail(PYR_ERR_CONFIG, "the wisdom file's path (%.60s...) is longer than %zu bytes; set PYRGRID_WISDOM to a shorter one",
                        path, size - 1);
    return PYR_OK;
}

/* Tabs and line breaks would split a field. */
static void clean_field(char *s)
{
    for (; *s; s++)
        if (*s == '\t' || *s == '\n' || *s == '\r') *s = ' ';
}

static void cpu_model(char *out, size_t size)
{
    snprintf(out, size, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0) continue;
        const char *colon = strchr(line, ':');
        if (!colon) continue;
        colon++;
        while (*colon == ' ') colon++;
        snprintf(out, size, "%s", colon);
        size_t n = strlen(out);
        while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == ' ')) out[--n] = 0;
        break;
    }
    fclose(f);
}

void pyr_wisdom_machine(char *out, size_t size)
{
    char host[128] = "unknown-host", cpu[160];
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown-host");
    host[sizeof host - 1] = 0;
    cpu_model(cpu, sizeof cpu);
    snprintf(out, size, "%s / %s", host, cpu);
    clean_field(out);
}

pyr_status_t pyr_wisdom_device(pyr_backend_kind_t backend, int device, int threads, char *out, size_t size)
{
    if (backend == PYR_BACKEND_CUDA) {
        char text[512];
        PYR_TRY(pyr_gpu_describe(device, text, sizeof text));
        /* "NVIDIA <name>, 79.1 GiB (78.6 GiB free), compute capability 9.0, 132 SMs": keep what does not change */
        char name[256] = "", mem[64] = "", cc[32] = "";
        const char *c1 = strchr(text, ',');
        size_t ln = c1 ? (size_t)(c1 - text) : strlen(text);
        if (ln >= sizeof name) ln = sizeof name - 1;
        memcpy(name, text, ln);
        name[ln] = 0;
        if (c1) {
            double gib = 0;
            if (sscanf(c1 + 1, " %lf GiB", &gib) == 1) snprintf(mem, sizeof mem, ", %.1f GiB", gib);
        }
        const char *ccp = strstr(text, "compute capability ");
        if (ccp) {
            int ma = 0, mi = 0;
            if (sscanf(ccp + 19, "%d.%d", &ma, &mi) == 2) snprintf(cc, sizeof cc, ", cc %d.%d", ma, mi);
        }
        snprintf(out, size, "%s%s%s", name, mem, cc);
    } else {
        char cpu[160];
        cpu_model(cpu, sizeof cpu);
        snprintf(out, size, "%s, %d threads", cpu, threads > 0 ? threads : pyr_cpu_threads());
    }
    clean_field(out);
    return PYR_OK;
}

void pyr_wisdom_problem_key(const pyr_problem_t *p, const pyr_options_t *o, uint64_t budget, char *out, size_t size)
{
    /* heat problems keep the key of wisdom files written before other schemes existed */
    const pyr_scheme_t *s = pyr_scheme_of(p->equation);
    char scheme[64] = "";
    if (s && p->equation != PYR_EQ_HEAT) {
        char part[32] = "";
        s->key(p, part, sizeof part);
        snprintf(scheme, sizeof scheme, "%s%s%s ", s->name, part[0] ? " " : "", part);
    }
    snprintf(out, size, "%s%dD %lldx%lldx%lld %s budget=%llu decomposition=%s piece=%lld%s%s", scheme, p->dims, (long long)p->n[0],
             (long long)p->n[1], (long long)p->n[2], pyr_precision_name(p->precision), (unsigned long long)budget,
             pyr_decomp_name(o->decomposition), (long long)o->piece, o->kernel[0] ? " kernel=" : "", o->kernel);
}

void pyr_wisdom_init(pyr_wisdom_t *w)
{
    memset(w, 0, sizeof *w);
    pyr_wisdom_machine(w->machine, sizeof w->machine);
}

/* ---------------------------------------------------------------- records */

static int same_constants(const pyr_wisdom_constants_t *a, const pyr_wisdom_constants_t *b)
{
    return a->backend == b->backend && !strcmp(a->device, b->device) && a->precision == b->precision && a->dims == b->dims &&
           !strcmp(a->scheme, b->scheme);
}

pyr_status_t pyr_wisdom_put_constants(pyr_wisdom_t *w, const pyr_wisdom_constants_t *given)
{
    /* a record that names no scheme is the heat scheme's (as in files of earlier versions) */
    pyr_wisdom_constants_t rec = *given;
    if (!rec.scheme[0]) snprintf(rec.scheme, sizeof rec.scheme, "heat");
    const pyr_wisdom_constants_t *c = &rec;
    for (int i = 0; i < w->nconstants; i++)
        if (same_constants(&w->constants[i], c)) {
            w->constants[i] = *c;
            return PYR_OK;
        }
    if (w->nconstants == PYR_WISDOM_MAX_CONSTANTS)
        return pyr_fail(PYR_ERR_ARG, "wisdom holds at most %d sets of constants (one per backend, device, precision and "
                        "dimension); this one (%s, %s %dD) does not fit; remove the wisdom file and calibrate again",
                        PYR_WISDOM_MAX_CONSTANTS, c->device, pyr_precision_name(c->precision), c->dims);
    w->constants[w->nconstants++] = *c;
    return PYR_OK;
}

pyr_status_t pyr_wisdom_put_choice(pyr_wisdom_t *w, const pyr_wisdom_choice_t *c)
{
    for (int i = 0; i < w->nchoices; i++) {
        pyr_wisdom_choice_t *o = &w->choices[i];
        if (o->backend == c->backend && !strcmp(o->device, c->device) && !strcmp(o->problem, c->problem)) {
            *o = *c;
            return PYR_OK;
        }
    }
    if (w->nchoices == PYR_WISDOM_MAX_CHOICES) {
        /* forget the oldest */
        memmove(&w->choices[0], &w->choices[1], (size_t)(w->nchoices - 1) * sizeof w->choices[0]);
        w->nchoices--;
    }
    w->choices[w->nchoices++] = *c;
    return PYR_OK;
}

pyr_status_t pyr_wisdom_merge(pyr_wisdom_t *dst, const pyr_wisdom_t *src)
{
    for (int i = 0; i < src->nconstants; i++) PYR_TRY(pyr_wisdom_put_constants(dst, &src->constants[i]));
    for (int i = 0; i < src->nchoices; i++) PYR_TRY(pyr_wisdom_put_choice(dst, &src->choices[i]));
    return PYR_OK;
}

const pyr_wisdom_constants_t *pyr_wisdom_find_constants(const pyr_wisdom_t *w, pyr_backend_kind_t backend, const char *device,
                                                        const char *scheme, pyr_precision_t precision, int dims)
{
    for (int i = 0; i < w->nconstants; i++) {
        const pyr_wisdom_constants_t *c = &w->constants[i];
        if (c->backend == backend && !strcmp(c->device, device) && c->precision == precision && c->dims == dims &&
            !strcmp(c->scheme, scheme) &&
            !strcmp(c->version, PYR_VERSION_STRING))
            return c;
    }
    return NULL;
}

const pyr_wisdom_choice_t *pyr_wisdom_find_choice(const pyr_wisdom_t *w, pyr_backend_kind_t backend, const char *device,
                                                  const char *problem)
{
    for (int i = 0; i < w->nchoices; i++) {
        const pyr_wisdom_choice_t *c = &w->choices[i];
        if (c->backend == backend && !strcmp(c->device, device) && !strcmp(c->problem, problem) &&
            !strcmp(c->version, PYR_VERSION_STRING))
            return c;
    }
    return NULL;
}

/* ------------------------------------------------------------------- text */

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

typedef struct {
    char *s;
    size_t len, cap;
    int failed;
} buf_t;

static void put(buf_t *b, const char *fmt, ...) PYR_PRINTF(2, 3);

static void put(buf_t *b, const char *fmt, ...)
{
    if (b->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap <= b->len + (size_t)n) cap *= 2;
        char *g = realloc(b->s, cap);
        if (!g) {
            b->failed = 1;
            return;
        }
        b->s = g;
        b->cap = cap;
    }
}

static const char *backend_word(pyr_backend_kind_t b) { return b == PYR_BACKEND_CUDA ? "cuda" : "cpu"; }

pyr_status_t pyr_wisdom_to_text(const pyr_wisdom_t *w, char **text)
{
    *text = NULL;
    buf_t b = {0};
    put(&b, "%s\t%d\n", MAGIC, PYR_WISDOM_VERSION);
    put(&b, "machine\t%s\n", w->machine);
    for (int i = 0; i < w->nconstants; i++) {
        const pyr_wisdom_constants_t *c = &w->constants[i];
        const pyr_model_constants_t *k = &c->k;
        put(&b, "constants\t%s\t%s\t%s\t%s\t%d\tup=%.17g\tdown=%.17g\tup_both=%.17g\tdown_both=%.17g\trow=%.17g\tcall=%.17g\tlaunch=%.17g\thost=%.17g\tup_strided=%.17g\tdown_strided=%.17g\tup_ragged=%.17g\tdown_ragged=%.17g\tcompute_row=%.17g\tup_row_busy=%.17g\tdown_row_busy=%.17g\tup_part_row=%.17g\tdown_part_row=%.17g\tup_row_both=%.17g\tcompute=",
            backend_word(c->backend), c->device, c->version, pyr_precision_name(c->precision), c->dims, k->up, k->down, k->up_both,
            k->down_both, k->row, k->call, k->launch, k->host, k->up_strided, k->down_strided, k->up_ragged, k->down_ragged, k->compute_row,
            k->up_row_busy, k->down_row_busy, k->up_part_row, k->down_part_row, k->up_row_both);
        for (int j = 0; j < PYR_MODEL_NLAYERS; j++) put(&b, "%s%.17g", j ? "," : "", k->compute[j]);
        if (strcmp(c->scheme, "heat")) put(&b, "\tscheme=%s", c->scheme);
        if (c->kernel[0]) put(&b, "\tkernel=%s", c->kernel);
        if (pyr_lv_valid(&k->lv)) {
            char lv[160];
            pyr_lv_format(&k->lv, lv, sizeof lv);
            put(&b, "\tlongvector=%s", lv);
        }
        put(&b, "\n");
    }
    for (int i = 0; i < w->nchoices; i++) {
        const pyr_wisdom_choice_t *c = &w->choices[i];
        put(&b, "choice\t%s\t%s\t%s\t%s\t%s\t%lld", backend_word(c->backend), c->device, c->version, c->problem,
            pyr_decomp_name(c->decomp), (long long)c->height);
        if (c->slots > 0) put(&b, "\tslots=%d", c->slots);
        if (c->kernel[0]) put(&b, "\tkernel=%s", c->kernel);
        put(&b, "\n");
    }
    if (b.failed) {
        free(b.s);
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory writing wisdom");
    }
    uint64_t sum = fnv1a(b.s, b.len);
    put(&b, "checksum\t%016llx\n", (unsigned long long)sum);
    if (b.failed) {
        free(b.s);
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory writing wisdom");
    }
    *text = b.s;
    return PYR_OK;
}

/* Split a line (modified in place) at TABs. */
static int split_fields(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        if (n == max) return max + 1;
        f[n++] = p;
        char *t = strchr(p, '\t');
        if (!t) break;
        *t = 0;
        p = t + 1;
    }
    return n;
}

static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(x)) return 0;
    *out = x;
    return 1;
}

static int parse_backend(const char *s, pyr_backend_kind_t *b)
{
    if (!strcmp(s, "cpu")) *b = PYR_BACKEND_CPU;
    else if (!strcmp(s, "cuda")) *b = PYR_BACKEND_CUDA;
    else return 0;
    return 1;
}

static int copy_key(char *dst, size_t size, const char *src)
{
    if (!*src || strlen(src) >= size) return 0;
    memcpy(dst, src, strlen(src) + 1);
    return 1;
}

/* Optional key=value fields at the end of a record (scheme=, kernel=, slots=):
 * the count of fields before them. */
static int strip_optional(char **f, int n, const char *const *keys, int nkeys, char **values)
{
    for (int k = 0; k < nkeys; k++) values[k] = NULL;
    for (;;) {
        if (n == 0) return n;
        int found = -1;
        for (int k = 0; k < nkeys; k++)
            if (!strncmp(f[n - 1], keys[k], strlen(keys[k])) && !values[k]) found = k;
        if (found < 0) return n;
        values[found] = f[n - 1] + strlen(keys[found]);
        n--;
    }
}

static int parse_constants(char **f, int n, pyr_wisdom_constants_t *c)
{
    static const char *const names[] = {"up=", "down=", "up_both=", "down_both=", "row=", "call=", "launch=", "host=", "up_strided=",
                                        "down_strided=", "up_ragged=", "down_ragged=", "compute_row=", "up_row_busy=",
                                        "down_row_busy=", "up_part_row=", "down_part_row=", "up_row_both="};
    /* Older records have fewer fields; what they lack stays 0 (no extra cost known):
     * 15 fields: before the strided costs were measured; 17: before the ragged-row costs;
     * 19: before the per-row compute cost; 20: before the per-row cost of part rows beside kernels;
     * 22: before part rows were priced per row; 24: before the part-row upload cost beside downloads. */
    /* longvector=: the long-vector method's constants (plan/longvector.h), on CUDA 2D heat records */
    static const char *const opt[] = {"scheme=", "kernel=", "longvector="};
    char *val[3];
    if (n > MAX_FIELDS) return 0; /* more fields than split_fields keeps */
    n = strip_optional(f, n, opt, 3, val);
    if (n != 15 && n != 17 && n != 19 && n != 20 && n != 22 && n != 24 && n != 25) return 0;
    int nnamed = n - 7;
    memset(c, 0, sizeof *c);
    /* records written before schemes other than heat existed are heat's */
    if (!copy_key(c->scheme, sizeof c->scheme, val[0] ? val[0] : "heat")) return 0;
    if (val[1] && !copy_key(c->kernel, sizeof c->kernel, val[1])) return 0;
    if (val[2] && !pyr_lv_parse(val[2], &c->k.lv)) return 0;
    if (!parse_backend(f[1], &c->backend) || !copy_key(c->device, sizeof c->device, f[2]) ||
        !copy_key(c->version, sizeof c->version, f[3]))
        return 0;
    if (!strcmp(f[4], "float")) c->precision = PYR_FLOAT;
    else if (!strcmp(f[4], "double")) c->precision = PYR_DOUBLE;
    else return 0;
    if (strlen(f[5]) != 1 || f[5][0] < '1' || f[5][0] > '3') return 0;
    c->dims = f[5][0] - '0';
    double *dst[] = {&c->k.up, &c->k.down, &c->k.up_both, &c->k.down_both, &c->k.row, &c->k.call, &c->k.launch, &c->k.host,
                     &c->k.up_strided, &c->k.down_strided, &c->k.up_ragged, &c->k.down_ragged, &c->k.compute_row,
                     &c->k.up_row_busy, &c->k.down_row_busy, &c->k.up_part_row, &c->k.down_part_row, &c->k.up_row_both};
    for (int i = 0; i < nnamed; i++) {
        size_t l = strlen(names[i]);
        if (strncmp(f[6 + i], names[i], l) || !parse_double(f[6 + i] + l, dst[i])) return 0;
    }
    if (strncmp(f[6 + nnamed], "compute=", 8)) return 0;
    char *p = f[6 + nnamed] + 8;
    for (int j = 0; j < PYR_MODEL_NLAYERS; j++) {
        char *comma = strchr(p, ',');
        if ((comma == NULL) != (j == PYR_MODEL_NLAYERS - 1)) return 0;
        if (comma) *comma = 0;
        if (!parse_double(p, &c->k.compute[j])) return 0;
        p = comma ? comma + 1 : p;
    }
    return pyr_model_constants_valid(&c->k);
}

static int parse_choice(char **f, int n, pyr_wisdom_choice_t *c)
{
    static const char *const opt[] = {"slots=", "kernel="};
    char *val[2];
    if (n > MAX_FIELDS) return 0; /* more fields than split_fields keeps */
    n = strip_optional(f, n, opt, 2, val);
    if (n != 7) return 0;
    memset(c, 0, sizeof *c);
    if (val[0]) {
        char *end;
        long sl = strtol(val[0], &end, 10);
        if (end == val[0] || *end || sl < 1 || sl > 64) return 0;
        c->slots = (int)sl;
    }
    if (val[1] && !copy_key(c->kernel, sizeof c->kernel, val[1])) return 0;
    if (!parse_backend(f[1], &c->backend) || !copy_key(c->device, sizeof c->device, f[2]) ||
        !copy_key(c->version, sizeof c->version, f[3]) || !copy_key(c->problem, sizeof c->problem, f[4]))
        return 0;
    if (!pyr_decomp_from_name(f[5], 0, &c->decomp)) return 0;
    char *end;
    errno = 0;
    long long h = strtoll(f[6], &end, 10);
    if (end == f[6] || *end || errno || h < 1 || h > (1ll << 40)) return 0;
    c->height = h;
    return 1;
}

static pyr_status_t reject(pyr_wisdom_t *w, const char *source, const char *fmt, ...) PYR_PRINTF(3, 4);
static pyr_status_t reject(pyr_wisdom_t *w, const char *source, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    pyr_wisdom_init(w);
    return pyr_fail(PYR_ERR_FORMAT, "wisdom file %s rejected, nothing of it used: %s", source, why);
}

pyr_status_t pyr_wisdom_from_text(const char *text, const char *source, pyr_wisdom_t *w)
{
    pyr_wisdom_init(w);
    char here[sizeof w->machine];
    snprintf(here, sizeof here, "%s", w->machine);
    size_t len = strlen(text);
    if (len == 0) return reject(w, source, "the file is empty");
    /* the checksum line is the last one */
    const char *cs = NULL;
    for (const char *p = text; (p = strstr(p, "checksum\t")) != NULL; p++)
        if (p == text || p[-1] == '\n') cs = p;
    size_t mlen = strlen(MAGIC);
    if (strncmp(text, MAGIC, mlen) || (text[mlen] != '\t'))
        return reject(w, source, "it does not start with '%s' (not a pyrgrid wisdom file)", MAGIC);
    int version = atoi(text + mlen + 1);
    if (version != PYR_WISDOM_VERSION)
        return reject(w, source, "format version %d, this pyrgrid reads version %d; run 'pyrgrid calibrate' again", version,
                      PYR_WISDOM_VERSION);
    if (!cs) return reject(w, source, "no checksum line (truncated?)");
    const char *hex = cs + 9;
    size_t rest = strlen(hex);
    int hex_ok = rest == 16 || (rest == 17 && hex[16] == '\n');
    for (int i = 0; hex_ok && i < 16; i++) hex_ok = isxdigit((unsigned char)hex[i]) != 0;
    if (!hex_ok) return reject(w, source, "malformed checksum line, or text after it");
    unsigned long long want = strtoull(hex, NULL, 16);
    uint64_t got = fnv1a(text, (size_t)(cs - text));
    if (got != (uint64_t)want)
        return reject(w, source, "checksum mismatch (stored %016llx, content gives %016llx): the file was changed or damaged",
                      want, (unsigned long long)got);

    char *copy = malloc((size_t)(cs - text) + 1);
    if (!copy) return pyr_fail(PYR_ERR_NOMEM, "out of host memory reading wisdom file %s", source);
    memcpy(copy, text, (size_t)(cs - text));
    copy[cs - text] = 0;
    int lineno = 0, have_machine = 0;
    pyr_status_t st = PYR_OK;
    char *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        if (lineno == 1) continue; /* magic, checked */
        char *f[MAX_FIELDS + 1];
        int n = split_fields(line, f, MAX_FIELDS);
        if (!strcmp(f[0], "machine") && n == 2 && lineno == 2) {
            if (strcmp(f[1], here)) {
                st = reject(w, source, "it was written on another machine ('%s'; this is '%s'); calibrate here or import wisdom of this machine",
                            f[1], here);
                break;
            }
            have_machine = 1;
            continue;
        }
        if (!have_machine) {
            st = reject(w, source, "line 2 must name the machine");
            break;
        }
        if (!strcmp(f[0], "constants")) {
            pyr_wisdom_constants_t c;
            if (!parse_constants(f, n, &c)) {
                st = reject(w, source, "line %d: malformed constants record", lineno);
                break;
            }
            if ((st = pyr_wisdom_put_constants(w, &c)) != PYR_OK) {
                st = pyr_fail_context(st, "wisdom file %s line %d: ", source, lineno);
                break;
            }
        } else if (!strcmp(f[0], "choice")) {
            pyr_wisdom_choice_t c;
            if (!parse_choice(f, n, &c)) {
                st = reject(w, source, "line %d: malformed choice record", lineno);
                break;
            }
            if ((st = pyr_wisdom_put_choice(w, &c)) != PYR_OK) break;
        } else {
            st = reject(w, source, "line %d: unknown record '%.40s'", lineno, f[0]);
            break;
        }
    }
    if (st == PYR_OK && !have_machine) st = reject(w, source, "no machine line");
    free(copy);
    if (st != PYR_OK) pyr_wisdom_init(w);
    return st;
}

pyr_status_t pyr_wisdom_load(const char *path, pyr_wisdom_t *w, int *found)
{
    *found = 0;
    pyr_wisdom_init(w);
    FILE *f = NULL;
    int missing = 0;
    int64_t size = 0;
    pyr_status_t st = pyr_open_input(path, "wisdom file", &f, &size, &missing);
    if (missing) {
        pyr_clear_error();
        return PYR_OK;
    }
    if (st != PYR_OK) return pyr_fail_context(st, "wisdom: ");
    *found = 1;
    const size_t limit = 4u << 20;
    if (size > (int64_t)limit) {
        fclose(f);
        return reject(w, path, "larger than %zu bytes", limit);
    }
    char *text = malloc((size_t)size + 1);
    if (!text) {
        fclose(f);
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory reading wisdom file %s (%lld bytes)", path, (long long)size);
    }
    size_t len = fread(text, 1, (size_t)size, f);
    int err = ferror(f) ? errno : 0;
    fclose(f);
    if (err) {
        free(text);
        return pyr_fail(PYR_ERR_IO, "cannot read wisdom file %s: %s", path, strerror(err));
    }
    text[len] = 0;
    if (strlen(text) != len) {
        free(text);
        return reject(w, path, "it contains NUL bytes (binary data)");
    }
    st = pyr_wisdom_from_text(text, path, w);
    free(text);
    return st;
}

/* mkdir -p of the directory part of path. */
static pyr_status_t make_parent(const char *path)
{
    char dir[PYR_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return PYR_OK;
    *slash = 0;
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            return pyr_fail(PYR_ERR_IO, "cannot create directory %s for the wisdom file: %s", dir, strerror(errno));
        *p = '/';
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return pyr_fail(PYR_ERR_IO, "cannot create directory %s for the wisdom file: %s", dir, strerror(errno));
    return PYR_OK;
}

/* A character device (/dev/null) or a FIFO: written in place (io/atomic.h),
 * with no file to lock, to read back or to merge with. */
static int is_sink(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && (S_ISCHR(sb.st_mode) || S_ISFIFO(sb.st_mode));
}

pyr_status_t pyr_wisdom_save(const char *path, const pyr_wisdom_t *w)
{
    if (!is_sink(path)) PYR_TRY(make_parent(path));
    char *text = NULL;
    PYR_TRY(pyr_wisdom_to_text(w, &text));
    pyr_atomic_file_t af;
    pyr_status_t st = pyr_atomic_open(&af, path);
    if (st != PYR_OK) st = pyr_fail_context(st, "wisdom: ");
    if (st == PYR_OK) {
        size_t n = strlen(text);
        if (fwrite(text, 1, n, af.fp) != n) {
            int err = errno;
            pyr_atomic_abort(&af);
            st = pyr_fail(PYR_ERR_IO, "cannot write wisdom file %s: %s", path, strerror(err));
        } else if ((st = pyr_atomic_commit_now(&af)) != PYR_OK) {
            st = pyr_fail_context(st, "wisdom: ");
        }
    }
    free(text);
    return st;
}

/* ------------------------------------------------------- the process's store */

static pthread_mutex_t store_lock = PTHREAD_MUTEX_INITIALIZER;
static pyr_wisdom_t store;           /* guarded by store_lock */
static int store_ready;              /* store's machine line is set */
static unsigned long store_changes;  /* generation */
static char store_source[PYR_PATH_MAX + 64]; /* the last file imported */
static char store_rejected[1024];    /* why the last rejected import was */

/* Called with store_lock held. */
static void store_prepare(void)
{
    if (!store_ready) {
        pyr_wisdom_init(&store);
        store_ready = 1;
    }
}

void pyr_wisdom_store_get(pyr_wisdom_t *copy, char *source, size_t ssize, char *rejected, size_t rsize)
{
    pthread_mutex_lock(&store_lock);
    store_prepare();
    *copy = store;
    if (source && ssize) snprintf(source, ssize, "%s", store_source[0] ? store_source : "no wisdom file imported");
    if (rejected && rsize) snprintf(rejected, rsize, "%s", store_rejected);
    pthread_mutex_unlock(&store_lock);
}

pyr_status_t pyr_wisdom_store_put_constants(const pyr_wisdom_constants_t *c)
{
    pthread_mutex_lock(&store_lock);
    store_prepare();
    pyr_status_t st = pyr_wisdom_put_constants(&store, c);
    store_changes++;
    pthread_mutex_unlock(&store_lock);
    return st;
}

pyr_status_t pyr_wisdom_store_put_choice(const pyr_wisdom_choice_t *c)
{
    pthread_mutex_lock(&store_lock);
    store_prepare();
    pyr_status_t st = pyr_wisdom_put_choice(&store, c);
    store_changes++;
    pthread_mutex_unlock(&store_lock);
    return st;
}

unsigned long pyr_wisdom_store_generation(void)
{
    pthread_mutex_lock(&store_lock);
    unsigned long g = store_changes;
    pthread_mutex_unlock(&store_lock);
    return g;
}

void pyr_wisdom_forget(void)
{
    pthread_mutex_lock(&store_lock);
    pyr_wisdom_init(&store);
    store_ready = 1;
    store_changes++;
    store_source[0] = 0;
    store_rejected[0] = 0;
    pthread_mutex_unlock(&store_lock);
}

pyr_status_t pyr_wisdom_store_import(const char *path, int *found)
{
    *found = 0;
    if (!path || !*path) return pyr_fail(PYR_ERR_ARG, "pyr_wisdom_import_file: no file name");
    pyr_wisdom_t *w = malloc(sizeof *w);
    if (!w) return pyr_fail(PYR_ERR_NOMEM, "out of host memory importing wisdom file %s", path);
    pyr_status_t st = pyr_wisdom_load(path, w, found);
    pthread_mutex_lock(&store_lock);
    store_prepare();
    if (st == PYR_OK) {
        st = pyr_wisdom_merge(&store, w);
        if (st != PYR_OK) st = pyr_fail_context(st, "importing wisdom file %s: ", path);
        snprintf(store_source, sizeof store_source, "%s%s", path, *found ? "" : " (no such file yet)");
        store_changes++;
    } else {
        /* rejected (PYR_ERR_FORMAT) or unreadable: plans on defaults say why */
        snprintf(store_rejected, sizeof store_rejected, "%s", pyr_last_error());
    }
    pthread_mutex_unlock(&store_lock);
    free(w);
    return st;
}

pyr_status_t pyr_wisdom_store_import_default(char *path, size_t size, int *found)
{
    *found = 0;
    pyr_status_t st = pyr_wisdom_default_path(path, size);
    if (st != PYR_OK) {
        if (path && size) path[0] = 0;
        return st;
    }
    /* the program's own file, both read and written: a sink there keeps nothing to read */
    if (is_sink(path)) return PYR_OK;
    return pyr_wisdom_store_import(path, found);
}

pyr_status_t pyr_wisdom_import_file(const char *path)
{
    int found = 0;
    return pyr_wisdom_store_import(path, &found);
}

/* Held while a wisdom file is read, merged and replaced: flock on PATH.lock
 * (the wisdom file itself is replaced by rename, so it cannot carry the
 * lock).  The lock file stays: removing it would race with the next locker. */
static pyr_status_t lock_wisdom(const char *path, int *fd)
{
    size_t n = strlen(path) + 6;
    char *lp = malloc(n);
    if (!lp) return pyr_fail(PYR_ERR_NOMEM, "out of host memory locking wisdom file %s", path);
    snprintf(lp, n, "%s.lock", path);
    *fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (*fd < 0) {
        pyr_status_t st = pyr_fail(PYR_ERR_IO, "cannot lock wisdom file %s: cannot open %s: %s", path, lp, strerror(errno));
        free(lp);
        return st;
    }
    while (flock(*fd, LOCK_EX) != 0) {
        if (errno == EINTR) continue;
        pyr_status_t st = pyr_fail(PYR_ERR_IO, "cannot lock wisdom file %s (flock on %s): %s", path, lp, strerror(errno));
        close(*fd);
        *fd = -1;
        free(lp);
        return st;
    }
    free(lp);
    return PYR_OK;
}

pyr_status_t pyr_wisdom_store_export(const char *path, int replace_rejected)
{
    if (!path || !*path) return pyr_fail(PYR_ERR_ARG, "pyr_wisdom_export_file: no file name");
    pyr_wisdom_t *merged = malloc(sizeof *merged);
    if (!merged) return pyr_fail(PYR_ERR_NOMEM, "out of host memory exporting wisdom to %s", path);
    if (is_sink(path)) {
        /* the store as it is, in place: no lock file beside a device, nothing there to merge with */
        pyr_wisdom_store_get(merged, NULL, 0, NULL, 0);
        pyr_status_t st = pyr_wisdom_save(path, merged);
        free(merged);
        return st;
    }
    pyr_status_t made = make_parent(path);
    if (made != PYR_OK) {
        free(merged);
        return made;
    }
    int fd = -1, found = 0;
    pyr_status_t st = lock_wisdom(path, &fd);
    /* under the lock: what the file holds now (another process may have
     * added records since this one imported it), then this process's */
    if (st == PYR_OK) st = pyr_wisdom_load(path, merged, &found);
    if (st == PYR_ERR_FORMAT && replace_rejected) {
        pyr_wisdom_init(merged);
        st = PYR_OK;
    } else if (st == PYR_ERR_FORMAT) {
        st = pyr_fail_context(st, "not exported (the file was left as it is; 'pyrgrid calibrate' replaces it): ");
    }
    if (st == PYR_OK) {
        pthread_mutex_lock(&store_lock);
        store_prepare();
        st = pyr_wisdom_merge(merged, &store);
        pthread_mutex_unlock(&store_lock);
        if (st != PYR_OK) st = pyr_fail_context(st, "exporting wisdom to %s: ", path);
    }
    if (st == PYR_OK) st = pyr_wisdom_save(path, merged);
    if (fd >= 0) {
        flock(fd, LOCK_UN);
        close(fd);
    }
    free(merged);
    return st;
}

pyr_status_t pyr_wisdom_export_file(const char *path) { return pyr_wisdom_store_export(path, 0); }
