/* The executor's operations obey the backend contract when operations of
 * different slots really run at the same time (as on the CUDA backend).
 *
 * The CPU backend runs every operation as it is issued, so the bitwise tests
 * on it cannot see an executor that hands a device buffer from one slot to
 * another too early.  This test wraps the CPU backend's operations and keeps
 * a vector clock per slot (ordering known from issue order within a slot,
 * mark / after_mark between slots, wait(slot) for the host, and a copy after
 * the upload of its source on any slot, as the contract says): every access
 * to a device buffer (piece layers, boundary faces) must be ordered after the
 * conflicting accesses of other slots before it (write after read or write,
 * read after write).  The same for the host grid: an upload reads a box of
 * it, a download into it writes one (a task's result must not reach the
 * grid before an earlier task on another slot has uploaded the old values
 * there; a band downloaded straight into the grid must follow the next
 * task's upload).  Random plans with two and three slots, each also compared
 * bit for bit with the naive method; a synthetic sequence first shows the
 * check does catch an unordered hand-over.
 *
 *   test_exec_hazards [cases] [seed] */
#include <stdio.h>
#include <string.h>

#include "backend/device.h"
#include "backend/kernels.h"
#include "core/error.h"
#include "poisson_util.h"
#include "plan/plan.h"

#define MS 3      /* slots tracked */
#define MAXBUF 64 /* device buffers tracked at once */

typedef struct {
    uint64_t c[MS];
} vclock_t;

typedef struct {
    const void *ptr;
    int wslot;        /* last writer's slot, -1 = none (host-initialised) */
    uint64_t wclock;  /* its position in that slot */
    uint64_t read[MS]; /* latest read per slot since the last write (0 = none) */
    int uploaded;      /* an upload wrote it: */
    vclock_t upload;   /* the uploading slot's clock just after it */
} buf_t;

static vclock_t slot_vc[MS], mark_vc[MS][PYR_MARKS], host_vc;
static buf_t bufs[MAXBUF];
static int nbufs;

/* Accesses of the host grid by backend operations not yet known to be
 * finished for everyone (a record goes once the host has waited past it). */
typedef struct {
    pyr_box_t box;
    int slot, write;
    uint64_t clock;
} grid_access_t;
#define MAXGRID 4096
static grid_access_t grid_acc[MAXGRID];
static int ngrid;
static const void *grid_data; /* the field under test's values */
static int violations;
static char first_violation[256];

static void vc_join(vclock_t *a, const vclock_t *b)
{
    for (int i = 0; i < MS; i++)
        if (b->c[i] > a->c[i]) a->c[i] = b->c[i];
}

static void reset_clocks(void)
{
    memset(slot_vc, 0, sizeof slot_vc);
    memset(mark_vc, 0, sizeof mark_vc);
    memset(&host_vc, 0, sizeof host_vc);
    nbufs = 0;
    ngrid = 0;
    violations = 0;
    first_violation[0] = 0;
}

static buf_t *find_buf(const void *ptr)
{
    for (int i = 0; i < nbufs; i++)
        if (bufs[i].ptr == ptr) return &bufs[i];
    if (nbufs == MAXBUF) return NULL;
    buf_t *b = &bufs[nbufs++];
    memset(b, 0, sizeof *b);
    b->ptr = ptr;
    b->wslot = -1;
    return b;
}

static void violation(const char *what, int slot, int other)
{
    if (violations++ == 0)
        snprintf(first_violation, sizeof first_violation, "%s on slot %d not ordered after slot %d's access", what, slot, other);
}

/* One operation on `slot`: it is issued after everything the host has
 * waited for, and follows the slot's earlier operations. */
static const vclock_t *begin_op(int slot)
{
    vc_join(&slot_vc[slot], &host_vc);
    slot_vc[slot].c[slot]++;
    return &slot_vc[slot];
}

static void access_buf(int slot, const vclock_t *v, const void *ptr, int write, const char *what)
{
    if (!ptr) return;
    buf_t *b = find_buf(ptr);
    if (!b) {
        violation("buffer table full", slot, slot);
        return;
    }
    if (b->wslot >= 0 && b->wslot != slot && v->c[b->wslot] < b->wclock) violation(what, slot, b->wslot);
    if (write) {
        for (int o = 0; o < MS; o++)
            if (o != slot && b->read[o] && v->c[o] < b->read[o]) violation(what, slot, o);
        b->wslot = slot;
        b->wclock = v->c[slot];
        memset(b->read, 0, sizeof b->read);
    } else {
        b->read[slot] = v->c[slot];
    }
}

