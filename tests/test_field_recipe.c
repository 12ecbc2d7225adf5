/* Initial fields made where they are needed (core/recipe.h): the runtimes' fill op makes a field's
 * values over a box of a piece from a recipe, and a field marked with its recipe (pyr_field_alloc_recipe,
 * as `pyrgrid run` makes heat's and Poisson's initial fields) is made on the device by a resident run,
 * on the host by any other run or reader (pyr_field_materialize).  Every way must give the bits
 * pyr_field_init_part gives.
 *   test_field_recipe        the CPU runtime's fill against pyr_field_init_part (every kind, 1D-3D,
 *                            float and double, awkward shapes, whole grids and parts); runs from
 *                            recipe fields against runs from host-made fields (in core, out of core,
 *                            streamed, two to four parts; heat and Poisson: Jacobi, Chebyshev,
 *                            multigrid; no steps, plan = refine, ranges over a carry); reads before
 *                            a run; the result's pages prefaulted
 *   test_field_recipe gpu    the same fill, runs and ranges on the CUDA runtime (exits 77 without a
 *                            GPU) */
/* MADV_POPULATE_WRITE is not POSIX: glibc declares it under _DEFAULT_SOURCE */
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <sys/mman.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "backend/device.h"
#include "check.h"
#include "core/field.h"
#include "exec/exec.h"
#include "heat_util.h"
#include "multi/ranks.h"
#include "poisson_util.h"
#include "problem/field_init.h"

static const pyr_init_kind_t kinds[] = {PYR_INIT_ZERO, PYR_INIT_SINE, PYR_INIT_GAUSS, PYR_INIT_RANDOM};
static const char *kind_name[] = {"sine", "gauss", "random", "file", "zero"};

/* splitmix64 written out here, apart from the library's text (core/recipe.h): the random
 * kind's value of whole-grid node gi, to pin the formula itself (not only its agreement). */
static double random_reference(uint64_t seed, uint64_t gi)
{
    uint64_t w[2] = {gi, 0};
    for (int k = 0; k < 2; k++) {
        uint64_t z = w[k] + 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        if (k == 0) w[1] = seed * 0x100000001B3ull ^ z;
        else w[1] = z;
    }
    return (double)(w[1] >> 11) / 9007199254740992.0;
}

/* The whole problem of a recipe test: dims, nodes per axis, a kind, a precision. */
static void whole_problem(pyr_problem_t *p, int dims, const int64_t n[3], pyr_init_kind_t init, pyr_precision_t prec, uint64_t seed)
{
    make_problem(p, dims, n, prec, 1, init, seed);
}

/* The runtime's fill of part [origin, origin + m) of the whole problem's field, into a piece whose
 * box starts at `at` (so the piece's coordinates are not the whole grid's) and whose rows are padded,
 * over the piece in `split` boxes along axis a (the slowest: boxes of whole planes; another: boxes
 * of some of each plane's rows, which a runtime may fill otherwise); downloaded and compared with
 * pyr_field_init_part's bits. */
