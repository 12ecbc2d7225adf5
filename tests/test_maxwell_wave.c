/* The CUDA Maxwell kernel's wave variant (K steps of the 2D scheme per
 * launch, tiles recomputed at their edges, two sets of buffers) against the
 * CPU naive method and the tile variant on the GPU, bit for bit: random 2D
 * problems (TM and TE, float and double, materials per node or not, CPML on
 * random faces and thicknesses, E sources, probes of every component) on
 * awkward grids of several tiles and row segments, step counts that are no
 * multiple of K, K from 1 to 8 and random block shapes; also the same case in
 * passes of a few steps.  Cases the variant declines (a source on H, more
 * points than it carries) run as tile and must agree as well.
 *
 *   test_maxwell_wave [cases] [seed]     (defaults: 80 1; exits 77 without a GPU) */
#include <stdio.h>
#include <string.h>

#include "backend/cuda/cuda_api.h"
#include "backend/device.h"
#include "maxwell_util.h"

static int with_cpml, te_cases, double_cases, taken, not_multiple, fewer;
static pyr_device_t *g_gpu; /* held for its launch counter (cuda_api.h) */

static long long launches(void)
{
    pyr_cuda_stats_t st;
    pyr_cuda_get_stats(g_gpu, &st);
    return st.launches;
}

static int run_case(uint64_t seed, int c)
{
    rng_t r = {seed * 7919u + (uint64_t)c * 104729u};
    int64_t n[3] = {1, 1, 1};
    double len[3] = {1, 1, 1};
    /* several tiles along x (a block owns B - 2K columns) and several row segments, ragged edges */
    n[0] = rng_range(&r, 8, 300);
    n[1] = rng_range(&r, 8, 200);
    for (int a = 0; a < 2; a++) len[a] = mx_frac(&r, 0.5, 3.0);
    const pyr_precision_t prec = rng_range(&r, 0, 1) ? PYR_DOUBLE : PYR_FLOAT;
    pyr_problem_t p;
    int drawn[3];
    mx_random_problem(&r, 2, n, len, prec, &p, drawn);
    pyr_maxwell_params_t *m = &p.maxwell;
    const int K = (int)rng_range(&r, 1, 8);
    p.steps = rng_range(&r, 1, 40);
    /* most cases in the variant's reach: sources on E at single nodes (a quarter keep what was drawn, which may
     * be declined) */
    const int keep = rng_range(&r, 0, 3) == 0;
    if (!keep)
        for (int i = 0; i < m->nsources; i++) {
            pyr_source_t *s = &m->sources[i];
            memcpy(s->node_end, s->node, sizeof s->node);
            if (s->component >= PYR_HX) s->component = m->te ? (rng_range(&r, 0, 1) ? PYR_EX : PYR_EY) : PYR_EZ;
        }
    int h_source = 0, line = 0;
    for (int i = 0; i < m->nsources; i++) {
        h_source |= m->sources[i].component >= PYR_HX;
        for (int a = 0; a < 2; a++) line |= m->sources[i].node_end[a] != m->sources[i].node[a];
    }
    with_cpml += drawn[1];
    te_cases += m->te;
    double_cases += prec == PYR_DOUBLE;
    not_multiple += p.steps % K != 0;
    taken += !h_source && !line;

    static const int threads[] = {0, 64, 96, 128, 256};
    int b = threads[rng_range(&r, 0, 4)];
    if (b && b <= 2 * K) b = 64 * ((2 * K) / 64 + 1);
    const int rows = rng_range(&r, 0, 2) ? (int)rng_range(&r, 1, 60) : 0;
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CUDA;
    o.method = PYR_METHOD_NAIVE;
    snprintf(o.kernel, sizeof o.kernel, "wave:%d,%d,%d", K, b, rows);
    char label[400];
    snprintf(label, sizeof label, "case %d seed %llu: 2D %s %lldx%lld %s steps=%lld init=%s shapes=%d cpml=%d/%#x sources=%d%s%s probes=%d kernel=%s",
             c, (unsigned long long)seed, m->te ? "TE" : "TM", (long long)n[0], (long long)n[1], pyr_precision_name(prec),
             (long long)p.steps, p.init == PYR_INIT_RANDOM ? "random" : "zero", m->nshapes, m->cpml_cells, m->cpml_faces, m->nsources,
             h_source ? " (on H)" : "", line ? " (lines)" : "", m->nprobes, o.kernel);

    mx_result_t ref = {0}, a = {0}, t = {0}, w2 = {0};
    pyr_status_t sr = mx_reference(&p, NULL, &ref);
    CHECK(sr == PYR_OK, "%s: reference failed: %s", label, pyr_last_error());
    const long long l0 = launches();
    pyr_status_t sa = mx_run(&p, &o, NULL, &a);
    CHECK(sa == PYR_OK, "%s: wave run failed: %s", label, pyr_last_error());
    const long long l1 = launches();
    pyr_options_t ot = o;
    snprintf(ot.kernel, sizeof ot.kernel, "tile");
    pyr_status_t stl = mx_run(&p, &ot, NULL, &t);
    CHECK(stl == PYR_OK, "%s: tile run failed: %s", label, pyr_last_error());
    const long long l2 = launches();
    /* the variant ran where it should: a launch per K steps against the tile path's two or more per step */
    if (!h_source && !line && p.steps >= 2 && sa == PYR_OK && stl == PYR_OK) {
        CHECK(l1 - l0 < l2 - l1, "%s: %lld launches with wave, %lld with tile: the wave kernel did not take the call", label, l1 - l0,
              l2 - l1);
        fewer += l1 - l0 < l2 - l1;
    }
    int bad = sr != PYR_OK || sa != PYR_OK || stl != PYR_OK;
    if (!bad) bad |= mx_compare(label, "the CPU naive method", &a, &ref);
    if (!bad) bad |= mx_compare(label, "the tile variant", &a, &t);
    /* the same case in passes of a few steps (calls of 1 to 5 steps: a lone step in place, odd launch counts) */
    pyr_options_t o2 = o;
    o2.height = rng_range(&r, 1, 5);
    pyr_status_t s2 = mx_run(&p, &o2, NULL, &w2);
    CHECK(s2 == PYR_OK, "%s (height %lld): run failed: %s", label, (long long)o2.height, pyr_last_error());
    if (!bad && s2 == PYR_OK) {
        char l2[460];
        snprintf(l2, sizeof l2, "%s, passes of height %lld", label, (long long)o2.height);
        bad |= mx_compare(l2, "the CPU naive method", &w2, &ref);
    }
    mx_free(&ref);
    mx_free(&a);
    mx_free(&t);
    mx_free(&w2);
    return bad;
}

