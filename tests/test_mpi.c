/* One grid over MPI ranks (issue 25), run under mpirun -np 1..4: random
 * problems of every registered scheme (1D/2D/3D, float and double, uneven
 * parts), one or two devices per rank, every partition, H forced or chosen,
 * and inside each part naive (in core) or pyramid/trivial (out of core):
 * every rank's part of the result is bit for bit that part of the naive
 * method's field on one device (each rank computes that reference itself:
 * the grids are small), with the same sweep count and change for Poisson.
 * The halo counters, summed over the ranks, equal the formula: every
 * exchange moves, for every pair of parts, the nodes of the receiver's box
 * grown by H (reach 1) that the sender owns and the scheme updates.
 * Failures: a run cancelled on the last rank stops every rank with its
 * message; a part of initial.file holding a NaN stops every rank with the
 * message of the rank that read it; too many ranks for the grid, and the
 * long-vector method (one GPU only), are refused on every rank alike.
 *
 *   mpirun -np P test_mpi [cases] [seed]      (defaults: 24 1) */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io/npy.h"
#include "maxwell_util.h"
#include "poisson_util.h"
#include "pyrgrid_mpi.h"
#include "schemes/maxwell.h"
#include "schemes/scheme.h"

static int rank, ranks;

static void make_heat(rng_t *r, pyr_problem_t *p, int dims, const int64_t n[3], pyr_precision_t prec)
{
    make_problem(p, dims, n, prec, rng_range(r, 1, 30), rng_range(r, 0, 1) ? PYR_INIT_RANDOM : PYR_INIT_GAUSS, rng_next(r));
}

