/* Bad input gets a clear error: the status code, and a message naming the
 * value, the limit and what would work. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "heat_util.h"
#include "problem/config.h"
#include "io/npy.h"

static void base(pyr_problem_t *p)
{
    int64_t n[3] = {33, 33, 1};
    make_problem(p, 2, n, PYR_DOUBLE, 10, PYR_INIT_SINE, 1);
}

static void test_problem(void)
{
    pyr_problem_t p;
    base(&p);
    CHECK_OK(pyr_problem_validate(&p));
    base(&p), p.dims = 4;
    CHECK_FAILS(pyr_problem_validate(&p), PYR_ERR_CONFIG, "use dims = 1, 2 or 3");
    base(&p), p.n[1] = 2;
    CHECK_FAILS(pyr_problem_validate(&p), PYR_ERR_SIZE, "ny >= 3");
    base(&p), p.n[2] = 5;
    CHECK_FAILS(pyr_problem_validate(&p), PYR_ERR_SIZE, "nz = 5 but dims = 2");
    base(&p), p.heat.alpha = -1;
    CHECK_FAILS(pyr_problem_validate(&p), PYR_ERR_CONFIG, "alpha = -1");
    base(&p), p.heat.dt = NAN;
    CHECK_FAILS(pyr_problem_validate(&p), PYR_ERR_CONFIG, "dt = nan");
    base(&p), p.heat.dt = -1e-3;
    CHECK_FAILS(pyr_problem_validate(&p), PYR_ERR_CONFIG, "positive");
    base(&p), p.length[0] = 0;
    CHECK_FAILS(pyr_problem_validate(&p), PYR_ERR_CONFIG, "lx = 0");
    base(&p), p.steps = -5;
    CHECK_FAILS(pyr_problem_validate(&p), PYR_ERR_CONFIG, "steps = -5");
    /* the stability limit: sum r_d <= 1/2, with the dt that would work */
    base(&p);
    double h = 1.0 / 32, dt_max = 0.5 / (2 / (h * h));
    p.heat.dt = dt_max * 1.01;
    CHECK_FAILS(pyr_problem_validate(&p), PYR_ERR_UNSTABLE, "use dt <=");
    char want[64];
    snprintf(want, sizeof want, "%.6g", dt_max);
    CHECK(strstr(pyr_last_error(), want) != NULL, "message '%s' should name dt <= %s", pyr_last_error(), want);
    p.heat.dt = dt_max;
    CHECK_OK(pyr_problem_validate(&p));
    /* issue 18: alpha^2 or 1/h^2 overflowing said "use dt <= 0" */
    base(&p), p.heat.alpha = 1e200;
    CHECK_FAILS(pyr_problem_validate(&p), PYR_ERR_UNSTABLE, "overflows a double (alpha = 1e+200");
    CHECK(strstr(pyr_last_error(), "dt <= 0") == NULL, "message '%s' still says dt <= 0", pyr_last_error());
    base(&p), p.length[0] = p.length[1] = 1e-160, p.heat.dt = 1e-300;
    CHECK_FAILS(pyr_problem_validate(&p), PYR_ERR_UNSTABLE, "use a smaller alpha, or longer axes");
    /* addressable memory */
    base(&p), p.dims = 3, p.n[0] = p.n[1] = p.n[2] = 4000000000ll;
    CHECK_FAILS(pyr_problem_validate(&p), PYR_ERR_SIZE, "addressable memory");
}

