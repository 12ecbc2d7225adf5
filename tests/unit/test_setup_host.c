/* Set-up at memory speed, on the host: how the executor reaches the host
 * fields is decided from the plan (registered where their bytes cross the
 * link several times, staged through pinned buffers where each crosses once
 * each way), said in the plan and the run, and run.host_memory overrides it;
 * Maxwell's coefficient fields made from shapes equal, bit for bit, the
 * per-node evaluation of the problem's materials. */
#include <math.h>
#include <string.h>

#include "backend/device.h"
#include "backend/host_copy.h"
#include "check.h"
#include "heat_util.h"
#include "maxwell_util.h"
#include "plan/plan.h"
#include "schemes/maxwell.h"

static int g_reg_calls;

static pyr_status_t fake_register(void *ctx, void *ptr, size_t bytes)
{
    (void)ctx, (void)ptr, (void)bytes;
    g_reg_calls++;
    return PYR_OK;
}

static void fake_unregister(void *ctx, void *ptr) { (void)ctx, (void)ptr; }

/* One heat problem, planned in core (naive: one upload, one download) or
 * streamed in pieces over several passes, with options.host_memory `asked`. */
static void host_case(int streamed, pyr_host_memory_t asked)
{
    const int64_t n[3] = {64, 48, 1};
    pyr_problem_t p;
    make_problem(&p, 2, n, PYR_DOUBLE, 24, PYR_INIT_SINE, 0);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.threads = 2;
    o.host_memory = asked;
    if (streamed) {
        o.method = PYR_METHOD_PYRAMID;
        o.height = 4;
        o.memory = smallest_budget(&p, o, (uint64_t)1 << 26) * 2;
    } else {
        o.method = PYR_METHOD_NAIVE;
    }
    pyr_plan_t *plan = NULL;
    CHECK_OK(pyr_plan_create(&p, &o, &plan));
    if (!plan) return;
    CHECK(plan->host_memory == PYR_HOST_AUTO, "the CPU backend makes no device copies, yet its plan says %s",
          pyr_host_memory_name(plan->host_memory));
    /* the same plan on a runtime that can register host memory */
    pyr_device_ops_t ops = pyr_device_cpu;
    ops.host_register = fake_register;
    ops.host_unregister = fake_unregister;
    plan->ops = &ops;
    pyr_plan_host_memory(plan);
    const pyr_host_memory_t want = asked != PYR_HOST_AUTO ? asked : streamed ? PYR_HOST_PIN : PYR_HOST_STAGE;
    const char *label = streamed ? "streamed" : "in core";
    CHECK(plan->host_memory == want, "%s, asked %d: planned %s (%s)", label, (int)asked, pyr_host_memory_name(plan->host_memory),
          plan->host_why);
    CHECK(plan->resident == !streamed, "%s: resident %d", label, plan->resident);
    if (asked == PYR_HOST_AUTO && !streamed)
        CHECK(strstr(plan->host_why, "once each way") != NULL, "the reason: '%s'", plan->host_why);
    if (asked == PYR_HOST_AUTO && streamed) CHECK(strstr(plan->host_why, "times across") != NULL, "the reason: '%s'", plan->host_why);
    if (asked != PYR_HOST_AUTO) CHECK(strstr(plan->host_why, "run.host_memory") != NULL, "the reason: '%s'", plan->host_why);
    /* `pyrgrid plan` says it */
    char text[8192] = "";
    FILE *mem = fmemopen(text, sizeof text - 1, "w");
    if (mem) {
        pyr_plan_print(plan, mem);
        fclose(mem);
    }
    CHECK(strstr(text, plan->host_why) != NULL, "%s: the plan's report does not say why: %s", label, text);
    /* the run does as planned, and says so; same bits as the naive method */
    pyr_field_t *f = NULL;
    CHECK_OK(pyr_field_create(&p, &f));
    CHECK_OK(pyr_field_init(f, &p));
    pyr_field_t *fields[1] = {f};
    pyr_run_info_t ri;
    memset(&ri, 0, sizeof ri);
    g_reg_calls = 0;
    CHECK_OK(pyr_execute_fields(plan, fields, 1, NULL, &ri));
    CHECK(ri.host_memory == want, "%s: the run says %s", label, pyr_host_memory_name(ri.host_memory));
    CHECK(g_reg_calls == (want == PYR_HOST_PIN), "%s: %d registrations", label, g_reg_calls);
    if (want == PYR_HOST_STAGE) CHECK(!strcmp(ri.host_note, plan->host_why), "%s: run note '%s'", label, ri.host_note);
    pyr_field_t *ref = naive_reference(&p, NULL);
    CHECK(ref && f && first_difference(f, ref) < 0, "%s: differs from the naive method", label);
    pyr_field_destroy(&ref);
    pyr_field_destroy(&f);
    pyr_plan_destroy(&plan);
}

