/* pyr_wisdom_calibrate: `pyrgrid calibrate` for library callers (the Python
 * module's pyrgrid.calibrate): measure, then put the records in the store. */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "tune/calibrate.h"
#include "tune/wisdom.h"
#include "pyrgrid.h"

/* Bits of the comma-separated names found in list (NULL or "all": all n). */
static pyr_status_t parse_list(const char *what, const char *list, const char *const *names, int n, unsigned *bits)
{
    *bits = 0;
    if (!list || !*list || !strcmp(list, "all")) {
        *bits = (1u << n) - 1;
        return PYR_OK;
    }
    char buf[128];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        int found = 0;
        for (int i = 0; i < n; i++)
            if (!strcmp(tok, names[i])) {
                *bits |= 1u << i;
                found = 1;
            }
        if (!found) {
            char all[128] = "";
            for (int i = 0; i < n; i++) {
                strncat(all, names[i], sizeof all - strlen(all) - 1);
                if (i + 1 < n) strncat(all, ", ", sizeof all - strlen(all) - 1);
            }
            return pyr_fail(PYR_ERR_ARG, "pyr_wisdom_calibrate: %s '%s' is not one of %s (or all)", what, tok, all);
        }
    }
    if (!*bits) return pyr_fail(PYR_ERR_ARG, "pyr_wisdom_calibrate: no %s in '%s'", what, list);
    return PYR_OK;
}

pyr_status_t pyr_wisdom_calibrate(const pyr_options_t *options, const char *schemes, const char *precisions, const char *dims, double effort)
{
    static const char *const scheme_names[] = {"heat", "poisson"};
    static const char *const precision_names[] = {"float", "double"};
    static const char *const dims_names[] = {"1", "2", "3"};
    unsigned sb, pb, db;
    PYR_TRY(parse_list("scheme", schemes, scheme_names, 2, &sb));
    PYR_TRY(parse_list("precision", precisions, precision_names, 2, &pb));
    PYR_TRY(parse_list("dims", dims, dims_names, 3, &db));
    if (!(effort > 0 && effort <= 100)) return pyr_fail(PYR_ERR_ARG, "pyr_wisdom_calibrate: effort = %g; use a number in (0, 100] (1 = default)", effort);
    pyr_options_t o;
    if (options) o = *options;
    else pyr_options_default(&o);
    pyr_backend_kind_t kind = o.backend;
    if (kind == PYR_BACKEND_AUTO) kind = pyr_backend_available(PYR_BACKEND_CUDA) ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU;
    pyr_wisdom_constants_t rec;
    memset(&rec, 0, sizeof rec);
    rec.backend = kind;
    PYR_TRY(pyr_wisdom_device(kind, o.device, o.threads, rec.device, sizeof rec.device));
    snprintf(rec.version, sizeof rec.version, "%s", PYR_VERSION_STRING);
    for (int eq = 0; eq < 2; eq++) {
        if (!(sb & (1u << eq))) continue;
        for (int pi = 0; pi < 2; pi++) {
            if (!(pb & (1u << pi))) continue;
            for (int d = 1; d <= 3; d++) {
                if (!(db & (1u << (d - 1)))) continue;
                pyr_calibrate_opts_t c = {kind, o.device, o.threads, pi ? PYR_DOUBLE : PYR_FLOAT, d, effort, (pyr_equation_t)eq, "", NULL};
                snprintf(c.kernel, sizeof c.kernel, "%s", o.kernel);
                pyr_status_t st = pyr_calibrate(&c, &rec.k, rec.kernel, sizeof rec.kernel);
                if (st != PYR_OK) return pyr_fail_context(st, "calibrating %s %s %dD: ", scheme_names[eq], precision_names[pi], d);
                snprintf(rec.scheme, sizeof rec.scheme, "%s", scheme_names[eq]);
                rec.precision = c.precision;
                rec.dims = d;
                /* a variant asked for is recorded, and plans take it; the default stays implicit (as the program does) */
                if (!o.kernel[0]) rec.kernel[0] = 0;
                PYR_TRY(pyr_wisdom_store_put_constants(&rec));
            }
        }
    }
    return PYR_OK;
}
