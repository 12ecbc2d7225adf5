/* "Did you mean" hints for unknown names in problem files and options. */
#ifndef PYR_CORE_SUGGEST_H
#define PYR_CORE_SUGGEST_H

/* The candidate closest to `word` by edit distance (case-insensitive), or NULL
 * when none is close enough to be a plausible typo. */
const char *pyr_suggest(const char *word, const char *const *candidates, int ncandidates);

/* Edit (Levenshtein) distance between two strings, case-insensitive. */
int pyr_edit_distance(const char *a, const char *b);

#endif
