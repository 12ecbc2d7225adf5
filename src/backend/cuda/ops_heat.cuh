/* The heat scheme's update for the CUDA stencil kernels (stencil_fused.cuh):
 * the expression of src/schemes/heat.c with explicitly rounded operations.
 * Include after stencil_fused.cuh. */
#ifndef PYR_BACKEND_CUDA_OPS_HEAT_CUH
#define PYR_BACKEND_CUDA_OPS_HEAT_CUH

namespace {

template <typename T> struct HeatOp {
    T rx, ry, rz;
    static constexpr bool kAux = false;
    static constexpr int kMaxThreads3D = 1024; /* threads of a 3D fused block (64 registers each) */
    static constexpr bool kUnrollRows = true;  /* 2D double: rows unrolled by three (stencil_fused.cuh) */
    static HeatOp make(const pyr_coef_t *c, const pyr_piece_t *piece)
    {
        (void)piece;
        return HeatOp{(T)c->c[0], (T)c->c[1], (T)c->c[2]};
    }
    __device__ __forceinline__ T aux_at(int64_t) const { return T(0); }
    template <int V> __device__ __forceinline__ void aux_vec(int64_t, T (&)[V]) const {}
    /* u + rx*((xm + xp) - (u + u)), the difference rounded once (sub_twice, rounded.cuh): one operation fewer per
     * node, and 2D ran faster with it; 3D float ran slower (its 64 registers at 1024 threads), so s3 keeps
     * (u + u) (measured: docs/performance.md#heat-2d-temporal-blocking) */
    __device__ __forceinline__ T s1(T u, T xm, T xp, T) const { return add(u, mul(rx, sub_twice(add(xm, xp), u))); }
    /* u + (rx*((xm + xp) - (u + u)) + ry*((ym + yp) - (u + u))) */
    __device__ __forceinline__ T s2(T u, T xm, T xp, T ym, T yp, T) const
    {
        return add(u, add(mul(rx, sub_twice(add(xm, xp), u)), mul(ry, sub_twice(add(ym, yp), u))));
    }
    /* u + ((rx*(...) + ry*(...)) + rz*((zm + zp) - (u + u))) */
    __device__ __forceinline__ T s3(T u, T xm, T xp, T ym, T yp, T zm, T zp, T) const
    {
        T uu = add(u, u);
        return add(u, add(add(mul(rx, sub(add(xm, xp), uu)), mul(ry, sub(add(ym, yp), uu))), mul(rz, sub(add(zm, zp), uu))));
    }
};

} // namespace

#endif
