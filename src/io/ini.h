/* INI problem files, read whole: the one reader of `pyrgrid run` and
 * `pyrgrid solve` files (src/problem/config.c, src/solvers/lgs/lgs_config.c).
 *
 * Syntax (libinih's, which both used before): `[section]`, `key = value` (or
 * `key: value`), blank lines, comments from `;` or `#` at the start of a line
 * and from a `;` after white space.  Unlike libinih, whose 200-byte line
 * buffer cut long lines in two (the tail of a long comment became a live
 * key), lines of any length are read whole; an indented line is an ordinary
 * line, not a continuation of the previous value; and a key given twice in
 * one section is an error, not "the last one wins". */
#ifndef PYR_IO_INI_H
#define PYR_IO_INI_H

#include <stddef.h>

#include "pyrgrid.h"

/* Largest problem file read: problem files are a few dozen lines. */
#define PYR_INI_MAX_BYTES ((size_t)1 << 20)

/* Keys and sections compare without regard to case (`pyrgrid solve`). */
#define PYR_INI_ANY_CASE 1u

/* Called for every key in file order; section is "" before the first
 * [section].  Return non-zero to go on, 0 to stop (the handler keeps its own
 * message). */
typedef int (*pyr_ini_handler_fn)(void *user, const char *section, const char *key, const char *value);

/* Read the problem file at `path` into *text (NUL-terminated, *len bytes
 * before the NUL; the caller frees it).  It must be a regular file, not
 * empty and at most PYR_INI_MAX_BYTES: a directory, a FIFO (which would
 * block), a device or an empty file is refused with PYR_ERR_IO naming it and
 * `what` ("problem file"). */
pyr_status_t pyr_ini_read_file(const char *path, const char *what, char **text, size_t *len);

/* Parse `len` bytes of text and call fn for each key.  Stops at the first
 * problem in file order, with *line set to its line number:
 *   - fn returned 0: PYR_ERR_CONFIG, the message left as the handler set it;
 *   - a line that is neither a section, a key = value, a comment nor blank,
 *     a key repeated in its section, a NUL byte: PYR_ERR_CONFIG with a
 *     message that names the line's problem but not the source (callers
 *     prefix "FILE line N: " in their own style).
 * Every fn call happens before the line of any syntax error or repeated
 * key. */
pyr_status_t pyr_ini_parse(const char *text, size_t len, unsigned flags, pyr_ini_handler_fn fn, void *user, int *line);

#endif
