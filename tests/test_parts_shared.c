/* Parts of one process read and write the caller's grid in place
 * (multi/multi.c): random problems of every scheme over 2 to 4 CPU parts
 * (devices = 0,0,...), in core, with the inputs given by the caller or made
 * from the problem, halos swapped device to device or (white box) forced
 * through the host, at two exchange heights, give the single device's
 * fields bit for bit; a stop asked for leaves that step's time layer.  And
 * no part writes outside its own box: what the parts download in a run is
 * exactly their own updated nodes (plus, through the host, the nodes each
 * exchange sends), where the parts once handed back their whole interior,
 * halo included.  The library's auxiliaries (Maxwell's CPML states) start
 * at zero set on the device for a resident piece (exec/execute.c
 * zero_on_device): the reference streams pieces every step (the trivial
 * method, which uploads them from zero host pages), and the heap is
 * perturbed, so that device buffers left unset hold garbage.
 *
 *   test_parts_shared [cases] [seed]     (defaults: 40 1) */
#include <stdio.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "maxwell_util.h"
#include "multi/multi.h"
#include "multi/parts_internal.h"
#include "poisson_util.h"
#include "schemes/scheme.h"

typedef struct {
    pyr_field_t *f[PYR_MAX_FIELDS];
} set_t;

static void set_free(set_t *s)
{
    for (int f = 0; f < PYR_MAX_FIELDS; f++) pyr_field_destroy(&s->f[f]);
}

static int is_state(const pyr_scheme_t *s, int f) { return s->field[f].role == PYR_FIELD_PINGPONG || s->field[f].role == PYR_FIELD_INPLACE; }

/* The caller's fields: every state field the problem uses from the
 * problem, and the inputs in `give` made as the library would make them. */
static pyr_status_t make_set(const pyr_problem_t *p, unsigned give, set_t *out)
{
    memset(out, 0, sizeof *out);
    const pyr_scheme_t *s = pyr_scheme_of(p->equation);
    const unsigned used = s->fields_used(p);
    for (int f = 0; f < s->nfields; f++) {
        if (!((used >> f) & 1)) continue;
        const int state = is_state(s, f);
        if (!state && !(s->field[f].role == PYR_FIELD_INPUT && ((give >> f) & 1))) continue;
        PYR_TRY(pyr_field_create(p, &out->f[f]));
        if (state) PYR_TRY(pyr_field_init_state(out->f[f], p, f));
        else PYR_TRY(s->init_input(p, f, out->f[f]));
    }
    return PYR_OK;
}

static int stop_at_first(void *user, int64_t done, int64_t total)
{
    (void)total;
    *(int64_t *)user = done;
    return 1;
}

static int stopped, host_path, inputs_given, inputs_made;

/* Nodes the parts own and some sub-step updates (the own boxes' share of P->changing). */
static uint64_t owned_changing(const pyr_parts_t *P)
{
    uint64_t v = 0;
    for (int i = 0; i < P->ndev; i++) {
        pyr_box_t b = pyr_box_intersect(&P->part[i].own, &P->changing);
        v += (uint64_t)pyr_box_volume(&b);
    }
    return v;
}

