/* The device-context cache (backend/device.h, session.c) and the CUDA
 * runtime's contexts on it.
 *
 *   test_cuda_context cpu   the cache itself, in every build (no GPU needed)
 *   test_cuda_context gpu   the CUDA runtime on it (exit 77 without a GPU):
 *     - a context given back is lent again while its device is held, in the
 *       precision of its new user;
 *     - the tests' hooks belong to the device: an injected allocation failure
 *       reaches every context of it, once;
 *     - two plans on one GPU driven from two threads at once give the CPU's
 *       result bit for bit, and the device's launch counter, which both
 *       threads' contexts add to, counts every launch of both;
 *     - a MEASURE plan (its candidates borrow the device's contexts) gives
 *       the CPU's result. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "backend/device.h"
#include "heat_util.h"
#ifdef PYR_HAVE_CUDA
#include "backend/cuda/cuda_api.h"
#endif

static void cache_without_gpu(void)
{
    pyr_device_t *a = NULL, *b = NULL;
    CHECK_OK(pyr_device_acquire(PYR_BACKEND_CPU, 0, &a));
    CHECK_OK(pyr_device_acquire(PYR_BACKEND_CPU, 0, &b));
    CHECK(a && a == b, "one entry per runtime and device: %p, %p", (void *)a, (void *)b);
    CHECK(a && pyr_device_index(a) == 0, "the entry's device");
    CHECK(a && pyr_device_shared(a) == NULL, "the CPU runtime shares nothing between its contexts");
    pyr_device_release(a);
    pyr_device_release(b);
    pyr_device_release(NULL);
    pyr_device_t *none = NULL;
    CHECK_FAILS(pyr_device_acquire(PYR_BACKEND_AUTO, 0, &none), PYR_ERR_ARG, "cpu or cuda");
    CHECK(none == NULL, "a failed acquire gives no entry");
#ifndef PYR_HAVE_CUDA
    CHECK_FAILS(pyr_device_acquire(PYR_BACKEND_CUDA, 0, &none), PYR_ERR_NODEVICE, "built without CUDA");
#else
    if (pyr_gpu_count() == 0) {
        /* the runtime's open failed: nothing is cached, and the next try says the same */
        for (int i = 0; i < 2; i++) CHECK_FAILS(pyr_device_acquire(PYR_BACKEND_CUDA, 0, &none), PYR_ERR_NODEVICE, "backend = cpu");
    } else {
        CHECK_FAILS(pyr_device_acquire(PYR_BACKEND_CUDA, pyr_gpu_count(), &none), PYR_ERR_NODEVICE, "device");
    }
    CHECK(none == NULL, "a failed acquire gives no entry");
#endif
}

#ifdef PYR_HAVE_CUDA

/* Doubles through device memory and back on context c. */
static void round_trip(void *c)
{
    const pyr_device_ops_t *ops = &pyr_device_cuda;
    double in[6 * 5], out[6 * 5];
    for (int i = 0; i < 30; i++) in[i] = 1.0 / (i + 3), out[i] = 0;
    pyr_piece_t piece;
    memset(&piece, 0, sizeof piece);
    piece.box = (pyr_box_t){{0, 0, 0}, {6, 5, 1}};
    piece.pitch = 32;
    piece.nfields = 1;
    CHECK_OK(ops->dev_alloc(c, 32 * 5 * sizeof(double), &piece.buf[0][0]));
    pyr_host_region_t hin = {in, piece.box}, hout = {out, piece.box};
    CHECK_OK(ops->upload(c, 0, &piece, 0, &hin, &piece.box));
    CHECK_OK(ops->download(c, 0, &piece, 0, &hout, &piece.box));
    CHECK_OK(ops->wait(c, 0));
    CHECK(!memcmp(in, out, sizeof in), "doubles through a context lent again came back changed");
    ops->dev_free(c, piece.buf[0][0]);
}

static void contexts(pyr_device_t *gpu)
{
    const pyr_device_ops_t *ops = &pyr_device_cuda;
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CUDA;
    void *a = NULL, *b = NULL, *c = NULL;
    CHECK_OK(ops->create(&o, PYR_FLOAT, &a));
    CHECK_OK(ops->create(&o, PYR_FLOAT, &b));
    CHECK(a && b && a != b, "two contexts out at once are two");
    ops->destroy(a);
    CHECK_OK(ops->create(&o, PYR_DOUBLE, &c));
    CHECK(c == a, "the context given back is lent again while the device is held");
    if (c) round_trip(c);

    /* the hook acts on the device: the second allocation from now fails, whichever context makes it */
    void *p1 = NULL, *p2 = NULL, *p3 = NULL;
    pyr_cuda_fail_alloc_after(gpu, 2);
    CHECK_OK(ops->dev_alloc(b, 4096, &p1));
    CHECK_FAILS(ops->dev_alloc(c, 4096, &p2), PYR_ERR_DEVICE_NOMEM, "out of device memory");
    CHECK(p2 == NULL, "a failed allocation gives no memory");
    CHECK_OK(ops->dev_alloc(c, 4096, &p3));
    ops->dev_free(b, p1);
    ops->dev_free(c, p3);
    ops->destroy(b);
    ops->destroy(c);
}