/* A backend operation on `slot` reads (upload) or writes (download) `box` of
 * the host grid: conflicting accesses of other slots must be ordered before. */
static void access_grid(int slot, const vclock_t *v, const pyr_host_region_t *host, const pyr_box_t *box, int write, const char *what)
{
    if (!grid_data || host->data != grid_data) return; /* staging buffers: one owner each */
    int k = 0;
    for (int i = 0; i < ngrid; i++) {
        grid_access_t *a = &grid_acc[i];
        if (host_vc.c[a->slot] >= a->clock) continue; /* the host waited past it: ordered before everything from now on */
        if (a->slot != slot && (write || a->write) && v->c[a->slot] < a->clock) {
            pyr_box_t x = pyr_box_intersect(&a->box, box);
            if (!pyr_box_empty(&x)) violation(what, slot, a->slot);
        }
        grid_acc[k++] = *a;
    }
    ngrid = k;
    if (ngrid == MAXGRID) {
        violation("grid access table full", slot, slot);
        return;
    }
    grid_acc[ngrid++] = (grid_access_t){*box, slot, write, v->c[slot]};
}

static void forget_buf(const void *ptr)
{
    for (int i = 0; i < nbufs; i++)
        if (bufs[i].ptr == ptr) {
            bufs[i] = bufs[--nbufs];
            return;
        }
}

/* ------------------------------------------------ the wrapped operations */

static pyr_status_t h_upload(void *ctx, int slot, const pyr_piece_t *piece, int f, const pyr_host_region_t *host, const pyr_box_t *box)
{
    const vclock_t *v = begin_op(slot);
    access_buf(slot, v, piece->buf[f][0], 1, "upload");
    access_grid(slot, v, host, box, 0, "upload (grid read)");
    buf_t *b = find_buf(piece->buf[f][0]);
    if (b) {
        b->uploaded = 1;
        b->upload = *v;
    }
    return pyr_device_cpu.upload(ctx, slot, piece, f, host, box);
}

static pyr_status_t h_copy(void *ctx, int slot, const pyr_piece_t *dst, int f, int dst_layers, const pyr_piece_t *src, int src_layer,
                           const pyr_box_t *box)
{
    /* the contract: a copy from a buffer uploaded on another slot follows that upload */
    buf_t *b = find_buf(src->buf[f][src_layer]);
    if (b && b->uploaded) vc_join(&slot_vc[slot], &b->upload);
    const vclock_t *v = begin_op(slot);
    access_buf(slot, v, src->buf[f][src_layer], 0, "copy (source)");
    for (int l = 0; l < 2; l++)
        if ((dst_layers >> l) & 1 && dst->buf[f][l] && dst->buf[f][l] != src->buf[f][src_layer])
            access_buf(slot, v, dst->buf[f][l], 1, "copy (target)");
    return pyr_device_cpu.copy(ctx, slot, dst, f, dst_layers, src, src_layer, box);
}

/* A kernel reads every field of the piece, writes the ping-pong fields' other buffer and (over several
 * sub-steps) both. */
static pyr_status_t h_run(void *ctx, int slot, const pyr_kernel_call_t *call)
{
    const pyr_piece_t *piece = call->piece;
    const vclock_t *v = begin_op(slot);
    for (int f = 0; f < piece->nfields; f++) {
        if (!piece->buf[f][1]) {
            access_buf(slot, v, piece->buf[f][0], 0, "compute (read input)");
            continue;
        }
        access_buf(slot, v, piece->buf[f][piece->cur], 0, "compute (read)");
        access_buf(slot, v, piece->buf[f][piece->cur ^ 1], 1, "compute (write)");
        if (call->nboxes > 1) access_buf(slot, v, piece->buf[f][piece->cur], 1, "compute (write)");
    }
    return pyr_kernel_find(call->coef->equation, PYR_BACKEND_CPU)->run(ctx, slot, call);
}

static pyr_status_t h_download(void *ctx, int slot, const pyr_piece_t *piece, int f, const pyr_host_region_t *host, const pyr_box_t *box)
{
    const vclock_t *v = begin_op(slot);
    access_buf(slot, v, pyr_piece_current(piece, f), 0, "download");
    access_grid(slot, v, host, box, 1, "download (grid write)");
    return pyr_device_cpu.download(ctx, slot, piece, f, host, box);
}

static pyr_status_t h_reduce(void *ctx, int slot, const pyr_piece_t *piece, int f, const pyr_box_t *box, double *out)
{
    const vclock_t *v = begin_op(slot);
    access_buf(slot, v, piece->buf[f][0], 0, "reduce (read)");
    access_buf(slot, v, piece->buf[f][1], 0, "reduce (read)");
    return pyr_device_cpu.reduce_change(ctx, slot, piece, f, box, out);
}

