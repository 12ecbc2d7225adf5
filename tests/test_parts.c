/* Property test of one grid over several devices of one process (issue 25):
 * random problems of every registered scheme (1D/2D/3D, float and double,
 * shapes whose parts come out uneven) cut into 2 to 5 parts (devices =
 * 0,0,...: contexts of one device), every partition (auto, slabs, blocks,
 * explicit counts), H forced or chosen, and inside each part any method
 * (naive in core, pyramid or trivial out of core under a small budget) give
 * the single-device naive method's field bit for bit (and, for Poisson, the
 * same sweep count and final change).  The halo counters equal the formula:
 * every exchange moves, for every pair of parts, the nodes of the receiver's
 * local grid that the sender owns (its box grown by g = H x reach on sides
 * facing another part) and the scheme updates, once per updated field.
 *
 *   test_parts [cases] [seed] [backend] [same|all]     (defaults: 120 1 cpu same)
 *   same: devices = 0,0,... (contexts of one device); all: 0,1,... over the GPUs */
#include <stdio.h>
#include <string.h>

#include "multi/multi.h"
#include "multi/parts.h"
#include "maxwell_util.h"
#include "poisson_util.h"
#include "schemes/maxwell.h"
#include "schemes/scheme.h"

static const char *backend_arg = "cpu";
static int spread; /* devices 0,1,..,k-1 (cycling over the GPUs) instead of 0,0,... */

/* Registered schemes: how to make a random problem of each (a new scheme adds a row). */
typedef void (*make_fn)(rng_t *r, pyr_problem_t *p, int dims, const int64_t n[3], pyr_precision_t prec);

static void make_heat(rng_t *r, pyr_problem_t *p, int dims, const int64_t n[3], pyr_precision_t prec)
{
    make_problem(p, dims, n, prec, rng_range(r, 1, 40), rng_range(r, 0, 1) ? PYR_INIT_RANDOM : PYR_INIT_GAUSS, rng_next(r));
}

static void make_poisson_case(rng_t *r, pyr_problem_t *p, int dims, const int64_t n[3], pyr_precision_t prec)
{
    double len[3] = {1, 1, 1};
    for (int a = 0; a < dims; a++) len[a] = 0.5 + (double)rng_range(r, 0, 100) / 100.0;
    make_poisson(p, dims, n, len, prec, rng_range(r, 1, 50), 0, rng_range(r, 1, 12), rng_range(r, 0, 1) ? PYR_RHS_SINE : PYR_RHS_ZERO,
                 rng_range(r, 0, 1) ? PYR_INIT_RANDOM : PYR_INIT_ZERO, rng_next(r));
    if (rng_range(r, 0, 3) == 0) p->poisson.omega = 0.3 + (pyr_poisson_omega_limit(p) - 0.3) * (double)rng_range(r, 0, 140) / 141.0;
    /* half the cases stop at a check: a tolerance just under the change a few sweeps in */
    if (rng_range(r, 0, 1)) {
        pyr_problem_t q = *p;
        q.steps = rng_range(r, 1, p->steps);
        pyr_run_info_t qr;
        pyr_field_t *qu = poisson_reference(&q, NULL, &qr, NULL);
        pyr_field_destroy(&qu);
        if (qr.change > 0) p->poisson.tolerance = qr.change * (0.6 + (double)rng_range(r, 0, 80) / 100.0);
    }
}

static void make_maxwell_case(rng_t *r, pyr_problem_t *p, int dims, const int64_t n[3], pyr_precision_t prec)
{
    mx_random_part_case(r, p, dims, n, prec, 0);
}

static const struct {
    pyr_equation_t equation;
    make_fn make;
} schemes[] = {{PYR_EQ_HEAT, make_heat}, {PYR_EQ_POISSON, make_poisson_case}, {PYR_EQ_MAXWELL, make_maxwell_case}};


static int stopped_early, streamed, blocks_cut, refused, with_probes;

/* The parts of a multi plan (white box), NULL for a plan of one device. */
static const pyr_parts_t *parts_of(const pyr_plan_t *plan)
{
    const pyr_multi_t *m = pyr_multi_of(plan);
    return m ? m->parts : NULL;
}

/* The public view of a plan over several devices: pyr_plan_get_info
 * describes the whole run (sums over the parts), pyr_plan_part_info each
 * part, pyr_plan_partition the cut. */
