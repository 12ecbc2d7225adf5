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

int main(void)
{
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
