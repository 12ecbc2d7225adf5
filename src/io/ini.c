/* INI problem files (syntax in ini.h): read whole, checked line by line,
 * then handed to the caller's handler key by key. */
#include "io/ini.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"

static const char *file_kind(mode_t m)
{
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO (named pipe)";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

pyr_status_t pyr_ini_read_file(const char *path, const char *what, char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    if (!path || !*path) return pyr_fail(PYR_ERR_ARG, "%s: the file name is empty", what);
    /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return pyr_fail(PYR_ERR_IO, "cannot read %s %s: %s", what, path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        return pyr_fail(PYR_ERR_IO, "cannot read %s %s: %s", what, path, strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        if (S_ISDIR(st.st_mode))
            return pyr_fail(PYR_ERR_IO, "%s %s is a directory; give the INI file itself (examples/ has some)", what, path);
        return pyr_fail(PYR_ERR_IO, "%s %s is %s; problem files are read from regular files only", what, path,
                        file_kind(st.st_mode));
    }
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    size_t cap = (size_t)st.st_size + 1 < PYR_INI_MAX_BYTES + 2 ? (size_t)st.st_size + 1 : PYR_INI_MAX_BYTES + 2;
    if (cap < 256) cap = 256;
    char *buf = malloc(cap);
    size_t n = 0;
    pyr_status_t status = PYR_OK;
    if (!buf) status = pyr_fail(PYR_ERR_NOMEM, "out of memory reading %s %s", what, path);
    while (status == PYR_OK) {
        if (n + 1 == cap) {
            if (cap > PYR_INI_MAX_BYTES) {
                status = pyr_fail(PYR_ERR_IO, "%s %s is larger than %zu bytes; a problem file is a few dozen lines", what,
                                  path, PYR_INI_MAX_BYTES);
                break;
            }
            size_t ncap = cap * 2 > PYR_INI_MAX_BYTES + 2 ? PYR_INI_MAX_BYTES + 2 : cap * 2;
            char *g = realloc(buf, ncap);
            if (!g) {
                status = pyr_fail(PYR_ERR_NOMEM, "out of memory reading %s %s", what, path);
                break;
            }
            buf = g;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0) {
            if (errno == EINTR) continue;
            status = pyr_fail(PYR_ERR_IO, "cannot read %s %s: %s", what, path, strerror(errno));
        } else if (r == 0) {
            break;
        } else {
            n += (size_t)r;
        }
    }
    close(fd);
    if (status == PYR_OK && n == 0)
        status = pyr_fail(PYR_ERR_IO, "%s %s is empty; a problem file has [sections] with key = value lines (examples/ has some)",
                          what, path);
    if (status != PYR_OK) {
        free(buf);
        return status;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return PYR_OK;
}

/* ------------------------------------------------------------------ parse */

typedef struct {
    const char *section, *key, *value;
    int line;
} entry_t;

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

static char *rstrip(char *s, char *end)
{
    while (end > s && is_space(end[-1])) end--;
    *end = '\0';
    return s;
}

/* First of `chars` in s, or where an inline comment (';' after white space)
 * starts, or the end. */
static char *find_or_comment(char *s, const char *chars, int was_space)
{
    for (; *s; s++) {
        if (chars && strchr(chars, *s)) break;
        if (was_space && *s == ';') break;
        was_space = is_space(*s);
    }
    return s;
}

static int same(const char *a, const char *b, unsigned flags)
{
    return (flags & PYR_INI_ANY_CASE) ? !strcasecmp(a, b) : !strcmp(a, b);
}

static int cmp_lines(const entry_t *a, const entry_t *b) { return (a->line > b->line) - (a->line < b->line); }

static int cmp_exact(const void *pa, const void *pb)
{
    const entry_t *a = pa, *b = pb;
    int c = strcmp(a->section, b->section);
    if (!c) c = strcmp(a->key, b->key);
    return c ? c : cmp_lines(a, b);
}

static int cmp_any_case(const void *pa, const void *pb)
{
    const entry_t *a = pa, *b = pb;
    int c = strcasecmp(a->section, b->section);
    if (!c) c = strcasecmp(a->key, b->key);
    return c ? c : cmp_lines(a, b);
}

pyr_status_t pyr_ini_parse(const char *text, size_t len, unsigned flags, pyr_ini_handler_fn fn, void *user, int *line)
{
    *line = 0;
    const char *nul = memchr(text, '\0', len);
    int nul_line = 0;
    if (nul) {
        nul_line = 1;
        for (const char *p = text; p < nul; p++) nul_line += *p == '\n';
        len = (size_t)(nul - text);
    }
    char *buf = malloc(len + 1);
    if (!buf) return pyr_fail(PYR_ERR_NOMEM, "out of memory reading a problem file");
    memcpy(buf, text, len);
    buf[len] = '\0';

    size_t cap = 16, n = 0;
    entry_t *e = malloc(cap * sizeof *e);
    if (!e) {
        free(buf);
        return pyr_fail(PYR_ERR_NOMEM, "out of memory reading a problem file");
    }
    const char *section = "";
    int bad_line = 0; /* first line that is not INI */
    const char *bad_why = NULL;
    char *p = buf;
    if (len >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3)) p += 3; /* UTF-8 byte order mark */
    for (int lineno = 1; *p && !bad_line; lineno++) {
        char *nl = strchr(p, '\n');
        char *next = nl ? nl + 1 : p + strlen(p);
        if (nl) *nl = '\0';
        char *s = p;
        p = next;
        while (is_space(*s)) s++;
        if (!*s || *s == ';' || *s == '#') continue;
        if (*s == '[') {
            char *end = find_or_comment(s + 1, "]", 0);
            if (*end != ']') {
                bad_line = lineno;
                bad_why = "a section header without its ']'";
                break;
            }
            char *after = end + 1;
            while (is_space(*after)) after++;
            if (*after && *after != ';' && *after != '#') {
                bad_line = lineno;
                bad_why = "text after a section header (put each key = value on a line of its own)";
                break;
            }
            char *name = s + 1;
            while (is_space(*name)) name++;
            section = rstrip(name, end);
            if (!*section) {
                bad_line = lineno;
                bad_why = "an empty section name []";
                break;
            }
            continue;
        }
        char *delim = find_or_comment(s, "=:", 0);
        if (*delim != '=' && *delim != ':') {
            bad_line = lineno;
            bad_why = "not an INI line (expected [section], key = value or a ; comment)";
            break;
        }
        char *key = rstrip(s, delim);
        char *value = delim + 1;
        int space_before = 1; /* "key = ; comment": the ';' follows white space */
        if (!is_space(*value)) space_before = 0;
        while (is_space(*value)) value++;
        char *vend = find_or_comment(value, NULL, space_before);
        rstrip(value, vend);
        if (!*key) {
            bad_line = lineno;
            bad_why = "a value without a key (expected key = value)";
            break;
        }
        if (n == cap) {
            entry_t *g = realloc(e, 2 * cap * sizeof *e);
            if (!g) {
                free(e);
                free(buf);
                return pyr_fail(PYR_ERR_NOMEM, "out of memory reading a problem file");
            }
            e = g;
            cap *= 2;
        }
        e[n++] = (entry_t){section, key, value, lineno};
    }
    if (nul_line && (!bad_line || nul_line < bad_line)) {
        bad_line = nul_line;
        bad_why = "a NUL byte (this is not a text file)";
    }

    /* A key given twice in its section: the second occurrence is the error. */
    int dup_line = 0, dup_first = 0;
    const char *dup_key = NULL, *dup_section = NULL;
    entry_t *sorted = n ? malloc(n * sizeof *sorted) : NULL;
    if (n && !sorted) {
        free(e);
        free(buf);
        return pyr_fail(PYR_ERR_NOMEM, "out of memory reading a problem file");
    }
    if (n) {
        memcpy(sorted, e, n * sizeof *sorted);
        qsort(sorted, n, sizeof *sorted, (flags & PYR_INI_ANY_CASE) ? cmp_any_case : cmp_exact);
        for (size_t i = 1; i < n; i++)
            if (same(sorted[i].section, sorted[i - 1].section, flags) && same(sorted[i].key, sorted[i - 1].key, flags) &&
                (!dup_line || sorted[i].line < dup_line)) {
                dup_line = sorted[i].line;
                dup_first = sorted[i - 1].line;
                dup_key = sorted[i].key;
                dup_section = sorted[i].section;
            }
    }

    int stop = bad_line && (!dup_line || bad_line < dup_line) ? bad_line : dup_line;
    pyr_status_t status = PYR_OK;
    for (size_t i = 0; i < n && (!stop || e[i].line < stop); i++) {
        if (!fn(user, e[i].section, e[i].key, e[i].value)) {
            *line = e[i].line;
            status = PYR_ERR_CONFIG;
            break;
        }
    }
    if (status == PYR_OK && stop) {
        *line = stop;
        if (stop == bad_line) status = pyr_fail(PYR_ERR_CONFIG, "%s", bad_why);
        else if (*dup_section)
            status = pyr_fail(PYR_ERR_CONFIG, "key '%s' in [%s] was already given on line %d; give each key once per section",
                              dup_key, dup_section, dup_first);
        else
            status = pyr_fail(PYR_ERR_CONFIG, "key '%s' was already given on line %d; give each key once", dup_key, dup_first);
    }
    free(sorted);
    free(e);
    free(buf);
    return status;
}