static int check_public_view(const pyr_plan_t *plan, int nparts, const char *label)
{
    const int before = check_failures_;
    CHECK(pyr_plan_part_count(plan) == nparts, "%s: pyr_plan_part_count %d, %d parts", label, pyr_plan_part_count(plan), nparts);
    pyr_plan_info_t whole, part;
    CHECK(pyr_plan_get_info(plan, &whole) == PYR_OK, "%s: pyr_plan_get_info: %s", label, pyr_last_error());
    uint64_t dev = 0, budget = 0, computed = 0, host = 0;
    int64_t tasks = 0;
    for (int i = 0; i < nparts; i++) {
        CHECK(pyr_plan_part_info(plan, i, &part) == PYR_OK, "%s: pyr_plan_part_info %d: %s", label, i, pyr_last_error());
        dev += part.device_bytes;
        budget = budget + part.budget_bytes < budget ? UINT64_MAX : budget + part.budget_bytes; /* unlimited stays so */
        computed += part.counts.computed;
        host += part.host_bytes;
        tasks += part.tasks_per_pass;
        CHECK(part.backend == whole.backend && part.fields == whole.fields, "%s: part %d backend or fields differ", label, i);
        if (whole.method != PYR_METHOD_AUTO) CHECK(part.method == whole.method, "%s: part %d method differs from the run's", label, i);
    }
    CHECK(whole.device_bytes == dev && whole.counts.computed == computed && whole.host_bytes == host && whole.tasks_per_pass == tasks &&
              whole.budget_bytes == budget,
          "%s: the whole run's info is not the sum of its parts' (device %llu / %llu)", label, (unsigned long long)whole.device_bytes,
          (unsigned long long)dev);
    CHECK(whole.redundancy >= 1.0, "%s: redundancy %g below 1 over several parts", label, whole.redundancy);
    CHECK(pyr_plan_part_info(plan, nparts, &part) == PYR_ERR_ARG, "%s: part %d of %d accepted", label, nparts, nparts);
    pyr_clear_error();
    char text[320], want[32];
    snprintf(want, sizeof want, "%d parts", nparts);
    const size_t len = pyr_plan_partition(plan, text, sizeof text);
    CHECK(len == strlen(text) && !strncmp(text, want, strlen(want)), "%s: partition '%s'", label, text);
    return check_failures_ > before;
}