/* the staged copies' packing: every byte of every row, none beside them, whatever the split over threads */
static void copy_rows_case(size_t bytes, int64_t rows, size_t sp, size_t dp, int threads)
{
    const size_t ssize = sp * (size_t)(rows - 1) + bytes, dsize = dp * (size_t)(rows - 1) + bytes + 64;
    unsigned char *src = malloc(ssize), *dst = malloc(dsize);
    if (!src || !dst) {
        CHECK(0, "out of memory");
        free(src), free(dst);
        return;
    }
    for (size_t i = 0; i < ssize; i++) src[i] = (unsigned char)(i * 2654435761u >> 13);
    memset(dst, 0xA5, dsize);
    pyr_host_copy_rows(dst, dp, src, sp, bytes, rows, threads);
    size_t bad = 0;
    for (size_t i = 0; i < dsize; i++) {
        const size_t r = i / dp, off = i % dp;
        const int in = r < (size_t)rows && off < bytes;
        bad += in ? dst[i] != src[r * sp + off] : dst[i] != 0xA5;
    }
    CHECK(bad == 0, "rows of %zu bytes x %lld (pitches %zu, %zu), %d threads: %zu bytes wrong", bytes, (long long)rows, sp, dp, threads,
          bad);
    free(src), free(dst);
}

/* Maxwell's coefficient fields from a background and shapes: every node equals the per-node evaluation (the last shape
 * over the node wins; ca, cb, dh computed in double and rounded once), bit for bit, shapes on nodes, across the grid's
 * ends, degenerate, on a part's window of a larger grid. */
