/* Property test of the Maxwell (Yee) scheme (issue 21): random problems (2D
 * TM and TE, 3D; float and double; random or zero initial fields; material
 * shapes with eps_r, sigma and mu_r; CPML layers on random faces; point and
 * line sources of every waveform; probes) under random plans (naive,
 * trivial, pyramid; every decomposition; heights; budgets from the smallest
 * that fits to above the grid; 1 to 3 slots; 1 or 2 threads) give the CPU
 * naive method's six components and probe series bit for bit.
 *
 *   test_maxwell_property [cases] [seed] [backend]     (defaults: 150 1 cpu) */
#include <stdio.h>
#include <string.h>

#include "maxwell_util.h"

static int pyramids, with_cpml, with_sources, with_materials;



static int run_case(uint64_t seed, int c, pyr_backend_kind_t backend)
{
    rng_t r = {seed * 7919u + (uint64_t)c * 104729u};
    const int dims = (int)rng_range(&r, 2, 3);
    int64_t n[3] = {1, 1, 1};
    double len[3] = {1, 1, 1};
    for (int a = 0; a < dims; a++) {
        n[a] = rng_range(&r, dims == 2 ? 6 : 6, dims == 2 ? 60 : 18);
        len[a] = mx_frac(&r, 0.5, 3.0);
    }
    const pyr_precision_t prec = rng_range(&r, 0, 1) ? PYR_DOUBLE : PYR_FLOAT;
    pyr_problem_t p;
    int drawn[3];
    mx_random_problem(&r, dims, n, len, prec, &p, drawn);
    with_materials += drawn[0];
    with_cpml += drawn[1];
    with_sources += drawn[2];
    const pyr_maxwell_params_t *m = &p.maxwell;
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = backend;
    const int meth = (int)rng_range(&r, 0, 5);
    o.method = meth == 0 ? PYR_METHOD_NAIVE : meth == 1 ? PYR_METHOD_TRIVIAL : PYR_METHOD_PYRAMID;
    if (dims == 2) o.decomposition = rng_range(&r, 0, 1) ? PYR_DECOMP_STRIPS : PYR_DECOMP_BLOCKS;
    else o.decomposition = rng_range(&r, 0, 1) ? PYR_DECOMP_SLABS : PYR_DECOMP_BLOCKS;
    if (o.method == PYR_METHOD_PYRAMID) o.height = rng_range(&r, 0, 3) == 0 ? 0 : rng_range(&r, 1, p.steps);
    o.slots = (int)rng_range(&r, 1, 3);
    o.threads = (int)rng_range(&r, 1, 2);
    if (backend == PYR_BACKEND_CUDA) {
        /* launch shapes: rows per block, planes per thread (tiles narrower and shorter than the boxes too) */
        /* fused falls back to tile's launches in calls whose boxes change (pyramids) */
        static const char *const v[] = {"", "tile:1,1", "tile:2,3", "tile:8,64", "tile:4,16", "tile:8,1", "fused", "fused:2,3"};
        snprintf(o.kernel, sizeof o.kernel, "%s", v[rng_range(&r, 0, 7)]);
    }
    if (o.method != PYR_METHOD_NAIVE) {
        uint64_t grid = (uint64_t)pyr_problem_nodes(&p) * pyr_precision_size(prec) * 6;
        uint64_t lo = smallest_budget(&p, o, 8 * grid + (1u << 20));
        o.memory = lo + (uint64_t)rng_range(&r, 0, (int64_t)(2 * grid));
        if (backend == PYR_BACKEND_CUDA && o.memory < (1u << 20)) o.memory = 1u << 20;
    }
    char label[400];
    snprintf(label, sizeof label,
             "case %d seed %llu: %dD%s %lldx%lldx%lld %s steps=%lld courant=%g init=%s shapes=%d cpml=%d/%#x sources=%d probes=%d | %s %s "
             "height=%lld slots=%d memory=%llu kernel=%s",
             c, (unsigned long long)seed, dims, dims == 2 ? (m->te ? " TE" : " TM") : "", (long long)n[0], (long long)n[1], (long long)n[2],
             pyr_precision_name(prec), (long long)p.steps, m->courant, p.init == PYR_INIT_RANDOM ? "random" : "zero", m->nshapes,
             m->cpml_cells, m->cpml_faces, m->nsources, m->nprobes, pyr_method_name(o.method), pyr_decomp_name(o.decomposition),
             (long long)o.height, o.slots, (unsigned long long)o.memory, o.kernel);

    mx_result_t a = {0}, b = {0};
    const int differ = mx_against_naive(label, &p, &o, &a, &b);
    int bad = differ != 0;
    if (differ >= 0) {
        pyramids += o.method == PYR_METHOD_PYRAMID && a.info.height > 1;
    }
    mx_free(&a);
    mx_free(&b);
    return bad;
}

int main(int argc, char **argv)
{
    int cases = argc > 1 ? atoi(argv[1]) : 150;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    pyr_backend_kind_t backend = argc > 3 && !strcmp(argv[3], "cuda") ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU;
    if (backend == PYR_BACKEND_CUDA && pyr_gpu_count() == 0) {
        printf("no usable GPU: skipped\n");
        return 77;
    }
    int failed = 0;
    for (int c = 0; c < cases && failed < 5; c++) failed += run_case(seed, c, backend);
    printf("%d of %d random Maxwell plans on the %s backend bit-identical to the naive method (seed %llu): %d pyramids of height > 1, "
           "%d with CPML, %d with sources, %d with materials\n",
           cases - failed, cases, backend == PYR_BACKEND_CUDA ? "cuda" : "cpu", (unsigned long long)seed, pyramids, with_cpml, with_sources,
           with_materials);
    CHECK(failed > 0 || cases < 20 || (pyramids >= cases / 4 && with_cpml >= cases / 4 && with_sources >= cases / 2),
          "too few cases exercised pyramids (%d), CPML (%d) or sources (%d) to mean much", pyramids, with_cpml, with_sources);
    return check_report();
}
