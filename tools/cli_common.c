/* What every sub-command shares: -v/--verbose and -q/--quiet, and the
 * wisdom file the program imports at start and exports after it measured
 * (the library itself touches no file unless asked). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pyrgrid.h"

int pyr_cli_verbosity = 0;

int pyr_cli_fail(const char *what)
{
    fprintf(stderr, "pyrgrid: error: %s%s\n", what ? what : "", pyr_last_error());
    return PYR_EXIT_ERROR;
}

int pyr_cli_load_problem(const char *file, int argc, char **argv, const char *const *valued, pyr_problem_t *problem, pyr_options_t *options)
{
    const char **sets = calloc((size_t)(argc > 0 ? argc : 1), sizeof *sets);
    int nsets = 0;
    if (!sets) {
        fprintf(stderr, "pyrgrid: error: out of host memory\n");
        return 1;
    }
    for (int i = 0; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--set") || !strcmp(argv[i], "-s")) {
            sets[nsets++] = argv[++i];
            continue;
        }
        for (int k = 0; valued && valued[k]; k++)
            if (!strcmp(argv[i], valued[k])) {
                i++;
                break;
            }
    }
    pyr_problem_file_t *pf = NULL;
    const pyr_status_t st = pyr_problem_file_load(file, sets, nsets, &pf);
    free(sets);
    if (st != PYR_OK) {
        fprintf(stderr, "pyrgrid: error: %s\n", pyr_last_error());
        return 1;
    }
    pyr_cli_wisdom_import(); /* the model's constants for this machine */
    *problem = *pyr_problem_file_problem(pf);
    *options = *pyr_problem_file_options(pf);
    pyr_problem_file_destroy(&pf);
    return 0;
}

int pyr_cli_common_option(const char *arg)
{
    if (!strcmp(arg, "-v") || !strcmp(arg, "--verbose")) {
        pyr_cli_verbosity = 1;
        return 1;
    }
    if (!strcmp(arg, "-q") || !strcmp(arg, "--quiet")) {
        pyr_cli_verbosity = -1;
        return 1;
    }
    return 0;
}

void pyr_cli_wisdom_import(void)
{
    char path[PYR_PATH_MAX] = "";
    int found = 0;
    /* a rejected file is not an error here: plans made on the default
     * constants say why (the store keeps the message) */
    pyr_status_t st = pyr_wisdom_store_import_default(path, sizeof path, &found);
    if (pyr_cli_verbosity > 0) {
        if (st != PYR_OK) fprintf(stderr, "pyrgrid: %s%s\n", path[0] ? "" : "no wisdom imported: ", pyr_last_error());
        else fprintf(stderr, "pyrgrid: wisdom: %s %s\n", found ? "imported" : "no file yet at", path);
    }
    pyr_clear_error();
}

int pyr_cli_wisdom_export_if_changed(unsigned long since)
{
    if (pyr_wisdom_store_generation() == since) return 0;
    char path[PYR_PATH_MAX];
    if (pyr_wisdom_default_path(path, sizeof path) != PYR_OK || pyr_wisdom_export_file(path) != PYR_OK) {
        fprintf(stderr, "pyrgrid: warning: the measured choice was not saved: %s\n", pyr_last_error());
        return 1;
    }
    if (pyr_cli_verbosity >= 0) fprintf(stderr, "pyrgrid: saved the measured choice in %s\n", path);
    return 0;
}

void pyr_cli_print_common(FILE *out)
{
    fprintf(out,
            "common options (every command):\n"
            "  -h, --help     this text\n"
            "  -v, --verbose  say more: where the wisdom came from, the plan and its model\n"
            "  -q, --quiet    no progress, notices or warnings on stderr (errors still)\n"
            "exit status: 0 success, 1 error, 2 usage error (bad option or argument),\n"
            "             3 did not converge (solve: the tolerance was not met; the outputs hold the last iterate)\n");
}

int pyr_cli_parse_ranges(const char *spec, int64_t most, int spread, int64_t **out, int *n)
{
    *out = NULL;
    *n = 0;
    int cap = 256, k = 0;
    int64_t *v = malloc((size_t)cap * sizeof *v);
    if (!v) return 0;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        long long a = 0, b = 0, s = 0;
        char tail = 0;
        int got = sscanf(tok, "%lld:%lld:%lld%c", &a, &b, &s, &tail);
        if (got == 1 || got == 0) {
            if (sscanf(tok, "%lld%c", &a, &tail) != 1) got = 0;
            else got = 1, b = a, s = 1;
        } else if (got == 2) {
            if (sscanf(tok, "%lld:%lld%c", &a, &b, &tail) != 2) got = 0;
            /* the default step: 1, or about `spread` values over the range */
            s = spread > 1 && (b - a) / (spread - 1) > 1 ? (b - a) / (spread - 1) : 1;
        } else if (got != 3) {
            got = 0;
        }
        if (got < 1 || a < 1 || b < a || s < 1 || b > most) {
            free(v);
            return 0;
        }
        for (long long x = a;; x += s) { /* x + s may not overflow: stop before it passes b */
            if (k == cap) {
                cap *= 2;
                int64_t *g = realloc(v, (size_t)cap * sizeof *g);
                if (!g) {
                    free(v);
                    return 0;
                }
                v = g;
            }
            v[k++] = x;
            if (b - x < s) break;
        }
    }
    /* sorted, each once */
    for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            int64_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    int m = 0;
    for (int i = 0; i < k; i++)
        if (m == 0 || v[m - 1] != v[i]) v[m++] = v[i];
    *out = v;
    *n = m;
    return m > 0;
}