static void test_plans(void)
{
    pyr_problem_t p;
    int64_t n[3] = {1000, 700, 1};
    make_problem(&p, 2, n, PYR_DOUBLE, 50, PYR_INIT_SINE, 1);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.method = PYR_METHOD_PYRAMID;
    o.decomposition = PYR_DECOMP_STRIPS;
    o.height = 8;
    o.memory = 100000; /* < 17 rows * 1000 * 8 B * 2 layers */
    pyr_plan_t *plan = NULL;
    CHECK_FAILS(pyr_plan_create(&p, &o, &plan), PYR_ERR_BUDGET, "use memory >=");
    CHECK(strstr(pyr_last_error(), "height 1 needs") != NULL, "message should say what height 1 needs: %s", pyr_last_error());
    CHECK(plan == NULL, "failed plan must be NULL");
    /* the smallest budget named in the message works */
    /* 17 rows of 1000 doubles in 2 layers, plus the two resident x-faces of 700 nodes */
    o.memory = 2ull * 17 * 1000 * 8 + 2 * 700 * 8;
    CHECK_OK(pyr_plan_create(&p, &o, &plan));
    pyr_plan_info_t info;
    if (plan) {
        pyr_plan_get_info(plan, &info);
        CHECK(info.result_extent[1] == 1, "barely fitting budget gives 1-row results, got %lld", (long long)info.result_extent[1]);
    }
    pyr_plan_destroy(&plan);
    o.memory = 2ull * 17 * 1000 * 8 + 2 * 700 * 8 - 1;
    CHECK_FAILS(pyr_plan_create(&p, &o, &plan), PYR_ERR_BUDGET, "needs 276.6 KiB; use memory >= 276.6 KiB");
    pyr_clear_error();
    /* a budget above the grid gives one task per pass */
    o.memory = 1ull << 30;
    CHECK_OK(pyr_plan_create(&p, &o, &plan));
    if (plan) {
        pyr_plan_get_info(plan, &info);
        CHECK(info.tasks_per_pass == 1, "budget above the grid: %lld tasks, expected 1", (long long)info.tasks_per_pass);
    }
    pyr_plan_destroy(&plan);
    /* naive that does not fit */
    o.method = PYR_METHOD_NAIVE;
    o.memory = 1 << 20;
    CHECK_FAILS(pyr_plan_create(&p, &o, &plan), PYR_ERR_BUDGET, "method = pyramid");
    /* auto picks pyramid when naive does not fit */
    o.method = PYR_METHOD_AUTO;
    o.height = 0;
    CHECK_OK(pyr_plan_create(&p, &o, &plan));
    if (plan) {
        pyr_plan_get_info(plan, &info);
        CHECK(info.method == PYR_METHOD_PYRAMID, "auto under a small budget should pick pyramid, got %s", pyr_method_name(info.method));
        CHECK(info.device_bytes <= o.memory, "plan exceeds budget");
    }
    pyr_plan_destroy(&plan);
    /* wrong decomposition for the dimension; piece too small for the height */
    o.method = PYR_METHOD_PYRAMID;
    o.decomposition = PYR_DECOMP_SLABS;
    CHECK_FAILS(pyr_plan_create(&p, &o, &plan), PYR_ERR_CONFIG, "strips or blocks");
    o.decomposition = PYR_DECOMP_STRIPS;
    o.height = 10;
    o.piece = 20;
    CHECK_FAILS(pyr_plan_create(&p, &o, &plan), PYR_ERR_BUDGET, "2*height + 1 = 21");
    /* more pieces in flight than the backend keeps */
    o.piece = 0;
    o.height = 4;
    o.slots = 9;
    CHECK_FAILS(pyr_plan_create(&p, &o, &plan), PYR_ERR_CONFIG, "keeps 1 to 3 pieces in flight");
    o.slots = 0;
    /* skewed pieces: one plane per piece at the least; 2D and 3D grids only (Chebyshev's sweeps, which read u a sweep back,
     * plan: their pieces carry both layers) */
    o.decomposition = PYR_DECOMP_SKEWED;
    o.memory = 1024;
    CHECK_FAILS(pyr_plan_create(&p, &o, &plan), PYR_ERR_BUDGET, "one plane per piece");
    o.memory = 1u << 20;
    pyr_problem_t q = p;
    q.equation = PYR_EQ_POISSON;
    q.steps = 10;
    pyr_plan_info_t jacobi = {0}, cheb = {0};
    CHECK_OK(pyr_plan_create(&q, &o, &plan));
    if (plan) pyr_plan_get_info(plan, &jacobi);
    pyr_plan_destroy(&plan);
    q.poisson.iteration = PYR_ITER_CHEBYSHEV;
    CHECK_OK(pyr_plan_create(&q, &o, &plan));
    if (plan) pyr_plan_get_info(plan, &cheb);
    pyr_plan_destroy(&plan);
    CHECK(cheb.decomposition == PYR_DECOMP_SKEWED && cheb.counts.downloaded == 2 * jacobi.counts.downloaded,
          "a skewed Chebyshev plan brings both layers of u down: %s, %llu values (Jacobi's %llu)", pyr_decomp_name(cheb.decomposition),
          (unsigned long long)cheb.counts.downloaded, (unsigned long long)jacobi.counts.downloaded);
    q.dims = 1;
    q.n[1] = 1;
    CHECK_FAILS(pyr_plan_create(&q, &o, &plan), PYR_ERR_CONFIG, "1D grid");
    o.decomposition = PYR_DECOMP_STRIPS;
#ifndef PYR_HAVE_CUDA
    o.piece = 0;
    o.backend = PYR_BACKEND_CUDA;
    CHECK_FAILS(pyr_plan_create(&p, &o, &plan), PYR_ERR_NODEVICE, "backend = cpu");
#endif
}