static int run_case(uint64_t seed, int c)
{
    rng_t r = {seed * 6151u + (uint64_t)c * 196613u};
    const pyr_equation_t eq = c % 3 == 0 ? PYR_EQ_HEAT : c % 3 == 1 ? PYR_EQ_POISSON : PYR_EQ_MAXWELL;
    int dims = eq == PYR_EQ_HEAT && rng_range(&r, 0, 4) == 0 ? 1 : (int)rng_range(&r, 2, 3);
    int64_t n[3] = {1, 1, 1};
    for (int a = 0; a < dims; a++) n[a] = rng_range(&r, 9, dims == 1 ? 200 : dims == 2 ? 48 : 16);
    const pyr_precision_t prec = rng_range(&r, 0, 1) ? PYR_DOUBLE : PYR_FLOAT;
    pyr_problem_t p;
    if (eq == PYR_EQ_HEAT) make_problem(&p, dims, n, prec, rng_range(&r, 1, 30), rng_range(&r, 0, 1) ? PYR_INIT_RANDOM : PYR_INIT_GAUSS, rng_next(&r));
    else if (eq == PYR_EQ_POISSON)
        make_poisson(&p, dims, n, NULL, prec, rng_range(&r, 1, 30), 0, rng_range(&r, 1, 8), rng_range(&r, 0, 1) ? PYR_RHS_SINE : PYR_RHS_ZERO,
                     PYR_INIT_RANDOM, rng_next(&r));
    else mx_random_part_case(&r, &p, dims, n, prec, 0);
    dims = p.dims;
    const pyr_scheme_t *s = pyr_scheme_of(p.equation);
    const int nparts = (int)rng_range(&r, 2, 4);
    unsigned give = 0;
    for (int f = 0; f < s->nfields; f++)
        if (s->field[f].role == PYR_FIELD_INPUT && rng_range(&r, 0, 1)) give |= 1u << f;
    const int through_host = (int)rng_range(&r, 0, 1);
    const int stop = p.equation == PYR_EQ_HEAT && rng_range(&r, 0, 3) == 0;
    const int64_t heights[2] = {1, rng_range(&r, 2, 7)};

    /* the single device's run */
    set_t ref;
    pyr_options_t ro;
    pyr_options_default(&ro);
    ro.backend = PYR_BACKEND_CPU;
    ro.method = PYR_METHOD_TRIVIAL;
    pyr_plan_t *rp = NULL;
    pyr_run_info_t rr;
    pyr_status_t st = make_set(&p, give, &ref);
    if (st == PYR_OK) st = pyr_plan_create(&p, &ro, &rp);
    if (st == PYR_OK) st = pyr_execute_fields(rp, ref.f, s->nfields, NULL, &rr);
    pyr_plan_destroy(&rp);
    CHECK(st == PYR_OK, "case %d: reference failed: %s", c, pyr_last_error());
    if (st != PYR_OK) {
        set_free(&ref);
        return 1;
    }
    int bad = 0;
    for (int k = 0; k < 2 && !bad; k++) {
        char label[300];
        pyr_options_t o;
        pyr_options_default(&o);
        o.backend = PYR_BACKEND_CPU;
        o.method = PYR_METHOD_NAIVE;
        o.threads = 1;
        o.exchange = heights[k];
        for (int i = 0; i < nparts; i++) strcat(o.devices, i ? ",0" : "0");
        snprintf(label, sizeof label, "case %d seed %llu: %s %dD %lldx%lldx%lld %s steps=%lld | devices=%s exchange=%lld inputs given 0x%x%s%s", c,
                 (unsigned long long)seed, pyr_equation_name(p.equation), dims, (long long)p.n[0], (long long)p.n[1], (long long)p.n[2],
                 pyr_precision_name(prec), (long long)p.steps, o.devices, (long long)o.exchange, give, through_host ? ", halos through the host" : "",
                 stop ? ", stopped at the first point" : "");
        pyr_plan_t *plan = NULL;
        st = pyr_plan_create(&p, &o, &plan);
        if (st == PYR_ERR_CONFIG && strstr(pyr_last_error(), "too many parts")) {
            pyr_clear_error();
            continue;
        }
        CHECK(st == PYR_OK, "%s: plan failed: %s", label, pyr_last_error());
        if (st != PYR_OK) return 1;
        pyr_parts_t *P = pyr_multi_of(plan)->parts;
        for (int i = 0; i < P->ndev; i++) CHECK(P->part[i].plan->resident, "%s: part %d streams pieces", label, i);
        /* (white box) every halo through the host fields, as between parts that cannot copy device to device */
        int64_t sent = 0;
        for (int m = 0; m < P->nmsg; m++) {
            if (through_host) P->msg[m].mode = MSG_HOST;
            sent += pyr_box_volume(&P->msg[m].box);
        }
        set_t got;
        pyr_run_info_t ri;
        int64_t stop_step = -1;
        pyr_hooks_t hooks = {.user = &stop_step, .progress = stop_at_first};
        st = make_set(&p, give, &got);
        if (st == PYR_OK) st = pyr_execute_fields(plan, got.f, s->nfields, stop ? &hooks : NULL, &ri);
        if (stop && st == PYR_ERR_CANCELLED && stop_step >= 0 && stop_step <= p.steps) {
            /* the time layer of the step it stopped at: one device's run of that many steps */
            stopped++;
            pyr_problem_t q = p;
            q.steps = stop_step;
            set_t part_ref;
            pyr_run_info_t qr;
            pyr_status_t sq = make_set(&q, give, &part_ref);
            pyr_plan_t *qp = NULL;
            if (sq == PYR_OK) sq = pyr_plan_create(&q, &ro, &qp);
            if (sq == PYR_OK) sq = pyr_execute_fields(qp, part_ref.f, s->nfields, NULL, &qr);
            pyr_plan_destroy(&qp);
            CHECK(sq == PYR_OK, "%s: reference of %lld steps failed: %s", label, (long long)stop_step, pyr_last_error());
            for (int f = 0; f < s->nfields && sq == PYR_OK; f++) {
                if (!got.f[f] || !is_state(s, f)) continue;
                const int64_t i = first_difference(got.f[f], part_ref.f[f]);
                CHECK(i < 0, "%s: field %s differs from one device's %lld steps at node %lld", label, s->field[f].name, (long long)stop_step, (long long)i);
                bad |= i >= 0;
            }
            bad |= sq != PYR_OK;
            set_free(&part_ref);
        } else {
            CHECK(st == PYR_OK, "%s: run failed: %s", label, pyr_last_error());
            bad |= st != PYR_OK;
            for (int f = 0; f < s->nfields && st == PYR_OK; f++) {
                if (!got.f[f] || !is_state(s, f)) continue;
                const int64_t i = first_difference(got.f[f], ref.f[f]);
                CHECK(i < 0, "%s: field %s differs from one device at node %lld (%.17g vs %.17g)", label, s->field[f].name, (long long)i,
                      i >= 0 ? field_get(got.f[f], i) : 0.0, i >= 0 ? field_get(ref.f[f], i) : 0.0);
                bad |= i >= 0;
            }
            CHECK(st != PYR_OK || (ri.steps == rr.steps && ri.change == rr.change), "%s: %lld steps change %.17g, one device %lld %.17g", label,
                  (long long)ri.steps, ri.change, (long long)rr.steps, rr.change);
            /* nothing outside the own boxes comes back: one state field over every node the parts own
             * and update, and, through the host, each exchange's sent nodes */
            if (st == PYR_OK && p.equation == PYR_EQ_HEAT) {
                const uint64_t want = owned_changing(P) + (through_host ? (uint64_t)ri.exchanges * (uint64_t)sent : 0);
                CHECK(ri.counts.downloaded == want, "%s: the parts downloaded %llu nodes; their own updated nodes%s are %llu", label,
                      (unsigned long long)ri.counts.downloaded, through_host ? " and the halos sent" : "", (unsigned long long)want);
                bad |= ri.counts.downloaded != want;
            }
        }
        host_path += through_host;
        inputs_given += give != 0;
        inputs_made += give == 0 && p.equation != PYR_EQ_HEAT;
        set_free(&got);
        pyr_plan_destroy(&plan);
    }
    set_free(&ref);
    return bad;
}

int main(int argc, char **argv)
{
    const int cases = argc > 1 ? atoi(argv[1]) : 40;
    const uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
#if defined(__GLIBC__) && defined(M_PERTURB)
    mallopt(M_PERTURB, 0x5a); /* new heap memory filled with bytes 0xa5, not zero */
#endif
    int failed = 0;
    for (int c = 0; c < cases && failed < 3; c++) failed += run_case(seed, c);
    printf("%d cases: %d stopped as asked, %d with halos through the host, %d with inputs given, %d with inputs made\n", cases, stopped,
           host_path, inputs_given, inputs_made);
    CHECK(cases < 12 || (stopped > 0 && host_path > 0 && inputs_given > 0 && inputs_made > 0), "the cases miss a kind");
    return check_report();
}