typedef struct {
    const pyr_problem_t *p;
    const pyr_options_t *o;
    pyr_field_t *f;
    pyr_status_t st;
    char error[512];
} job_t;

static void *run_job(void *arg)
{
    job_t *j = arg;
    j->f = run_problem(j->p, j->o, NULL, NULL, &j->st);
    snprintf(j->error, sizeof j->error, "%s", j->st == PYR_OK ? "" : pyr_last_error());
    return NULL;
}

static void two_threads(pyr_device_t *gpu)
{
    int64_t n[3] = {1200, 700, 1};
    pyr_problem_t p;
    make_problem(&p, 2, n, PYR_FLOAT, 40, PYR_INIT_RANDOM, 11);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CUDA;
    o.method = PYR_METHOD_PYRAMID;
    o.decomposition = PYR_DECOMP_STRIPS;
    o.height = 8;
    o.memory = 2ull << 20; /* pieces in flight on every slot */
    pyr_status_t st;
    pyr_field_t *ref = naive_reference(&p, &st);
    CHECK(ref != NULL, "CPU naive: %s", pyr_last_error());
    if (!ref) return;

    pyr_cuda_reset_stats(gpu);
    job_t alone = {&p, &o, NULL, PYR_OK, ""};
    run_job(&alone);
    pyr_cuda_stats_t s1, s2;
    pyr_cuda_get_stats(gpu, &s1);
    CHECK(alone.st == PYR_OK && first_difference(alone.f, ref) < 0, "one thread: %s", alone.error);
    CHECK(s1.launches > 0, "no launch counted");

    pyr_cuda_reset_stats(gpu);
    job_t jobs[2] = {{&p, &o, NULL, PYR_OK, ""}, {&p, &o, NULL, PYR_OK, ""}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++) CHECK(pthread_create(&t[i], NULL, run_job, &jobs[i]) == 0, "pthread_create");
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    pyr_cuda_get_stats(gpu, &s2);
    for (int i = 0; i < 2; i++) {
        CHECK(jobs[i].st == PYR_OK, "thread %d: %s", i, jobs[i].error);
        CHECK(jobs[i].f && first_difference(jobs[i].f, ref) < 0, "thread %d differs from the CPU naive method", i);
        pyr_field_destroy(&jobs[i].f);
    }
    CHECK(s2.launches == 2 * s1.launches, "two threads' plans: %lld launches counted, each alone %lld", s2.launches, s1.launches);
    printf("two plans on GPU 0 from two threads: bit-identical to the CPU, %lld launches counted (%lld each)\n", s2.launches,
           s1.launches);

    /* MEASURE: candidates timed on the device's contexts */
    o.plan_mode = PYR_PLAN_MEASURE;
    o.height = 0;
    o.decomposition = PYR_DECOMP_AUTO;
    pyr_field_t *m = run_problem(&p, &o, NULL, NULL, &st);
    CHECK(m && first_difference(m, ref) < 0, "a MEASURE plan: %s", st == PYR_OK ? "differs from the CPU" : pyr_last_error());
    pyr_field_destroy(&m);
    pyr_field_destroy(&alone.f);
    pyr_field_destroy(&ref);
}

#endif

int main(int argc, char **argv)
{
    const int gpu_part = argc > 1 && !strcmp(argv[1], "gpu");
    if (!gpu_part) {
        cache_without_gpu();
        return check_report();
    }
#ifdef PYR_HAVE_CUDA
    if (pyr_gpu_count() == 0) {
        printf("no usable GPU: skipped\n");
        return 77;
    }
    pyr_device_t *gpu = NULL;
    CHECK_OK(pyr_device_acquire(PYR_BACKEND_CUDA, 0, &gpu));
    if (!gpu) return check_report();
    contexts(gpu);
    two_threads(gpu);
    pyr_device_release(gpu);
    return check_report();
#else
    printf("built without CUDA: skipped\n");
    return 77;
#endif
}
