/* Physics and behaviour of the naive method on the CPU: eigenmode decay at the
 * exact discrete rate, second-order convergence to the continuous solution,
 * symmetry, fixed boundary, thread-count independence. */
#include <math.h>
#include <stdio.h>

#include "core/field.h"
#include "problem/field_init.h"
#include "heat_util.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static pyr_options_t naive_cpu(int threads)
{
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.method = PYR_METHOD_NAIVE;
    o.threads = threads;
    return o;
}

/* max |a - b| / max |b| */
static double rel_error(const pyr_field_t *a, const pyr_field_t *b)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < pyr_field_count(a); i++) {
        double d = fabs(field_get(a, i) - field_get(b, i)), v = fabs(field_get(b, i));
        if (d > num) num = d;
        if (v > den) den = v;
    }
    return den > 0 ? num / den : num;
}

static void test_eigenmode(void)
{
    static const int64_t sizes[3][3] = {{41, 1, 1}, {65, 49, 1}, {21, 17, 25}};
    for (int dims = 1; dims <= 3; dims++)
        for (int pr = 0; pr < 2; pr++) {
            pyr_precision_t prec = pr ? PYR_DOUBLE : PYR_FLOAT;
            pyr_problem_t p;
            make_problem(&p, dims, sizes[dims - 1], prec, 150, PYR_INIT_SINE, 1);
            p.length[0] = 2.0; /* unequal lengths and spacings exercise r_d per axis */
            p.heat.dt *= 0.9;
            pyr_options_t o = naive_cpu(0);
            pyr_status_t st;
            pyr_field_t *u = run_problem(&p, &o, NULL, NULL, &st);
            CHECK(u != NULL, "eigenmode %dD run: %s", dims, pyr_last_error());
            if (!u) continue;
            pyr_field_t *ex = NULL;
            CHECK_OK(pyr_field_create(&p, &ex));
            CHECK_OK(pyr_field_sine_discrete(ex, &p, p.steps));
            double err = rel_error(u, ex), tol = prec == PYR_DOUBLE ? 1e-12 : 1e-5;
            /* the mode must really decay, or the check proves nothing */
            double amp0 = 1.0, amp = 0;
            for (int64_t i = 0; i < pyr_field_count(ex); i++)
                if (fabs(field_get(ex, i)) > amp) amp = fabs(field_get(ex, i));
            CHECK(amp < 0.95 * amp0, "%dD: the mode should decay noticeably (amplitude %g)", dims, amp);
            CHECK(err <= tol, "%dD %s: eigenmode error %.3g > %.1g", dims, pyr_precision_name(prec), err, tol);
            printf("eigenmode %dD %-6s: amplitude %.6f after %lld steps, relative error %.3g\n", dims, pyr_precision_name(prec),
                   amp, (long long)p.steps, err);
            pyr_field_destroy(&u);
            pyr_field_destroy(&ex);
        }
}

/* Error against the continuous solution at a fixed time t for a grid of n
 * nodes per axis, dt = c h^2. */
static double continuous_error(int dims, int64_t n, double t)
{
    pyr_problem_t p;
    int64_t nn[3] = {n, n, n};
    make_problem(&p, dims, nn, PYR_DOUBLE, 0, PYR_INIT_SINE, 1);
    double h = 1.0 / (double)(n - 1);
    p.heat.dt = 0.2 * h * h / dims;
    p.steps = (int64_t)llround(t / p.heat.dt);
    p.heat.dt = t / (double)p.steps;
    pyr_options_t o = naive_cpu(0);
    pyr_field_t *u = run_problem(&p, &o, NULL, NULL, NULL);
    pyr_field_t *ex = NULL;
    if (!u || pyr_field_create(&p, &ex) != PYR_OK || pyr_field_sine_continuous(ex, &p, p.steps) != PYR_OK) {
        pyr_field_destroy(&u);
        pyr_field_destroy(&ex);
        return NAN;
    }
    double e = rel_error(u, ex);
    pyr_field_destroy(&u);
    pyr_field_destroy(&ex);
    return e;
}

static void test_convergence(void)
{
    for (int dims = 1; dims <= 2; dims++) {
        int64_t n0 = dims == 1 ? 33 : 17;
        double e1 = continuous_error(dims, n0, 0.02), e2 = continuous_error(dims, 2 * n0 - 1, 0.02),
               e3 = continuous_error(dims, 4 * n0 - 3, 0.02);
        double r1 = e1 / e2, r2 = e2 / e3;
        printf("convergence %dD: errors %.3g %.3g %.3g, ratios %.3f %.3f (second order: 4)\n", dims, e1, e2, e3, r1, r2);
        CHECK(r1 > 3.6 && r1 < 4.4, "%dD: halving h cut the error by %.3f, not about 4", dims, r1);
        CHECK(r2 > 3.6 && r2 < 4.4, "%dD: halving h again cut the error by %.3f, not about 4", dims, r2);
    }
}