static void test_init_file(void)
{
    char dir[] = "/tmp/pyr_err_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char path[256];
    snprintf(path, sizeof path, "%s/init.npy", dir);
    pyr_problem_t p;
    base(&p);
    p.init = PYR_INIT_FILE;
    snprintf(p.init_file, sizeof p.init_file, "%s", path);
    pyr_field_t *f = NULL;
    CHECK_OK(pyr_field_create(&p, &f));
    CHECK_FAILS(pyr_field_init(f, &p), PYR_ERR_IO, "initial.file");
    double data[33 * 34];
    for (int i = 0; i < 33 * 34; i++) data[i] = i;
    int64_t wrong[2] = {34, 33}, right[2] = {33, 33};
    CHECK_OK(pyr_npy_write(path, 2, wrong, PYR_DOUBLE, data));
    CHECK_FAILS(pyr_field_init(f, &p), PYR_ERR_FORMAT, "(33, 33)");
    CHECK_OK(pyr_npy_write(path, 2, right, PYR_FLOAT, data));
    CHECK_FAILS(pyr_field_init(f, &p), PYR_ERR_FORMAT, "float64");
    CHECK_OK(pyr_npy_write(path, 2, right, PYR_DOUBLE, data));
    CHECK_OK(pyr_field_init(f, &p));
    CHECK(((double *)f->data)[100] == 100.0, "init file values");
    /* issue 18: non-finite initial data were accepted silently; the first bad index is named */
    data[5 * 33 + 7] = NAN;
    data[20 * 33 + 1] = INFINITY;
    CHECK_OK(pyr_npy_write(path, 2, right, PYR_DOUBLE, data));
    CHECK_FAILS(pyr_field_init(f, &p), PYR_ERR_FORMAT, "holds NaN at index [5, 7]");
    data[5 * 33 + 7] = 0;
    CHECK_OK(pyr_npy_write(path, 2, right, PYR_DOUBLE, data));
    CHECK_FAILS(pyr_field_init(f, &p), PYR_ERR_FORMAT, "holds +inf at index [20, 1]");
    pyr_field_destroy(&f);
    p.precision = PYR_FLOAT;
    CHECK_OK(pyr_field_create(&p, &f));
    float fd[33 * 33];
    for (int i = 0; i < 33 * 33; i++) fd[i] = (float)i;
    fd[33 * 33 - 1] = -INFINITY;
    CHECK_OK(pyr_npy_write(path, 2, right, PYR_FLOAT, fd));
    CHECK_FAILS(pyr_field_init(f, &p), PYR_ERR_FORMAT, "holds -inf at index [32, 32]");
    pyr_field_destroy(&f);
    unlink(path);
    rmdir(dir);
}