static pyr_status_t h_wait(void *ctx, int slot)
{
    vc_join(&host_vc, &slot_vc[slot]);
    return pyr_device_cpu.wait(ctx, slot);
}

static pyr_status_t h_mark(void *ctx, int slot, int which)
{
    (void)ctx;
    mark_vc[slot][which] = slot_vc[slot];
    return PYR_OK;
}

static pyr_status_t h_after_mark(void *ctx, int slot, int other, int which)
{
    (void)ctx;
    vc_join(&slot_vc[slot], &mark_vc[other][which]);
    return PYR_OK;
}

static void h_free(void *ctx, void *ptr)
{
    forget_buf(ptr);
    pyr_device_cpu.dev_free(ctx, ptr);
}

static pyr_device_ops_t hazard_ops(void)
{
    pyr_device_ops_t o = pyr_device_cpu;
    o.name = "cpu (hazard check)";
    o.concurrent = 1;
    /* the clocks follow the slots only (and whole buffers, where a lane's copies share a buffer with a
     * kernel by region); the skewed executor's lane is checked by the CPU runtime running its copies late */
    o.lanes = 0;
    o.upload = h_upload;
    o.copy = h_copy;
    o.download = h_download;
    o.reduce_change = h_reduce;
    o.wait = h_wait;
    o.mark = h_mark;
    o.after_mark = h_after_mark;
    o.dev_free = h_free;
    return o;
}

/* The check itself: a buffer written on slot 0 and then computed on slot 1
 * is a hazard unless slot 1 waits for slot 0's mark (or the host waited). */
static void test_check_catches_hazards(void)
{
    static char a, b;
    pyr_piece_t p;
    memset(&p, 0, sizeof p);
    p.buf[0][0] = &a;
    p.buf[0][1] = &b;

    reset_clocks();
    access_buf(0, begin_op(0), &a, 1, "upload");
    access_buf(1, begin_op(1), &a, 0, "compute (read)");
    CHECK(violations == 1, "read on slot 1 after an unordered write on slot 0: %d violations flagged", violations);

    reset_clocks();
    access_buf(0, begin_op(0), &a, 1, "upload");
    h_mark(NULL, 0, PYR_MARK_COMPUTE);
    h_after_mark(NULL, 1, 0, PYR_MARK_COMPUTE);
    access_buf(1, begin_op(1), &a, 0, "compute (read)");
    CHECK(violations == 0, "ordered by mark / after_mark: %d violations (%s)", violations, first_violation);

    reset_clocks();
    access_buf(0, begin_op(0), &a, 0, "download");
    access_buf(1, begin_op(1), &a, 1, "upload");
    CHECK(violations == 1, "write on slot 1 over an unordered read on slot 0: %d violations flagged", violations);

    reset_clocks();
    access_buf(0, begin_op(0), &a, 0, "download");
    h_mark(NULL, 0, PYR_MARK_COMPUTE);
    access_buf(0, begin_op(0), &b, 1, "later write");
    h_after_mark(NULL, 1, 0, PYR_MARK_COMPUTE);
    access_buf(1, begin_op(1), &b, 0, "read");
    CHECK(violations == 1, "a mark orders only what was issued before it: %d violations flagged", violations);

    reset_clocks();
    access_buf(0, begin_op(0), &a, 1, "upload");
    vc_join(&host_vc, &slot_vc[0]); /* wait(0) */
    access_buf(2, begin_op(2), &a, 1, "upload");
    CHECK(violations == 0, "ordered by the host's wait: %d violations (%s)", violations, first_violation);

    /* the host grid: a download into a box another slot's upload read, unordered, then ordered */
    static float cells[64];
    pyr_host_region_t g = {cells, {{0, 0, 0}, {8, 8, 1}}};
    pyr_box_t top = {{0, 4, 0}, {8, 6, 1}}, part = {{0, 5, 0}, {8, 8, 1}}, apart = {{0, 0, 0}, {8, 2, 1}};
    grid_data = cells;
    reset_clocks();
    access_grid(1, begin_op(1), &g, &part, 0, "upload (grid read)");
    access_grid(0, begin_op(0), &g, &top, 1, "download (grid write)");
    CHECK(violations == 1, "grid write over an unordered read of another slot: %d violations flagged", violations);
    reset_clocks();
    access_grid(1, begin_op(1), &g, &part, 0, "upload (grid read)");
    access_grid(0, begin_op(0), &g, &apart, 1, "download (grid write)");
    CHECK(violations == 0, "disjoint grid boxes flagged: %d violations (%s)", violations, first_violation);
    reset_clocks();
    access_grid(1, begin_op(1), &g, &part, 0, "upload (grid read)");
    h_mark(NULL, 1, PYR_MARK_UPLOAD);
    h_after_mark(NULL, 0, 1, PYR_MARK_UPLOAD);
    access_grid(0, begin_op(0), &g, &top, 1, "download (grid write)");
    CHECK(violations == 0, "grid write ordered by mark / after_mark flagged: %d violations (%s)", violations, first_violation);
    grid_data = NULL;
}

