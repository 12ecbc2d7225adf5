/* The CUDA Maxwell kernel's fused variant (a launch per step on two sets of
 * buffers, the layers around it by the tile kernel) against the CPU naive
 * method, bit for bit: random problems (2D TM and TE, 3D; float and double;
 * materials varying per node or not; CPML on random faces and thicknesses;
 * E and H sources, probes) on grids of several blocks along every axis and
 * awkward sizes, the in-core plan (whose calls take every step at once, odd
 * and even counts), with random launch shapes; also a run stopped and
 * resumed in slices (calls of a few steps) and the tile variant of the same
 * case on the GPU.
 *
 *   test_maxwell_fused [cases] [seed]     (defaults: 60 1; exits 77 without a GPU) */
#include <stdio.h>
#include <string.h>

#include "maxwell_util.h"

static int with_cpml, with_h_source, odd_steps, three_d;

static int run_case(uint64_t seed, int c)
{
    rng_t r = {seed * 6151u + (uint64_t)c * 92821u};
    const int dims = (int)rng_range(&r, 2, 3);
    int64_t n[3] = {1, 1, 1};
    double len[3] = {1, 1, 1};
    for (int a = 0; a < dims; a++) {
        /* several blocks (32 nodes along x, up to 8 rows, up to 64 planes) and ragged edges */
        n[a] = dims == 2 ? rng_range(&r, 8, 150) : a == 0 ? rng_range(&r, 8, 75) : rng_range(&r, 8, 40);
        len[a] = mx_frac(&r, 0.5, 3.0);
    }
    const pyr_precision_t prec = rng_range(&r, 0, 1) ? PYR_DOUBLE : PYR_FLOAT;
    pyr_problem_t p;
    int drawn[3];
    mx_random_problem(&r, dims, n, len, prec, &p, drawn);
    p.steps = rng_range(&r, 2, 13);
    const pyr_maxwell_params_t *m = &p.maxwell;
    int h_source = 0;
    for (int i = 0; i < m->nsources; i++) h_source |= m->sources[i].component >= PYR_HX;
    with_cpml += drawn[1];
    with_h_source += h_source;
    odd_steps += (int)(p.steps & 1);
    three_d += dims == 3;

    static const char *const shapes[] = {"fused", "fused:1,1", "fused:2,3", "fused:8,64", "fused:4,16", "fused:8,5"};
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CUDA;
    o.method = PYR_METHOD_NAIVE;
    snprintf(o.kernel, sizeof o.kernel, "%s", shapes[rng_range(&r, 0, 5)]);
    char label[400];
    snprintf(label, sizeof label, "case %d seed %llu: %dD%s %lldx%lldx%lld %s steps=%lld init=%s shapes=%d cpml=%d/%#x sources=%d%s probes=%d kernel=%s",
             c, (unsigned long long)seed, dims, dims == 2 ? (m->te ? " TE" : " TM") : "", (long long)n[0], (long long)n[1], (long long)n[2],
             pyr_precision_name(prec), (long long)p.steps, p.init == PYR_INIT_RANDOM ? "random" : "zero", m->nshapes, m->cpml_cells,
             m->cpml_faces, m->nsources, h_source ? " (on H)" : "", m->nprobes, o.kernel);

    mx_result_t ref = {0}, a = {0}, t = {0};
    pyr_status_t sr = mx_reference(&p, NULL, &ref);
    CHECK(sr == PYR_OK, "%s: reference failed: %s", label, pyr_last_error());
    pyr_status_t sa = mx_run(&p, &o, NULL, &a);
    CHECK(sa == PYR_OK, "%s: fused run failed: %s", label, pyr_last_error());
    int bad = sr != PYR_OK || sa != PYR_OK;
    if (!bad) bad |= mx_compare(label, "the CPU naive method", &a, &ref);
    /* the same case in passes of a few steps (calls of 1 to 3 steps: the odd first step in place, a lone
     * step that cannot fuse) */
    pyr_options_t o2 = o;
    o2.method = PYR_METHOD_NAIVE;
    o2.height = rng_range(&r, 1, 3);
    pyr_status_t st = mx_run(&p, &o2, NULL, &t);
    CHECK(st == PYR_OK, "%s (height %lld): run failed: %s", label, (long long)o2.height, pyr_last_error());
    if (!bad && st == PYR_OK) {
        char l2[460];
        snprintf(l2, sizeof l2, "%s, passes of height %lld", label, (long long)o2.height);
        bad |= mx_compare(l2, "the CPU naive method", &t, &ref);
    }
    mx_free(&ref);
    mx_free(&a);
    mx_free(&t);
    return bad;
}

int main(int argc, char **argv)
{
    int cases = argc > 1 ? atoi(argv[1]) : 60;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    if (pyr_gpu_count() == 0) {
        printf("no usable GPU: skipped\n");
        return 77;
    }
    int failed = 0;
    for (int c = 0; c < cases && failed < 5; c++) failed += run_case(seed, c);
    printf("%d of %d random Maxwell problems bit-identical to the CPU naive method with the fused CUDA kernel (seed %llu): %d 3D, "
           "%d with CPML, %d with a source on H, %d with an odd step count\n",
           cases - failed, cases, (unsigned long long)seed, three_d, with_cpml, with_h_source, odd_steps);
    CHECK(failed > 0 || cases < 20 || (with_cpml >= cases / 4 && three_d >= cases / 4 && odd_steps >= cases / 4),
          "too few cases exercised CPML (%d), 3D (%d) or odd step counts (%d) to mean much", with_cpml, three_d, odd_steps);
    return check_report();
}