/* The halo counters against the formula, from the decomposition itself. */
static int check_counters(const pyr_plan_t *plan, const pyr_problem_t *p, const pyr_run_info_t *ra, const char *label)
{
    const pyr_parts_t *parts = parts_of(plan);
    pyr_parts_info_t pi;
    pyr_parts_get_info(parts, &pi);
    /* p: the whole grid's problem (plan->problem is part 0's local grid) */
    const pyr_scheme_t *s = plan->scheme;
    int nstate = 0;
    for (int f = 0; f < s->nfields; f++) nstate += ((plan->fields >> f) & 1) && s->field[f].role != PYR_FIELD_INPUT;
    int bad = 0;
    pyr_box_t own[64], local[64];
    for (int i = 0; i < pi.nparts && i < 64; i++) pyr_parts_part(parts, i, &own[i], &local[i], NULL);
    /* exact: sum the listed messages, and check each one against its definition */
    uint64_t listed = 0;
    int from, to;
    pyr_box_t box;
    /* the nodes some sub-step updates (heat, Poisson: the interior; Maxwell: every node) */
    pyr_box_t interior = {{0, 0, 0}, {1, 1, 1}};
    int f0[3] = {0, 0, 0}, f1[3] = {0, 0, 0};
    for (int a = 0; a < p->dims; a++) {
        f0[a] = pyr_scheme_fixed(s, p, a, 0);
        f1[a] = pyr_scheme_fixed(s, p, a, 1);
        interior.lo[a] = f0[a];
        interior.hi[a] = p->n[a] - f1[a];
    }
    for (int m = 0; pyr_parts_message(parts, m, &from, &to, &box); m++) {
        pyr_box_t want = pyr_box_intersect(&local[to], &own[from]);
        want = pyr_box_intersect(&want, &interior);
        if (memcmp(&want, &box, sizeof box)) {
            bad = 1;
            fprintf(stderr, "message %d -> %d: [%lld,%lld)x[%lld,%lld)x[%lld,%lld), want [%lld,%lld)x[%lld,%lld)x[%lld,%lld)\n", from, to,
                    (long long)box.lo[0], (long long)box.hi[0], (long long)box.lo[1], (long long)box.hi[1], (long long)box.lo[2],
                    (long long)box.hi[2], (long long)want.lo[0], (long long)want.hi[0], (long long)want.lo[1], (long long)want.hi[1],
                    (long long)want.lo[2], (long long)want.hi[2]);
        }
        listed += (uint64_t)pyr_box_volume(&box) * (uint64_t)nstate;
    }
    CHECK(!bad, "%s: a message's box is not (receiver's local grid) x (sender's box) x (updated nodes)", label);
    /* the depth is H x reach (1 for these schemes, Maxwell's half-steps too) on every cut side */
    for (int a = 0; a < p->dims; a++)
        if (pi.count[a] > 1) CHECK(pi.depth[a][0] == pi.exchange && pi.depth[a][1] == pi.exchange, "%s: halo depth %lld/%lld, H = %lld", label,
                                   (long long)pi.depth[a][0], (long long)pi.depth[a][1], (long long)pi.exchange);
    /* slabs: each message is g planes of the interior of the other axes */
    int cut = 0, axis = 0;
    for (int a = 0; a < p->dims; a++)
        if (pi.count[a] > 1) cut++, axis = a;
    if (cut == 1) {
        uint64_t plane = 1;
        for (int a = 0; a < p->dims; a++)
            if (a != axis) plane *= (uint64_t)(p->n[a] - f0[a] - f1[a]);
        for (int m = 0; pyr_parts_message(parts, m, &from, &to, &box); m++) {
            int64_t thick = pyr_box_extent(&box, axis);
            CHECK((uint64_t)pyr_box_volume(&box) == plane * (uint64_t)thick, "%s: slab message of %lld values, not %lld planes of %llu", label,
                  (long long)pyr_box_volume(&box), (long long)thick, (unsigned long long)plane);
            /* next neighbours: g planes, unless the sender owns fewer (of the interior) */
            if (from != to + 1 && to != from + 1) continue;
            int64_t other = pyr_box_extent(&own[from], axis) - (from == 0 ? f0[axis] : 0) - (from == pi.nparts - 1 ? f1[axis] : 0);
            CHECK(thick == (pi.exchange < other ? pi.exchange : other),
                  "%s: slab message %d -> %d is %lld planes thick, H = %lld, sender %lld planes", label, from, to, (long long)thick,
                  (long long)pi.exchange, (long long)other);
        }
    }
    CHECK(ra->halo_sent == listed * (uint64_t)ra->exchanges && ra->halo_received == ra->halo_sent,
          "%s: halo counters sent %llu received %llu, formula %llu x %lld exchanges", label, (unsigned long long)ra->halo_sent,
          (unsigned long long)ra->halo_received, (unsigned long long)listed, (long long)ra->exchanges);
    /* exchanges: one at every multiple of H before the last step, unless a check stopped the run */
    const int64_t expect = ra->steps > 0 ? (ra->steps - 1) / pi.exchange : 0;
    CHECK(ra->exchanges == expect || (ra->converged && ra->exchanges <= expect), "%s: %lld exchanges, expected %lld", label,
          (long long)ra->exchanges, (long long)expect);
    CHECK(ra->parts == pi.nparts && ra->exchange_height == pi.exchange, "%s: run info parts %d H %lld", label, ra->parts,
          (long long)ra->exchange_height);
    return bad;
}

/* A Maxwell problem over the parts of `plan` against the CPU's naive method
 * on one device: every component and every probe's series, bit for bit. */