static void fill_one(const pyr_device_ops_t *ops, void *ctx, const pyr_problem_t *p, const int64_t origin[3], const int64_t m[3],
                     const int64_t at[3], int split, int a, const char *label)
{
    const size_t elem = pyr_precision_size(p->precision);
    pyr_field_t *ref = NULL, *got = NULL;
    CHECK_OK(pyr_field_alloc(p->dims, m, p->precision, &ref));
    CHECK_OK(pyr_field_alloc(p->dims, m, p->precision, &got));
    if (!ref || !got) return;
    CHECK_OK(pyr_field_init_part(ref, p, origin));
    pyr_piece_t piece;
    memset(&piece, 0, sizeof piece);
    for (int a = 0; a < 3; a++) piece.box.lo[a] = at[a], piece.box.hi[a] = at[a] + m[a];
    piece.pitch = m[0] + 3;
    piece.nfields = 1;
    const size_t bytes = (size_t)(piece.pitch * m[1] * m[2]) * elem;
    void *buf = NULL;
    CHECK_OK(ops->dev_alloc(ctx, bytes, &buf));
    if (!buf) return;
    piece.buf[0][0] = buf;
    /* garbage first: a node the fill leaves out shows */
    pyr_field_t *junk = NULL;
    CHECK_OK(pyr_field_alloc(p->dims, m, p->precision, &junk));
    memset(junk->data, 0xA5, (size_t)pyr_field_count(junk) * elem);
    pyr_host_region_t jr = {junk->data, piece.box}, gr = {got->data, piece.box};
    CHECK_OK(ops->upload(ctx, 0, &piece, 0, &jr, &piece.box));
    pyr_recipe_t r = {pyr_recipe_of_init(p->init), p->dims, {p->n[0], p->n[1], p->n[2]}, {0, 0, 0}, p->seed};
    for (int a = 0; a < 3; a++) r.origin[a] = origin[a] - at[a];
    for (int k = 0; k < split; k++) {
        pyr_box_t b = piece.box;
        b.lo[a] = at[a] + m[a] * k / split;
        b.hi[a] = at[a] + m[a] * (k + 1) / split;
        if (pyr_box_empty(&b)) continue;
        int64_t n[3];
        double *tab[3];
        for (int d = 0; d < 3; d++) n[d] = pyr_box_extent(&b, d);
        CHECK_OK(pyr_recipe_tables(&r, b.lo, n, tab));
        CHECK_OK(ops->fill(ctx, 0, &piece, 0, &r, (const double *const *)tab, &b));
        for (int d = 0; d < 3; d++) free(tab[d]);
    }
    CHECK_OK(ops->download(ctx, 0, &piece, 0, &gr, &piece.box));
    CHECK_OK(ops->wait(ctx, 0));
    const int64_t i = first_difference(ref, got);
    CHECK(i < 0, "%s: node %lld is %.17g, pyr_field_init_part's %.17g", label, (long long)i, i < 0 ? 0 : field_get(got, i),
          i < 0 ? 0 : field_get(ref, i));
    ops->dev_free(ctx, buf);
    pyr_field_destroy(&junk);
    pyr_field_destroy(&ref);
    pyr_field_destroy(&got);
}

static void fills(pyr_backend_kind_t backend)
{
    const pyr_device_ops_t *ops = pyr_device_get(backend);
    CHECK(ops && ops->fill, "the %s runtime has a fill op", backend == PYR_BACKEND_CUDA ? "CUDA" : "CPU");
    if (!ops || !ops->fill) return;
    /* awkward shapes: 2 nodes on an axis, odd and prime counts, a 1D row longer than a block */
    static const int64_t shapes[3][3][3] = {{{2, 1, 1}, {37, 1, 1}, {1031, 1, 1}},
                                            {{2, 5, 1}, {13, 7, 1}, {300, 3, 1}},
                                            {{2, 2, 2}, {9, 5, 6}, {33, 4, 17}}};
    int cases = 0;
    for (int prec = 0; prec < 2; prec++) {
        const pyr_precision_t precision = prec ? PYR_DOUBLE : PYR_FLOAT;
        pyr_options_t o;
        pyr_options_default(&o);
        o.backend = backend;
        void *ctx = NULL;
        CHECK_OK(ops->create(&o, precision, &ctx));
        if (!ctx) return;
        for (int dims = 1; dims <= 3; dims++)
            for (int s = 0; s < 3; s++)
                for (int k = 0; k < 4; k++) {
                    pyr_problem_t p;
                    whole_problem(&p, dims, shapes[dims - 1][s], kinds[k], precision, 0x5EEDull + (uint64_t)s);
                    char label[160];
                    /* the whole grid, in one box and in three */
                    const int64_t zero[3] = {0, 0, 0}, at[3] = {4, 1, 2};
                    snprintf(label, sizeof label, "%s %dD %s %lldx%lldx%lld whole", kind_name[kinds[k]], dims, pyr_precision_name(precision),
                             (long long)p.n[0], (long long)p.n[1], (long long)p.n[2]);
                    fill_one(ops, ctx, &p, zero, p.n, zero, 1, dims - 1, label);
                    fill_one(ops, ctx, &p, zero, p.n, at, 3, dims - 1, label);
                    if (dims >= 2) fill_one(ops, ctx, &p, zero, p.n, at, 2, dims - 2, label);
                    /* parts: the last node alone, a band from the middle, one short of the whole from node 1 */
                    for (int q = 0; q < 3; q++) {
                        int64_t origin[3] = {0, 0, 0}, m[3] = {1, 1, 1};
                        for (int d = 0; d < dims; d++) {
                            const int64_t n = p.n[d];
                            origin[d] = q == 0 ? n - 1 : q == 1 ? n / 3 : (n > 1 ? 1 : 0);
                            m[d] = q == 0 ? 1 : q == 1 ? (n - n / 3 + 1) / 2 : n - origin[d];
                            if (m[d] < 1) m[d] = 1;
                        }
                        snprintf(label, sizeof label, "%s %dD %s %lldx%lldx%lld part at (%lld,%lld,%lld) of %lldx%lldx%lld",
                                 kind_name[kinds[k]], dims, pyr_precision_name(precision), (long long)p.n[0], (long long)p.n[1],
                                 (long long)p.n[2], (long long)origin[0], (long long)origin[1], (long long)origin[2], (long long)m[0],
                                 (long long)m[1], (long long)m[2]);
                        fill_one(ops, ctx, &p, origin, m, at, 2, dims - 1, label);
                        cases++;
                    }
                }
        ops->destroy(ctx);
    }
    CHECK(cases == 2 * 3 * 3 * 4 * 3, "%d part cases", cases);
}

