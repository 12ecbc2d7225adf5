/* The Poisson (Jacobi) CUDA kernel: the expression of src/schemes/poisson.c
 * with explicitly rounded operations, over the shared stencil kernels; the
 * right-hand side f (when the problem has one) is read at the node being
 * updated, once per step from the L1/L2 caches (its rows arrive with the
 * piece's). */
#include "backend/cuda/stencil_fused.cuh"

namespace {

/* HasF: the problem has a right-hand side (else J = s * d, and no f is read).
 * MT: threads of a 3D fused block: 1024 (64 registers each), or 512 (128
 * registers: f's planes held without spilling, but a block of 16 rows
 * spends 2K of them on its halo). */
template <typename T, bool HasF, int MT> struct JacobiOp {
    T cx, cy, cz, dv, om;
    int damp;
    const T *f;
    static constexpr bool kAux = HasF;
    /* with f, 3D fused blocks of at most 512 threads: 128 registers each hold f's planes without spills */
    static constexpr int kMaxThreads3D = MT;
    static constexpr bool kUnrollRows = false; /* unrolled rows spill with f (stencil_fused.cuh) */
    static JacobiOp make(const pyr_coef_t *c, const pyr_piece_t *piece)
    {
        return JacobiOp{(T)c->c[0], (T)c->c[1], (T)c->c[2], (T)c->c[3], (T)c->c[4], (T)c->c[4] != (T)1,
                        HasF ? (const T *)piece->buf[1][0] : nullptr};
    }
    __device__ __forceinline__ T aux_at(int64_t i) const { return HasF ? __ldg(f + i) : T(0); }
    template <int V> __device__ __forceinline__ void aux_vec(int64_t off, T (&a)[V]) const
    {
        if (HasF) load_vec<T, V>(f + off, a);
    }
    __device__ __forceinline__ T finish(T u, T sum, T fv) const
    {
        const T j = HasF ? mul(add(sum, fv), dv) : mul(sum, dv);
        return damp ? add(u, mul(om, sub(j, u))) : j;
    }
    __device__ __forceinline__ T s1(T u, T xm, T xp, T fv) const { return finish(u, mul(cx, add(xm, xp)), fv); }
    /* cx*(xm + xp) + cy*(ym + yp) */
    __device__ __forceinline__ T s2(T u, T xm, T xp, T ym, T yp, T fv) const
    {
        return finish(u, add(mul(cx, add(xm, xp)), mul(cy, add(ym, yp))), fv);
    }
    /* (cx*(xm + xp) + cy*(ym + yp)) + cz*(zm + zp) */
    __device__ __forceinline__ T s3(T u, T xm, T xp, T ym, T yp, T zm, T zp, T fv) const
    {
        return finish(u, add(add(mul(cx, add(xm, xp)), mul(cy, add(ym, yp))), mul(cz, add(zm, zp))), fv);
    }
};

template <typename T> using JacobiF = JacobiOp<T, true, 1024>;
template <typename T> using JacobiF512 = JacobiOp<T, true, 512>;
template <typename T> using Jacobi0 = JacobiOp<T, false, 1024>;

/* Fused launches of up to 7 steps in 2D (of 15 for heat): each takes the
 * f rows of its steps from the caches, and fewer instantiations keep the
 * build short. */
pyr_status_t jacobi_run(void *ctx, int slot, const pyr_kernel_call_t *call)
{
    if (call->piece->nfields > 1 && call->piece->buf[1][0]) {
        /* fused:K,R with R <= 16 rows per 3D block: the 512-thread kernel */
        if (call->coef->dims == 3 && call->variant->p[1] > 0 && call->variant->p[1] <= 16)
            return run_stencil<JacobiF512, 7, 5>(ctx, slot, call);
        return run_stencil<JacobiF, 7, 5>(ctx, slot, call);
    }
    return run_stencil<Jacobi0, 7, 5>(ctx, slot, call);
}

/* The defaults: five sweeps per launch in 2D and three in 3D (in 3D float
 * with f, bench_heat --equation poisson --kernel ...: fused:3 runs faster
 * than fused:1, the streaming kernel, and than fused:3,16, f in registers
 * with 16-row blocks; measured: docs/performance.md#poisson). */
void jacobi_variant_default(int dims, pyr_precision_t precision, pyr_variant_t *v)
{
    stencil_variant_default(dims, precision, v);
    v->p[0] = dims == 3 ? 3 : 5;
}

} // namespace

extern "C" const pyr_kernel_t pyr_kernel_cuda_poisson = {
    PYR_EQ_POISSON,
    PYR_BACKEND_CUDA,
    "fused[:K[,T]] (K odd steps per launch: 2D 1-7, 3D 1-5; T threads: 2D 128|256, 3D 8-32 rows) | plain",
    stencil_variant_check<7, 5>,
    jacobi_variant_default,
    stencil_variant_candidates<7, 5>,
    jacobi_run,
    NULL, /* no work memory */
    stencil_launch_steps,
    NULL, /* last box only: Poisson is not run skewed (its sweeps report a change) */
    NULL, /* halo: likewise */
};
