#include "io/json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

void pyr_json_init(pyr_json_t *j, int pretty)
{
    memset(j, 0, sizeof *j);
    j->pretty = pretty;
}

void pyr_json_free(pyr_json_t *j)
{
    free(j->text);
    memset(j, 0, sizeof *j);
}

static void put(pyr_json_t *j, const char *s, size_t n)
{
    if (j->failed) return;
    if (j->len + n + 1 > j->cap) {
        size_t cap = j->cap ? j->cap : 256;
        while (cap < j->len + n + 1) cap *= 2;
        char *t = realloc(j->text, cap);
        if (!t) {
            j->failed = 1;
            return;
        }
        j->text = t;
        j->cap = cap;
    }
    memcpy(j->text + j->len, s, n);
    j->len += n;
    j->text[j->len] = 0;
}

static void puts_(pyr_json_t *j, const char *s) { put(j, s, strlen(s)); }

size_t pyr_utf8_char_len(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    if (p[0] < 0x80) return p[0] ? 1 : 0;
    /* the second byte's range depends on the first (Unicode, table 3-7);
     * later bytes are 0x80..0xbf */
    unsigned char lo = 0x80, hi = 0xbf;
    size_t n;
    if (p[0] >= 0xc2 && p[0] <= 0xdf) n = 2;
    else if (p[0] >= 0xe0 && p[0] <= 0xef) {
        n = 3;
        if (p[0] == 0xe0) lo = 0xa0;      /* overlong below */
        else if (p[0] == 0xed) hi = 0x9f; /* surrogates above */
    } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
        n = 4;
        if (p[0] == 0xf0) lo = 0x90;      /* overlong below */
        else if (p[0] == 0xf4) hi = 0x8f; /* past U+10FFFF above */
    } else return 0;
    if (p[1] < lo || p[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xbf) return 0;
    return n;
}

static void quoted(pyr_json_t *j, const char *s)
{
    put(j, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        switch (*p) {
        case '"': puts_(j, "\\\""); break;
        case '\\': puts_(j, "\\\\"); break;
        case '\n': puts_(j, "\\n"); break;
        case '\r': puts_(j, "\\r"); break;
        case '\t': puts_(j, "\\t"); break;
        default:
            if (*p < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", *p);
                puts_(j, esc);
            } else if (*p < 0x80) {
                put(j, (const char *)p, 1);
            } else {
                /* JSON is UTF-8: a byte that is not part of a well-formed
                 * character becomes U+FFFD (pyr_json_string) */
                size_t n = pyr_utf8_char_len((const char *)p);
                if (n) {
                    put(j, (const char *)p, n);
                    p += n - 1;
                } else {
                    puts_(j, "\\ufffd");
                }
            }
        }
    }
    put(j, "\"", 1);
}

static void indent(pyr_json_t *j)
{
    /* arrays (of numbers, in pyrgrid's reports) stay on one line */
    if (!j->pretty || (j->depth > 0 && j->depth <= PYR_JSON_DEPTH && j->close[j->depth - 1] == ']')) return;
    put(j, "\n", 1);
    for (int i = 0; i < j->depth; i++) put(j, "  ", 2);
}

/* Comma, newline, indent and "key": before a value. */
static void member(pyr_json_t *j, const char *key)
{
    if (j->depth > 0 && j->depth <= PYR_JSON_DEPTH) {
        if (j->count[j->depth - 1]++) put(j, ",", 1);
        indent(j);
    }
    if (key) {
        quoted(j, key);
        puts_(j, j->pretty ? ": " : ":");
    }
}

static void open_(pyr_json_t *j, const char *key, const char *bracket)
{
    member(j, key);
    puts_(j, bracket);
    if (j->depth < PYR_JSON_DEPTH) {
        j->count[j->depth] = 0;
        j->close[j->depth] = bracket[0] == '{' ? '}' : ']';
    }
    j->depth++;
}

void pyr_json_object(pyr_json_t *j, const char *key) { open_(j, key, "{"); }
void pyr_json_array(pyr_json_t *j, const char *key) { open_(j, key, "["); }

void pyr_json_end(pyr_json_t *j)
{
    if (j->depth <= 0) return;
    j->depth--;
    if (j->depth >= PYR_JSON_DEPTH) return; /* deeper than the writer tracks: never done by pyrgrid */
    if (j->count[j->depth] && j->close[j->depth] == '}') indent(j);
    put(j, &j->close[j->depth], 1);
}

void pyr_json_string(pyr_json_t *j, const char *key, const char *value)
{
    member(j, key);
    if (value) quoted(j, value);
    else puts_(j, "null");
}

void pyr_json_int(pyr_json_t *j, const char *key, int64_t value)
{
    char b[32];
    snprintf(b, sizeof b, "%lld", (long long)value);
    member(j, key);
    puts_(j, b);
}

void pyr_json_uint(pyr_json_t *j, const char *key, uint64_t value)
{
    char b[32];
    snprintf(b, sizeof b, "%llu", (unsigned long long)value);
    member(j, key);
    puts_(j, b);
}

void pyr_json_real(pyr_json_t *j, const char *key, double value)
{
    member(j, key);
    if (!isfinite(value)) {
        puts_(j, "null");
        return;
    }
    char b[40];
    snprintf(b, sizeof b, "%.17g", value);
    /* a whole number stays a JSON number either way; keep "1e+20" as is */
    puts_(j, b);
}

void pyr_json_bool(pyr_json_t *j, const char *key, int value)
{
    member(j, key);
    puts_(j, value ? "true" : "false");
}

void pyr_json_null(pyr_json_t *j, const char *key)
{
    member(j, key);
    puts_(j, "null");
}

void pyr_json_raw(pyr_json_t *j, const char *key, const char *json)
{
    member(j, key);
    puts_(j, json && *json ? json : "null");
}

const char *pyr_json_text(pyr_json_t *j)
{
    if (j->failed) {
        pyr_fail(PYR_ERR_NOMEM, "out of host memory writing a JSON report");
        return NULL;
    }
    if (!j->text) put(j, "", 0);
    if (j->failed) {
        pyr_fail(PYR_ERR_NOMEM, "out of host memory writing a JSON report");
        return NULL;
    }
    return j->text;
}

size_t pyr_json_copy_out(const char *text, char *buf, size_t size)
{
    size_t n = strlen(text);
    if (buf && size > 0) {
        size_t k = n < size - 1 ? n : size - 1;
        memcpy(buf, text, k);
        buf[k] = 0;
    }
    return n;
}