static void make_poisson_case(rng_t *r, pyr_problem_t *p, int dims, const int64_t n[3], pyr_precision_t prec)
{
    make_poisson(p, dims, n, NULL, prec, rng_range(r, 1, 40), 0, rng_range(r, 1, 10), rng_range(r, 0, 1) ? PYR_RHS_SINE : PYR_RHS_ZERO,
                 rng_range(r, 0, 1) ? PYR_INIT_RANDOM : PYR_INIT_ZERO, rng_next(r));
    /* Neumann faces in half the cases (zero or a given flux), never all of them (pure Neumann: other data) */
    if (rng_range(r, 0, 1)) {
        int dirichlet = 0;
        for (int k = 0; k < 2 * dims; k++) {
            if (rng_range(r, 0, 1)) {
                p->poisson.face[k] = PYR_FACE_NEUMANN;
                p->poisson.flux[k] = rng_range(r, 0, 1) ? (double)(rng_range(r, 0, 400) - 200) / 100.0 : 0.0;
            } else {
                dirichlet++;
            }
        }
        if (!dirichlet) {
            const int k = (int)rng_range(r, 0, 2 * dims - 1);
            p->poisson.face[k] = PYR_FACE_DIRICHLET;
            p->poisson.flux[k] = 0; /* a dirichlet face takes none */
        }
    }
    if (rng_range(r, 0, 1)) {
        /* a tolerance that stops the run at a check (computed alike on every rank) */
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
    mx_random_part_case(r, p, dims, n, prec, 16); /* room for 4 ranks x 2 devices along one axis: two nodes each (Maxwell updates the boundary nodes too) */
}

/* Registered schemes: how to make a random problem of each (a new scheme adds a row). */
static const struct {
    pyr_equation_t equation;
    void (*make)(rng_t *, pyr_problem_t *, int, const int64_t[3], pyr_precision_t);
} schemes[] = {{PYR_EQ_HEAT, make_heat}, {PYR_EQ_POISSON, make_poisson_case}, {PYR_EQ_MAXWELL, make_maxwell_case}};


static pyr_field_t *reference(const pyr_problem_t *p, pyr_run_info_t *run)
{
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.method = PYR_METHOD_NAIVE;
    o.threads = 1;
    pyr_plan_t *plan = NULL;
    pyr_field_t *u = NULL;
    pyr_status_t st = pyr_plan_create(p, &o, &plan);
    if (st == PYR_OK) st = pyr_field_create(p, &u);
    if (st == PYR_OK) st = pyr_field_init(u, p);
    pyr_field_t *f[8] = {u};
    if (st == PYR_OK) st = pyr_execute_fields(plan, f, pyr_scheme_field_count(p->equation), NULL, run);
    pyr_plan_destroy(&plan);
    if (st != PYR_OK) pyr_field_destroy(&u);
    return u;
}

/* Own range of part k of c along an axis of n nodes (updated nodes [f0, n-f1): heat and Poisson 1, 1, but 0 on a
 * Poisson problem's Neumann face; Maxwell 0, 0), as the library cuts it. */
static void cut(int64_t n, int64_t f0, int64_t f1, int64_t c, int64_t k, int64_t *lo, int64_t *hi)
{
    const int64_t interior = n - f0 - f1;
    *lo = k == 0 ? 0 : f0 + k * interior / c;
    *hi = k == c - 1 ? n : f0 + (k + 1) * interior / c;
}

/* Values every exchange moves over all parts: for each ordered pair, the
 * receiver's box grown by H on its inner sides, met with the sender's box,
 * within the interior. */
static uint64_t halo_formula(const pyr_problem_t *p, const int count[3], int64_t H)
{
    /* every exchanged field: the updated ones and the library's auxiliaries */
    const pyr_scheme_t *s = pyr_scheme_of(p->equation);
    const unsigned used = s->fields_used(p);
    uint64_t nstate = 0;
    for (int k = 0; k < s->nfields; k++) nstate += ((used >> k) & 1) && s->field[k].role != PYR_FIELD_INPUT;
    const int np = count[0] * count[1] * count[2];
    uint64_t total = 0;
    for (int to = 0; to < np; to++)
        for (int from = 0; from < np; from++) {
            if (from == to) continue;
            const int it[3] = {to % count[0], to / count[0] % count[1], to / (count[0] * count[1])};
            const int ifr[3] = {from % count[0], from / count[0] % count[1], from / (count[0] * count[1])};
            uint64_t v = 1;
            for (int a = 0; a < 3 && v; a++) {
                if (a >= p->dims) continue;
                int64_t tl, th, fl, fh;
                const int64_t f0 = p->equation == PYR_EQ_MAXWELL ? 0 : pyr_scheme_fixed(s, p, a, 0);
                const int64_t f1 = p->equation == PYR_EQ_MAXWELL ? 0 : pyr_scheme_fixed(s, p, a, 1);
                cut(p->n[a], f0, f1, count[a], it[a], &tl, &th);
                cut(p->n[a], f0, f1, count[a], ifr[a], &fl, &fh);
                if (tl > 0) tl = tl - H > 0 ? tl - H : 0;
                if (th < p->n[a]) th = th + H < p->n[a] ? th + H : p->n[a];
                int64_t lo = tl > fl ? tl : fl, hi = th < fh ? th : fh;
                if (lo < f0) lo = f0;
                if (hi > p->n[a] - f1) hi = p->n[a] - f1;
                v *= hi > lo ? (uint64_t)(hi - lo) : 0;
            }
            total += v;
        }
    return total * nstate;
}

static int stopped_early, streamed, two_devices, maxwell_probes, neumann;

/* A Maxwell problem over the ranks: every component of this rank's box and
 * every probe's series (on every rank) against one device, bit for bit. */
static int maxwell_case(const pyr_problem_t *p, const pyr_options_t *o, const char *label, int devs)
{
    pyr_field_t *part[MX_FIELDS] = {NULL};
    pyr_mpi_info_t info;
    mx_result_t a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    pyr_hooks_t hooks = {.user = &a, .probe = mx_probe_cb};
    pyr_status_t st = pyr_execute_mpi_fields(p, o, MPI_COMM_WORLD, &hooks, part, MX_FIELDS, &info);
    if (st != PYR_OK) {
        int refusal = st == PYR_ERR_BUDGET || (st == PYR_ERR_CONFIG && strstr(pyr_last_error(), "too many parts"));
        CHECK(refusal, "%s: rank %d: run failed: %s", label, rank, pyr_last_error());
        free(a.probes);
        return !refusal;
    }
    int bad = 0;
    pyr_status_t sb = mx_reference(p, NULL, &b);
    CHECK(sb == PYR_OK, "%s: reference failed: %s", label, pyr_last_error());
    bad |= sb != PYR_OK;
    const size_t elem = pyr_precision_size(p->precision);
    for (int c = 0; c < 6 && !bad; c++) {
        CHECK((part[c] != NULL) == mx_used(p, c), "%s: rank %d: component %s %s", label, rank, pyr_maxwell_component_name(c),
              part[c] ? "returned but unused" : "missing");
        if (!part[c] || !b.c[c]) continue;
        int64_t k = 0, first = -1;
        for (int64_t z = info.lo[2]; z < info.hi[2]; z++)
            for (int64_t y = info.lo[1]; y < info.hi[1]; y++)
                for (int64_t x = info.lo[0]; x < info.hi[0]; x++, k++) {
                    const char *u = (const char *)part[c]->data + k * (int64_t)elem;
                    const char *v = (const char *)b.c[c]->data + ((z * p->n[1] + y) * p->n[0] + x) * (int64_t)elem;
                    if (first < 0 && memcmp(u, v, elem)) first = (z * p->n[1] + y) * p->n[0] + x;
                }
        CHECK(first < 0, "%s: rank %d: %s differs from one device at node %lld", label, rank, pyr_maxwell_component_name(c), (long long)first);
        bad |= first >= 0;
    }
    if (!bad) {
        const int same = a.nseries == b.nseries && a.nprobes == b.nprobes &&
                         (a.nseries * a.nprobes == 0 || !memcmp(a.probes, b.probes, (size_t)(a.nseries * a.nprobes) * sizeof(double)));
        CHECK(same, "%s: rank %d: probe series differ (%lld steps of %d probes, one device %lld of %d)", label, rank, (long long)a.nseries,
              a.nprobes, (long long)b.nseries, b.nprobes);
        bad |= !same;
        two_devices += devs == 2;
        streamed += o->method == PYR_METHOD_PYRAMID || o->method == PYR_METHOD_TRIVIAL;
        maxwell_probes += p->maxwell.nprobes > 0;
    }
    /* (collective: every rank, whatever it found above) */
    unsigned long long mine[2] = {info.run.halo_sent, info.run.halo_received}, sum[2];
    MPI_Allreduce(mine, sum, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    const uint64_t per = halo_formula(p, info.parts_per_axis, info.run.exchange_height);
    CHECK(sum[0] == per * (uint64_t)info.run.exchanges && sum[1] == sum[0],
          "%s: halo values sent %llu received %llu over the ranks; formula %llu per exchange x %lld exchanges", label, sum[0], sum[1],
          (unsigned long long)per, (long long)info.run.exchanges);
    bad |= !(sum[0] == per * (uint64_t)info.run.exchanges && sum[1] == sum[0]);
    for (int c = 0; c < MX_FIELDS; c++) pyr_field_destroy(&part[c]);
    mx_free(&a);
    mx_free(&b);
    return bad;
}

static int run_case(uint64_t seed, int c)
{
    rng_t r = {seed * 1000003ull + (uint64_t)c * 7919ull};
    const int which = (int)rng_range(&r, 0, (int)(sizeof schemes / sizeof schemes[0]) - 1);
    int dims = rng_range(&r, 0, 6) == 0 ? 1 : (int)rng_range(&r, 2, 3);
    int64_t n[3] = {1, 1, 1};
    for (int a = 0; a < dims; a++) n[a] = rng_range(&r, 12, dims == 1 ? 200 : dims == 2 ? 48 : 16);
    const pyr_precision_t prec = rng_range(&r, 0, 1) ? PYR_DOUBLE : PYR_FLOAT;
    pyr_problem_t p;
    schemes[which].make(&r, &p, dims, n, prec);
    dims = p.dims; /* (Maxwell makes a 1D draw 2D) */
    for (int a = 0; a < 3; a++) n[a] = p.n[a];
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.threads = 1;
    const int devs = rng_range(&r, 0, 3) == 0 ? 2 : 1;
    if (devs == 2) snprintf(o.devices, sizeof o.devices, "0,0");
    if (rng_range(&r, 0, 2) == 1) snprintf(o.partition, sizeof o.partition, "slabs");
    if (rng_range(&r, 0, 1)) o.exchange = rng_range(&r, 1, 7);
    const int m = (int)rng_range(&r, 0, 3);
    o.method = m == 0 ? PYR_METHOD_AUTO : m == 1 ? PYR_METHOD_NAIVE : m == 2 ? PYR_METHOD_PYRAMID : PYR_METHOD_TRIVIAL;
    if (o.method == PYR_METHOD_TRIVIAL) o.exchange = 1;
    if (o.method == PYR_METHOD_PYRAMID || o.method == PYR_METHOD_TRIVIAL) {
        o.memory = (uint64_t)pyr_problem_nodes(&p) * pyr_precision_size(prec) / (uint64_t)rng_range(&r, 3, 6) + (dims == 3 ? 32768 : 8192);
        o.slots = (int)rng_range(&r, 1, 3);
    }
    char faces[16] = "", label[320];
    for (int k = 0; k < 2 * dims && p.equation == PYR_EQ_POISSON; k++) faces[k] = p.poisson.face[k] == PYR_FACE_NEUMANN ? 'N' : 'D';
    snprintf(label, sizeof label, "np %d case %d seed %llu: %s %dD %lldx%lldx%lld %s steps=%lld tol=%g faces=%s | devices=%s partition=%s exchange=%lld method=%s memory=%llu",
             ranks, c, (unsigned long long)seed, pyr_equation_name(p.equation), dims, (long long)n[0], (long long)n[1], (long long)n[2],
             pyr_precision_name(prec), (long long)p.steps, p.poisson.tolerance, faces[0] ? faces : "-", devs == 2 ? "0,0" : "-", o.partition[0] ? o.partition : "auto",
             (long long)o.exchange, pyr_method_name(o.method), (unsigned long long)o.memory);
    if (p.equation == PYR_EQ_MAXWELL) return maxwell_case(&p, &o, label, devs);
    pyr_field_t *part = NULL;
    pyr_mpi_info_t info;
    pyr_status_t st = pyr_execute_mpi(&p, &o, MPI_COMM_WORLD, NULL, &part, &info);
    if (st != PYR_OK) {
        /* budgets too small, or more parts than a small grid has nodes: refused alike on every rank */
        int refusal = st == PYR_ERR_BUDGET || (st == PYR_ERR_CONFIG && strstr(pyr_last_error(), "too many parts"));
        CHECK(refusal, "%s: rank %d: run failed: %s", label, rank, pyr_last_error());
        return !refusal;
    }
    pyr_run_info_t rr;
    pyr_field_t *ref = reference(&p, &rr);
    int bad = !ref;
    CHECK(ref != NULL, "%s: reference failed: %s", label, pyr_last_error());
    if (ref) {
        /* this rank's box against the same nodes of the reference */
        const size_t elem = pyr_precision_size(prec);
        int64_t k = 0, first = -1;
        for (int64_t z = info.lo[2]; z < info.hi[2]; z++)
            for (int64_t y = info.lo[1]; y < info.hi[1]; y++)
                for (int64_t x = info.lo[0]; x < info.hi[0]; x++, k++) {
                    const char *a = (const char *)part->data + k * (int64_t)elem;
                    const char *b = (const char *)ref->data + ((z * p.n[1] + y) * p.n[0] + x) * (int64_t)elem;
                    if (first < 0 && memcmp(a, b, elem)) first = (z * p.n[1] + y) * p.n[0] + x;
                }
        CHECK(first < 0, "%s: rank %d differs from one device at node %lld", label, rank, (long long)first);
        CHECK(info.run.steps == rr.steps && info.run.change == rr.change && info.run.converged == rr.converged,
              "%s: rank %d: %lld steps change %.17g converged %d; one device %lld %.17g %d", label, rank, (long long)info.run.steps,
              info.run.change, info.run.converged, (long long)rr.steps, rr.change, rr.converged);
        bad |= first >= 0 || info.run.steps != rr.steps || info.run.change != rr.change;
        /* the ranks' boxes tile the grid */
        long long vol = (long long)pyr_field_count(part), all = 0;
        MPI_Allreduce(&vol, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        CHECK(all == pyr_problem_nodes(&p), "%s: the ranks' parts hold %lld nodes of %lld", label, all, (long long)pyr_problem_nodes(&p));
        /* halo counters over all ranks against the formula */
        unsigned long long mine[2] = {info.run.halo_sent, info.run.halo_received}, sum[2];
        MPI_Allreduce(mine, sum, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        const uint64_t per = halo_formula(&p, info.parts_per_axis, info.run.exchange_height);
        CHECK(sum[0] == per * (uint64_t)info.run.exchanges && sum[1] == sum[0],
              "%s: halo values sent %llu received %llu over the ranks; formula %llu per exchange x %lld exchanges", label, sum[0], sum[1],
              (unsigned long long)per, (long long)info.run.exchanges);
        CHECK(info.run.parts == ranks * devs && info.ranks == ranks, "%s: %d parts over %d ranks", label, info.run.parts, info.ranks);
        stopped_early += rr.converged && rr.steps < p.steps;
        neumann += strchr(faces, 'N') != NULL;
        two_devices += devs == 2;
        streamed += o.method == PYR_METHOD_PYRAMID || o.method == PYR_METHOD_TRIVIAL;
    }
    pyr_field_destroy(&ref);
    pyr_field_destroy(&part);
    return bad;
}

static int cancel_last(void *user, int64_t done, int64_t total)
{
    (void)user;
    (void)total;
    return rank == ranks - 1 && done >= 2;
}

static void failures(void)
{
    /* a run cancelled on the last rank: every rank stops with its message */
    pyr_problem_t p;
    const int64_t n[3] = {40, 36, 1};
    make_problem(&p, 2, n, PYR_DOUBLE, 30, PYR_INIT_GAUSS, 1);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.threads = 1;
    o.exchange = 1;
    pyr_hooks_t hooks = {.progress = cancel_last};
    pyr_field_t *part = NULL;
    pyr_mpi_info_t info;
    char want[64];
    snprintf(want, sizeof want, "rank %d: run cancelled", ranks - 1);
    const char *expect = want;
    if (ranks > 1) CHECK_FAILS(pyr_execute_mpi(&p, &o, MPI_COMM_WORLD, &hooks, &part, &info), PYR_ERR_CANCELLED, expect);
    else CHECK_FAILS(pyr_execute_mpi(&p, &o, MPI_COMM_WORLD, &hooks, &part, &info), PYR_ERR_CANCELLED, "run cancelled");
    CHECK(part == NULL, "a failed run returned a part");

    /* a NaN in the last rank's part of initial.file: every rank stops with that rank's message */
    char path[256];
    snprintf(path, sizeof path, "%s/test_mpi_nan_%d.npy", PYR_BINARY_DIR, ranks);
    if (rank == 0) {
        pyr_field_t *f = NULL;
        CHECK_OK(pyr_field_create(&p, &f));
        CHECK_OK(pyr_field_init(f, &p));
        ((double *)f->data)[(n[1] - 2) * n[0] + n[0] / 2] = NAN; /* the last interior row: the last slab's, far from the others */
        int64_t shape[2] = {n[1], n[0]};
        CHECK_OK(pyr_npy_write(path, 2, shape, PYR_DOUBLE, f->data));
        pyr_field_destroy(&f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    p.init = PYR_INIT_FILE;
    snprintf(p.init_file, sizeof p.init_file, "%s", path);
    snprintf(o.partition, sizeof o.partition, "slabs");
    pyr_status_t st = pyr_execute_mpi(&p, &o, MPI_COMM_WORLD, NULL, &part, &info);
    char last[32];
    snprintf(last, sizeof last, "rank %d: initial.file", ranks - 1);
    CHECK(st == PYR_ERR_FORMAT && strstr(pyr_last_error(), ranks > 1 ? last : "initial.file") && strstr(pyr_last_error(), "NaN"),
          "a NaN on the last rank: %s: %s", pyr_status_name(st), pyr_last_error());
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) remove(path);

    /* too many ranks (or ranks x devices) for the grid: the same refusal everywhere */
    const int64_t tiny[3] = {4, 1, 1};
    make_problem(&p, 1, tiny, PYR_DOUBLE, 3, PYR_INIT_GAUSS, 1);
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.threads = 1;
    if (ranks < 3) snprintf(o.devices, sizeof o.devices, ranks == 1 ? "0,0,0" : "0,0");
    CHECK_FAILS(pyr_execute_mpi(&p, &o, MPI_COMM_WORLD, NULL, &part, &info), PYR_ERR_CONFIG, "too many parts");

    /* the long-vector method runs on one GPU: refused over ranks (or devices), the same on every rank and machine */
    {
        const int64_t m[3] = {40, 30, 1};
        make_problem(&p, 2, m, PYR_FLOAT, 3, PYR_INIT_GAUSS, 1);
        pyr_options_default(&o);
        o.method = PYR_METHOD_LONGVECTOR;
        if (ranks == 1) snprintf(o.devices, sizeof o.devices, "0,0");
        CHECK_FAILS(pyr_execute_mpi(&p, &o, MPI_COMM_WORLD, NULL, &part, &info), PYR_ERR_UNSUPPORTED, "method = longvector runs on one GPU");
        CHECK(part == NULL, "a refused run returned a part");
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
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const int cases = argc > 1 ? atoi(argv[1]) : 24;
    const uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    every_scheme_covered();
    failures();
    int failed = 0;
    for (int c = 0; c < cases; c++) {
        int bad = run_case(seed, c), any = 0;
        MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        failed += any;
        if (failed >= 3) break;
    }
    if (rank == 0)
        printf("%d of %d random problems over %d rank%s bit-identical to one device (seed %llu); %d stopped at a check, %d streamed pieces, "
               "%d had two devices per rank, %d were Maxwell with probes, %d Poisson with Neumann faces\n",
               cases - failed, cases, ranks, ranks == 1 ? "" : "s", (unsigned long long)seed, stopped_early, streamed, two_devices, maxwell_probes,
               neumann);
    int mine = check_report(), worst = 0;
    MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return worst;
}
