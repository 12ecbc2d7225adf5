/* The caller's fields in GPU memory (pyr_field_wrap_device, pyr_field_copy,
 * pyr_plan_takes_field).
 *
 *   test_device_fields          the refusals any build gives (a library without CUDA refuses the wrap and the
 *                               copy; host fields, those a caller declares itself included, pass every plan)
 *   test_device_fields gpu      on a GPU (exits 77 without one): in-core runs on device-wrapped fields (heat 2D/3D
 *                               float/double, Poisson with f given on the device or made by the library, Maxwell
 *                               with CPML and materials, its coefficients given on the device) end in the same bits
 *                               as the same plan's run on host fields; the plans and wraps that cannot take them
 *                               refuse them, saying why. */
#include <stdio.h>
#include <string.h>

#include "backend/device.h"
#include "check.h"
#include "maxwell_util.h"
#include "poisson_util.h"

static void host_refusals(void)
{
    const int64_t n[3] = {9, 7, 1};
    double data[63] = {0}, other[63];
    for (int i = 0; i < 63; i++) other[i] = i;
    pyr_field_t *f = NULL;
    if (!pyr_device_get(PYR_BACKEND_CUDA)) {
        /* a library without the CUDA backend cannot place or reach device memory */
        CHECK_FAILS(pyr_field_wrap_device(2, n, PYR_DOUBLE, data, 0, 1, &f), PYR_ERR_UNSUPPORTED, "this library has no CUDA backend");
        CHECK(f == NULL, "no field on a refusal");
    }
    CHECK_FAILS(pyr_field_wrap_device(2, n, PYR_DOUBLE, data, 0, 1, NULL), PYR_ERR_ARG, "field is NULL");
    /* host fields, the library's and one a caller declares itself, copy as memory does */
    pyr_field_t mine = {2, {9, 7, 1}, PYR_DOUBLE, other};
    CHECK_OK(pyr_field_wrap(2, n, PYR_DOUBLE, data, &f));
    CHECK_OK(pyr_field_copy(f, &mine));
    CHECK(memcmp(data, other, sizeof data) == 0, "pyr_field_copy between host fields copies every value");
    pyr_field_t wrong = {2, {7, 9, 1}, PYR_DOUBLE, other};
    CHECK_FAILS(pyr_field_copy(f, &wrong), PYR_ERR_ARG, "the shapes and precisions must match");
    /* every plan takes host fields */
    pyr_problem_t p;
    make_problem(&p, 2, n, PYR_DOUBLE, 3, PYR_INIT_SINE, 1);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    pyr_plan_t *plan = NULL;
    CHECK_OK(pyr_plan_create(&p, &o, &plan));
    if (plan) {
        CHECK_OK(pyr_plan_takes_field(plan, f));
        CHECK_OK(pyr_plan_takes_field(plan, &mine));
        CHECK_FAILS(pyr_plan_takes_field(plan, NULL), PYR_ERR_ARG, "plan and field are required");
    }
    pyr_plan_destroy(&plan);
    pyr_field_destroy(&f);
}

/* ------------------------------------------------------------------ GPU */

typedef struct {
    const pyr_device_ops_t *ops;
    void *ctx; /* a context of the CUDA runtime, for device memory of the test's own */
} gpu_t;

/* Run p with fields made from the problem on the host, then the same plan on device-wrapped copies of them, and
 * compare every state field bit for bit.  give_inputs: the scheme's inputs the plan uses are given too (on the
 * device in the second run), else the library makes them. */