/* The formula itself, apart from the library's text, and the tables' factors against the kinds'
 * analytic values. */
static void formulas(void)
{
    pyr_problem_t p;
    const int64_t n[3] = {11, 6, 5};
    whole_problem(&p, 3, n, PYR_INIT_RANDOM, PYR_DOUBLE, 12345);
    pyr_field_t *f = NULL;
    CHECK_OK(pyr_field_create(&p, &f));
    if (!f) return;
    CHECK_OK(pyr_field_init(f, &p));
    for (int64_t i = 0; i < pyr_field_count(f); i += 7)
        CHECK(((double *)f->data)[i] == random_reference(12345, (uint64_t)i), "random node %lld: %.17g, splitmix64 gives %.17g", (long long)i,
              ((double *)f->data)[i], random_reference(12345, (uint64_t)i));
    pyr_field_destroy(&f);
    const pyr_recipe_t r = {PYR_RECIPE_GAUSS, 2, {21, 11, 1}, {0, 0, 0}, 0};
    double *tab[3];
    const int64_t lo[3] = {0, 0, 0}, m[3] = {21, 11, 1};
    CHECK_OK(pyr_recipe_tables(&r, lo, m, tab));
    CHECK(tab[0] && tab[1] && !tab[2], "tables for the grid's axes only");
    if (tab[0]) CHECK(tab[0][10] == 1.0 && fabs(tab[0][0] - exp(-25.0)) < 1e-15, "gauss: 1 at the centre, exp(-25) at the edge");
    for (int d = 0; d < 3; d++) free(tab[d]);
}

/* A field of the problem's initial values as `pyrgrid run` makes it (the core's table), marked. */
static pyr_field_t *recipe_field(const pyr_problem_t *p)
{
    const pyr_ranks_core_t *core = pyr_private_ranks();
    pyr_field_t *f = NULL;
    CHECK_OK(core->field_initial(p, 0, &f));
    CHECK(f && pyr_field_recipe(f, NULL), "a %s field is made as its recipe", kind_name[p->init]);
    return f;
}