static int maxwell_case(pyr_plan_t *plan, const pyr_problem_t *p, const char *label)
{
    mx_result_t a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    pyr_field_t *fields[MX_FIELDS] = {NULL};
    pyr_status_t st = PYR_OK;
    for (int c = 0; c < 6 && st == PYR_OK; c++) {
        if (!mx_used(p, c)) continue;
        st = pyr_field_create(p, &a.c[c]);
        if (st == PYR_OK) st = pyr_field_init_state(a.c[c], p, c);
        fields[c] = a.c[c];
    }
    pyr_hooks_t hooks = {.user = &a, .probe = mx_probe_cb};
    if (st == PYR_OK) st = pyr_execute_fields(plan, fields, MX_FIELDS, &hooks, &a.run);
    CHECK(st == PYR_OK, "%s: run failed: %s", label, pyr_last_error());
    pyr_status_t sb = mx_reference(p, NULL, &b);
    CHECK(sb == PYR_OK, "%s: reference failed: %s", label, pyr_last_error());
    int bad = st != PYR_OK || sb != PYR_OK;
    for (int c = 0; c < 6 && !bad; c++) {
        if (!mx_used(p, c)) continue;
        const int64_t i = first_difference(a.c[c], b.c[c]);
        CHECK(i < 0, "%s: %s differs from the naive method at node %lld (%.17g vs %.17g)", label, pyr_maxwell_component_name(c), (long long)i,
              i >= 0 ? field_get(a.c[c], i) : 0.0, i >= 0 ? field_get(b.c[c], i) : 0.0);
        bad |= i >= 0;
    }
    if (!bad) {
        const int same = a.nseries == b.nseries && a.nprobes == b.nprobes &&
                         (a.nseries * a.nprobes == 0 || !memcmp(a.probes, b.probes, (size_t)(a.nseries * a.nprobes) * sizeof(double)));
        CHECK(same, "%s: probe series differ (%lld steps of %d probes, naive %lld of %d)", label, (long long)a.nseries, a.nprobes,
              (long long)b.nseries, b.nprobes);
        CHECK(a.nseries == (p->maxwell.nprobes ? p->steps : 0), "%s: %lld probe steps of %lld", label, (long long)a.nseries, (long long)p->steps);
        bad |= !same;
        with_probes += p->maxwell.nprobes > 0;
        bad |= check_counters(plan, p, &a.run, label);
    }
    mx_free(&a);
    mx_free(&b);
    return bad;
}