static int run_case(uint64_t seed, int c, const pyr_device_ops_t *ops)
{
    rng_t r = {seed * 7919u + (uint64_t)c};
    int dims = (int)rng_range(&r, 1, 3);
    int64_t n[3] = {1, 1, 1};
    for (int a = 0; a < dims; a++) n[a] = rng_range(&r, 3, dims == 1 ? 300 : dims == 2 ? 60 : 20);
    pyr_precision_t prec = rng_range(&r, 0, 1) ? PYR_DOUBLE : PYR_FLOAT;
    int64_t steps = rng_range(&r, 1, 30);
    pyr_problem_t p;
    /* heat, or Poisson: a piece of two fields (f in the slot's own buffer) and a reduction per task */
    const int poisson = rng_range(&r, 0, 2) == 0;
    if (poisson) {
        make_poisson(&p, dims, n, NULL, prec, steps, 0, rng_range(&r, 1, 8), PYR_RHS_SINE, PYR_INIT_RANDOM, (uint64_t)c);
        if (rng_range(&r, 0, 1)) p.poisson.tolerance = 1e-30; /* checks at every interval, no stop */
    } else {
        make_problem(&p, dims, n, prec, steps, PYR_INIT_SINE, 0);
    }

    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.threads = 1;
    o.method = rng_range(&r, 0, 4) == 0 ? PYR_METHOD_TRIVIAL : PYR_METHOD_PYRAMID;
    if (dims == 1) o.decomposition = PYR_DECOMP_SEGMENTS;
    else if (dims == 3) o.decomposition = rng_range(&r, 0, 1) ? PYR_DECOMP_SLABS : PYR_DECOMP_BLOCKS;
    else o.decomposition = rng_range(&r, 0, 1) ? PYR_DECOMP_BLOCKS : PYR_DECOMP_STRIPS;
    int64_t hmax = steps < 12 ? steps : 12;
    o.height = o.method == PYR_METHOD_TRIVIAL ? 0 : rng_range(&r, 1, hmax);
    o.slots = (int)rng_range(&r, 2, 3);
    uint64_t lo = smallest_budget(&p, o, 1ull << 34);
    o.memory = lo + (uint64_t)rng_range(&r, 0, (int64_t)(pyr_problem_nodes(&p) * pyr_precision_size(prec)));

    char label[256];
    snprintf(label, sizeof label, "case %d seed %llu: %s %dD %lldx%lldx%lld %s steps=%lld %s %s height=%lld slots=%d memory=%llu", c,
             (unsigned long long)seed, poisson ? "poisson" : "heat", dims, (long long)n[0], (long long)n[1], (long long)n[2],
             pyr_precision_name(prec),
             (long long)steps, pyr_method_name(o.method), pyr_decomp_name(o.decomposition), (long long)o.height, o.slots,
             (unsigned long long)o.memory);
    pyr_plan_t *plan = NULL;
    if (pyr_plan_create(&p, &o, &plan) != PYR_OK) {
        CHECK(0, "%s: plan failed: %s", label, pyr_last_error());
        return 1;
    }
    plan->ops = ops; /* same context: the wrapped operations call the CPU backend's */
    pyr_kernel_t kernel = *plan->kernel;
    kernel.run = h_run;
    plan->kernel = &kernel;
    pyr_field_t *f = NULL;
    CHECK_OK(pyr_field_create(&p, &f));
    CHECK_OK(pyr_field_init(f, &p));
    reset_clocks();
    grid_data = f ? f->data : NULL;
    pyr_field_t *fields[2] = {f, NULL};
    pyr_status_t st = pyr_execute_fields(plan, fields, poisson ? 2 : 1, NULL, NULL);
    grid_data = NULL;
    CHECK(st == PYR_OK, "%s: execute failed: %s", label, pyr_last_error());
    CHECK(violations == 0, "%s: %d unordered accesses, first: %s", label, violations, first_violation);
    int bad = st != PYR_OK || violations != 0;
    /* and the values: the operations ran in issue order, so any mistake in what went where shows */
    pyr_field_t *ref = poisson ? poisson_reference(&p, NULL, NULL, NULL) : naive_reference(&p, NULL);
    CHECK(ref != NULL, "%s: naive reference failed: %s", label, pyr_last_error());
    if (ref && f && st == PYR_OK) {
        int64_t d = first_difference(f, ref);
        CHECK(d < 0, "%s: differs from the naive method at node %lld", label, (long long)d);
        bad |= d >= 0;
    }
    pyr_field_destroy(&ref);
    pyr_plan_destroy(&plan);
    pyr_field_destroy(&f);
    return bad;
}