/* The same run from a recipe field and from a host-made field: the results' bits, and the mark spent. */
static void same_run(const pyr_problem_t *p, const pyr_options_t *o, const char *label)
{
    pyr_field_t *a = recipe_field(p), *b = NULL, *rhs = NULL;
    CHECK_OK(pyr_field_create(p, &b));
    if (!a || !b) return;
    CHECK_OK(pyr_field_init(b, p));
    if (p->equation == PYR_EQ_POISSON) {
        CHECK_OK(pyr_field_create(p, &rhs));
        if (rhs) CHECK_OK(pyr_field_init_input(rhs, p, 1));
    }
    pyr_plan_t *plan = NULL;
    CHECK_OK(pyr_plan_create(p, o, &plan));
    pyr_run_info_t ra, rb;
    memset(&ra, 0, sizeof ra);
    memset(&rb, 0, sizeof rb);
    pyr_field_t *fa[2] = {a, rhs}, *fb[2] = {b, rhs};
    const int nf = p->equation == PYR_EQ_POISSON ? 2 : 1;
    if (plan) {
        CHECK_OK(pyr_execute_fields(plan, fa, nf, NULL, &ra));
        CHECK_OK(pyr_execute_fields(plan, fb, nf, NULL, &rb));
    }
    const int64_t i = first_difference(a, b);
    CHECK(i < 0, "%s: node %lld is %.17g from the recipe, %.17g from the host's field", label, (long long)i, i < 0 ? 0 : field_get(a, i),
          i < 0 ? 0 : field_get(b, i));
    CHECK(!pyr_field_recipe(a, NULL), "%s: the run spent the mark", label);
    CHECK(ra.steps == rb.steps, "%s: %lld steps from the recipe, %lld from the host's", label, (long long)ra.steps, (long long)rb.steps);
    /* in core, nothing of the recipe field is uploaded (a Poisson right-hand side is; parts whose halos
     * go through the host upload those alone) */
    pyr_plan_info_t info;
    const int64_t interior = (p->n[0] - 2) * (p->dims > 1 ? p->n[1] - 2 : 1) * (p->dims > 2 ? p->n[2] - 2 : 1);
    if (plan && pyr_plan_get_info(plan, &info) == PYR_OK && o->method == PYR_METHOD_NAIVE && p->equation == PYR_EQ_HEAT && p->steps > 0)
        CHECK(o->devices[0] ? ra.counts.uploaded + (uint64_t)interior <= rb.counts.uploaded : ra.counts.uploaded == 0 && rb.counts.uploaded > 0,
              "%s: %llu values uploaded from the recipe (the host's field: %llu)", label, (unsigned long long)ra.counts.uploaded,
              (unsigned long long)rb.counts.uploaded);
    /* streamed: the host's values made first, then uploaded in pieces as any */
    if (plan && pyr_plan_get_info(plan, &info) == PYR_OK && ((o->method == PYR_METHOD_PYRAMID && o->memory) || o->method == PYR_METHOD_TRIVIAL) &&
        p->steps > 0)
        CHECK((o->memory == 0 || info.tasks_per_pass > 1) && ra.counts.uploaded > 0 && ra.counts.uploaded == rb.counts.uploaded,
              "%s: %lld pieces a pass, %llu values uploaded from the "
              "recipe (the host's field: %llu)", label, (long long)info.tasks_per_pass, (unsigned long long)ra.counts.uploaded,
              (unsigned long long)rb.counts.uploaded);
    pyr_plan_destroy(&plan);
    pyr_field_destroy(&a);
    pyr_field_destroy(&b);
    pyr_field_destroy(&rhs);
}

/* A device budget under which the pyramid method streams the problem's grid in several pieces (the
 * smallest piece a runtime takes depends on its layout): the first of 1/8, 1/4, ... of the grid's
 * two layers that plans so. */