static void raster_case(rng_t *r, int dims, pyr_precision_t prec, int part)
{
    const int64_t n[3] = {rng_range(r, 5, 41), rng_range(r, 5, 37), dims == 3 ? rng_range(r, 5, 23) : 1};
    const double len[3] = {mx_frac(r, 0.5, 3), mx_frac(r, 0.5, 3), mx_frac(r, 0.5, 3)};
    pyr_problem_t p;
    make_maxwell(&p, dims, n, len, 0, prec, 3, mx_frac(r, 0.3, 0.9));
    pyr_maxwell_params_t *m = &p.maxwell;
    m->eps_r = mx_frac(r, 1, 4);
    m->sigma = rng_range(r, 0, 1) ? mx_frac(r, 0, 2) : 0;
    m->mu_r = rng_range(r, 0, 1) ? mx_frac(r, 1, 2) : 1;
    m->nshapes = (int)rng_range(r, 1, PYR_MAXWELL_MAX_SHAPES);
    for (int i = 0; i < m->nshapes; i++) {
        pyr_shape_t *s = &m->shapes[i];
        s->kind = (pyr_shape_kind_t)rng_range(r, 0, 2);
        for (int a = 0; a < 3; a++) {
            const double h = len[a] / (double)(n[a] - 1);
            /* on a node now and then: the tests' equalities are where a fast path would slip */
            s->lo[a] = rng_range(r, 0, 2) ? mx_frac(r, -0.3, 1.1) * len[a] : (double)rng_range(r, -2, n[a] + 1) * h;
            s->hi[a] = s->lo[a] + (rng_range(r, 0, 3) ? mx_frac(r, 0, 0.8) * len[a] : (double)rng_range(r, 0, 3) * h);
        }
        s->r = rng_range(r, 0, 3) ? mx_frac(r, 0.01, 0.6) * len[0] : (double)rng_range(r, 1, 4) * len[0] / (double)(n[0] - 1);
        s->axis = dims == 3 ? (int)rng_range(r, 0, 2) : 2;
        s->eps_r = mx_frac(r, 1, 9);
        s->sigma = rng_range(r, 0, 1) ? mx_frac(r, 0, 5) : 0;
        s->mu_r = rng_range(r, 0, 2) ? 1 : mx_frac(r, 1, 3);
    }
    if (part) {
        /* a window of the grid, as a part of several devices sees it */
        for (int a = 0; a < dims; a++) {
            p.whole[a] = n[a];
            p.origin[a] = rng_range(r, 0, n[a] - 3);
            p.n[a] = rng_range(r, 3, n[a] - p.origin[a]);
        }
        for (int a = dims; a < 3; a++) p.whole[a] = 1;
    }
    double dt = 0;
    CHECK_OK(pyr_maxwell_dt(&p, &dt));
    for (int c = 0; c < 3; c++) {
        const int which = c == 0 ? PYR_MAXWELL_CA : c == 1 ? PYR_MAXWELL_CB : PYR_MAXWELL_DH;
        pyr_field_t *f = NULL;
        CHECK_OK(pyr_field_create(&p, &f));
        if (!f) return;
        pyr_status_t st = pyr_field_init_input(f, &p, which);
        if (st != PYR_OK) {
            /* a shape faster than the background may be refused as unstable: then so be it for every way of making it */
            CHECK(st == PYR_ERR_UNSTABLE, "coefficient %d: %s", c, pyr_last_error());
            pyr_clear_error();
            pyr_field_destroy(&f);
            continue;
        }
        int64_t bad = 0, k = 0;
        for (int64_t z = 0; z < p.n[2]; z++)
            for (int64_t y = 0; y < p.n[1]; y++)
                for (int64_t x = 0; x < p.n[0]; x++, k++) {
                    const int64_t g[3] = {x + p.origin[0], y + p.origin[1], z + p.origin[2]};
                    const double eps = pyr_maxwell_shapes_material(&p, 0, g), sigma = pyr_maxwell_shapes_material(&p, 1, g),
                                 mu = pyr_maxwell_shapes_material(&p, 2, g);
                    const double sg = sigma * dt / (2 * eps);
                    const double v = c == 0 ? (1 - sg) / (1 + sg) : c == 1 ? (dt / eps) / (1 + sg) : dt / mu;
                    const double want = prec == PYR_DOUBLE ? v : (double)(float)v;
                    const double got = field_get(f, k);
                    bad += memcmp(&got, &want, sizeof got) != 0;
                }
        CHECK(bad == 0, "%dD %s%s, %d shapes, coefficient %d: %lld nodes differ from the per-node materials", dims,
              prec == PYR_DOUBLE ? "double" : "float", part ? " (a part)" : "", m->nshapes, c, (long long)bad);
        pyr_field_destroy(&f);
    }
}

int main(void)
{
    rng_t rng = {0x5e7a9u};
    for (int t = 0; t < 60; t++) raster_case(&rng, t % 3 == 0 ? 2 : 3, t % 2 ? PYR_FLOAT : PYR_DOUBLE, t % 4 == 3);
    copy_rows_case(100, 7, 100, 100, 4);                          /* small: one thread */
    copy_rows_case(3u << 20, 1, 3u << 20, 3u << 20, 3);           /* one long row split over threads */
    copy_rows_case(5000, 900, 5008, 5000, 2);                     /* rows pitched apart on one side */
    copy_rows_case(4099, 1201, 4099, 4160, 0);                    /* odd rows, the default threads */
    copy_rows_case((1u << 20) + 17, 5, (1u << 20) + 17, (1u << 20) + 17, 8);
    for (int streamed = 0; streamed < 2; streamed++) {
        host_case(streamed, PYR_HOST_AUTO);
        host_case(streamed, PYR_HOST_PIN);
        host_case(streamed, PYR_HOST_STAGE);
    }
    return check_report();
}