static int run_case(uint64_t seed, int c, pyr_backend_kind_t backend)
{
    rng_t r = {seed * 7919u + (uint64_t)c * 104729u};
    const int which = (int)rng_range(&r, 0, (int)(sizeof schemes / sizeof schemes[0]) - 1);
    int dims = rng_range(&r, 0, 7) == 0 ? 1 : (int)rng_range(&r, 2, 3);
    int64_t n[3] = {1, 1, 1};
    for (int a = 0; a < dims; a++) n[a] = rng_range(&r, 5, dims == 1 ? 300 : dims == 2 ? 60 : 20);
    const pyr_precision_t prec = rng_range(&r, 0, 1) ? PYR_DOUBLE : PYR_FLOAT;
    pyr_problem_t p;
    schemes[which].make(&r, &p, dims, n, prec);
    dims = p.dims; /* (Maxwell makes a 1D draw 2D) */
    for (int a = 0; a < 3; a++) n[a] = p.n[a];

    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = backend;
    o.threads = 1;
    int nparts = (int)rng_range(&r, 2, 5);
    const int part = (int)rng_range(&r, 0, 3);
    if (part == 2 && dims > 1) nparts = 4; /* blocks: 2 x 2 */
    char devs[64] = "";
    for (int i = 0; i < nparts; i++) {
        char one[16];
        snprintf(one, sizeof one, "%s%d", i ? "," : "", spread ? i % pyr_gpu_count() : 0);
        strcat(devs, one);
    }
    snprintf(o.devices, sizeof o.devices, "%s", devs);
    /* parts an axis holds: one updated node each (heat, Poisson: the interior), two at the ends for Maxwell */
    int64_t room[3];
    for (int a = 0; a < 3; a++) room[a] = p.equation == PYR_EQ_MAXWELL ? n[a] / 2 : n[a] - 2;
    if (part == 1 && nparts <= room[dims - 1]) snprintf(o.partition, sizeof o.partition, "slabs");
    else if (part == 2 && dims > 1 && nparts == 4) snprintf(o.partition, sizeof o.partition, "blocks");
    else if (part == 3) {
        /* explicit counts: nparts along a random axis that has room, or split in two axes when it factors */
        int cnt[3] = {1, 1, 1};
        int a = (int)rng_range(&r, 0, dims - 1);
        if (nparts <= room[a]) {
            cnt[a] = nparts;
            if (dims > 1 && nparts == 4 && rng_range(&r, 0, 1)) cnt[a] = 2, cnt[(a + 1) % dims] = 2;
            snprintf(o.partition, sizeof o.partition, "%dx%dx%d", cnt[0], cnt[1], cnt[2]);
        }
    }
    if (rng_range(&r, 0, 2)) o.exchange = rng_range(&r, 1, 9);
    const int m = (int)rng_range(&r, 0, 4);
    o.method = m == 0 ? PYR_METHOD_AUTO : m == 1 ? PYR_METHOD_NAIVE : m == 2 ? PYR_METHOD_TRIVIAL : PYR_METHOD_PYRAMID;
    if (o.method == PYR_METHOD_TRIVIAL && o.exchange > 1) o.exchange = 1;
    if (o.method == PYR_METHOD_PYRAMID || o.method == PYR_METHOD_TRIVIAL) {
        /* a budget a few times the smallest piece: several pieces per part */
        uint64_t grid = (uint64_t)pyr_problem_nodes(&p) * pyr_precision_size(prec);
        o.memory = grid / (uint64_t)rng_range(&r, 3, 8) + (dims == 3 ? 32768 : 8192);
        o.slots = (int)rng_range(&r, 1, 3);
        if (o.method == PYR_METHOD_PYRAMID && rng_range(&r, 0, 1)) o.height = rng_range(&r, 1, 6);
        if (dims == 1) o.decomposition = PYR_DECOMP_SEGMENTS;
        else if (dims == 2) o.decomposition = rng_range(&r, 0, 1) ? PYR_DECOMP_STRIPS : PYR_DECOMP_BLOCKS;
        else o.decomposition = rng_range(&r, 0, 1) ? PYR_DECOMP_SLABS : PYR_DECOMP_BLOCKS;
    }
    if (backend == PYR_BACKEND_CPU && p.equation != PYR_EQ_MAXWELL && rng_range(&r, 0, 2) == 0) snprintf(o.kernel, sizeof o.kernel, "%s", rng_range(&r, 0, 1) ? "sweep" : "wave");
    pyr_plan_t *plan = NULL;
    pyr_status_t st = pyr_plan_create(&p, &o, &plan);
    /* a budget too small for this backend's smallest piece (a GPU's pieces
     * need more room than the CPU's): the same case with twice the budget */
    for (int tries = 0; st == PYR_ERR_BUDGET && o.memory && tries < 4; tries++) {
        o.memory *= 2;
        st = pyr_plan_create(&p, &o, &plan);
    }
    char label[400];
    snprintf(label, sizeof label,
             "case %d seed %llu: %s %dD %lldx%lldx%lld %s steps=%lld tol=%g | devices=%s partition=%s exchange=%lld method=%s decomp=%s "
             "height=%lld memory=%llu slots=%d kernel=%s",
             c, (unsigned long long)seed, pyr_equation_name(p.equation), dims, (long long)n[0], (long long)n[1], (long long)n[2],
             pyr_precision_name(prec), (long long)p.steps, p.poisson.tolerance, o.devices, o.partition[0] ? o.partition : "auto",
             (long long)o.exchange, pyr_method_name(o.method), pyr_decomp_name(o.decomposition), (long long)o.height,
             (unsigned long long)o.memory, o.slots, o.kernel);

    if (st != PYR_OK) {
        /* a budget too small for any piece of a part, or more parts than a tiny grid has nodes
         * (5 parts of a 3 x 3 x 4 interior), are refusals, not failures of this test */
        if (st == PYR_ERR_BUDGET || (st == PYR_ERR_CONFIG && strstr(pyr_last_error(), "too many parts"))) {
            refused++;
            if (getenv("PYR_TEST_VERBOSE")) fprintf(stderr, "%s: refused: %s\n", label, pyr_last_error());
            pyr_clear_error();
            return 0;
        }
        CHECK(0, "%s: plan failed: %s", label, pyr_last_error());
        return 1;
    }
    if (getenv("PYR_TEST_VERBOSE")) fprintf(stderr, "%s\n", label);
    CHECK(parts_of(plan) != NULL, "%s: no parts", label);
    pyr_parts_info_t pi;
    pyr_parts_get_info(parts_of(plan), &pi);
    streamed += pi.streaming > 0;
    if (check_public_view(plan, pi.nparts, label)) {
        pyr_plan_destroy(&plan);
        return 1;
    }
    int cutaxes = 0;
    for (int a = 0; a < 3; a++) cutaxes += pi.count[a] > 1;
    blocks_cut += cutaxes > 1;
    if (p.equation == PYR_EQ_MAXWELL) {
        const int bad = maxwell_case(plan, &p, label);
        pyr_plan_destroy(&plan);
        return bad;
    }
    pyr_field_t *u = NULL;
    pyr_run_info_t ra, rb;
    pyr_status_t sb;
    if (pyr_field_create(&p, &u) != PYR_OK || pyr_field_init(u, &p) != PYR_OK) return 1;
    pyr_field_t *fields[8] = {u};
    st = pyr_execute_fields(plan, fields, pyr_scheme_field_count(p.equation), NULL, &ra);
    int bad = 0;
    CHECK(st == PYR_OK, "%s: run failed: %s", label, pyr_last_error());
    /* the parts' host memory, said for the whole run: on GPUs what the plan said (staged where any part
     * stages: in core with halos copied device to device, or few enough through the host; staged too where
     * registering failed), none on the CPU */
    pyr_plan_info_t hinfo;
    const pyr_host_memory_t planned = pyr_plan_get_info(plan, &hinfo) == PYR_OK ? hinfo.host_memory : PYR_HOST_AUTO;
    CHECK(st != PYR_OK || ra.host_memory == (backend == PYR_BACKEND_CUDA ? planned : PYR_HOST_AUTO) ||
              (backend == PYR_BACKEND_CUDA && ra.host_memory == PYR_HOST_STAGE && planned == PYR_HOST_PIN),
          "%s: host memory %s (%s), planned %s", label, pyr_host_memory_name(ra.host_memory), ra.host_note, pyr_host_memory_name(planned));
    CHECK(backend != PYR_BACKEND_CUDA || planned != PYR_HOST_AUTO, "%s: a GPU plan that says nothing of its host memory", label);
    pyr_field_t *ref = NULL;
    if (p.equation == PYR_EQ_POISSON) ref = poisson_reference(&p, NULL, &rb, &sb);
    else {
        pyr_options_t ro;
        pyr_options_default(&ro);
        ro.backend = PYR_BACKEND_CPU;
        ro.method = PYR_METHOD_NAIVE;
        pyr_plan_t *rp = NULL;
        sb = pyr_plan_create(&p, &ro, &rp);
        if (sb == PYR_OK) sb = pyr_field_create(&p, &ref);
        if (sb == PYR_OK) sb = pyr_field_init(ref, &p);
        pyr_field_t *rf[8] = {ref};
        if (sb == PYR_OK) sb = pyr_execute_fields(rp, rf, 1, NULL, &rb);
        pyr_plan_destroy(&rp);
    }
    if (st == PYR_OK && sb == PYR_OK && ref) {
        int64_t i = first_difference(u, ref);
        CHECK(i < 0, "%s: differs from the naive method at node %lld (%.17g vs %.17g)", label, (long long)i, i >= 0 ? field_get(u, i) : 0.0,
              i >= 0 ? field_get(ref, i) : 0.0);
        CHECK(ra.steps == rb.steps && ra.change == rb.change && ra.converged == rb.converged,
              "%s: %lld steps change %.17g converged %d, naive %lld %.17g %d", label, (long long)ra.steps, ra.change, ra.converged,
              (long long)rb.steps, rb.change, rb.converged);
        bad = i >= 0 || ra.steps != rb.steps || ra.change != rb.change;
        bad |= check_counters(plan, &p, &ra, label);
        stopped_early += rb.converged && rb.steps < p.steps;
    } else {
        bad = 1;
    }
    pyr_field_destroy(&u);
    pyr_field_destroy(&ref);
    pyr_plan_destroy(&plan);
    return bad;
}