static uint64_t streaming_budget(const pyr_problem_t *p, const pyr_options_t *o)
{
    const uint64_t layers = 2 * (uint64_t)pyr_problem_nodes(p) * pyr_precision_size(p->precision);
    for (uint64_t m = layers / 8; m < 2 * layers; m *= 2) {
        pyr_options_t q = *o;
        q.memory = m;
        pyr_plan_t *plan = NULL;
        pyr_plan_info_t info;
        const int ok = pyr_plan_create(p, &q, &plan) == PYR_OK && pyr_plan_get_info(plan, &info) == PYR_OK && info.tasks_per_pass > 1;
        pyr_plan_destroy(&plan);
        pyr_clear_error();
        if (ok) return m;
    }
    /* the CPU streams any of these grids; a GPU's layout may not take so small a piece (its streamed
     * runs then run in core: the host's side of streaming is the CPU's check) */
    if (o->backend == PYR_BACKEND_CPU)
        CHECK(0, "no budget streams the %lld x %lld x %lld grid in pieces", (long long)p->n[0], (long long)p->n[1], (long long)p->n[2]);
    else
        printf("note: no budget streams the %lld x %lld x %lld grid in pieces on this runtime: run in core\n", (long long)p->n[0],
               (long long)p->n[1], (long long)p->n[2]);
    return 0;
}

static void runs(pyr_backend_kind_t backend)
{
    static const int64_t shapes[3][3] = {{3001, 1, 1}, {97, 83, 1}, {29, 23, 19}};
    int n = 0;
    for (int dims = 1; dims <= 3; dims++)
        for (int k = 1; k < 4; k++)
            for (int prec = 0; prec < 2; prec++) {
                pyr_problem_t p;
                make_problem(&p, dims, shapes[dims - 1], prec ? PYR_DOUBLE : PYR_FLOAT, 23, kinds[k], 77 + (uint64_t)k);
                for (int way = 0; way < 4; way++) {
                    pyr_options_t o;
                    pyr_options_default(&o);
                    o.backend = backend;
                    o.method = way == 1 ? PYR_METHOD_PYRAMID : way == 2 ? PYR_METHOD_TRIVIAL : PYR_METHOD_NAIVE;
                    if (way == 1) o.memory = streaming_budget(&p, &o);
                    if (way == 3) snprintf(o.devices, sizeof o.devices, "0,0");
                    static const char *ways[] = {"in core", "out of core (pyramid)", "streamed every step", "in core over two parts"};
                    char label[128];
                    snprintf(label, sizeof label, "heat %dD %s %s, %s, %s", dims, pyr_precision_name(p.precision), kind_name[p.init], ways[way],
                             backend == PYR_BACKEND_CUDA ? "cuda" : "cpu");
                    same_run(&p, &o, label);
                    n++;
                }
            }
    /* more parts, cut along every axis: each part's share of the interior comes back, the boundary
     * is the owner's */
    static const char *cuts[][2] = {{"0,0,0", "3x1x1"}, {"0,0,0,0", "2x2x1"}, {"0,0,0,0", "1x2x2"}, {"0,0,0", "1x1x3"}};
    for (int c = 0; c < 4; c++) {
        pyr_problem_t q;
        make_problem(&q, 3, shapes[2], c % 2 ? PYR_FLOAT : PYR_DOUBLE, 9, c % 2 ? PYR_INIT_GAUSS : PYR_INIT_RANDOM, 11);
        pyr_options_t oc;
        pyr_options_default(&oc);
        oc.backend = backend;
        oc.method = PYR_METHOD_NAIVE;
        snprintf(oc.devices, sizeof oc.devices, "%s", cuts[c][0]);
        snprintf(oc.partition, sizeof oc.partition, "%s", cuts[c][1]);
        char label[96];
        snprintf(label, sizeof label, "heat 3D %s, parts %s, %s", kind_name[q.init], cuts[c][1], backend == PYR_BACKEND_CUDA ? "cuda" : "cpu");
        same_run(&q, &oc, label);
    }
    /* no steps: the field handed back is the initial field */
    pyr_problem_t p;
    make_problem(&p, 2, shapes[1], PYR_DOUBLE, 0, PYR_INIT_GAUSS, 3);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = backend;
    o.method = PYR_METHOD_NAIVE;
    same_run(&p, &o, "heat 2D gauss, no steps");
    snprintf(o.devices, sizeof o.devices, "0,0");
    same_run(&p, &o, "heat 2D gauss, no steps, two parts");
    /* plan = refine: its passes run in ranges, each with a plan of its own, over a carry */
    make_problem(&p, 2, shapes[1], PYR_FLOAT, 40, PYR_INIT_RANDOM, 5);
    pyr_options_default(&o);
    o.backend = backend;
    o.plan_mode = PYR_PLAN_REFINE;
    same_run(&p, &o, "heat 2D random, plan = refine");
    /* Poisson: Jacobi in core and over two parts, multigrid (its own loop reads the host's field),
     * Chebyshev (it reads the layer before) in core and streamed */
    for (int m = 0; m < 5; m++) {
        pyr_problem_t q;
        const int64_t qn[3] = {33, 33, 1};
        make_poisson(&q, 2, qn, NULL, m % 2 ? PYR_FLOAT : PYR_DOUBLE, 40, 0, 20, PYR_RHS_SINE, PYR_INIT_RANDOM, 9);
        pyr_options_default(&o);
        o.backend = backend;
        o.method = m == 2 ? PYR_METHOD_MULTIGRID : m == 4 ? PYR_METHOD_PYRAMID : PYR_METHOD_NAIVE;
        if (m == 2) q.poisson.iteration = PYR_ITER_MULTIGRID;
        if (m >= 3) q.poisson.iteration = PYR_ITER_CHEBYSHEV;
        if (m == 4) o.memory = streaming_budget(&q, &o);
        if (m == 1) snprintf(o.devices, sizeof o.devices, "0,0");
        static const char *ways[] = {"Jacobi in core", "Jacobi over two parts", "multigrid", "Chebyshev in core", "Chebyshev streamed"};
        char label[96];
        snprintf(label, sizeof label, "poisson 2D random, %s, %s", ways[m], backend == PYR_BACKEND_CUDA ? "cuda" : "cpu");
        same_run(&q, &o, label);
    }
    CHECK(n == 3 * 3 * 2 * 4, "%d heat runs", n);
}

