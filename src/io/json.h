/* A small JSON writer for reports (pyrgrid run --report, plan --json, the
 * plan and run descriptions of the public API and of HDF5 files).  Text is
 * built in a growing buffer; a failed allocation is remembered and reported
 * once, by pyr_json_finish.  Numbers are written so that they read back as
 * the same double (%.17g); NaN and infinities, which JSON lacks, as null. */
#ifndef PYR_IO_JSON_H
#define PYR_IO_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "pyrgrid.h"

#define PYR_JSON_DEPTH 16

typedef struct {
    char *text;
    size_t len, cap;
    int failed;
    int depth;
    int count[PYR_JSON_DEPTH]; /* members written at each level (for commas) */
    char close[PYR_JSON_DEPTH]; /* the bracket that closes each level */
    int pretty;                /* newlines and indents */
} pyr_json_t;

void pyr_json_init(pyr_json_t *j, int pretty);
void pyr_json_free(pyr_json_t *j);

/* Containers; `key` names the member inside an object, NULL inside an array
 * or at the top. */
void pyr_json_object(pyr_json_t *j, const char *key);
void pyr_json_array(pyr_json_t *j, const char *key);
void pyr_json_end(pyr_json_t *j); /* closes the innermost container */

/* A string, escaped as JSON needs.  Text that is not UTF-8 (a file name in
 * another encoding) gives U+FFFD, written \ufffd, for each byte that does not
 * start a well-formed UTF-8 character, so that every JSON reader takes the
 * text; well-formed UTF-8 is written as it is.  NULL: null. */
void pyr_json_string(pyr_json_t *j, const char *key, const char *value);
void pyr_json_int(pyr_json_t *j, const char *key, int64_t value);
void pyr_json_uint(pyr_json_t *j, const char *key, uint64_t value);
void pyr_json_real(pyr_json_t *j, const char *key, double value);
void pyr_json_bool(pyr_json_t *j, const char *key, int value);
void pyr_json_null(pyr_json_t *j, const char *key);
/* Insert already formatted JSON (an object made by another writer). */
void pyr_json_raw(pyr_json_t *j, const char *key, const char *json);

/* The text, NUL-terminated (owned by j), or NULL with PYR_ERR_NOMEM set. */
const char *pyr_json_text(pyr_json_t *j);

/* The length (1 to 4) of the well-formed UTF-8 character at s, which is not
 * NUL, or 0 when s does not start one: a stray continuation byte, an
 * overlong form, a surrogate, a code point past U+10FFFF, or a sequence cut
 * short (the NUL ends it; nothing past it is read). */
size_t pyr_utf8_char_len(const char *s);

/* Copy text into a caller's buffer the snprintf way: the length it needs
 * (without the NUL) is returned; buf receives as much as fits, terminated. */
size_t pyr_json_copy_out(const char *text, char *buf, size_t size);

#endif
