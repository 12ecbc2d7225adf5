/* The public API as a user of the installed library sees it: this program
 * includes only include/ headers (and the tests' check.h, which includes
 * pyrgrid.h) and links the shared library libpyrgrid, not the internal one.
 * Problem and options by keys, a plan and what it says of itself, a run
 * whose counters equal the plan's prediction and whose result equals the
 * naive method's bit for bit, wisdom exported and imported, and failures
 * with their statuses and messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "pyrgrid.h"

/* Runs the problem under the options; returns the field (NULL on failure). */
static pyr_field_t *run(const pyr_problem_t *p, const pyr_options_t *o, pyr_plan_info_t *info, pyr_counters_t *c)
{
    pyr_plan_t *plan = NULL;
    pyr_field_t *f = NULL;
    CHECK_OK(pyr_plan_create(p, o, &plan));
    if (!plan) return NULL;
    CHECK_OK(pyr_plan_get_info(plan, info));
    CHECK_OK(pyr_field_create(p, &f));
    if (f) {
        CHECK_OK(pyr_field_init(f, p));
        CHECK_OK(pyr_execute(plan, f, NULL, c));
    }
    pyr_plan_destroy(&plan);
    CHECK(plan == NULL, "pyr_plan_destroy leaves NULL");
    return f;
}

int main(void)
{
    char text[4096];

    /* problem and options by their keys */
    pyr_problem_t *p = NULL;
    pyr_options_t *o = NULL;
    CHECK_OK(pyr_problem_create(&p));
    CHECK_OK(pyr_options_create(&o));
    if (!p || !o) return check_report();
    CHECK_OK(pyr_problem_set(p, "scheme.equation", "heat"));
    CHECK_OK(pyr_problem_set(p, "grid.dims", "2"));
    CHECK_OK(pyr_problem_set(p, "grid.nx", "97"));
    CHECK_OK(pyr_problem_set(p, "grid.ny", "61"));
    CHECK_OK(pyr_problem_set(p, "scheme.steps", "24"));
    CHECK_OK(pyr_problem_get(p, "grid.nx", text, sizeof text));
    CHECK(!strcmp(text, "97"), "grid.nx reads back as '%s'", text);
    CHECK_FAILS(pyr_problem_set(p, "grid.nx", "many"), PYR_ERR_CONFIG, "grid.nx");
    CHECK_OK(pyr_problem_get(p, "grid.nx", text, sizeof text));
    CHECK(!strcmp(text, "97"), "a refused value leaves the key as it was, not '%s'", text);
    CHECK_FAILS(pyr_problem_get(p, "grid.no_such_key", text, sizeof text), PYR_ERR_CONFIG, "no_such_key");
    CHECK_FAILS(pyr_problem_get(p, "grid.nx", text, 2), PYR_ERR_ARG, "");
    CHECK_OK(pyr_options_set(o, "run.backend", "cpu"));
    CHECK_OK(pyr_options_set(o, "run.method", "pyramid"));
    CHECK_OK(pyr_options_get(o, "run.backend", text, sizeof text));
    CHECK(!strcmp(text, "cpu"), "run.backend reads back as '%s'", text);
    CHECK_FAILS(pyr_options_set(o, "run.backend", "abacus"), PYR_ERR_CONFIG, "run.backend");
    const size_t need = pyr_problem_json(p, NULL, 0);
    CHECK(need > 0 && need < sizeof text, "the problem's JSON takes %zu bytes", need);
    pyr_problem_json(p, text, sizeof text);
    CHECK(strstr(text, "\"nx\":97") != NULL, "the problem's JSON names nx = 97: %s", text);

    /* a plan, its description, a run that does what it predicted */
    pyr_plan_info_t info, ref_info;
    pyr_counters_t c = {0}, ref_c = {0};
    pyr_field_t *f = run(p, o, &info, &c);
    CHECK(info.backend == PYR_BACKEND_CPU, "the plan's backend is %s", pyr_backend_name(info.backend));
    CHECK(info.method == PYR_METHOD_PYRAMID, "the plan's method is %s", pyr_method_name(info.method));
    CHECK(info.counts.computed > 0 && c.computed == info.counts.computed,
          "computed %llu values, the plan predicted %llu", (unsigned long long)c.computed, (unsigned long long)info.counts.computed);
    CHECK(pyr_plan_part_count(NULL) == 0, "no plan has no parts");
    pyr_plan_t *plan = NULL;
    CHECK_OK(pyr_plan_create(p, o, &plan));
    const size_t jn = pyr_plan_json(plan, text, sizeof text);
    CHECK(jn > 0 && strstr(text, "\"method\"") != NULL, "the plan's JSON names its method: %s", text);
    CHECK(pyr_plan_part_count(plan) == 1, "one device: %d parts", pyr_plan_part_count(plan));
    pyr_plan_destroy(&plan);

    CHECK_OK(pyr_options_set(o, "run.method", "naive"));
    pyr_field_t *ref = run(p, o, &ref_info, &ref_c);
    CHECK(ref_info.method == PYR_METHOD_NAIVE, "the reference's method is %s", pyr_method_name(ref_info.method));
    if (f && ref) {
        const size_t bytes = 97 * 61 * sizeof(double);
        CHECK(f->data && ref->data && !memcmp(f->data, ref->data, bytes), "the pyramid plan's result differs from the naive method's");
    }
    pyr_field_destroy(&f);
    pyr_field_destroy(&ref);

    /* failures: their statuses and messages */
    CHECK_FAILS(pyr_plan_create(NULL, o, &plan), PYR_ERR_ARG, "");
    CHECK(plan == NULL, "a failed plan_create leaves no plan");
    CHECK_OK(pyr_problem_set(p, "scheme.dt", "1"));
    CHECK_FAILS(pyr_plan_create(p, o, &plan), PYR_ERR_UNSTABLE, "dt");
    CHECK(plan == NULL && strlen(pyr_last_error()) > 0, "an unstable time step leaves no plan and says why");
    pyr_plan_destroy(&plan);
    CHECK(strcmp(pyr_status_name(PYR_ERR_BUDGET), pyr_status_name(PYR_OK)) != 0, "statuses have their own names");

    /* wisdom: exported to a file, imported back, a corrupt file refused */
    char dir[] = "/tmp/pyrgrid_api_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char path[256], bad[256], lock[300];
    snprintf(path, sizeof path, "%s/wisdom", dir);
    snprintf(bad, sizeof bad, "%s/corrupt", dir);
    snprintf(lock, sizeof lock, "%s.lock", path);
    CHECK_OK(pyr_wisdom_export_file(path));
    CHECK(access(path, R_OK) == 0, "the export wrote %s", path);
    pyr_wisdom_forget();
    CHECK_OK(pyr_wisdom_import_file(path));
    FILE *fp = fopen(bad, "w");
    if (fp) {
        fputs("this is not wisdom\n", fp);
        fclose(fp);
    }
    CHECK_FAILS(pyr_wisdom_import_file(bad), PYR_ERR_FORMAT, "corrupt");
    unlink(path);
    unlink(lock);
    unlink(bad);
    rmdir(dir);

    pyr_options_destroy(&o);
    pyr_problem_destroy(&p);
    CHECK(o == NULL && p == NULL, "destroy leaves NULL");
    printf("public API: keys, plan, run, wisdom and failures checked against libpyrgrid\n");
    return check_report();
}