/* A run in ranges over a carry (as plan = refine runs its trials), in core: Chebyshev's carry keeps
 * the layer before as a host copy of the initial field, so the field is made on the host first. */
static void ranges(pyr_backend_kind_t backend)
{
    for (int m = 0; m < 2; m++) {
        pyr_problem_t p;
        const int64_t n[3] = {41, 37, 1};
        make_poisson(&p, 2, n, NULL, PYR_DOUBLE, 30, 0, 10, PYR_RHS_SINE, PYR_INIT_GAUSS, 2);
        if (m) p.poisson.iteration = PYR_ITER_CHEBYSHEV;
        pyr_options_t o;
        pyr_options_default(&o);
        o.backend = backend;
        o.method = PYR_METHOD_NAIVE;
        pyr_field_t *a = recipe_field(&p), *b = NULL, *rhs = NULL;
        CHECK_OK(pyr_field_create(&p, &b));
        CHECK_OK(pyr_field_create(&p, &rhs));
        if (!a || !b || !rhs) return;
        CHECK_OK(pyr_field_init(b, &p));
        CHECK_OK(pyr_field_init_input(rhs, &p, 1));
        pyr_plan_t *plan = NULL;
        CHECK_OK(pyr_plan_create(&p, &o, &plan));
        pyr_exec_carry_t *carry = NULL;
        CHECK_OK(pyr_exec_carry_create(&carry));
        pyr_field_t *fa[2] = {a, rhs}, *fb[2] = {b, rhs};
        pyr_run_info_t run;
        if (plan && carry) {
            CHECK_OK(pyr_exec_fields_range(plan, fa, 2, 0, 12, carry, NULL, &run));
            CHECK_OK(pyr_exec_fields_range(plan, fa, 2, 12, 30, carry, NULL, &run));
            CHECK_OK(pyr_execute_fields(plan, fb, 2, NULL, &run));
        }
        const int64_t i = first_difference(a, b);
        CHECK(i < 0, "poisson %s in two ranges: node %lld is %.17g from the recipe, %.17g from the host's field", m ? "Chebyshev" : "Jacobi",
              (long long)i, i < 0 ? 0 : field_get(a, i), i < 0 ? 0 : field_get(b, i));
        pyr_exec_carry_destroy(&carry);
        pyr_plan_destroy(&plan);
        pyr_field_destroy(&a);
        pyr_field_destroy(&b);
        pyr_field_destroy(&rhs);
    }
}