static void test_config(void)
{
    char path[] = "/tmp/pyr_cfg_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    FILE *fp = fdopen(fd, "w");
    fprintf(fp, "[grid]\ndims = 2\nnx = 65\nny = 65\n[scheme]\nsteps = 10\ndt = 1e-5\n[run]\nmemory = 1MiB\n");
    fclose(fp);
    pyr_config_t c;
    pyr_config_default(&c);
    CHECK_OK(pyr_config_load(&c, path));
    CHECK(c.options.memory == 1048576, "memory = 1MiB parsed as %llu", (unsigned long long)c.options.memory);
    CHECK_OK(pyr_config_set(&c, "scheme.steps=200"));
    CHECK(c.problem.steps == 200, "--set scheme.steps");
    CHECK_FAILS(pyr_config_set(&c, "grid.nxx=5"), PYR_ERR_CONFIG, "did you mean 'nx'");
    CHECK_FAILS(pyr_config_set(&c, "grd.nx=5"), PYR_ERR_CONFIG, "did you mean [grid]");
    CHECK_FAILS(pyr_config_set(&c, "scheme.precision=doubel"), PYR_ERR_CONFIG, "did you mean 'double'");
    CHECK_FAILS(pyr_config_set(&c, "scheme.steps=abc"), PYR_ERR_CONFIG, "not an integer");
    CHECK_FAILS(pyr_config_set(&c, "scheme.dt=nan"), PYR_ERR_CONFIG, "NaN");
    CHECK_FAILS(pyr_config_set(&c, "run.memory=12XB"), PYR_ERR_CONFIG, "unknown unit");
    CHECK_FAILS(pyr_config_set(&c, "run.slots=0"), PYR_ERR_CONFIG, "slots");
    CHECK_OK(pyr_config_set(&c, "run.slots=auto"));
    CHECK_FAILS(pyr_config_set(&c, "steps=3"), PYR_ERR_CONFIG, "section.key=value");
    /* reliability review L24: strtod's range errors are named for what they are (1e-320 is finite) */
    CHECK_FAILS(pyr_config_set(&c, "scheme.dt=1e-320"), PYR_ERR_CONFIG, "'1e-320' is too small to compute with");
    CHECK_FAILS(pyr_config_set(&c, "scheme.dt=1e999"), PYR_ERR_CONFIG, "'1e999' is too large");
    CHECK_FAILS(pyr_config_set(&c, "scheme.courant=1e-320"), PYR_ERR_CONFIG, "'1e-320' is too small to compute with");
    CHECK(!strstr(pyr_last_error(), "not a finite number"), "1e-320 called not finite: %s", pyr_last_error());
    CHECK_FAILS(pyr_config_set(&c, "scheme.courant=1e999"), PYR_ERR_CONFIG, "'1e999' is too large");
    CHECK_FAILS(pyr_config_set(&c, "scheme.courant=inf"), PYR_ERR_CONFIG, "'inf' is not a finite number");
    CHECK_OK(pyr_config_set(&c, "scheme.dt=2e-5"));
    uint64_t b;
    CHECK_OK(pyr_parse_bytes("256MiB", &b));
    CHECK(b == 256ull << 20, "256MiB");
    CHECK_OK(pyr_parse_bytes("1.5G", &b));
    CHECK(b == 3ull << 29, "1.5G");
    CHECK_OK(pyr_parse_bytes("64K", &b));
    CHECK(b == 65536, "64K");
    fp = fopen(path, "w");
    fprintf(fp, "[grid]\nnx = 65\n[sceme]\nsteps = 3\n");
    fclose(fp);
    pyr_config_default(&c);
    CHECK_FAILS(pyr_config_load(&c, path), PYR_ERR_CONFIG, "line 4");
    CHECK(strstr(pyr_last_error(), "did you mean [scheme]") != NULL, "hint: %s", pyr_last_error());
    fp = fopen(path, "w");
    fprintf(fp, "[grid]\nthis line is not ini\n");
    fclose(fp);
    CHECK_FAILS(pyr_config_load(&c, path), PYR_ERR_CONFIG, "line 2");
    unlink(path);
    CHECK_FAILS(pyr_config_load(&c, "/nonexistent/x.ini"), PYR_ERR_IO, "No such file");
}

int main(void)
{
    test_problem();
    test_plans();
    test_init_file();
    test_config();
    return check_report();
}
