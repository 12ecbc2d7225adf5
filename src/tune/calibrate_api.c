/* pyr_wisdom_calibrate: the one calibration loop, which `pyrgrid calibrate`
 * and the Python module's pyrgrid.calibrate both call: every registered
 * scheme, precision and dimension asked for, checked before the first is
 * measured, then measured (calibrate.c), described in the words the program
 * prints and put in the store. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "plan/longvector.h"
#include "plan/model.h"
#include "schemes/scheme.h"
#include "tune/calibrate.h"
#include "tune/wisdom.h"
#include "pyrgrid.h"

#define MAX_SCHEMES 32 /* bits of a list's mask */

/* The registered schemes, in the order of their equations: the registry
 * answers for each equation from the first up to the first it does not know. */
static int registered_schemes(const pyr_scheme_t **out, int max)
{
    int n = 0;
    while (n < max && n < pyr_scheme_count()) {
        out[n] = pyr_scheme_at(n);
        n++;
    }
    return n;
}

/* "a, b, c" of n names into out. */
static void join_names(const char *const *names, int n, char *out, size_t size)
{
    out[0] = 0;
    for (int i = 0; i < n; i++) {
        strncat(out, names[i], size - strlen(out) - 1);
        if (i + 1 < n) strncat(out, ", ", size - strlen(out) - 1);
    }
}

/* Bits of the names found in the comma-separated list (NULL, "" or "all": all n). */
static pyr_status_t parse_list(const char *what, const char *list, const char *const *names, int n, unsigned *bits)
{
    const unsigned all = n >= 32 ? ~0u : (1u << n) - 1;
    *bits = 0;
    if (!list || !*list || !strcmp(list, "all")) {
        *bits = all;
        return PYR_OK;
    }
    char known[512];
    join_names(names, n, known, sizeof known);
    char *buf = malloc(strlen(list) + 1);
    if (!buf) return pyr_fail(PYR_ERR_NOMEM, "calibrate: out of host memory");
    strcpy(buf, list);
    pyr_status_t st = PYR_OK;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ", ", &save); tok && st == PYR_OK; tok = strtok_r(NULL, ", ", &save)) {
        if (!strcmp(tok, "all")) {
            *bits = all;
            continue;
        }
        int found = 0;
        for (int i = 0; i < n; i++)
            if (!strcmp(tok, names[i])) {
                *bits |= 1u << i;
                found = 1;
            }
        if (!found) st = pyr_fail(PYR_ERR_ARG, "calibrate: %s '%s' is not one of %s; give a list of them such as '%s,%s', or all", what, tok,
                                  known, names[0], names[n - 1]);
    }
    free(buf);
    if (st == PYR_OK && !*bits)
        st = pyr_fail(PYR_ERR_ARG, "calibrate: no %s in '%s'; give a list of %s, or all", what, list, known);
    return st;
}

/* printf to the end of out. */
static void add(char *out, size_t size, const char *fmt, ...) PYR_PRINTF(3, 4);
static void add(char *out, size_t size, const char *fmt, ...)
{
    const size_t used = strlen(out);
    if (used + 1 >= size) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out + used, size - used, fmt, ap);
    va_end(ap);
}

