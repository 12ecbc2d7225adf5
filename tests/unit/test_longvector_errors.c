/* The long-vector method's refusals (issue 23), on any machine: what it does
 * not take fails at plan creation with a status and a message that names
 * the problem and what would work, before any device is touched, so the
 * answers are the same with or without a GPU.  Also: the problem file's
 * method = longvector, the method's name, and, on a machine without a usable
 * GPU, the refusal of the method itself. */
#include <stdio.h>
#include <string.h>

#include "backend/kernels.h"
#include "check.h"
#include "multi/parts.h"
#include "heat_util.h"
#include "problem/config.h"
#include "maxwell_util.h"
#include "poisson_util.h"
#include "schemes/scheme.h"
#include "tune/calibrate.h"

static pyr_status_t plan_with(const pyr_problem_t *p, const pyr_options_t *o)
{
    pyr_plan_t *plan = NULL;
    pyr_status_t st = pyr_plan_create(p, o, &plan);
    pyr_plan_destroy(&plan);
    return st;
}

static void lv_options(pyr_options_t *o)
{
    pyr_options_default(o);
    o->method = PYR_METHOD_LONGVECTOR;
}

/* A transport of one process that says it is rank 0 of two (the MPI path of
 * exec/parts.c without MPI): the other rank agrees with everything. */
static pyr_status_t two_agree(pyr_transport_t *t, pyr_status_t mine, char *message, size_t size, pyr_status_t *status, int *who)
{
    (void)t, (void)message, (void)size;
    *status = mine;
    *who = mine == PYR_OK ? -1 : 0;
    return PYR_OK;
}
static pyr_status_t two_reduce(pyr_transport_t *t, uint64_t *v, int max)
{
    (void)t, (void)v, (void)max;
    return PYR_OK;
}

/* Over several devices or MPI ranks the method is refused before any
 * device is looked at (the same answer on every machine); the method's own
 * refusals (scheme, dims, backend) come first. */
static void several_devices(const pyr_problem_t *p2, const pyr_problem_t *pp)
{
    pyr_options_t o;
    const char *const lists[] = {"0,0", "0,1", "1,0,2"};
    for (int b = 0; b < 3; b += 2)
        for (int i = 0; i < 3; i++) {
            lv_options(&o);
            o.backend = (pyr_backend_kind_t)b;
            snprintf(o.devices, sizeof o.devices, "%s", lists[i]);
            pyr_plan_t *plan = (pyr_plan_t *)&o; /* must come back NULL */
            CHECK_FAILS(pyr_plan_create(p2, &o, &plan), PYR_ERR_UNSUPPORTED, "method = longvector runs on one GPU");
            CHECK(plan == NULL, "devices = %s: a refused plan was returned", lists[i]);
            CHECK(strstr(pyr_last_error(), lists[i]) && strstr(pyr_last_error(), "use method = naive"), "the message names the list and what "
                  "works: %s", pyr_last_error());
        }
    lv_options(&o);
    snprintf(o.devices, sizeof o.devices, "0,0");
    CHECK_FAILS(plan_with(pp, &o), PYR_ERR_UNSUPPORTED, "heat equation");
    o.backend = PYR_BACKEND_CPU;
    CHECK_FAILS(plan_with(p2, &o), PYR_ERR_UNSUPPORTED, "CUDA backend");
    /* one device named: the ordinary one-device plan (refused here only for want of a GPU) */
    lv_options(&o);
    snprintf(o.devices, sizeof o.devices, "0");
    pyr_status_t st = plan_with(p2, &o);
    CHECK(pyr_backend_available(PYR_BACKEND_CUDA) ? st == PYR_OK : st == PYR_ERR_NODEVICE, "devices = 0: %s: %s", pyr_status_name(st),
          pyr_last_error());
    /* two MPI ranks, one device each */
    pyr_transport_t t;
    memset(&t, 0, sizeof t);
    t.rank = 0;
    t.size = 2;
    t.agree = two_agree;
    t.reduce_u64 = two_reduce;
    for (int d = 0; d < 2; d++) {
        lv_options(&o);
        if (d) snprintf(o.devices, sizeof o.devices, "0");
        pyr_parts_t *parts = NULL;
        CHECK_FAILS(pyr_parts_create(p2, &o, &t, &parts), PYR_ERR_UNSUPPORTED, "into 2 parts");
        CHECK(strstr(pyr_last_error(), "2 MPI ranks"), "the message names the ranks: %s", pyr_last_error());
        CHECK(parts == NULL, "refused parts were returned");
    }
}