/* Refusals: too many parts, bad device lists, bad partitions. */
static void refusals(pyr_backend_kind_t backend)
{
    pyr_problem_t p;
    const int64_t n[3] = {6, 5, 1};
    make_problem(&p, 2, n, PYR_DOUBLE, 3, PYR_INIT_GAUSS, 1);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = backend;
    pyr_plan_t *plan = NULL;
    snprintf(o.devices, sizeof o.devices, "0,0,0,0,0,0,0,0,0,0,0,0,0");
    CHECK_FAILS(pyr_plan_create(&p, &o, &plan), PYR_ERR_CONFIG, "too many parts");
    snprintf(o.devices, sizeof o.devices, "0,0,0,0");
    snprintf(o.partition, sizeof o.partition, "slabs");
    CHECK_FAILS(pyr_plan_create(&p, &o, &plan), PYR_ERR_CONFIG, "use at most 3 parts");
    snprintf(o.partition, sizeof o.partition, "1x4x1");
    CHECK_FAILS(pyr_plan_create(&p, &o, &plan), PYR_ERR_CONFIG, "use at most 3 there");
    snprintf(o.devices, sizeof o.devices, "0,0,0");
    snprintf(o.partition, sizeof o.partition, "blocks");
    CHECK_FAILS(pyr_plan_create(&p, &o, &plan), PYR_ERR_CONFIG, "3 is prime");
    snprintf(o.devices, sizeof o.devices, "0,0,0,0");
    snprintf(o.partition, sizeof o.partition, "3x1x1");
    CHECK_FAILS(pyr_plan_create(&p, &o, &plan), PYR_ERR_CONFIG, "makes 3 parts");
    snprintf(o.partition, sizeof o.partition, "1x2x2");
    CHECK_FAILS(pyr_plan_create(&p, &o, &plan), PYR_ERR_CONFIG, "axis z");
    o.partition[0] = 0;
    snprintf(o.devices, sizeof o.devices, "0,x");
    CHECK_FAILS(pyr_plan_create(&p, &o, &plan), PYR_ERR_CONFIG, "not a device index");
    if (backend == PYR_BACKEND_CPU) {
        snprintf(o.devices, sizeof o.devices, "0,1");
        CHECK_FAILS(pyr_plan_create(&p, &o, &plan), PYR_ERR_CONFIG, "the CPU backend has one device");
    } else {
        snprintf(o.devices, sizeof o.devices, "0,63");
        CHECK_FAILS(pyr_plan_create(&p, &o, &plan), PYR_ERR_NODEVICE, "GPU 63 does not exist");
    }
    /* one device: one part, which is the plan itself */
    snprintf(o.devices, sizeof o.devices, "0");
    CHECK(pyr_plan_create(&p, &o, &plan) == PYR_OK, "one device: %s", pyr_last_error());
    if (plan) {
        pyr_plan_info_t a, b;
        CHECK(pyr_plan_part_count(plan) == 1 && pyr_plan_get_info(plan, &a) == PYR_OK && pyr_plan_part_info(plan, 0, &b) == PYR_OK &&
                  a.device_bytes == b.device_bytes && a.counts.computed == b.counts.computed,
              "one device: one part, described as the plan");
        CHECK(pyr_plan_part_info(plan, 1, &b) == PYR_ERR_ARG, "one device: part 1 accepted");
        pyr_clear_error();
        char text[8] = "x";
        CHECK(pyr_plan_partition(plan, text, sizeof text) == 0 && !text[0], "one device: partition '%s'", text);
        pyr_plan_destroy(&plan);
    }
    CHECK(pyr_plan_part_count(NULL) == 0, "pyr_plan_part_count(NULL)");
    snprintf(o.devices, sizeof o.devices, "0,0");
    o.snapshot_every = 2;
    CHECK_FAILS(pyr_plan_create(&p, &o, &plan), PYR_ERR_UNSUPPORTED, "snapshots");
    CHECK(plan == NULL, "a refused plan was returned");
}