/* A reader before the run makes the values (pyr_field_materialize): the bits of pyr_field_init, the
 * mark gone, and a run afterwards from the host's values; the kinds the recipe does not take. */
static void reads(void)
{
    for (int k = 0; k < 4; k++) {
        pyr_problem_t p;
        const int64_t n[3] = {19, 7, 5};
        make_problem(&p, 3, n, PYR_FLOAT, 5, kinds[k], 4242);
        pyr_field_t *a = recipe_field(&p), *b = NULL;
        CHECK_OK(pyr_field_create(&p, &b));
        if (!a || !b) continue;
        CHECK_OK(pyr_field_init(b, &p));
        CHECK_OK(pyr_field_materialize(a));
        CHECK(!pyr_field_recipe(a, NULL), "%s: made on the host, no longer marked", kind_name[kinds[k]]);
        CHECK(first_difference(a, b) < 0, "%s: pyr_field_materialize gives pyr_field_init's bits", kind_name[kinds[k]]);
        CHECK_OK(pyr_field_materialize(a)); /* again: a field of values is left as it is */
        CHECK(first_difference(a, b) < 0, "%s: materialized twice, still the same", kind_name[kinds[k]]);
        pyr_field_destroy(&a);
        pyr_field_destroy(&b);
    }
    /* a part of a grid, made as that part of the whole */
    pyr_problem_t p;
    const int64_t n[3] = {40, 30, 1}, m[3] = {17, 9, 1};
    make_problem(&p, 2, n, PYR_DOUBLE, 5, PYR_INIT_GAUSS, 1);
    const pyr_recipe_t r = {PYR_RECIPE_GAUSS, 2, {40, 30, 1}, {20, 21, 0}, 1};
    pyr_field_t *a = NULL, *b = NULL;
    CHECK_OK(pyr_field_alloc_recipe(&r, PYR_DOUBLE, m, &a));
    CHECK_OK(pyr_field_alloc(2, m, PYR_DOUBLE, &b));
    if (a && b) {
        CHECK_OK(pyr_field_init_part(b, &p, r.origin));
        CHECK_OK(pyr_field_materialize(a));
        CHECK(first_difference(a, b) < 0, "a part's recipe made as that part of the whole");
    }
    pyr_field_destroy(&a);
    pyr_field_destroy(&b);
    const pyr_recipe_t out = {PYR_RECIPE_GAUSS, 2, {40, 30, 1}, {30, 21, 0}, 1};
    CHECK_FAILS(pyr_field_alloc_recipe(&out, PYR_DOUBLE, m, &a), PYR_ERR_INTERNAL, "outside the whole grid");
    /* zeros are not a recipe's business alone: pyr_field_is_zero still says so, the others' marks are not zeros */
    const pyr_ranks_core_t *core = pyr_private_ranks();
    make_problem(&p, 2, n, PYR_DOUBLE, 5, PYR_INIT_ZERO, 1);
    CHECK_OK(core->field_initial(&p, 0, &a));
    CHECK(a && pyr_field_is_zero(a), "initial.kind = zero: a field known zero");
    pyr_field_destroy(&a);
    make_problem(&p, 2, n, PYR_DOUBLE, 5, PYR_INIT_SINE, 1);
    CHECK_OK(core->field_initial(&p, 0, &a));
    CHECK(a && !pyr_field_is_zero(a) && !pyr_field_take_zero(a) && pyr_field_recipe(a, NULL), "a sine field is not known zero, and keeps its mark");
    pyr_field_destroy(&a);
    /* not made so: a file's values, another field than the first */
    p.init = PYR_INIT_FILE;
    snprintf(p.init_file, sizeof p.init_file, "none.npy");
    CHECK_OK(core->field_initial(&p, 0, &a));
    CHECK(a == NULL, "initial.kind = file: no recipe field");
    p.init = PYR_INIT_SINE;
    CHECK_OK(core->field_initial(&p, 1, &a));
    CHECK(a == NULL, "a field other than the first: no recipe field");
}