/* Fill with random values, then make the field symmetric under reflection of
 * every axis (and transposition when square). */
static void symmetrise(pyr_field_t *f)
{
    int64_t nx = f->n[0], ny = f->n[1], nz = f->n[2];
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++) {
                int64_t xs = x < nx - 1 - x ? x : nx - 1 - x, ys = y < ny - 1 - y ? y : ny - 1 - y,
                        zs = z < nz - 1 - z ? z : nz - 1 - z;
                if (nx == ny && f->dims >= 2 && ys < xs) {
                    int64_t t = xs;
                    xs = ys;
                    ys = t;
                }
                int64_t src = (zs * ny + ys) * nx + xs, dst = (z * ny + y) * nx + x;
                if (f->precision == PYR_DOUBLE) ((double *)f->data)[dst] = ((double *)f->data)[src];
                else ((float *)f->data)[dst] = ((float *)f->data)[src];
            }
}

static void test_symmetry_and_boundary(void)
{
    static const int64_t sizes[3][3] = {{101, 1, 1}, {61, 61, 1}, {19, 19, 23}};
    for (int dims = 1; dims <= 3; dims++)
        for (int pr = 0; pr < 2; pr++) {
            pyr_problem_t p;
            make_problem(&p, dims, sizes[dims - 1], pr ? PYR_DOUBLE : PYR_FLOAT, 37, PYR_INIT_RANDOM, 7);
            pyr_field_t *f = NULL, *f0 = NULL;
            CHECK_OK(pyr_field_create(&p, &f));
            CHECK_OK(pyr_field_create(&p, &f0));
            CHECK_OK(pyr_field_init(f, &p));
            symmetrise(f);
            memcpy(f0->data, f->data, (size_t)pyr_field_count(f) * pyr_precision_size(p.precision));
            pyr_options_t o = naive_cpu(0);
            pyr_plan_t *plan = NULL;
            CHECK_OK(pyr_plan_create(&p, &o, &plan));
            CHECK_OK(pyr_execute(plan, f, NULL, NULL));
            pyr_plan_destroy(&plan);
            pyr_field_t *g = NULL;
            CHECK_OK(pyr_field_create(&p, &g));
            memcpy(g->data, f->data, (size_t)pyr_field_count(f) * pyr_precision_size(p.precision));
            symmetrise(g);
            CHECK(first_difference(f, g) < 0, "%dD %s: a symmetric field lost its symmetry", dims, pyr_precision_name(p.precision));
            /* boundary nodes keep their initial values, bit for bit; the interior changed */
            int64_t nx = p.n[0], ny = p.n[1], nz = p.n[2], changed = 0, bad = 0;
            size_t e = pyr_precision_size(p.precision);
            for (int64_t z = 0; z < nz; z++)
                for (int64_t y = 0; y < ny; y++)
                    for (int64_t x = 0; x < nx; x++) {
                        int64_t i = (z * ny + y) * nx + x;
                        int b = x == 0 || x == nx - 1 || (dims > 1 && (y == 0 || y == ny - 1)) || (dims > 2 && (z == 0 || z == nz - 1));
                        int same = !memcmp((char *)f->data + i * (int64_t)e, (char *)f0->data + i * (int64_t)e, e);
                        if (b && !same) bad++;
                        if (!b && !same) changed++;
                    }
            CHECK(bad == 0, "%dD: %lld boundary nodes changed", dims, (long long)bad);
            CHECK(changed > 0, "%dD: the interior did not change", dims);
            pyr_field_destroy(&f);
            pyr_field_destroy(&f0);
            pyr_field_destroy(&g);
        }
}

static void test_threads(void)
{
    static const int64_t sizes[3][3] = {{100003, 1, 1}, {301, 257, 1}, {41, 37, 43}};
    for (int dims = 1; dims <= 3; dims++)
        for (int m = 0; m < 2; m++) {
            pyr_problem_t p;
            make_problem(&p, dims, sizes[dims - 1], PYR_DOUBLE, 23, PYR_INIT_RANDOM, 3);
            pyr_options_t o1 = naive_cpu(1), o3 = naive_cpu(3);
            if (m) {
                o1.method = o3.method = PYR_METHOD_PYRAMID;
                o1.height = o3.height = 5;
                o1.memory = o3.memory = 1024 * 1024;
            }
            pyr_field_t *a = run_problem(&p, &o1, NULL, NULL, NULL), *b = run_problem(&p, &o3, NULL, NULL, NULL);
            CHECK(a && b, "%dD thread runs failed: %s", dims, pyr_last_error());
            if (a && b) CHECK(first_difference(a, b) < 0, "%dD %s: 1 thread and 3 threads differ", dims, m ? "pyramid" : "naive");
            pyr_field_destroy(&a);
            pyr_field_destroy(&b);
        }
}

/* The built-in initial fields, whole and in parts at any origin, against the
 * per-node formulas bit for bit (the library builds them from per-axis factors
 * and a tolerance would hide a part made at the wrong origin). */
