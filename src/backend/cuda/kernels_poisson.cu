/* The Poisson (Jacobi) CUDA kernel: the expression of src/schemes/poisson.c
 * with explicitly rounded operations, over the shared stencil kernels; the
 * right-hand side f (when the problem has one) is read at the node being
 * updated, once per step from the L1/L2 caches (its rows arrive with the
 * piece's). */
#include "backend/cuda/stencil_fused.cuh"
#include "schemes/poisson.h"

#include <vector>

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

/* Chebyshev's sweeps (schemes/poisson.h): one launch per sweep, a thread
 * per node along x, each reading its node of the layer two sweeps back
 * before writing it, with the CPU kernel's expressions: J as the Jacobi
 * op's, then p + w*(J - p), or J itself where the sweep's weight rounds to
 * 1.  That layer lies in the output buffer: at the node's place, or (Shifted)
 * `back` elements before it, where a skewed call's first sub-step reads it
 * (kernels.h older_shift).  The shifted read is made first, whatever the
 * weight: at the node's own place the compiler may issue the read beside
 * the stencil's, because the store that follows touches the same address on
 * every path, but a read elsewhere under the weight's branch would wait for
 * the stencil's, a second trip to memory per node. */
template <typename T, int DIMS, bool HasF, bool Shifted>
__global__ void k_chebyshev(const T *__restrict__ src, T *__restrict__ dst, int64_t back, const T *__restrict__ f, int64_t pitch, int64_t plane,
                            pyr_kbox_t b, T cx, T cy, T cz, T dv, T w)
{
    const int x = b.lo[0] + (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (x >= b.hi[0]) return;
    const bool cheb = w != T(1);
    for (int z = b.lo[2] + (int)blockIdx.z; z < b.hi[2]; z += (int)gridDim.z)
        for (int y = b.lo[1] + (int)blockIdx.y; y < b.hi[1]; y += (int)gridDim.y) {
            const int64_t i = (int64_t)z * plane + (int64_t)y * pitch + x;
            T older = T(0);
            if (Shifted) older = dst[i - back];
            T s = mul(cx, add(src[i - 1], src[i + 1]));
            if (DIMS >= 2) s = add(s, mul(cy, add(src[i - pitch], src[i + pitch])));
            if (DIMS == 3) s = add(s, mul(cz, add(src[i - plane], src[i + plane])));
            const T j = HasF ? mul(add(s, __ldg(f + i)), dv) : mul(s, dv);
            if (cheb) {
                const T p = Shifted ? older : dst[i];
                dst[i] = add(p, mul(w, sub(j, p)));
            } else {
                dst[i] = j;
            }
        }
}

/* The parts of box b a sub-step that reads its layer two back `shift` planes below its own place (kernels.h
 * older_shift) is launched in: chunks of at most `shift` planes along the last axis, the highest first, so
 * that no launch overwrites what another still reads; b itself where shift is 0. */
static std::vector<pyr_kbox_t> older_chunks(const pyr_kbox_t &b, int dims, int64_t shift)
{
    std::vector<pyr_kbox_t> out;
    const int a = dims - 1;
    if (shift <= 0 || b.hi[a] <= b.lo[a]) {
        out.push_back(b);
        return out;
    }
    for (int hi = b.hi[a]; hi > b.lo[a]; hi -= (int)shift) {
        pyr_kbox_t part = b;
        part.hi[a] = hi;
        part.lo[a] = hi - (int)shift > b.lo[a] ? hi - (int)shift : b.lo[a];
        out.push_back(part);
    }
    return out;
}

template <typename T, bool HasF>
cudaError_t chebyshev_launch(int dims, const T *s, T *d, int64_t o, const T *f, const pyr_klayout_t *L, const pyr_kbox_t *b, const pyr_coef_t *c, T w,
                             cudaStream_t stream)
{
    const int nx = b->hi[0] - b->lo[0], ny = b->hi[1] - b->lo[1], nz = b->hi[2] - b->lo[2];
    if (nx <= 0 || ny <= 0 || nz <= 0) return cudaSuccess;
    const int threads = 256;
    dim3 grid((unsigned)ceil_div(nx, threads), (unsigned)imin(ny, 65535), (unsigned)imin(nz, 65535));
    const int64_t plane = L->pitch * L->rows;
    const T cx = (T)c->c[0], cy = (T)c->c[1], cz = (T)c->c[2], dv = (T)c->c[3];
    if (o == 0) {
        if (dims == 1) k_chebyshev<T, 1, HasF, false><<<grid, threads, 0, stream>>>(s, d, 0, f, L->pitch, plane, *b, cx, cy, cz, dv, w);
        else if (dims == 2) k_chebyshev<T, 2, HasF, false><<<grid, threads, 0, stream>>>(s, d, 0, f, L->pitch, plane, *b, cx, cy, cz, dv, w);
        else k_chebyshev<T, 3, HasF, false><<<grid, threads, 0, stream>>>(s, d, 0, f, L->pitch, plane, *b, cx, cy, cz, dv, w);
    } else {
        if (dims == 1) k_chebyshev<T, 1, HasF, true><<<grid, threads, 0, stream>>>(s, d, o, f, L->pitch, plane, *b, cx, cy, cz, dv, w);
        else if (dims == 2) k_chebyshev<T, 2, HasF, true><<<grid, threads, 0, stream>>>(s, d, o, f, L->pitch, plane, *b, cx, cy, cz, dv, w);
        else k_chebyshev<T, 3, HasF, true><<<grid, threads, 0, stream>>>(s, d, o, f, L->pitch, plane, *b, cx, cy, cz, dv, w);
    }
    return cudaGetLastError();
}

template <typename T> pyr_status_t chebyshev_run(pyrcu::ctx_t *c, int slot, const pyr_kernel_call_t *call)
{
    const pyr_piece_t *piece = call->piece;
    const int dims = call->coef->dims;
    for (int l = 0; l < call->nboxes; l++) {
        if (pyr_box_empty(&call->boxes[l])) continue;
        for (int a = 0; a < dims; a++)
            if (call->boxes[l].lo[a] < piece->box.lo[a] + 1 || call->boxes[l].hi[a] > piece->box.hi[a] - 1)
                return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: layer %d box outside its piece", l);
    }
    if (call->save_to || call->fill_from) return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: a halo the kernel does not take (kernels.h halo)");
    const T *f = piece->nfields > 1 ? (const T *)piece->buf[1][0] : nullptr;
    pyrcu::stats_t &stats = c->dev->stats;
    const double t0 = pyrcu::serial(c) ? pyrcu::now_s() : 0;
    PYR_CU(cudaSetDevice(c->device));
    cudaStream_t s = c->stream[slot];
    const pyr_klayout_t L = layout_of(piece);
    int cur = piece->cur;
    const int span = pyrcu::span_begin(c, PYR_SPAN_COMPUTE, slot);
    for (int l = 0; l < call->nboxes; l++) {
        const pyr_kbox_t b = local_box(piece, &call->boxes[l]);
        int64_t nw = 0;
        const double *wt = pyr_poisson_weights(call->coef, &nw);
        const T w = (T)pyr_poisson_weight(wt, nw, call->step + l);
        const T *src = (const T *)piece->buf[0][cur];
        T *dst = (T *)piece->buf[0][cur ^ 1];
        const int64_t shift = l == 0 && w != T(1) ? call->older_shift : 0;
        for (const pyr_kbox_t &part : older_chunks(b, dims, shift)) {
            const int64_t back = shift * (dims == 3 ? L.pitch * L.rows : dims == 2 ? L.pitch : 1);
            if (f) PYR_CU((chebyshev_launch<T, true>(dims, src, dst, back, f, &L, &part, call->coef, w, s)));
            else PYR_CU((chebyshev_launch<T, false>(dims, src, dst, back, f, &L, &part, call->coef, w, s)));
            pyrcu::count(stats.launches);
        }
        cur ^= 1;
    }
    pyrcu::span_end(c, span, slot);
    return pyrcu::serial_end(c, slot, t0, &stats.compute_ns);
}

/* Problems with a Neumann face (schemes/poisson.h): one launch per sweep,
 * a thread per node along x, with the CPU kernel's expression term for term:
 * a node on a Neumann face reads the ghost (inner neighbour + t) where its
 * neighbour would be outside the grid; then J, the damping u + om*(J - u)
 * where om != 1, and Chebyshev's p + w*(D - p) where w != 1. */
struct faces_t {
    int on[6];
    int at[6];
};

/* Shifted: the layer two back `back` elements before the node's place, read first (k_chebyshev says why). */
template <typename T, int DIMS, bool HasF, bool Shifted>
__global__ void k_neumann(const T *__restrict__ src, T *__restrict__ dst, int64_t back, const T *__restrict__ f, int64_t pitch, int64_t plane,
                          pyr_kbox_t b, faces_t fc, T t0, T t1, T t2, T t3, T t4, T t5, T cx, T cy, T cz, T dv, T om, T w)
{
    const int x = b.lo[0] + (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (x >= b.hi[0]) return;
    const bool cheb = w != T(1), damp = om != T(1);
    for (int z = b.lo[2] + (int)blockIdx.z; z < b.hi[2]; z += (int)gridDim.z)
        for (int y = b.lo[1] + (int)blockIdx.y; y < b.hi[1]; y += (int)gridDim.y) {
            const int64_t i = (int64_t)z * plane + (int64_t)y * pitch + x;
            T older = T(0);
            if (Shifted) older = dst[i - back];
            T xm, xp;
            if (fc.on[0] && x == fc.at[0]) xp = src[i + 1], xm = add(xp, t0);
            else if (fc.on[1] && x == fc.at[1]) xm = src[i - 1], xp = add(xm, t1);
            else xm = src[i - 1], xp = src[i + 1];
            T s = mul(cx, add(xm, xp));
            if (DIMS >= 2) {
                T ym, yp;
                if (fc.on[2] && y == fc.at[2]) yp = src[i + pitch], ym = add(yp, t2);
                else if (fc.on[3] && y == fc.at[3]) ym = src[i - pitch], yp = add(ym, t3);
                else ym = src[i - pitch], yp = src[i + pitch];
                s = add(s, mul(cy, add(ym, yp)));
            }
            if (DIMS == 3) {
                T zm, zp;
                if (fc.on[4] && z == fc.at[4]) zp = src[i + plane], zm = add(zp, t4);
                else if (fc.on[5] && z == fc.at[5]) zm = src[i - plane], zp = add(zm, t5);
                else zm = src[i - plane], zp = src[i + plane];
                s = add(s, mul(cz, add(zm, zp)));
            }
            const T j = HasF ? mul(add(s, __ldg(f + i)), dv) : mul(s, dv);
            const T u = src[i];
            const T d = damp ? add(u, mul(om, sub(j, u))) : j;
            if (cheb) {
                const T p = Shifted ? older : dst[i];
                dst[i] = add(p, mul(w, sub(d, p)));
            } else {
                dst[i] = d;
            }
        }
}

template <typename T> pyr_status_t neumann_run(pyrcu::ctx_t *c, int slot, const pyr_kernel_call_t *call)
{
    const pyr_piece_t *piece = call->piece;
    const pyr_coef_t *coef = call->coef;
    const int dims = coef->dims;
    if (!coef->aux || coef->naux < PYR_POISSON_FACES_AUX)
        return pyr_fail(PYR_ERR_INTERNAL, "Poisson kernel: Neumann faces without their table");
    faces_t fc;
    T t[6];
    for (int k = 0; k < 6; k++) {
        fc.on[k] = coef->aux[3 * k] != 0;
        t[k] = (T)coef->aux[3 * k + 2];
    }
    for (int l = 0; l < call->nboxes; l++) {
        const pyr_box_t *b = &call->boxes[l];
        if (pyr_box_empty(b)) continue;
        for (int a = 0; a < dims; a++) {
            const int64_t lo = (int64_t)coef->aux[6 * a + 1], hi = (int64_t)coef->aux[6 * a + 4];
            if ((b->lo[a] < piece->box.lo[a] + 1 && !(fc.on[2 * a] && b->lo[a] == lo && b->lo[a] >= piece->box.lo[a])) ||
                (b->hi[a] > piece->box.hi[a] - 1 && !(fc.on[2 * a + 1] && b->hi[a] - 1 == hi && b->hi[a] <= piece->box.hi[a])))
                return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: layer %d box outside its piece", l);
        }
    }
    if (call->save_to || call->fill_from) return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: a halo the kernel does not take (kernels.h halo)");
    int64_t nw = 0;
    const double *wt = pyr_poisson_weights(coef, &nw);
    const bool cheb = coef->c[PYR_POISSON_CHEBYSHEV_COEF] != 0;
    if (cheb && nw < 1) return pyr_fail(PYR_ERR_INTERNAL, "Poisson kernel: Chebyshev sweeps without their weights");
    const T *f = piece->nfields > 1 ? (const T *)piece->buf[1][0] : nullptr;
    pyrcu::stats_t &stats = c->dev->stats;
    const double t0 = pyrcu::serial(c) ? pyrcu::now_s() : 0;
    PYR_CU(cudaSetDevice(c->device));
    cudaStream_t s = c->stream[slot];
    const pyr_klayout_t L = layout_of(piece);
    const int64_t plane = L.pitch * L.rows;
    const T cx = (T)coef->c[0], cy = (T)coef->c[1], cz = (T)coef->c[2], dv = (T)coef->c[3], om = (T)coef->c[4];
    int cur = piece->cur;
    const int span = pyrcu::span_begin(c, PYR_SPAN_COMPUTE, slot);
    for (int l = 0; l < call->nboxes; l++) {
        const T w = cheb ? (T)pyr_poisson_weight(wt, nw, call->step + l) : T(1);
        const T *src = (const T *)piece->buf[0][cur];
        T *dst = (T *)piece->buf[0][cur ^ 1];
        cur ^= 1;
        if (pyr_box_empty(&call->boxes[l])) continue;
        const pyr_kbox_t b = local_box(piece, &call->boxes[l]);
        /* the faces' coordinates in the piece's, as local_box places the box */
        faces_t lf = fc;
        for (int k = 0; k < 6; k++) lf.at[k] = (int)((int64_t)coef->aux[3 * k + 1] - piece->box.lo[k / 2]);
        const int64_t shift = l == 0 && cheb && w != T(1) ? call->older_shift : 0;
        const int64_t back = shift * (dims == 3 ? plane : dims == 2 ? L.pitch : 1);
        for (const pyr_kbox_t &part : older_chunks(b, dims, shift)) {
            const int nx = part.hi[0] - part.lo[0], ny = part.hi[1] - part.lo[1], nz = part.hi[2] - part.lo[2];
            if (nx <= 0 || ny <= 0 || nz <= 0) continue;
            const int threads = 256;
            dim3 grid((unsigned)ceil_div(nx, threads), (unsigned)imin(ny, 65535), (unsigned)imin(nz, 65535));
#define NEUMANN_LAUNCH(D, F)                                                                                                      \
    do {                                                                                                                          \
        if (back)                                                                                                                 \
            k_neumann<T, D, F, true><<<grid, threads, 0, s>>>(src, dst, back, f, L.pitch, plane, part, lf, t[0], t[1], t[2], t[3], t[4], \
                                                              t[5], cx, cy, cz, dv, om, w);                                       \
        else                                                                                                                      \
            k_neumann<T, D, F, false><<<grid, threads, 0, s>>>(src, dst, 0, f, L.pitch, plane, part, lf, t[0], t[1], t[2], t[3], t[4], \
                                                               t[5], cx, cy, cz, dv, om, w);                                      \
    } while (0)
            if (f) {
                if (dims == 1) NEUMANN_LAUNCH(1, true);
                else if (dims == 2) NEUMANN_LAUNCH(2, true);
                else NEUMANN_LAUNCH(3, true);
            } else {
                if (dims == 1) NEUMANN_LAUNCH(1, false);
                else if (dims == 2) NEUMANN_LAUNCH(2, false);
                else NEUMANN_LAUNCH(3, false);
            }
#undef NEUMANN_LAUNCH
            PYR_CU(cudaGetLastError());
            pyrcu::count(stats.launches);
        }
    }
    pyrcu::span_end(c, span, slot);
    return pyrcu::serial_end(c, slot, t0, &stats.compute_ns);
}

/* Fused launches of up to 7 steps in 2D (of 15 for heat): each takes the
 * f rows of its steps from the caches, and fewer instantiations keep the
 * build short. */
pyr_status_t jacobi_run(void *ctx, int slot, const pyr_kernel_call_t *call)
{
    if (call->coef->c[PYR_POISSON_FACES_COEF] != 0) {
        pyrcu::ctx_t *c = (pyrcu::ctx_t *)ctx;
        PYR_TRY(pyrcu::check_slot(c, slot));
        if (call->nboxes <= 0) return PYR_OK;
        return c->elem == 8 ? neumann_run<double>(c, slot, call) : neumann_run<float>(c, slot, call);
    }
    if (call->coef->c[PYR_POISSON_CHEBYSHEV_COEF] != 0) {
        pyrcu::ctx_t *c = (pyrcu::ctx_t *)ctx;
        PYR_TRY(pyrcu::check_slot(c, slot));
        int64_t nw = 0;
        if (!pyr_poisson_weights(call->coef, &nw) || nw < 1)
            return pyr_fail(PYR_ERR_INTERNAL, "Poisson kernel: Chebyshev sweeps without their weights");
        if (call->nboxes <= 0) return PYR_OK;
        return c->elem == 8 ? chebyshev_run<double>(c, slot, call) : chebyshev_run<float>(c, slot, call);
    }
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
    0,
};