static void compare_case(gpu_t *g, const char *name, const pyr_problem_t *p, int give_inputs)
{
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CUDA;
    o.method = PYR_METHOD_NAIVE;
    pyr_plan_t *plan = NULL;
    pyr_status_t st = pyr_plan_create(p, &o, &plan);
    CHECK(st == PYR_OK, "%s: plan: %s", name, pyr_last_error());
    if (st != PYR_OK) return;
    const int nf = pyr_scheme_field_count(p->equation);
    const size_t bytes = (size_t)(p->n[0] * p->n[1] * p->n[2]) * pyr_precision_size(p->precision);
    pyr_field_t *host[PYR_MAX_FIELDS] = {NULL}, *dev[PYR_MAX_FIELDS] = {NULL}, *back = NULL;
    void *mem[PYR_MAX_FIELDS] = {NULL};
    for (int f = 0; f < nf && st == PYR_OK; f++) {
        if (!pyr_problem_field_used(p, f)) continue;
        const int state = pyr_scheme_field_updated(p->equation, f), input = pyr_scheme_field_input(p->equation, f);
        if (!state && !(input && give_inputs)) continue;
        st = pyr_field_create(p, &host[f]);
        if (st == PYR_OK) st = state ? pyr_field_init_state(host[f], p, f) : pyr_field_init_input(host[f], p, f);
        if (st == PYR_OK) st = g->ops->dev_alloc(g->ctx, bytes, &mem[f]);
        if (st == PYR_OK) st = pyr_field_wrap_device(p->dims, p->n, p->precision, mem[f], -1, 1, &dev[f]);
        if (st == PYR_OK) st = pyr_field_copy(dev[f], host[f]);
    }
    CHECK(st == PYR_OK, "%s: fields: %s", name, pyr_last_error());
    if (st == PYR_OK) CHECK_OK(pyr_plan_takes_field(plan, dev[0]));
    pyr_run_info_t on_host, on_device;
    if (st == PYR_OK) {
        st = pyr_execute_fields(plan, host, nf, NULL, &on_host);
        CHECK(st == PYR_OK, "%s: host run: %s", name, pyr_last_error());
    }
    if (st == PYR_OK) {
        st = pyr_execute_fields(plan, dev, nf, NULL, &on_device);
        CHECK(st == PYR_OK, "%s: device run: %s", name, pyr_last_error());
    }
    if (st == PYR_OK) {
        CHECK(on_host.steps == on_device.steps, "%s: %lld steps on the host, %lld on the device fields", name, (long long)on_host.steps,
              (long long)on_device.steps);
        CHECK(on_host.counts.computed == on_device.counts.computed, "%s: the same nodes computed", name);
        st = pyr_field_create(p, &back);
        for (int f = 0; f < nf && st == PYR_OK; f++) {
            if (!dev[f]) continue;
            st = pyr_field_copy(back, dev[f]);
            CHECK(st == PYR_OK, "%s: copy back: %s", name, pyr_last_error());
            if (st == PYR_OK)
                CHECK(memcmp(back->data, host[f]->data, bytes) == 0, "%s: field %s on the device differs from the host run's", name,
                      pyr_scheme_field_name(p->equation, f));
        }
        printf("%-40s %lld steps, every field's bits equal\n", name, (long long)on_device.steps);
    }
    for (int f = 0; f < nf; f++) {
        pyr_field_destroy(&host[f]);
        pyr_field_destroy(&dev[f]);
        if (mem[f]) g->ops->dev_free(g->ctx, mem[f]);
    }
    pyr_field_destroy(&back);
    pyr_plan_destroy(&plan);
}

static void gpu_refusals(gpu_t *g)
{
    const int64_t n[3] = {257, 193, 1};
    pyr_problem_t p;
    make_problem(&p, 2, n, PYR_FLOAT, 40, PYR_INIT_SINE, 1);
    const size_t bytes = (size_t)(n[0] * n[1]) * sizeof(float);
    void *mem = NULL;
    CHECK_OK(g->ops->dev_alloc(g->ctx, bytes, &mem));
    if (!mem) return;
    pyr_field_t *f = NULL, *host = NULL;
    static float on_host[257 * 193];
    CHECK_FAILS(pyr_field_wrap_device(2, n, PYR_FLOAT, on_host, 0, 1, &f), PYR_ERR_ARG, "is host memory, not GPU 0's");
    CHECK_FAILS(pyr_field_wrap_device(2, n, PYR_FLOAT, mem, 7, 1, &f), PYR_ERR_ARG, "lies in GPU 0's memory, not GPU 7's; give device = 0");
    CHECK_OK(pyr_field_wrap_device(2, n, PYR_FLOAT, mem, 0, 1, &f));
    CHECK_OK(pyr_field_create(&p, &host));
    if (host) CHECK_OK(pyr_field_init(host, &p));
    if (f && host) CHECK_OK(pyr_field_copy(f, host));
    pyr_options_t o;
    pyr_options_default(&o);
    pyr_plan_t *plan = NULL;
    /* the CPU backend */
    o.backend = PYR_BACKEND_CPU;
    CHECK_OK(pyr_plan_create(&p, &o, &plan));
    if (plan && f) {
        CHECK_FAILS(pyr_plan_takes_field(plan, f), PYR_ERR_UNSUPPORTED, "the plan runs on the cpu backend; run.backend = cuda");
        pyr_field_t *fs[1] = {f};
        CHECK_FAILS(pyr_execute_fields(plan, fs, 1, NULL, NULL), PYR_ERR_UNSUPPORTED, "field u: an array in GPU memory");
    }
    pyr_plan_destroy(&plan);
    /* pieces streamed through the host (a budget below the grid's 194 KiB) */
    o.backend = PYR_BACKEND_CUDA;
    o.method = PYR_METHOD_TRIVIAL;
    o.memory = 64 << 10;
    CHECK_OK(pyr_plan_create(&p, &o, &plan));
    if (plan && f) {
        CHECK_FAILS(pyr_plan_takes_field(plan, f), PYR_ERR_UNSUPPORTED, "streams pieces of the grid through host memory (out of core)");
        pyr_field_t *fs[1] = {f};
        CHECK_FAILS(pyr_execute_fields(plan, fs, 1, NULL, NULL), PYR_ERR_UNSUPPORTED, "an in-core plan (method = naive");
    }
    pyr_plan_destroy(&plan);
    /* the field's values came through untouched by the refused runs */
    if (f && host) {
        pyr_field_t *again = NULL;
        CHECK_OK(pyr_field_create(&p, &again));
        if (again) {
            CHECK_OK(pyr_field_copy(again, f));
            CHECK(memcmp(again->data, host->data, bytes) == 0, "a refused run leaves the device field as it was");
        }
        pyr_field_destroy(&again);
    }
    pyr_field_destroy(&f);
    pyr_field_destroy(&host);
    g->ops->dev_free(g->ctx, mem);
}

