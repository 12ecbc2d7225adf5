/* Property test of Neumann and mixed faces of the Poisson scheme (issue 48):
 * random problems (1D/2D/3D, float and double, anisotropic spacings, every
 * face dirichlet or neumann with zero or a given flux, pure Neumann with
 * compatible data, f zero, a sine or random values, plain, damped and
 * Chebyshev sweeps, fixed sweep counts and tolerance stops at random check
 * intervals) under random plans (naive, trivial, pyramid in every
 * decomposition, method = auto under a budget,
 * several parts of the grid: devices = 0,0,...; heights, budgets, slots,
 * kernel variants) give the CPU naive method's field bit for bit, the same
 * sweep count and the same final change.  A face's nodes are unknowns there:
 * a plan that took them as fixed would leave them at their initial values.
 *
 *   test_poisson_neumann_property [cases] [seed] [backend]     (defaults: 80 1 cpu) */
#include <stdio.h>
#include <string.h>

#include "core/field.h"
#include "plan/plan.h"
#include "poisson_util.h"
#include "schemes/poisson.h"
#include "schemes/scheme.h"

static int stopped_early, pure, parts, streamed, cheb, face_moved;

/* The trapezoid weight of node i (0 .. n - 1) of an axis of spacing h. */
static double trap(int64_t i, int64_t n, double h) { return i == 0 || i == n - 1 ? 0.5 * h : h; }

/* Make f of a pure Neumann problem compatible: subtract the weighted mean of f plus the fluxes. */
static void make_compatible(const pyr_problem_t *p, pyr_field_t *f)
{
    double s = 0, vol = 1, g = 0;
    for (int a = 0; a < p->dims; a++) vol *= p->length[a];
    for (int a = 0; a < p->dims; a++) {
        double area = 1;
        for (int b = 0; b < p->dims; b++)
            if (b != a) area *= p->length[b];
        g += (p->poisson.flux[2 * a] + p->poisson.flux[2 * a + 1]) * area;
    }
    const int64_t nx = p->n[0], ny = p->n[1], nz = p->n[2];
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++) {
                double w = trap(x, nx, pyr_problem_h(p, 0));
                if (p->dims > 1) w *= trap(y, ny, pyr_problem_h(p, 1));
                if (p->dims > 2) w *= trap(z, nz, pyr_problem_h(p, 2));
                s += w * field_get(f, (z * ny + y) * nx + x);
            }
    const double shift = (s + g) / vol;
    for (int64_t i = 0; i < pyr_field_count(f); i++) {
        if (f->precision == PYR_DOUBLE) ((double *)f->data)[i] -= shift;
        else ((float *)f->data)[i] = (float)((double)((float *)f->data)[i] - shift);
    }
}