/* How the executor reaches the host grid, and what the run says: a backend
 * that registers memory gets the grid registered once and released once
 * (pinned); one whose registration is refused gets nothing left registered,
 * the run says staged and why; a plan that stages registers nothing.  The
 * values are the naive method's in every case. */
static int g_reg_calls, g_unreg_calls, g_refuse;

static pyr_status_t fake_register(void *ctx, void *ptr, size_t bytes)
{
    (void)ctx;
    (void)ptr;
    (void)bytes;
    g_reg_calls++;
    return g_refuse ? pyr_fail(PYR_ERR_NOMEM, "locked-memory limit (test)") : PYR_OK;
}

static void fake_unregister(void *ctx, void *ptr)
{
    (void)ctx;
    (void)ptr;
    g_unreg_calls++;
}

static void test_host_memory_outcome(void)
{
    for (int mode = 0; mode < 3; mode++) { /* 0 pinned, 1 registration refused, 2 staged as planned */
        const int64_t n[3] = {40, 30, 1};
        pyr_problem_t p;
        make_problem(&p, 2, n, PYR_DOUBLE, 7, PYR_INIT_SINE, 0);
        pyr_options_t o;
        pyr_options_default(&o);
        o.backend = PYR_BACKEND_CPU;
        o.method = PYR_METHOD_NAIVE;
        pyr_plan_t *plan = NULL;
        CHECK_OK(pyr_plan_create(&p, &o, &plan));
        if (!plan) continue;
        pyr_device_ops_t ops = pyr_device_cpu;
        ops.host_register = fake_register;
        ops.host_unregister = fake_unregister;
        plan->ops = &ops; /* same context: the CPU backend's */
        if (mode == 2) plan->host_memory = PYR_HOST_STAGE;
        g_reg_calls = g_unreg_calls = 0;
        g_refuse = mode == 1;
        pyr_field_t *f = NULL;
        CHECK_OK(pyr_field_create(&p, &f));
        CHECK_OK(pyr_field_init(f, &p));
        pyr_field_t *fields[1] = {f};
        pyr_run_info_t ri;
        memset(&ri, 0, sizeof ri);
        CHECK_OK(pyr_execute_fields(plan, fields, 1, NULL, &ri));
        const pyr_host_memory_t want = mode == 0 ? PYR_HOST_PIN : PYR_HOST_STAGE;
        CHECK(ri.host_memory == want, "mode %d: the run says %s", mode, pyr_host_memory_name(ri.host_memory));
        CHECK(g_reg_calls == (mode == 2 ? 0 : 1) && g_unreg_calls == (mode == 0 ? 1 : 0), "mode %d: %d registrations, %d releases", mode,
              g_reg_calls, g_unreg_calls);
        CHECK(mode != 1 || strstr(ri.host_note, "locked-memory limit (test)"), "mode 1: the note does not say why: '%s'", ri.host_note);
        CHECK(mode != 2 || strstr(ri.host_note, "as planned"), "mode 2: note '%s'", ri.host_note);
        CHECK(mode != 0 || ri.host_note[0] == 0, "mode 0: note '%s'", ri.host_note);
        pyr_field_t *ref = naive_reference(&p, NULL);
        CHECK(ref && f && first_difference(f, ref) < 0, "mode %d: differs from the naive method", mode);
        pyr_field_destroy(&ref);
        pyr_field_destroy(&f);
        pyr_plan_destroy(&plan);
    }
}

int main(int argc, char **argv)
{
    test_host_memory_outcome();
    int cases = argc > 1 ? atoi(argv[1]) : 300;
    uint64_t seed = argc > 2 ? (uint64_t)strtoull(argv[2], NULL, 10) : 1;
    test_check_catches_hazards();
    pyr_device_ops_t ops = hazard_ops();
    int failed = 0;
    for (int c = 0; c < cases && failed < 5; c++) failed += run_case(seed, c, &ops);
    return check_report();
}