/* What one set measured, as `pyrgrid calibrate` prints it. */
static void describe(const char *label, const pyr_model_constants_t *k, size_t elem, const pyr_calibrate_pass_t *pass,
                     int64_t lv_threads, char *out, size_t size)
{
    add(out, size,
        "%s: upload %.3g ns/value (%.3g GB/s), download %.3g ns/value (%.3g GB/s), both at once %.3g / %.3g ns,\n"
        "    part rows (blocks, cubes): upload %.3g GB/s, download %.3g GB/s, + %.3g / %.3g ns per row, + %.3g / %.3g ns per row not on "
        "64-byte lines,\n"
        "    + %.3g / %.3g ns per row on separate pages beside a kernel;\n"
        "    %.3g ns per row, %.3g us per call, %.3g us per layer launch; compute %.3g ns/value at 1 layer per call "
        "(%.3g Gcell/s), %.3g at 8, %.3g at 64, + %.3g ns per row of a layer\n",
        label, 1e9 * k->up, (double)elem / k->up * 1e-9, 1e9 * k->down, (double)elem / k->down * 1e-9, 1e9 * k->up_both, 1e9 * k->down_both,
        k->up_strided > 0 ? (double)elem / k->up_strided * 1e-9 : 0, k->down_strided > 0 ? (double)elem / k->down_strided * 1e-9 : 0,
        1e9 * k->up_part_row, 1e9 * k->down_part_row, 1e9 * k->up_ragged, 1e9 * k->down_ragged, 1e9 * k->up_row_busy,
        1e9 * k->down_row_busy, 1e9 * k->row, 1e6 * k->call, 1e6 * k->launch, 1e9 * k->compute[0], 1e-9 / k->compute[0],
        1e9 * pyr_model_compute_cost(k, 8), 1e9 * pyr_model_compute_cost(k, 64), 1e9 * k->compute_row);
    if (k->up_row_both > 0) add(out, size, "    + %.3g ns per part row uploaded beside downloads (fitted to a pass of cubes)\n", 1e9 * k->up_row_both);
    if (pass->note[0])
        add(out, size, "    no pass of cubes timed (%s): the cost of part-row uploads beside downloads stays unknown\n", pass->note);
    if (pass->n > 0)
        add(out, size, "    a pass of cubes (%lld^3 at a quarter of it, height %lld): %.1f ms, the model %.1f ms without %s\n", (long long)pass->n,
            (long long)pass->height, 1e3 * pass->measured, 1e3 * pass->model,
            !pass->fitted              ? "a cost of uploads beside downloads, which at half their rate would not explain it: none fitted"
            : k->up_row_both > 0 ? "the cost above"
                                 : "a cost of uploads beside downloads: none needed");
    if (pyr_lv_valid(&k->lv)) {
        const pyr_lv_constants_t *lv = &k->lv;
        add(out, size,
            "    long-vector method (cuBLAS): t_kernel %.3g us per call; per wave of %.0f elements t_add %.3g us, t_saxpy %.3g us, "
            "t_scal %.3g us",
            1e6 * lv->t_kernel, lv->threads, 1e6 * lv->t_add, 1e6 * lv->t_saxpy, 1e6 * lv->t_scal);
        if (lv_threads > 0) add(out, size, " (the GPU's resident threads: %lld)", (long long)lv_threads);
        add(out, size, "\n");
    }
}

