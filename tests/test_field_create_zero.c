/* pyr_field_create_zero: a caller's field of zeros made without writing it, which a run starting
 * from it untouched may set on the device instead of uploading.  A value the caller writes into its
 * data before the run must never be lost (the mark is checked against the pages written), and runs
 * from such fields equal, bit for bit, the runs from fields filled with the same values.
 *   test_field_create_zero        refusals, the mark, CPU runs
 *   test_field_create_zero gpu    the same runs on an in-core CUDA plan (exits 77 without a GPU) */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/field.h"
#include "maxwell_util.h"

static void refusals(void)
{
    pyr_field_t *f = NULL;
    const int64_t n[3] = {4, 5, 1};
    CHECK_FAILS(pyr_field_create_zero(2, n, PYR_DOUBLE, NULL), PYR_ERR_ARG, "out is NULL");
    CHECK_FAILS(pyr_field_create_zero(0, n, PYR_DOUBLE, &f), PYR_ERR_ARG, "use 1, 2 or 3");
    CHECK_FAILS(pyr_field_create_zero(2, NULL, PYR_DOUBLE, &f), PYR_ERR_ARG, "n is NULL");
    CHECK_FAILS(pyr_field_create_zero(2, n, (pyr_precision_t)7, &f), PYR_ERR_ARG, "neither PYR_FLOAT nor PYR_DOUBLE");
    CHECK_FAILS(pyr_field_create_zero(2, (const int64_t[3]){4, 0, 1}, PYR_DOUBLE, &f), PYR_ERR_ARG, "every axis needs a node");
    CHECK_FAILS(pyr_field_create_zero(1, n, PYR_DOUBLE, &f), PYR_ERR_ARG, "axes beyond dims have 1 node");
    CHECK(f == NULL, "a refused field is NULL");
}

/* The mark: known zero while untouched or only read; a write of anything but zero bits anywhere
 * (first, middle, last value; -0.0) ends it; spent by a take. */
static void mark(void)
{
    /* over 64 MiB: the huge-page advice applies too */
    const int64_t n[3] = {257, 256, 130};
    const int64_t count = n[0] * n[1] * n[2];
    const int64_t at[4] = {0, count / 2 + 3, count - 1, count / 3};
    for (int w = 0; w < 5; w++) {
        pyr_field_t *f = NULL;
        CHECK_OK(pyr_field_create_zero(3, n, PYR_DOUBLE, &f));
        if (!f) return;
        double *d = f->data;
        CHECK(f->dims == 3 && f->n[0] == n[0] && f->n[2] == n[2] && f->precision == PYR_DOUBLE, "shape as asked");
        CHECK(pyr_field_is_zero(f), "a fresh field is known zero");
        double sum = 0;
        for (int64_t i = 0; i < count; i += 1000) sum += d[i];
        CHECK(sum == 0 && d[count - 1] == 0, "reads zero");
        CHECK(pyr_field_is_zero(f), "a field only read is still known zero");
        if (w < 4) {
            d[at[w]] = w == 3 ? -0.0 : 1.5;
            CHECK(!pyr_field_is_zero(f), "written at %lld (%g): not known zero", (long long)at[w], d[at[w]]);
            CHECK(!pyr_field_take_zero(f), "written at %lld: the run must not take it as zero", (long long)at[w]);
        } else {
            d[count / 2] = 2.0;
            d[count / 2] = 0.0; /* zeros written back: still zeros */
            CHECK(pyr_field_is_zero(f), "zeros written back are zeros");
            CHECK(pyr_field_take_zero(f), "taken once");
            CHECK(!pyr_field_is_zero(f) && !pyr_field_take_zero(f), "spent by the take");
        }
        pyr_field_destroy(&f);
        CHECK(f == NULL, "destroyed");
    }
}

/* A Maxwell run from pyr_field_create_zero's components (untouched, or with values written) against
 * the CPU's naive run from fields holding the same values. */
static void runs(pyr_backend_kind_t backend)
{
    rng_t r = {29};
    for (int i = 0; i < 8; i++) {
        pyr_problem_t p;
        int drawn[3];
        const int dims = 2 + i % 2;
        const int64_t n[3] = {dims == 2 ? 67 : 23, dims == 2 ? 59 : 21, dims == 2 ? 1 : 19};
        const double len[3] = {1, 1, 1};
        mx_random_problem(&r, dims, n, len, i & 2 ? PYR_FLOAT : PYR_DOUBLE, &p, drawn);
        p.init = PYR_INIT_ZERO;
        const int write = i % 4 >= 2 || i == 1;
        pyr_field_t *given[6] = {NULL};
        pyr_field_t *fields[MX_FIELDS] = {NULL};
        for (int c = 0; c < 6; c++) {
            if (!mx_used(&p, c)) continue;
            CHECK_OK(pyr_field_create_zero(p.dims, p.n, p.precision, &fields[c]));
            CHECK_OK(pyr_field_create(&p, &given[c]));
            if (!fields[c] || !given[c]) return;
            memset(given[c]->data, 0, (size_t)pyr_field_count(given[c]) * pyr_precision_size(p.precision));
            if (!write) continue;
            const int64_t node = (p.n[0] / 2 + c) + p.n[0] * (p.n[1] / 2 + p.n[1] * (p.n[2] / 2));
            for (int k = 0; k < 2; k++) {
                pyr_field_t *f = k ? given[c] : fields[c];
                if (p.precision == PYR_DOUBLE) ((double *)f->data)[node] = 0.25 + c;
                else ((float *)f->data)[node] = 0.25f + (float)c;
            }
        }
        mx_result_t ref = {0};
        CHECK_OK(mx_reference(&p, given, &ref));
        pyr_options_t o;
        pyr_options_default(&o);
        o.backend = backend;
        o.method = PYR_METHOD_NAIVE;
        pyr_plan_t *plan = NULL;
        mx_result_t got = {0};
        CHECK_OK(pyr_plan_create(&p, &o, &plan));
        pyr_hooks_t hooks = {.user = &got, .probe = mx_probe_cb};
        if (plan) CHECK_OK(pyr_execute_fields(plan, fields, MX_FIELDS, &hooks, &got.run));
        pyr_plan_destroy(&plan);
        for (int c = 0; c < 6; c++) {
            got.c[c] = fields[c];
            fields[c] = NULL;
        }
        char label[96];
        snprintf(label, sizeof label, "maxwell %dD %s%s%s, %s", dims, pyr_precision_name(p.precision), drawn[1] ? " cpml" : "",
                 drawn[2] ? " sources" : "", write ? "values written before the run" : "untouched zeros");
        mx_compare(label, "the run from filled fields", &got, &ref);
        for (int c = 0; c < 6; c++) CHECK(!got.c[c] || !pyr_field_is_zero(got.c[c]), "%s: the run spent the mark", label);
        mx_free(&got);
        mx_free(&ref);
        for (int c = 0; c < 6; c++) pyr_field_destroy(&given[c]);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "gpu")) {
        if (!pyr_backend_available(PYR_BACKEND_CUDA)) {
            printf("no usable GPU (or a library without CUDA): skipped\n");
            return 77;
        }
        runs(PYR_BACKEND_CUDA);
        return check_report();
    }
    refusals();
    mark();
    runs(PYR_BACKEND_CPU);
    return check_report();
}