static int gpu_cases(void)
{
    if (!pyr_backend_available(PYR_BACKEND_CUDA)) {
        printf("no usable GPU (or a library without CUDA): skipped\n");
        return 77;
    }
    gpu_t g = {pyr_device_get(PYR_BACKEND_CUDA), NULL};
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CUDA;
    CHECK_OK(g.ops->create(&o, PYR_DOUBLE, &g.ctx));
    if (!g.ctx) return check_report();
    gpu_refusals(&g);
    pyr_problem_t p;
    for (int prec = 0; prec < 2; prec++) {
        const pyr_precision_t pr = prec ? PYR_DOUBLE : PYR_FLOAT;
        char name[64];
        make_problem(&p, 2, (const int64_t[3]){301, 203, 1}, pr, 57, PYR_INIT_RANDOM, 5);
        snprintf(name, sizeof name, "heat 2D %s", pyr_precision_name(pr));
        compare_case(&g, name, &p, 0);
        make_problem(&p, 3, (const int64_t[3]){45, 38, 29}, pr, 23, PYR_INIT_RANDOM, 6);
        snprintf(name, sizeof name, "heat 3D %s", pyr_precision_name(pr));
        compare_case(&g, name, &p, 0);
    }
    make_poisson(&p, 2, (const int64_t[3]){97, 81, 1}, NULL, PYR_DOUBLE, 400, 1e-9, 20, PYR_RHS_SINE, PYR_INIT_RANDOM, 7);
    compare_case(&g, "poisson 2D double, f made", &p, 0);
    compare_case(&g, "poisson 2D double, f on the device", &p, 1);
    make_poisson(&p, 3, (const int64_t[3]){33, 29, 31}, NULL, PYR_FLOAT, 60, 0, 20, PYR_RHS_SINE, PYR_INIT_RANDOM, 8);
    compare_case(&g, "poisson 3D float, f on the device", &p, 1);
    rng_t r = {11};
    for (int i = 0; i < 6; i++) {
        int drawn[3];
        const int dims = 2 + i % 2;
        const int64_t n[3] = {dims == 2 ? 83 : 31, dims == 2 ? 71 : 27, dims == 2 ? 1 : 25};
        const double len[3] = {1, 1, 1};
        mx_random_problem(&r, dims, n, len, i & 2 ? PYR_FLOAT : PYR_DOUBLE, &p, drawn);
        char name[96];
        snprintf(name, sizeof name, "maxwell %dD %s%s%s", dims, pyr_precision_name(p.precision), drawn[0] ? " materials" : "",
                 drawn[1] ? " cpml" : "");
        compare_case(&g, name, &p, i % 3 != 0);
    }
    g.ops->destroy(g.ctx);
    return check_report();
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "gpu")) return gpu_cases();
    host_refusals();
    return check_report();
}