static void test_builtin_fields(void)
{
    const int64_t shapes[][3] = {{3, 1, 1}, {97, 1, 1}, {5, 3, 1}, {131, 77, 1}, {3, 3, 3}, {23, 19, 17}};
    int bad = 0, checked = 0;
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
        for (int kind = 0; kind < 2; kind++)
            for (int prec = 0; prec < 2; prec++) {
                const int dims = shapes[k][2] > 1 ? 3 : shapes[k][1] > 1 ? 2 : 1;
                pyr_problem_t p;
                make_problem(&p, dims, shapes[k], prec ? PYR_DOUBLE : PYR_FLOAT, 1, kind ? PYR_INIT_GAUSS : PYR_INIT_SINE, 1);
                pyr_field_t *f = NULL, *part = NULL;
                CHECK_OK(pyr_field_create(&p, &f));
                if (!f) continue;
                CHECK_OK(pyr_field_init(f, &p));
                /* a part: the upper half along every axis */
                int64_t origin[3], pn[3];
                for (int d = 0; d < 3; d++) origin[d] = p.n[d] / 2, pn[d] = p.n[d] - origin[d];
                CHECK_OK(pyr_field_alloc(dims, pn, p.precision, &part));
                if (part) CHECK_OK(pyr_field_init_part(part, &p, origin));
                for (int64_t z = 0; z < p.n[2]; z++)
                    for (int64_t y = 0; y < p.n[1]; y++)
                        for (int64_t x = 0; x < p.n[0]; x++) {
                            const int64_t idx[3] = {x, y, z};
                            double v = 0;
                            int boundary = 0;
                            for (int d = 0; d < dims; d++) boundary |= idx[d] == 0 || idx[d] == p.n[d] - 1;
                            if (!kind && !boundary) {
                                v = 1.0;
                                for (int d = 0; d < dims; d++) v *= sin(M_PI * (double)idx[d] / (double)(p.n[d] - 1));
                            } else if (kind) {
                                /* exp(-|x - c|^2 / 0.01) as the product of the axes' factors */
                                v = 1.0;
                                for (int d = 0; d < dims; d++) {
                                    double u = ((double)idx[d] / (double)(p.n[d] - 1) - 0.5) / 0.1;
                                    v *= exp(-(u * u));
                                }
                            }
                            const double want = prec ? v : (double)(float)v;
                            const int64_t i = (z * p.n[1] + y) * p.n[0] + x;
                            bad += memcmp(&(double){field_get(f, i)}, &want, sizeof want) != 0;
                            checked++;
                            if (part && x >= origin[0] && y >= origin[1] && z >= origin[2]) {
                                const int64_t j = ((z - origin[2]) * pn[1] + (y - origin[1])) * pn[0] + (x - origin[0]);
                                bad += memcmp(&(double){field_get(part, j)}, &want, sizeof want) != 0;
                            }
                        }
                pyr_field_destroy(&f);
                pyr_field_destroy(&part);
            }
    CHECK(bad == 0, "built-in initial fields: %d of %d values differ from the per-node formulas", bad, checked);
}

/* A large grid's host memory is advised as transparent huge pages (Linux):
 * the mapping holding it carries the "hg" VmFlag.  (The advice was once
 * compiled out without a word, and a 96 GB grid faulted in 25 million 4 KiB
 * pages and took seconds more to free.)  Whether the kernel then finds huge
 * pages is up to it; the advice is what the library owes. */
static void test_huge_page_advice(void)
{
    FILE *maps = fopen("/proc/self/smaps", "r");
    if (!maps) {
        printf("test_huge_page_advice: no /proc/self/smaps here, not checked\n");
        return;
    }
    const int64_t n[3] = {256, 256, 257}; /* a little over 64 MiB of float */
    pyr_problem_t p;
    make_problem(&p, 3, n, PYR_FLOAT, 1, PYR_INIT_SINE, 1);
    pyr_field_t *f = NULL;
    CHECK_OK(pyr_field_create(&p, &f));
    if (!f) {
        fclose(maps);
        return;
    }
    const uintptr_t at = (uintptr_t)f->data;
    char line[512];
    int inside = 0, found = 0, advised = 0;
    while (fgets(line, sizeof line, maps)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            inside = at >= lo && at < hi;
            found |= inside;
        } else if (inside && strncmp(line, "VmFlags:", 8) == 0) {
            advised = strstr(line, " hg") != NULL;
        }
    }
    fclose(maps);
    CHECK(found, "the field's memory %p is in no mapping of /proc/self/smaps", f->data);
    CHECK(advised, "the %lld-byte field's mapping is not advised MADV_HUGEPAGE (no \"hg\" in its VmFlags)",
          (long long)(pyr_field_count(f) * 4));
    pyr_field_destroy(&f);
}

int main(void)
{
    test_huge_page_advice();
    test_builtin_fields();
    test_eigenmode();
    test_convergence();
    test_symmetry_and_boundary();
    test_threads();
    return check_report();
}