static int run_case(uint64_t seed, int c, pyr_backend_kind_t backend)
{
    rng_t r = {seed * 6151u + (uint64_t)c * 12289u};
    const int dims = rng_range(&r, 0, 7) == 0 ? 1 : (int)rng_range(&r, 2, 3);
    int64_t n[3] = {1, 1, 1};
    double len[3] = {1, 1, 1};
    for (int a = 0; a < dims; a++) {
        n[a] = rng_range(&r, 3, dims == 1 ? 200 : dims == 2 ? 50 : 16);
        len[a] = 0.5 + (double)rng_range(&r, 0, 100) / 100.0;
    }
    const pyr_precision_t prec = rng_range(&r, 0, 1) ? PYR_DOUBLE : PYR_FLOAT;
    int rhs_kind = (int)rng_range(&r, 0, 2); /* 0 zero, 1 sine, 2 random values given */
    pyr_problem_t p;
    make_poisson(&p, dims, n, len, prec, rng_range(&r, 1, 70), 0, rng_range(&r, 1, 25), PYR_RHS_ZERO,
                 rng_range(&r, 0, 1) ? PYR_INIT_RANDOM : PYR_INIT_ZERO, rng_next(&r));
    const int all = rng_range(&r, 0, 3) == 0;
    int any = 0;
    for (int k = 0; k < 2 * dims; k++)
        if (all || rng_range(&r, 0, 1)) {
            p.poisson.face[k] = PYR_FACE_NEUMANN;
            p.poisson.flux[k] = rng_range(&r, 0, 2) ? (double)(rng_range(&r, 0, 400) - 200) / 100.0 : 0.0;
            any = 1;
        }
    if (!any) p.poisson.face[2 * (int)rng_range(&r, 0, dims - 1) + (int)rng_range(&r, 0, 1)] = PYR_FACE_NEUMANN;
    const int is_pure = pyr_poisson_pure_neumann(&p);
    if (is_pure && rhs_kind == 1) rhs_kind = 2; /* the sine's sum is positive: balanced only by chance */
    p.poisson.rhs = rhs_kind == 1 ? PYR_RHS_SINE : PYR_RHS_ZERO;
    const int it = (int)rng_range(&r, 0, 2); /* 0 plain, 1 damped, 2 Chebyshev */
    if (it == 2) p.poisson.iteration = PYR_ITER_CHEBYSHEV;
    else if (it == 1 || is_pure) p.poisson.omega = 0.3 + 0.69 * (double)rng_range(&r, 0, 100) / 100.0;
    pyr_field_t *f = NULL;
    if (rhs_kind == 2 || (is_pure && rhs_kind == 0 && p.poisson.rhs == PYR_RHS_ZERO && rng_range(&r, 0, 1))) {
        rhs_kind = 2;
        CHECK_OK(pyr_field_alloc(p.dims, p.n, prec, &f)); /* before the problem is valid: f makes it so */
        if (!f) return 1;
        for (int64_t i = 0; i < pyr_field_count(f); i++) {
            double v = (double)(rng_next(&r) % 2001) / 100.0 - 10.0;
            if (prec == PYR_DOUBLE) ((double *)f->data)[i] = v;
            else ((float *)f->data)[i] = (float)v;
        }
    }
    if (is_pure && !f) /* f = 0 balances only zero fluxes */
        for (int k = 0; k < 6; k++) p.poisson.flux[k] = 0;
    if (is_pure && f) make_compatible(&p, f);
    if (f) { /* the caller's own f, as the Python module gives it (the library never reads the name) */
        p.poisson.rhs = PYR_RHS_FILE;
        snprintf(p.poisson.rhs_file, sizeof p.poisson.rhs_file, "<array>");
    }
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = backend;
    const int m = (int)rng_range(&r, 0, 6);
    int nparts = 0;
    o.method = m == 0 ? PYR_METHOD_NAIVE : m == 1 ? PYR_METHOD_TRIVIAL : m == 2 ? PYR_METHOD_AUTO : PYR_METHOD_PYRAMID;
    if (m == 6 && it != 2) { /* several parts (Chebyshev's sweeps are refused there) */
        nparts = (int)rng_range(&r, 2, 3);
        snprintf(o.devices, sizeof o.devices, "%s", nparts == 2 ? "0,0" : "0,0,0");
        o.method = rng_range(&r, 0, 1) ? PYR_METHOD_NAIVE : PYR_METHOD_AUTO;
    }
    if (nparts && f) { /* the parts make f from the problem: a sine, or zero with zero fluxes where every face is Neumann */
        pyr_field_destroy(&f);
        rhs_kind = is_pure ? 0 : 1;
        p.poisson.rhs = is_pure ? PYR_RHS_ZERO : PYR_RHS_SINE;
        if (is_pure)
            for (int k = 0; k < 6; k++) p.poisson.flux[k] = 0;
    }
    /* a tolerance that stops the run at some check */
    if (rng_range(&r, 0, 2) == 0) {
        pyr_problem_t q = p;
        q.steps = rng_range(&r, 1, p.steps);
        pyr_run_info_t qr;
        pyr_field_t *qu = poisson_reference(&q, f, &qr, NULL);
        pyr_field_destroy(&qu);
        if (qr.change > 0) p.poisson.tolerance = qr.change * (0.5 + (double)rng_range(&r, 0, 100) / 100.0);
    }

    if (o.method == PYR_METHOD_PYRAMID || o.method == PYR_METHOD_TRIVIAL) {
        if (dims == 1) o.decomposition = PYR_DECOMP_SEGMENTS;
        else if (rng_range(&r, 0, 3) == 0) o.decomposition = PYR_DECOMP_AUTO;
        else if (dims == 2) o.decomposition = rng_range(&r, 0, 1) ? PYR_DECOMP_STRIPS : PYR_DECOMP_BLOCKS;
        else o.decomposition = rng_range(&r, 0, 1) ? PYR_DECOMP_SLABS : PYR_DECOMP_BLOCKS;
    }
    if (o.method == PYR_METHOD_PYRAMID) o.height = rng_range(&r, 0, 3) == 0 ? 0 : rng_range(&r, 1, p.steps);
    o.slots = (int)rng_range(&r, 1, 3);
    o.threads = (int)rng_range(&r, 1, 2);
    if (backend == PYR_BACKEND_CPU) {
        static const char *const v[] = {"", "auto", "sweep", "wave", "wave:3,1,2"};
        snprintf(o.kernel, sizeof o.kernel, "%s", v[rng_range(&r, 0, 4)]);
    }
    const uint64_t grid = (uint64_t)pyr_problem_nodes(&p) * pyr_precision_size(prec);
    if (!nparts && o.method != PYR_METHOD_NAIVE) {
        uint64_t lo = smallest_budget(&p, o, 8 * grid + (1u << 20));
        o.memory = lo + (uint64_t)rng_range(&r, 0, (int64_t)(2 * grid));
    }
    char faces[64] = "";
    for (int k = 0; k < 2 * dims; k++) {
        char one[24];
        snprintf(one, sizeof one, "%s%c%c=%s", k ? "," : "", "xyz"[k / 2], k % 2 ? '+' : '-', p.poisson.face[k] == PYR_FACE_NEUMANN ? "N" : "D");
        strncat(faces, one, sizeof faces - strlen(faces) - 1);
        if (p.poisson.face[k] == PYR_FACE_NEUMANN && p.poisson.flux[k] != 0) {
            snprintf(one, sizeof one, "%g", p.poisson.flux[k]);
            strncat(faces, one, sizeof faces - strlen(faces) - 1);
        }
    }
    char label[400];
    snprintf(label, sizeof label,
             "case %d seed %llu: %dD %lldx%lldx%lld %s f=%s faces %s %s omega=%g iterations=%lld tolerance=%g check_every=%lld | %s %s "
             "height=%lld slots=%d memory=%llu kernel=%s devices=%s",
             c, (unsigned long long)seed, dims, (long long)n[0], (long long)n[1], (long long)n[2], pyr_precision_name(prec),
             rhs_kind == 0 ? "0" : rhs_kind == 1 ? "sine" : "random", faces, it == 2 ? "chebyshev" : "jacobi", p.poisson.omega,
             (long long)p.steps, p.poisson.tolerance, (long long)p.poisson.check_every, pyr_method_name(o.method),
             pyr_decomp_name(o.decomposition), (long long)o.height, o.slots, (unsigned long long)o.memory, o.kernel, o.devices);

    pyr_run_info_t ra, rb;
    pyr_status_t sa = PYR_OK, sb = PYR_OK;
    pyr_field_t *a = solve_poisson(&p, &o, f, &ra, &sa);
    if (sa != PYR_OK && nparts && strstr(pyr_last_error(), "too many parts")) { /* a grid too small to cut: said so */
        pyr_field_destroy(&f);
        return 0;
    }
    CHECK(sa == PYR_OK, "%s: run failed: %s", label, pyr_last_error());
    pyr_field_t *b = sa == PYR_OK ? poisson_reference(&p, f, &rb, &sb) : NULL;
    if (sa == PYR_OK) CHECK(sb == PYR_OK, "%s: the naive run failed: %s", label, pyr_last_error());
    int bad = sa != PYR_OK || sb != PYR_OK;
    if (!bad) {
        int64_t i = first_difference(a, b);
        CHECK(i < 0, "%s: differs from the naive method at node %lld (%.17g vs %.17g)", label, (long long)i, i >= 0 ? field_get(a, i) : 0.0,
              i >= 0 ? field_get(b, i) : 0.0);
        CHECK(ra.steps == rb.steps, "%s: %lld sweeps, the naive method %lld", label, (long long)ra.steps, (long long)rb.steps);
        CHECK(ra.change == rb.change && ra.converged == rb.converged, "%s: change %.17g (converged %d), the naive method %.17g (%d)", label,
              ra.change, ra.converged, rb.change, rb.converged);
        bad = i >= 0 || ra.steps != rb.steps || ra.change != rb.change;
        stopped_early += rb.converged && rb.steps < p.steps;
        /* the face's nodes moved from the initial field (the first Neumann face's first node along it) */
        pyr_field_t *u0 = NULL;
        if (pyr_field_create(&p, &u0) == PYR_OK && pyr_field_init(u0, &p) == PYR_OK) {
            for (int64_t k = 0; k < pyr_field_count(a); k++) {
                const int64_t x = k % n[0], y = (k / n[0]) % n[1], z = k / (n[0] * n[1]);
                const int64_t at[3] = {x, y, z};
                int on_face = 0, on_dirichlet = 0;
                for (int ax = 0; ax < dims; ax++)
                    for (int side = 0; side < 2; side++)
                        if (at[ax] == (side ? n[ax] - 1 : 0)) {
                            if (p.poisson.face[2 * ax + side] == PYR_FACE_NEUMANN) on_face = 1;
                            else on_dirichlet = 1;
                        }
                if (on_face && !on_dirichlet && field_get(a, k) != field_get(u0, k)) {
                    face_moved++;
                    break;
                }
            }
        }
        pyr_field_destroy(&u0);
    }
    pure += is_pure;
    parts += nparts > 0;
    streamed += o.method == PYR_METHOD_PYRAMID || o.method == PYR_METHOD_TRIVIAL;
    cheb += it == 2;
    pyr_field_destroy(&a);
    pyr_field_destroy(&b);
    pyr_field_destroy(&f);
    return bad;
}