/* The method's kernel variant reaches the CUDA heat kernel through the registration the method makes from
 * its own folder (backend/kernels.h pyr_kernel_extra_t), without a GPU: the kernel accepts it for 2D grids,
 * refuses it for 3D with the method's words, and counts its two work vectors. */
static void registered_variant(void)
{
    const pyr_kernel_t *k = pyr_kernel_find(PYR_EQ_HEAT, PYR_BACKEND_CUDA);
#ifdef PYR_HAVE_CUDA
    CHECK(k != NULL, "no CUDA heat kernel");
    if (!k) return;
    pyr_variant_t v;
    CHECK_OK(pyr_variant_parse("longvector", &v));
    CHECK(pyr_kernel_extra_find(PYR_EQ_HEAT, PYR_BACKEND_CUDA, "longvector") != NULL, "the long-vector variant is not registered");
    CHECK_OK(k->check(&v, 2, PYR_FLOAT));
    CHECK_FAILS(k->check(&v, 3, PYR_DOUBLE), PYR_ERR_UNSUPPORTED, "2D grids");
    CHECK(k->scratch_bytes && k->scratch_bytes(&v, 1000) == 2000, "the variant's work memory: two vectors of a layer");
    CHECK_OK(pyr_variant_parse("fused:5", &v));
    CHECK(k->scratch_bytes(&v, 1000) == 0, "the stencil variants keep no work memory");
#else
    CHECK(k == NULL, "a CUDA heat kernel in a build without CUDA");
    CHECK(pyr_kernel_extra_find(PYR_EQ_HEAT, PYR_BACKEND_CUDA, "longvector") == NULL, "a CUDA variant in a build without CUDA");
#endif
}