/* A stop the caller asks for (progress returning non-zero, or the cancel
 * hook) over several parts: every part stops at the same point, the step
 * where the hook was asked, and the whole fields hold that time layer, bit
 * for bit a run of that many steps on one device (they kept the values
 * given before). */
typedef struct {
    int64_t at;   /* stop at the first point at or past this step */
    int by_cancel;
    int64_t asked; /* the step the stop was asked at */
} stop_t;

static int stop_hook(void *user, int64_t done, int64_t total)
{
    stop_t *s = user;
    (void)total;
    if (done < s->at || s->asked) return 0;
    s->asked = done;
    return 1;
}

static int progress_if_not_cancel(void *user, int64_t done, int64_t total)
{
    const stop_t *s = user;
    return s->by_cancel ? 0 : stop_hook(user, done, total);
}

static int cancel_if_cancel(void *user, int64_t done, int64_t total)
{
    const stop_t *s = user;
    return s->by_cancel ? stop_hook(user, done, total) : 0;
}

static void stops_together(pyr_backend_kind_t backend)
{
    for (int by_cancel = 0; by_cancel < 2; by_cancel++)
        for (int parts = 2; parts <= 3; parts++) {
            pyr_problem_t p;
            const int64_t n[3] = {23, 31, 1};
            make_problem(&p, 2, n, PYR_DOUBLE, 60, PYR_INIT_RANDOM, 5);
            pyr_options_t o;
            pyr_options_default(&o);
            o.backend = backend;
            snprintf(o.devices, sizeof o.devices, parts == 2 ? "0,0" : "0,0,0");
            o.exchange = 7;
            pyr_plan_t *plan = NULL;
            pyr_field_t *u = NULL, *ref = NULL;
            if (pyr_plan_create(&p, &o, &plan) != PYR_OK || pyr_field_create(&p, &u) != PYR_OK || pyr_field_init(u, &p) != PYR_OK) {
                CHECK(0, "stop over %d parts: setup failed: %s", parts, pyr_last_error());
                pyr_plan_destroy(&plan);
                pyr_field_destroy(&u);
                return;
            }
            stop_t s = {20, by_cancel, 0};
            pyr_hooks_t h;
            memset(&h, 0, sizeof h);
            h.user = &s;
            h.progress = progress_if_not_cancel;
            h.cancel = cancel_if_cancel;
            pyr_field_t *fields[8] = {u};
            pyr_run_info_t run;
            const pyr_status_t st = pyr_execute_fields(plan, fields, pyr_scheme_field_count(p.equation), &h, &run);
            char want[64];
            snprintf(want, sizeof want, "run cancelled after %lld of 60 steps", (long long)s.asked);
            CHECK(st == PYR_ERR_CANCELLED && s.asked == 21 && strstr(pyr_last_error(), want),
                  "stop by %s over %d parts: %s at %lld: %s", by_cancel ? "cancel" : "progress", parts, pyr_status_name(st),
                  (long long)s.asked, pyr_last_error());
            CHECK(run.steps == s.asked, "stop over %d parts: run info says %lld steps, stopped at %lld", parts, (long long)run.steps,
                  (long long)s.asked);
            pyr_clear_error();
            /* the reference: one device, as many steps */
            pyr_problem_t q = p;
            q.steps = s.asked;
            pyr_options_t ro;
            pyr_options_default(&ro);
            ro.backend = PYR_BACKEND_CPU;
            pyr_plan_t *rp = NULL;
            if (pyr_plan_create(&q, &ro, &rp) == PYR_OK && pyr_field_create(&q, &ref) == PYR_OK && pyr_field_init(ref, &p) == PYR_OK &&
                pyr_execute(rp, ref, NULL, NULL) == PYR_OK)
                CHECK(!memcmp(u->data, ref->data, (size_t)pyr_field_count(u) * sizeof(double)),
                      "stop by %s over %d parts: the fields do not hold step %lld", by_cancel ? "cancel" : "progress", parts,
                      (long long)s.asked);
            else CHECK(0, "stop over %d parts: reference failed: %s", parts, pyr_last_error());
            pyr_plan_destroy(&rp);
            pyr_plan_destroy(&plan);
            pyr_field_destroy(&u);
            pyr_field_destroy(&ref);
        }
}