int main(int argc, char **argv)
{
    int cases = argc > 1 ? atoi(argv[1]) : 80;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    pyr_backend_kind_t backend = argc > 3 && !strcmp(argv[3], "cuda") ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU;
    if (backend == PYR_BACKEND_CUDA && pyr_gpu_count() == 0) {
        printf("no usable GPU: skipped\n");
        return 77;
    }
    int failed = 0;
    for (int c = 0; c < cases && failed < 5; c++) failed += run_case(seed, c, backend);
    printf("%d of %d random Neumann / mixed problems on the %s backend bit-identical to the naive method (seed %llu): %d pure Neumann, "
           "%d Chebyshev, %d streamed, %d over parts, %d stopped at a check and %d moved a face's node\n",
           cases - failed, cases, backend == PYR_BACKEND_CUDA ? "cuda" : "cpu", (unsigned long long)seed, pure, cheb, streamed, parts,
           stopped_early, face_moved);
    CHECK(failed > 0 || cases < 30 ||
              (pure >= cases / 10 && cheb >= cases / 6 && streamed >= cases / 4 && parts >= cases / 20 && face_moved >= cases / 2),
          "too few cases exercised pure Neumann (%d), Chebyshev (%d), streamed plans (%d), parts (%d) or moved a face (%d) to mean much",
          pure, cheb, streamed, parts, face_moved);
    return check_report();
}
