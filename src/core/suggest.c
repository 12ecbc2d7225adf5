#include "core/suggest.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

int pyr_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    int *row = malloc((lb + 1) * sizeof *row);
    if (!row) return (int)(la > lb ? la : lb);
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            int best = diag + cost;
            if (row[j] + 1 < best) best = row[j] + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    int d = row[lb];
    free(row);
    return d;
}

const char *pyr_suggest(const char *word, const char *const *candidates, int ncandidates)
{
    const char *best = NULL;
    int best_d = 1 << 30;
    for (int i = 0; i < ncandidates; i++) {
        int d = pyr_edit_distance(word, candidates[i]);
        if (d < best_d) {
            best_d = d;
            best = candidates[i];
        }
    }
    /* A typo changes a few letters; beyond a third of the word it is another word. */
    size_t len = strlen(word);
    int limit = len <= 3 ? 1 : (int)(len / 3) + 1;
    return best_d <= limit ? best : NULL;
}
