/* The problem-file keys of problems and options (problem/keys.c): what the public
 * getters and the JSON reports share. */
#ifndef PYR_PROBLEM_KEYS_H
#define PYR_PROBLEM_KEYS_H

#include <stddef.h>

#include "pyrgrid.h"

enum { PYR_KEY_INT = 0, PYR_KEY_REAL, PYR_KEY_TEXT };

/* Every key of a problem and of the options, NULL-terminated. */
extern const char *const pyr_problem_keys[];
extern const char *const pyr_options_keys[];
/* Whether a key matters to this problem (its equation's keys, initial.file
 * for kind = file, ...). */
int pyr_problem_key_applies(const pyr_problem_t *p, const char *key);
/* pyr_problem_get / pyr_options_get, also saying whether the text is an
 * integer, a real number or text (PYR_KEY_*; "auto" is text). */
pyr_status_t pyr_problem_value(const pyr_problem_t *p, const char *key, char *value, size_t size, int *kind);
/* Maxwell's sections' keys (problem/keys_maxwell.c): boundary.*, material.*
 * (shapeN as its line), source.sourceN, probe.probeN, formatted as a problem
 * file writes them ("" for a numbered one not given); -1 for no such key. */
int pyr_problem_maxwell_value(const pyr_problem_t *p, const char *key, char *out, size_t size, int *kind);
pyr_status_t pyr_options_value(const pyr_options_t *o, const char *key, char *value, size_t size, int *kind);

#endif