int main(int argc, char **argv)
{
    int cases = argc > 1 ? atoi(argv[1]) : 80;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    if (pyr_gpu_count() == 0) {
        printf("no usable GPU: skipped\n");
        return 77;
    }
    CHECK_OK(pyr_device_acquire(PYR_BACKEND_CUDA, 0, &g_gpu));
    if (!g_gpu) return check_report();
    int failed = 0;
    for (int c = 0; c < cases && failed < 5; c++) failed += run_case(seed, c);
    printf("%d of %d random 2D Maxwell problems bit-identical to the CPU naive method and the tile variant with the wave CUDA kernel "
           "(seed %llu): %d TE, %d double, %d with CPML, %d in the variant's reach (%d of them in fewer launches than tile), %d with steps "
           "no multiple of K\n",
           cases - failed, cases, (unsigned long long)seed, te_cases, double_cases, with_cpml, taken, fewer, not_multiple);
    CHECK(failed > 0 || cases < 20 || (with_cpml >= cases / 4 && te_cases >= cases / 4 && double_cases >= cases / 4 && taken >= cases / 2),
          "too few cases exercised CPML (%d), TE (%d), double (%d) or the variant's path (%d) to mean much", with_cpml, te_cases,
          double_cases, taken);
    pyr_device_release(g_gpu);
    return check_report();
}