/* Whether the page at p is present (the page map's bit 63); -1 where the map cannot be read. */
static int page_present(const void *p)
{
    const long page = sysconf(_SC_PAGESIZE);
    const int fd = open("/proc/self/pagemap", O_RDONLY);
    if (fd < 0 || page <= 0) return -1;
    uint64_t e = 0;
    const ssize_t got = pread(fd, &e, sizeof e, (off_t)((uintptr_t)p / (uintptr_t)page * sizeof e));
    close(fd);
    return got == (ssize_t)sizeof e ? (int)(e >> 63) : -1;
}

/* The prefault of a field made on the device: its pages present afterwards (where the system takes
 * the advice), values written meanwhile kept, the rest still zero; and a run whose field is large
 * enough to be prefaulted, bit for bit the run from the host's field. */
static void prefault(void)
{
    const int64_t n[3] = {4096, 4200, 1}; /* 131 MB of doubles */
    pyr_field_t *f = NULL;
    CHECK_OK(pyr_field_alloc_zero(2, n, PYR_DOUBLE, &f));
    if (!f) return;
    double *d = f->data;
    const int64_t count = n[0] * n[1];
    pyr_prefault_t *pf = pyr_prefault_start(d, (size_t)count * sizeof *d);
    for (int64_t i = 0; i < count; i += 4099) d[i] = (double)i + 0.5; /* beside the threads */
    pyr_prefault_join(&pf);
    CHECK(pf == NULL, "joined and freed");
    int64_t bad = -1;
    for (int64_t i = 0; i < count && bad < 0; i++)
        if (d[i] != (i % 4099 ? 0.0 : (double)i + 0.5)) bad = i;
    CHECK(bad < 0, "value %lld is %g after the prefault", (long long)bad, bad < 0 ? 0 : d[bad]);
    pyr_field_destroy(&f);
    /* pages present: a fresh field prefaulted and not written */
    CHECK_OK(pyr_field_alloc_zero(2, n, PYR_DOUBLE, &f));
    if (!f) return;
    d = f->data;
    pf = pyr_prefault_start(d, (size_t)count * sizeof *d);
    pyr_prefault_join(&pf);
    const int present = page_present(d + 8192), last = page_present(d + count - 1);
    /* the system takes the advice: a page of its own asked so is present */
    int takes = 0;
#ifdef MADV_POPULATE_WRITE
    void *one = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    takes = one != MAP_FAILED && madvise(one, 4096, MADV_POPULATE_WRITE) == 0 && page_present(one) == 1;
    if (one != MAP_FAILED) munmap(one, 4096);
#endif
    printf("prefault: %s\n", present < 0 ? "page map unreadable" : !takes ? "the system refuses the advice" : "taken");
    if (present >= 0 && takes) CHECK(present == 1 && last == 1, "the prefaulted field's pages are present (%d, last %d)", present, last);
    pyr_field_destroy(&f);
    /* a run whose initial field is prefaulted as it is made on the device */
    pyr_problem_t p;
    make_problem(&p, 2, n, PYR_DOUBLE, 2, PYR_INIT_RANDOM, 8);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.method = PYR_METHOD_NAIVE;
    same_run(&p, &o, "heat 2D random 131 MB, prefaulted");
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "gpu")) {
        if (!pyr_backend_available(PYR_BACKEND_CUDA)) {
            printf("no usable GPU (or a library without CUDA): skipped\n");
            return 77;
        }
        fills(PYR_BACKEND_CUDA);
        runs(PYR_BACKEND_CUDA);
        ranges(PYR_BACKEND_CUDA);
        return check_report();
    }
    formulas();
    fills(PYR_BACKEND_CPU);
    runs(PYR_BACKEND_CPU);
    ranges(PYR_BACKEND_CPU);
    reads();
    prefault();
    return check_report();
}