/* Every registered scheme has a row above (a new scheme must add one). */
static void every_scheme_covered(void)
{
    for (int e = 0; pyr_scheme_of((pyr_equation_t)e); e++) {
        int found = 0;
        for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++) found |= (int)schemes[i].equation == e;
        CHECK(found, "the %s scheme has no row in this test's table of schemes: add one", pyr_equation_name((pyr_equation_t)e));
    }
}

int main(int argc, char **argv)
{
    int cases = argc > 1 ? atoi(argv[1]) : 120;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    backend_arg = argc > 3 ? argv[3] : "cpu";
    pyr_backend_kind_t backend = !strcmp(backend_arg, "cuda") ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU;
    spread = argc > 4 && !strcmp(argv[4], "all");
    if (backend == PYR_BACKEND_CUDA && pyr_gpu_count() < (spread ? 2 : 1)) {
        printf("%d usable GPU%s (%s needed): skipped\n", pyr_gpu_count(), pyr_gpu_count() == 1 ? "" : "s", spread ? "2" : "1");
        return 77;
    }
    every_scheme_covered();
    refusals(backend);
    stops_together(backend);
    int failed = 0;
    for (int c = 0; c < cases && failed < 5; c++) failed += run_case(seed, c, backend);
    printf("%d of %d random problems over 2-5 parts on the %s backend bit-identical to one device (seed %llu; %d refused by the "
           "planner); %d stopped at a check, %d had parts streaming pieces, %d were cut along two or more axes; %d Maxwell with probes\n",
           cases - failed - refused, cases, backend_arg, (unsigned long long)seed, refused, stopped_early, streamed, blocks_cut, with_probes);
    CHECK(failed > 0 || cases < 30 || (streamed >= cases / 10 && blocks_cut >= cases / 20 && stopped_early >= cases / 20 && refused <= cases / 10 &&
                                       with_probes >= cases / 20),
          "too few cases streamed (%d), were cut in blocks (%d) or stopped early (%d) to mean much", streamed, blocks_cut, stopped_early);
    return check_report();
}