int main(void)
{
    pyr_problem_t p2, p3, p1, pp, pm2, pm3;
    int64_t n2[3] = {65, 33, 1}, n3[3] = {17, 19, 11}, n1[3] = {101, 1, 1};
    make_problem(&p2, 2, n2, PYR_FLOAT, 10, PYR_INIT_RANDOM, 1);
    make_problem(&p3, 3, n3, PYR_FLOAT, 10, PYR_INIT_RANDOM, 1);
    make_problem(&p1, 1, n1, PYR_DOUBLE, 10, PYR_INIT_RANDOM, 1);
    make_poisson(&pp, 2, n2, NULL, PYR_FLOAT, 100, 0, 10, PYR_RHS_SINE, PYR_INIT_ZERO, 1);
    make_maxwell(&pm2, 2, n2, NULL, 1, PYR_FLOAT, 10, 0.5);
    make_maxwell(&pm3, 3, n3, NULL, 0, PYR_DOUBLE, 10, 0.5);
    pyr_options_t o;

    /* every scheme but heat is refused (a new scheme must be added here) */
    for (int e = 0; pyr_scheme_of((pyr_equation_t)e); e++)
        CHECK(e == PYR_EQ_HEAT || e == PYR_EQ_POISSON || e == PYR_EQ_MAXWELL, "the %s scheme has no refusal case in this test: add one",
              pyr_equation_name((pyr_equation_t)e));

    /* other dimensions and schemes, on every backend */
    for (int b = 0; b < 3; b++) {
        lv_options(&o);
        o.backend = (pyr_backend_kind_t)b;
        if (b != PYR_BACKEND_CPU) {
            CHECK_FAILS(plan_with(&p3, &o), PYR_ERR_UNSUPPORTED, "2D grids");
            CHECK_FAILS(plan_with(&p1, &o), PYR_ERR_UNSUPPORTED, "this grid is 1D");
        }
        CHECK_FAILS(plan_with(&pp, &o), PYR_ERR_UNSUPPORTED, "heat equation");
        CHECK(strstr(pyr_last_error(), "method = naive") != NULL, "the message says what works: %s", pyr_last_error());
        /* Maxwell (FDTD), 2D and 3D: the scheme is named, not the dimension */
        CHECK_FAILS(plan_with(&pm2, &o), PYR_ERR_UNSUPPORTED, "for equation = maxwell");
        CHECK_FAILS(plan_with(&pm3, &o), PYR_ERR_UNSUPPORTED, "for equation = maxwell");
        CHECK(strstr(pyr_last_error(), "method = naive") != NULL, "the message says what works: %s", pyr_last_error());
    }
    several_devices(&p2, &pp);
    /* the CPU backend */
    lv_options(&o);
    o.backend = PYR_BACKEND_CPU;
    CHECK_FAILS(plan_with(&p2, &o), PYR_ERR_UNSUPPORTED, "CUDA backend");
    CHECK(strstr(pyr_last_error(), "method = naive for the same result") != NULL, "what works: %s", pyr_last_error());

    /* options that do not go with it */
    lv_options(&o);
    snprintf(o.kernel, sizeof o.kernel, "fused:5");
    CHECK_FAILS(plan_with(&p2, &o), PYR_ERR_CONFIG, "run.kernel = fused:5 with method = longvector");
    lv_options(&o);
    snprintf(o.kernel, sizeof o.kernel, "plain");
    CHECK_FAILS(plan_with(&p2, &o), PYR_ERR_CONFIG, "leave run.kernel = auto");
    lv_options(&o);
    o.decomposition = PYR_DECOMP_STRIPS;
    CHECK_FAILS(plan_with(&p2, &o), PYR_ERR_CONFIG, "run.decomposition = strips with method = longvector");
    lv_options(&o);
    o.decomposition = PYR_DECOMP_BLOCKS;
    CHECK_FAILS(plan_with(&p2, &o), PYR_ERR_CONFIG, "no pieces");
    lv_options(&o);
    o.piece = 20;
    CHECK_FAILS(plan_with(&p2, &o), PYR_ERR_CONFIG, "piece size");
    /* the variant without the method */
    const pyr_method_t others[] = {PYR_METHOD_AUTO, PYR_METHOD_NAIVE, PYR_METHOD_TRIVIAL, PYR_METHOD_PYRAMID};
    for (int m = 0; m < 4; m++)
        for (int b = 0; b < 3; b++) {
            pyr_options_default(&o);
            o.method = others[m];
            o.backend = (pyr_backend_kind_t)b;
            snprintf(o.kernel, sizeof o.kernel, "longvector");
            CHECK_FAILS(plan_with(&p2, &o), PYR_ERR_CONFIG, "use method = longvector");
        }
    /* a Poisson problem file asking for the method: the same refusal through the config */
    {
        pyr_config_t cfg;
        pyr_config_default(&cfg);
        const char *text = "[grid]\ndims = 2\nnx = 33\nny = 33\n[scheme]\nequation = heat\ndt = 1e-5\nsteps = 3\n[run]\nmethod = longvector\n";
        CHECK_OK(pyr_config_load_text(&cfg, text, strlen(text), "test.ini"));
        CHECK_OK(pyr_config_finish(&cfg));
        CHECK(cfg.options.method == PYR_METHOD_LONGVECTOR, "method = longvector parses (%d)", (int)cfg.options.method);
        CHECK(!strcmp(pyr_method_name(PYR_METHOD_LONGVECTOR), "longvector"), "method name %s", pyr_method_name(PYR_METHOD_LONGVECTOR));
        CHECK_FAILS(pyr_config_set(&cfg, "run.method=longvectr"), PYR_ERR_CONFIG, "did you mean 'longvector'");
    }
    /* calibration takes no --kernel longvector: its constants come with every CUDA 2D heat calibration */
    {
        pyr_calibrate_opts_t co;
        memset(&co, 0, sizeof co);
        co.backend = PYR_BACKEND_CUDA;
        co.dims = 2;
        co.effort = 0.1;
        snprintf(co.kernel, sizeof co.kernel, "longvector");
        pyr_model_constants_t k;
        CHECK_FAILS(pyr_calibrate(&co, &k, NULL, 0), PYR_ERR_CONFIG, "calibrate without --kernel");
    }
    /* the method where no GPU can run it: the CUDA backend is required */
    if (!pyr_backend_available(PYR_BACKEND_CUDA)) {
        for (int b = 0; b < 3; b += 2) {
            lv_options(&o);
            o.backend = (pyr_backend_kind_t)b;
            CHECK_FAILS(plan_with(&p2, &o), PYR_ERR_NODEVICE, "CUDA");
            CHECK(strstr(pyr_last_error(), "method = naive") || strstr(pyr_last_error(), "backend = cpu"), "what works: %s", pyr_last_error());
        }
        printf("no usable GPU: method = longvector is refused with PYR_ERR_NODEVICE\n");
    } else {
        lv_options(&o);
        pyr_plan_t *plan = NULL;
        CHECK_OK(pyr_plan_create(&p2, &o, &plan));
        pyr_plan_info_t info;
        if (plan) {
            CHECK_OK(pyr_plan_get_info(plan, &info));
            CHECK(info.method == PYR_METHOD_LONGVECTOR && !strcmp(info.kernel, "longvector") && info.backend == PYR_BACKEND_CUDA,
                  "a GPU here: the plan is method %s, kernel %s", pyr_method_name(info.method), info.kernel);
        }
        pyr_plan_destroy(&plan);
    }
    registered_variant();
    return check_report();
}