pyr_status_t pyr_wisdom_calibrate(const pyr_options_t *options, const char *schemes, const char *precisions, const char *dims, double effort,
                                  pyr_calibrate_fn report, void *user)
{
    const pyr_scheme_t *scheme[MAX_SCHEMES];
    const char *scheme_names[MAX_SCHEMES];
    const int nschemes = registered_schemes(scheme, MAX_SCHEMES);
    for (int i = 0; i < nschemes; i++) scheme_names[i] = scheme[i]->name;
    static const char *const precision_names[] = {"float", "double"};
    static const pyr_precision_t precision_of[] = {PYR_FLOAT, PYR_DOUBLE};
    static const char *const dims_names[] = {"1", "2", "3"};
    unsigned sb, pb, db;
    PYR_TRY(parse_list("scheme", schemes, scheme_names, nschemes, &sb));
    PYR_TRY(parse_list("precision", precisions, precision_names, 2, &pb));
    PYR_TRY(parse_list("dims", dims, dims_names, 3, &db));
    if (!(effort > 0 && effort <= 100))
        return pyr_fail(PYR_ERR_ARG, "calibrate: effort = %g; use a number in (0, 100] (1 = the default, about a second per set)", effort);
    pyr_options_t o;
    if (options) o = *options;
    else pyr_options_default(&o);
    pyr_backend_kind_t kind;
    PYR_TRY(pyr_calibrate_backend(o.backend, &kind));

    /* Every set asked for, checked before the first is measured: a set the scheme or the backend
     * does not have is left out, any other refusal (a kernel variant the set lacks) fails the whole. */
    unsigned char measure[MAX_SCHEMES][2][3];
    memset(measure, 0, sizeof measure);
    int total = 0;
    pyr_status_t refused = PYR_OK;
    char left_out[512] = "", why[640] = "";
    for (int s = 0; s < nschemes; s++)
        for (int pi = 0; pi < 2; pi++)
            for (int d = 1; d <= 3; d++) {
                if (!(sb & (1u << s)) || !(pb & (1u << pi)) || !(db & (1u << (d - 1)))) continue;
                pyr_calibrate_opts_t c = {.backend = kind, .device = o.device, .threads = o.threads, .precision = precision_of[pi],
                                          .dims = d, .effort = effort, .equation = scheme[s]->equation};
                snprintf(c.kernel, sizeof c.kernel, "%s", o.kernel);
                const pyr_status_t st = pyr_calibrate_check(&c);
                if (st == PYR_ERR_UNSUPPORTED && !left_out[0])
                    snprintf(left_out, sizeof left_out, "%s %s %dD: %s", scheme[s]->name, precision_names[pi], d, pyr_last_error());
                else if (st != PYR_OK && st != PYR_ERR_UNSUPPORTED && refused == PYR_OK) {
                    refused = st;
                    snprintf(why, sizeof why, "calibrating %s %s %dD: %s", scheme[s]->name, precision_names[pi], d, pyr_last_error());
                } else if (st == PYR_OK) {
                    measure[s][pi][d - 1] = 1;
                    total++;
                }
                pyr_clear_error();
            }
    /* a variant other sets take: the one refusing it can be left out */
    if (refused != PYR_OK && total > 0 && o.kernel[0])
        return pyr_fail(refused, "%s; kernel %s is timed in every set asked for: leave this one out (the schemes, precisions or dims "
                                 "asked for)", why, o.kernel);
    if (refused != PYR_OK) return pyr_fail(refused, "%s", why);
    if (!total) return pyr_fail(PYR_ERR_ARG, "calibrate: none of the sets asked for exists (%s); ask for other schemes or dims", left_out);

    pyr_wisdom_constants_t rec;
    memset(&rec, 0, sizeof rec);
    rec.backend = kind;
    PYR_TRY(pyr_wisdom_device(kind, o.device, o.threads, rec.device, sizeof rec.device));
    snprintf(rec.version, sizeof rec.version, "%s", PYR_VERSION_STRING);
    char text[4096];
    snprintf(text, sizeof text, "calibrating the %s backend on %s\n", pyr_backend_name(kind), rec.device);
    if (report && report(user, 0, total, text)) return pyr_fail(PYR_ERR_CANCELLED, "calibrate: stopped before the first of %d sets", total);
    int done = 0;
    for (int s = 0; s < nschemes; s++)
        for (int pi = 0; pi < 2; pi++)
            for (int d = 1; d <= 3; d++) {
                if (!measure[s][pi][d - 1]) continue;
                pyr_calibrate_pass_t pass;
                int64_t lv_threads = 0;
                pyr_calibrate_opts_t c = {.backend = kind, .device = o.device, .threads = o.threads, .precision = precision_of[pi],
                                          .dims = d, .effort = effort, .equation = scheme[s]->equation, .pass = &pass,
                                          .lv_threads = &lv_threads};
                snprintf(c.kernel, sizeof c.kernel, "%s", o.kernel);
                pyr_status_t st = pyr_calibrate(&c, &rec.k, rec.kernel, sizeof rec.kernel);
                if (st != PYR_OK) return pyr_fail_context(st, "calibrating %s %s %dD: ", scheme[s]->name, precision_names[pi], d);
                snprintf(rec.scheme, sizeof rec.scheme, "%s", scheme[s]->name);
                rec.precision = c.precision;
                rec.dims = d;
                char label[96];
                snprintf(label, sizeof label, "%s %s %dD (kernel %s)", rec.scheme, precision_names[pi], d, rec.kernel);
                /* a variant asked for is recorded, and plans take it; the default stays implicit */
                if (!o.kernel[0]) rec.kernel[0] = 0;
                PYR_TRY(pyr_wisdom_store_put_constants(&rec));
                done++;
                text[0] = 0;
                describe(label, &rec.k, pyr_precision_size(c.precision), &pass, lv_threads, text, sizeof text);
                if (report && report(user, done, total, text) && done < total)
                    return pyr_fail(PYR_ERR_CANCELLED, "calibrate: stopped after %d of %d sets (those are in the store)", done, total);
            }
    return PYR_OK;
}
