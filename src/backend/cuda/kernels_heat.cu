/* Heat-equation kernels of the CUDA backend.
 *
 * Every update is the expression of src/schemes/heat.h, evaluated with
 * explicitly rounded adds and multiplies (__fadd_rn, __fmul_rn, ...), so no
 * FMA contraction can change a bit whatever the compiler flags.
 *
 * Fused kernels ("2.5D" temporal blocking): a block owns a tile of columns
 * (2D; columns x rows in 3D) and streams along the slowest axis (rows in 2D,
 * planes in 3D).  When row r of the source layer arrives, the block computes
 * row r-1 of step 1, r-2 of step 2, ..., r-K of step K, keeping for every step
 * the two rows before in registers.  The x (and y) neighbours of the row a
 * step needs were produced in the previous iteration, so one shared-memory
 * exchange and one barrier per streamed row serve all K steps.  Tiles overlap
 * by K nodes on each side (the halo, recomputed); only the middle is written.
 * A node outside the box of its step keeps the value of the previous step:
 * for the box sequences the executor gives (nested, shrinking by one per step
 * on every side away from the piece edge) such nodes are never read except
 * piece-edge nodes, which hold the same value in both layers. */
#include "backend/cuda/kernels_heat.cuh"

namespace {

__device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double sub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }

/* u + rx*((xm + xp) - (u + u)) */
template <typename T> __device__ __forceinline__ T stencil1(T u, T xm, T xp, T rx)
{
    return add(u, mul(rx, sub(add(xm, xp), add(u, u))));
}
/* u + (rx*((xm + xp) - (u + u)) + ry*((ym + yp) - (u + u))) */
template <typename T> __device__ __forceinline__ T stencil2(T u, T xm, T xp, T ym, T yp, T rx, T ry)
{
    T uu = add(u, u);
    return add(u, add(mul(rx, sub(add(xm, xp), uu)), mul(ry, sub(add(ym, yp), uu))));
}
/* u + ((rx*(...) + ry*(...)) + rz*((zm + zp) - (u + u))) */
template <typename T> __device__ __forceinline__ T stencil3(T u, T xm, T xp, T ym, T yp, T zm, T zp, T rx, T ry, T rz)
{
    T uu = add(u, u);
    return add(u, add(add(mul(rx, sub(add(xm, xp), uu)), mul(ry, sub(add(ym, yp), uu))), mul(rz, sub(add(zm, zp), uu))));
}

/* V consecutive elements moved as one aligned vector access. */
template <typename T, int V> struct vec_of;
template <> struct vec_of<float, 4> { typedef float4 type; };
template <> struct vec_of<float, 2> { typedef float2 type; };
template <> struct vec_of<double, 2> { typedef double2 type; };

template <typename T, int V> __device__ __forceinline__ void load_vec(const T *p, T (&v)[V])
{
    typedef typename vec_of<T, V>::type VT;
    VT x = __ldg(reinterpret_cast<const VT *>(p));
    const T *e = reinterpret_cast<const T *>(&x);
#pragma unroll
    for (int i = 0; i < V; i++) v[i] = e[i];
}

template <typename T, int V> __device__ __forceinline__ void store_vec(T *p, const T (&v)[V])
{
    typedef typename vec_of<T, V>::type VT;
    VT x;
    T *e = reinterpret_cast<T *>(&x);
#pragma unroll
    for (int i = 0; i < V; i++) e[i] = v[i];
    *reinterpret_cast<VT *>(p) = x;
}

template <typename T, int V> __device__ __forceinline__ void load_shared(const T *p, T (&v)[V])
{
    typedef typename vec_of<T, V>::type VT;
    VT x = *reinterpret_cast<const VT *>(p);
    const T *e = reinterpret_cast<const T *>(&x);
#pragma unroll
    for (int i = 0; i < V; i++) v[i] = e[i];
}

/* ------------------------------------------------------------------ plain */

/* One step: thread per node of `b` along x; blocks loop over rows and planes.
 * Reads src at the node and its 2*DIMS neighbours, writes dst at the node. */
template <typename T, int DIMS>
__global__ void k_step_plain(const T *__restrict__ src, T *__restrict__ dst, int64_t pitch, int64_t plane, pyr_kbox_t b, T rx,
                             T ry, T rz)
{
    int x = b.lo[0] + (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (x >= b.hi[0]) return;
    for (int z = b.lo[2] + (int)blockIdx.z; z < b.hi[2]; z += (int)gridDim.z)
        for (int y = b.lo[1] + (int)blockIdx.y; y < b.hi[1]; y += (int)gridDim.y) {
            int64_t i = (int64_t)z * plane + (int64_t)y * pitch + x;
            T u = src[i];
            T v;
            if (DIMS == 1) v = stencil1(u, src[i - 1], src[i + 1], rx);
            else if (DIMS == 2) v = stencil2(u, src[i - 1], src[i + 1], src[i - pitch], src[i + pitch], rx, ry);
            else
                v = stencil3(u, src[i - 1], src[i + 1], src[i - pitch], src[i + pitch], src[i - plane], src[i + plane], rx, ry,
                             rz);
            dst[i] = v;
        }
}

/* ------------------------------------------------------------------ fused */

template <int K> struct kboxes {
    int x0[K], x1[K], y0[K], y1[K], z0[K], z1[K];
};

/* 2D, K steps.  Block = NT threads (blockDim.x) in a row, thread t owning the
 * V columns c0 = ox - K + t*V ..; the block writes columns [ox, ox + OW) of
 * rows [oy, oy + seg) (clipped to the last box) and streams rows oy-K ..
 * oy+seg+K-1.  Shared memory: [2 buffers][K steps][left/right edge][NT]. */
template <typename T, int V, int K>
__global__ void __launch_bounds__(256) k_fused2d(const T *__restrict__ src, T *__restrict__ dst, int64_t pitch, int rows,
                                                 kboxes<K> b, T rx, T ry, int ox0, int OW, int seg)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *sh = reinterpret_cast<T *>(smem_raw);
    const int NT = (int)blockDim.x, tid = (int)threadIdx.x;
    const int ox = ox0 + (int)blockIdx.x * OW;
    const int c0 = ox - K + tid * V;
    const int oy = b.y0[K - 1] + (int)blockIdx.y * seg;
    const int oy_end = min(oy + seg, b.y1[K - 1]);
    const int wx0 = max(ox, b.x0[K - 1]), wx1 = min(ox + OW, b.x1[K - 1]);
    const int rs = max(oy - K, 0), re = oy_end + K;
    const bool col_ok = c0 >= 0 && (int64_t)c0 + V <= pitch;

    for (int i = tid; i < 2 * K * 2 * NT; i += NT) sh[i] = T(0);
    T a[K][V], m[K][V]; /* per step: the two source rows before the newest */
#pragma unroll
    for (int l = 0; l < K; l++)
#pragma unroll
        for (int v = 0; v < V; v++) a[l][v] = m[l][v] = T(0);
    T nxt[V];
#pragma unroll
    for (int v = 0; v < V; v++) nxt[v] = T(0);
    if (col_ok && rs < rows) load_vec<T, V>(src + (int64_t)rs * pitch + c0, nxt);
    __syncthreads();

    for (int r = rs; r < re; r++) {
        T nw[V];
#pragma unroll
        for (int v = 0; v < V; v++) {
            nw[v] = nxt[v];
            nxt[v] = T(0);
        }
        if (col_ok && r + 1 < rows && r + 1 < re) load_vec<T, V>(src + (int64_t)(r + 1) * pitch + c0, nxt);
        const T *sp = sh + ((r & 1) ^ 1) * (K * 2 * NT);
        T *sc = sh + (r & 1) * (K * 2 * NT);
#pragma unroll
        for (int t = 1; t <= K; t++) {
            const int L = t - 1, y = r - t;
            const T left = tid > 0 ? sp[(L * 2 + 1) * NT + tid - 1] : m[L][0];
            const T right = tid < NT - 1 ? sp[(L * 2) * NT + tid + 1] : m[L][V - 1];
            const bool row_in = y >= b.y0[L] && y < b.y1[L];
            T out[V];
#pragma unroll
            for (int v = 0; v < V; v++) {
                const int c = c0 + v;
                const T u = m[L][v];
                const T xm = v > 0 ? m[L][v - 1] : left;
                const T xp = v < V - 1 ? m[L][v + 1] : right;
                const bool in = row_in && c >= b.x0[L] && c < b.x1[L];
                out[v] = in ? stencil2(u, xm, xp, a[L][v], nw[v], rx, ry) : u;
            }
#pragma unroll
            for (int v = 0; v < V; v++) {
                a[L][v] = m[L][v];
                m[L][v] = nw[v];
                nw[v] = out[v];
            }
        }
        const int y = r - K;
        if (y >= oy && y < oy_end) {
            T *d = dst + (int64_t)y * pitch + c0;
            if (c0 >= wx0 && c0 + V <= wx1) store_vec<T, V>(d, nw);
            else {
#pragma unroll
                for (int v = 0; v < V; v++)
                    if (c0 + v >= wx0 && c0 + v < wx1) d[v] = nw[v];
            }
        }
#pragma unroll
        for (int L = 0; L < K; L++) {
            sc[(L * 2) * NT + tid] = m[L][0];
            sc[(L * 2 + 1) * NT + tid] = m[L][V - 1];
        }
        __syncthreads();
    }
}

/* 3D, K steps.  Block = BX x NTY threads (BX <= 32, chosen per launch so that
 * the tiles cover the box's width with little to spare); thread (tx, ty) owns
 * the V columns c0 = ox - K + tx*V .. of row y = oy - K + ty; the block writes
 * columns [ox, ox + OWx) x rows [oy, oy + OWy) of planes [oz, oz + seg) and
 * streams planes, loading D planes ahead (a register ring) to keep enough
 * bytes in flight.  Shared memory: [2 buffers][K steps][NTY rows][BX*V
 * columns]. */
template <typename T, int V, int K, int D>
__global__ void __launch_bounds__(1024) k_fused3d(const T *__restrict__ src, T *__restrict__ dst, int64_t pitch, int rows,
                                                  int planes, kboxes<K> b, T rx, T ry, T rz, int ox0, int OWx, int oy0, int OWy,
                                                  int seg)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *sh = reinterpret_cast<T *>(smem_raw);
    const int BX = (int)blockDim.x, NTY = (int)blockDim.y, tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    const int W = BX * V;               /* columns of a block */
    const int step_sz = NTY * W;         /* elements of one step's plane */
    const int64_t plane = pitch * rows;
    const int ox = ox0 + (int)blockIdx.x * OWx;
    const int c0 = ox - K + tx * V;
    const int oy = oy0 + (int)blockIdx.y * OWy;
    const int y = oy - K + ty;
    const int oz = b.z0[K - 1] + (int)blockIdx.z * seg;
    const int oz_end = min(oz + seg, b.z1[K - 1]);
    const int wx0 = max(ox, b.x0[K - 1]), wx1 = min(ox + OWx, b.x1[K - 1]);
    const bool row_out = y >= max(oy, b.y0[K - 1]) && y < min(oy + OWy, b.y1[K - 1]);
    const int zs = max(oz - K, 0), ze = oz_end + K;
    const int zload = min(ze, planes);
    const bool ld_ok = c0 >= 0 && (int64_t)c0 + V <= pitch && y >= 0 && y < rows;
    const int me = ty * W + tx * V;

    for (int i = ty * BX + tx; i < 2 * K * step_sz; i += BX * NTY) sh[i] = T(0);
    T a[K][V], m[K][V];
#pragma unroll
    for (int l = 0; l < K; l++)
#pragma unroll
        for (int v = 0; v < V; v++) a[l][v] = m[l][v] = T(0);
    const T *srow = src + (int64_t)y * pitch + c0; /* only dereferenced when ld_ok */
    T ring[D][V];
#pragma unroll
    for (int j = 0; j < D; j++) {
#pragma unroll
        for (int v = 0; v < V; v++) ring[j][v] = T(0);
        if (ld_ok && zs + j < zload) load_vec<T, V>(srow + (int64_t)(zs + j) * plane, ring[j]);
    }
    __syncthreads();

    for (int p0 = zs; p0 < ze; p0 += D) {
#pragma unroll
        for (int j = 0; j < D; j++) {
            const int p = p0 + j;
            if (p >= ze) break; /* uniform over the block */
            T nw[V];
#pragma unroll
            for (int v = 0; v < V; v++) {
                nw[v] = ring[j][v];
                ring[j][v] = T(0);
            }
            if (ld_ok && p + D < zload) load_vec<T, V>(srow + (int64_t)(p + D) * plane, ring[j]);
            const T *sp = sh + ((p & 1) ^ 1) * (K * step_sz);
            T *sc = sh + (p & 1) * (K * step_sz);
#pragma unroll
            for (int t = 1; t <= K; t++) {
                const int L = t - 1, z = p - t;
                const T *s = sp + L * step_sz + me;
                const T left = tx > 0 ? s[-1] : m[L][0];
                const T right = tx < BX - 1 ? s[V] : m[L][V - 1];
                T up[V], dn[V];
#pragma unroll
                for (int v = 0; v < V; v++) up[v] = m[L][v];
#pragma unroll
                for (int v = 0; v < V; v++) dn[v] = m[L][v];
                if (ty > 0) load_shared<T, V>(s - W, up);
                if (ty < NTY - 1) load_shared<T, V>(s + W, dn);
                const bool yz_in = z >= b.z0[L] && z < b.z1[L] && y >= b.y0[L] && y < b.y1[L];
                T out[V];
#pragma unroll
                for (int v = 0; v < V; v++) {
                    const int c = c0 + v;
                    const T u = m[L][v];
                    const T xm = v > 0 ? m[L][v - 1] : left;
                    const T xp = v < V - 1 ? m[L][v + 1] : right;
                    const bool in = yz_in && c >= b.x0[L] && c < b.x1[L];
                    out[v] = in ? stencil3(u, xm, xp, up[v], dn[v], a[L][v], nw[v], rx, ry, rz) : u;
                }
#pragma unroll
                for (int v = 0; v < V; v++) {
                    a[L][v] = m[L][v];
                    m[L][v] = nw[v];
                    nw[v] = out[v];
                }
            }
            const int z = p - K;
            if (row_out && z >= oz && z < oz_end) {
                T *d = dst + (int64_t)z * plane + (int64_t)y * pitch + c0;
                if (c0 >= wx0 && c0 + V <= wx1) store_vec<T, V>(d, nw);
                else {
#pragma unroll
                    for (int v = 0; v < V; v++)
                        if (c0 + v >= wx0 && c0 + v < wx1) d[v] = nw[v];
                }
            }
#pragma unroll
            for (int L = 0; L < K; L++) store_vec<T, V>(sc + L * step_sz + me, m[L]);
            __syncthreads();
        }
    }
}

/* 3D, one step, no shared memory: thread (tx, ty) owns the V columns c0 ..
 * c0+V-1 of row y and walks planes [z0, z1) of its segment keeping planes
 * z-1, z, z+1 (and z+2, loaded ahead) in registers; the y neighbours come as
 * vectors and the x edges as scalars through the L1 cache, where the
 * neighbouring threads' loads of the same rows already brought them.  Writes
 * the nodes of box `b` only. */
template <typename T, int V>
__global__ void __launch_bounds__(256) k_stream3d(const T *__restrict__ src, T *__restrict__ dst, int64_t pitch, int rows, pyr_kbox_t b,
                                                  T rx, T ry, T rz, int cbase, int seg)
{
    const int c0 = cbase + ((int)blockIdx.x * 32 + (int)threadIdx.x) * V;
    const int y = b.lo[1] + (int)blockIdx.y * (int)blockDim.y + (int)threadIdx.y;
    if (c0 >= b.hi[0] || y >= b.hi[1]) return;
    const int z0 = b.lo[2] + (int)blockIdx.z * seg, z1 = min(z0 + seg, b.hi[2]);
    const int64_t plane = pitch * rows;
    const T *s = src + (int64_t)y * pitch + c0;
    T *d = dst + (int64_t)y * pitch + c0;
    const bool has_xm = c0 > 0, has_xp = (int64_t)c0 + V < pitch;
    T zm[V], u[V], zp[V], zq[V];
    load_vec<T, V>(s + (int64_t)(z0 - 1) * plane, zm);
    load_vec<T, V>(s + (int64_t)z0 * plane, u);
    load_vec<T, V>(s + (int64_t)(z0 + 1) * plane, zp);
    for (int z = z0; z < z1; z++) {
        const T *sz = s + (int64_t)z * plane;
        /* plane z+2 exists whenever z+1 < z1 <= planes-1 */
#pragma unroll
        for (int v = 0; v < V; v++) zq[v] = u[v];
        if (z + 1 < z1) load_vec<T, V>(sz + 2 * plane, zq);
        T ym[V], yp[V];
        load_vec<T, V>(sz - pitch, ym);
        load_vec<T, V>(sz + pitch, yp);
        const T xm0 = has_xm ? __ldg(sz - 1) : u[0];
        const T xpv = has_xp ? __ldg(sz + V) : u[V - 1];
        T out[V];
        bool all = c0 >= b.lo[0] && c0 + V <= b.hi[0];
#pragma unroll
        for (int v = 0; v < V; v++) {
            const T xm = v > 0 ? u[v - 1] : xm0;
            const T xp = v < V - 1 ? u[v + 1] : xpv;
            out[v] = stencil3(u[v], xm, xp, ym[v], yp[v], zm[v], zp[v], rx, ry, rz);
        }
        T *dz = d + (int64_t)z * plane;
        if (all) store_vec<T, V>(dz, out);
        else {
#pragma unroll
            for (int v = 0; v < V; v++)
                if (c0 + v >= b.lo[0] && c0 + v < b.hi[0]) dz[v] = out[v];
        }
#pragma unroll
        for (int v = 0; v < V; v++) {
            zm[v] = u[v];
            u[v] = zp[v];
            zp[v] = zq[v];
        }
    }
}

/* ------------------------------------------------------------------- copy */

/* Thread per node along x; blocks loop over rows and planes of the box. */
template <typename W>
__global__ void k_copy(const W *__restrict__ src, int64_t sp, int64_t splane, W *d0, W *d1, int64_t dp, int64_t dplane, int w, int ny,
                       int nz)
{
    int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (x >= w) return;
    for (int z = (int)blockIdx.z; z < nz; z += (int)gridDim.z)
        for (int y = (int)blockIdx.y; y < ny; y += (int)gridDim.y) {
            W v = src[(int64_t)z * splane + (int64_t)y * sp + x];
            int64_t o = (int64_t)z * dplane + (int64_t)y * dp + x;
            if (d0) d0[o] = v;
            if (d1) d1[o] = v;
        }
}

/* ----------------------------------------------------------------- launch */

int imin(int a, int b) { return a < b ? a : b; }
int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int ceil_div(int a, int b) { return (a + b - 1) / b; }

/* Segments along the streamed axis: the count minimising waves x (segment
 * length + 2K halo rows), with `per_wave` blocks resident at once. */
int choose_segment(int extent, int tiles, int per_wave, int K)
{
    int best_seg = extent;
    double best = -1;
    int max_n = extent < 4096 ? extent : 4096;
    for (int n = 1; n <= max_n; n++) {
        int seg = ceil_div(extent, n);
        if (n > 1 && ceil_div(extent, n - 1) == seg) continue;
        long long blocks = (long long)tiles * n;
        long long waves = (blocks + per_wave - 1) / per_wave;
        double cost = (double)waves * (double)(seg + 2 * K);
        if (best < 0 || cost < best) {
            best = cost;
            best_seg = seg;
        }
    }
    return best_seg;
}

template <typename K_> cudaError_t occupancy(K_ kernel, int threads, size_t smem, int *per_sm)
{
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return e;
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, kernel, threads, smem);
    if (e == cudaSuccess && *per_sm < 1) *per_sm = 1;
    return e;
}

template <int K> kboxes<K> pack(const pyr_kbox_t *boxes)
{
    kboxes<K> kb;
    for (int l = 0; l < K; l++) {
        kb.x0[l] = boxes[l].lo[0];
        kb.x1[l] = boxes[l].hi[0];
        kb.y0[l] = boxes[l].lo[1];
        kb.y1[l] = boxes[l].hi[1];
        kb.z0[l] = boxes[l].lo[2];
        kb.z1[l] = boxes[l].hi[2];
    }
    return kb;
}

template <typename T, int V, int K>
cudaError_t launch2d(const T *src, T *dst, const pyr_klayout_t *L, const pyr_kbox_t *boxes, const double r[3], const pyr_ktune_t *tune,
                     cudaStream_t stream)
{
    const pyr_kbox_t &last = boxes[K - 1];
    const int NT = tune->nt2d;
    const int OW = (NT * V - 2 * K) / V * V;
    const int ox0 = floor_div(last.lo[0] - K, V) * V + K;
    const int tiles = ceil_div(last.hi[0] - ox0, OW);
    const size_t smem = (size_t)2 * K * 2 * NT * sizeof(T);
    int per_sm = 1;
    cudaError_t e = occupancy(k_fused2d<T, V, K>, NT, smem, &per_sm);
    if (e != cudaSuccess) return e;
    const int rows_out = last.hi[1] - last.lo[1];
    const int seg = choose_segment(rows_out, tiles, per_sm * tune->sms, K);
    dim3 grid((unsigned)tiles, (unsigned)ceil_div(rows_out, seg));
    k_fused2d<T, V, K><<<grid, NT, smem, stream>>>(src, dst, L->pitch, L->rows, pack<K>(boxes), (T)r[0], (T)r[1], ox0, OW, seg);
    return cudaGetLastError();
}

template <typename T, int V, int K>
cudaError_t launch3d(const T *src, T *dst, const pyr_klayout_t *L, const pyr_kbox_t *boxes, const double r[3], const pyr_ktune_t *tune,
                     cudaStream_t stream)
{
    const pyr_kbox_t &last = boxes[K - 1];
    const int ox0 = floor_div(last.lo[0] - K, V) * V + K;
    const int span_x = last.hi[0] - ox0, span_y = last.hi[1] - last.lo[1];
    if (span_x <= 0 || span_y <= 0 || last.hi[2] <= last.lo[2]) return cudaSuccess;
    /* As many tiles as blocks of 32 x NTY threads would need, each made only
     * as wide and as tall as an even share of the box needs: a box of 381
     * columns takes 4 tiles of 96 results (26 threads across) instead of 4 of
     * 120 with a fourth mostly idle.  The per-launch saving is the waste of
     * the last tile, which matters in pieces (boxes of a few hundred nodes). */
    const int OWx_max = (32 * V - 2 * K) / V * V;
    const int tx = ceil_div(span_x, OWx_max);
    const int OWx = ceil_div(ceil_div(span_x, tx), V) * V;
    const int BX = ceil_div(OWx + 2 * K, V);
    /* narrower blocks take more rows (up to 1024 threads): less of the y halo */
    const int nty_max = imin(1024 / BX, tune->nty3d * 32 / BX);
    const int ty = ceil_div(span_y, nty_max - 2 * K);
    const int OWy = ceil_div(span_y, ty), NTY = OWy + 2 * K;
    const size_t smem = (size_t)2 * K * NTY * BX * V * sizeof(T);
    int per_sm = 1;
    cudaError_t e = occupancy(k_fused3d<T, V, K, (K == 1 ? 4 : 2)>, BX * NTY, smem, &per_sm);
    if (e != cudaSuccess) return e;
    const int planes_out = last.hi[2] - last.lo[2];
    const int seg = choose_segment(planes_out, tx * ty, per_sm * tune->sms, K);
    dim3 grid((unsigned)tx, (unsigned)ty, (unsigned)ceil_div(planes_out, seg));
    dim3 block((unsigned)BX, (unsigned)NTY);
    k_fused3d<T, V, K, (K == 1 ? 4 : 2)><<<grid, block, smem, stream>>>(src, dst, L->pitch, L->rows, L->planes, pack<K>(boxes), (T)r[0], (T)r[1],
                                                      (T)r[2], ox0, OWx, last.lo[1], OWy, seg);
    return cudaGetLastError();
}

template <typename T, int V>
cudaError_t launch_stream3d(const T *src, T *dst, const pyr_klayout_t *L, const pyr_kbox_t &b, const double r[3], const pyr_ktune_t *tune,
                            cudaStream_t stream)
{
    const int NTY = 8;
    const int cbase = floor_div(b.lo[0], V) * V;
    const int tx = ceil_div(ceil_div(b.hi[0] - cbase, V), 32);
    const int ty = ceil_div(b.hi[1] - b.lo[1], NTY);
    int per_sm = 1;
    cudaError_t e = occupancy(k_stream3d<T, V>, 32 * NTY, 0, &per_sm);
    if (e != cudaSuccess) return e;
    const int planes_out = b.hi[2] - b.lo[2];
    const int seg = choose_segment(planes_out, tx * ty, per_sm * tune->sms, 1);
    dim3 grid((unsigned)tx, (unsigned)ty, (unsigned)ceil_div(planes_out, seg));
    dim3 block(32, NTY);
    k_stream3d<T, V><<<grid, block, 0, stream>>>(src, dst, L->pitch, L->rows, b, (T)r[0], (T)r[1], (T)r[2], cbase, seg);
    return cudaGetLastError();
}

template <typename T, int V>
cudaError_t fused_typed(int dims, const void *src, void *dst, const pyr_klayout_t *L, const pyr_kbox_t *boxes, int k, const double r[3],
                        const pyr_ktune_t *tune, cudaStream_t stream)
{
    const T *s = static_cast<const T *>(src);
    T *d = static_cast<T *>(dst);
    if (dims == 2) {
        switch (k) {
        case 1: return launch2d<T, V, 1>(s, d, L, boxes, r, tune, stream);
        case 3: return launch2d<T, V, 3>(s, d, L, boxes, r, tune, stream);
        case 5: return launch2d<T, V, 5>(s, d, L, boxes, r, tune, stream);
        case 7: return launch2d<T, V, 7>(s, d, L, boxes, r, tune, stream);
        case 9: return launch2d<T, V, 9>(s, d, L, boxes, r, tune, stream);
        case 11: return launch2d<T, V, 11>(s, d, L, boxes, r, tune, stream);
        case 13: return launch2d<T, V, 13>(s, d, L, boxes, r, tune, stream);
        case 15: return launch2d<T, V, 15>(s, d, L, boxes, r, tune, stream);
        default: return cudaErrorInvalidValue;
        }
    }
    switch (k) {
    case 1:
        if (tune->stream3d) return launch_stream3d<T, V>(s, d, L, boxes[0], r, tune, stream);
        return launch3d<T, V, 1>(s, d, L, boxes, r, tune, stream);
    case 3: return launch3d<T, V, 3>(s, d, L, boxes, r, tune, stream);
    case 5: return launch3d<T, V, 5>(s, d, L, boxes, r, tune, stream);
    default: return cudaErrorInvalidValue;
    }
}

} // namespace

cudaError_t pyr_k_fused(size_t elem, int dims, const void *src, void *dst, const pyr_klayout_t *L, const pyr_kbox_t *boxes, int k,
                        const double r[3], const pyr_ktune_t *tune, cudaStream_t stream)
{
    if (elem == 8) return fused_typed<double, 2>(dims, src, dst, L, boxes, k, r, tune, stream);
    return fused_typed<float, 4>(dims, src, dst, L, boxes, k, r, tune, stream);
}

cudaError_t pyr_k_step_plain(size_t elem, int dims, const void *src, void *dst, const pyr_klayout_t *L, const pyr_kbox_t *b,
                             const double r[3], cudaStream_t stream)
{
    const int w = b->hi[0] - b->lo[0], ny = b->hi[1] - b->lo[1], nz = b->hi[2] - b->lo[2];
    if (w <= 0 || ny <= 0 || nz <= 0) return cudaSuccess;
    const int threads = 256;
    dim3 grid((unsigned)ceil_div(w, threads), (unsigned)imin(ny, 65535), (unsigned)imin(nz, 65535));
    const int64_t plane = L->pitch * L->rows;
    if (elem == 8) {
        const double *s = static_cast<const double *>(src);
        double *d = static_cast<double *>(dst);
        if (dims == 1) k_step_plain<double, 1><<<grid, threads, 0, stream>>>(s, d, L->pitch, plane, *b, r[0], r[1], r[2]);
        else if (dims == 2) k_step_plain<double, 2><<<grid, threads, 0, stream>>>(s, d, L->pitch, plane, *b, r[0], r[1], r[2]);
        else k_step_plain<double, 3><<<grid, threads, 0, stream>>>(s, d, L->pitch, plane, *b, r[0], r[1], r[2]);
    } else {
        const float *s = static_cast<const float *>(src);
        float *d = static_cast<float *>(dst);
        const float rx = (float)r[0], ry = (float)r[1], rz = (float)r[2];
        if (dims == 1) k_step_plain<float, 1><<<grid, threads, 0, stream>>>(s, d, L->pitch, plane, *b, rx, ry, rz);
        else if (dims == 2) k_step_plain<float, 2><<<grid, threads, 0, stream>>>(s, d, L->pitch, plane, *b, rx, ry, rz);
        else k_step_plain<float, 3><<<grid, threads, 0, stream>>>(s, d, L->pitch, plane, *b, rx, ry, rz);
    }
    return cudaGetLastError();
}

cudaError_t pyr_k_copy_box(size_t elem, const void *src, const pyr_klayout_t *SL, const pyr_kbox_t *sb, void *dst0, void *dst1,
                           const pyr_klayout_t *DL, const pyr_kbox_t *db, cudaStream_t stream)
{
    const int w = sb->hi[0] - sb->lo[0], ny = sb->hi[1] - sb->lo[1], nz = sb->hi[2] - sb->lo[2];
    if (w <= 0 || ny <= 0 || nz <= 0 || (!dst0 && !dst1)) return cudaSuccess;
    const int64_t splane = SL->pitch * SL->rows, dplane = DL->pitch * DL->rows;
    const int64_t so = (int64_t)sb->lo[2] * splane + (int64_t)sb->lo[1] * SL->pitch + sb->lo[0];
    const int64_t doff = (int64_t)db->lo[2] * dplane + (int64_t)db->lo[1] * DL->pitch + db->lo[0];
    const int threads = w >= 256 ? 256 : 64;
    dim3 grid((unsigned)ceil_div(w, threads), (unsigned)imin(ny, 65535), (unsigned)imin(nz, 65535));
    if (elem == 8) {
        const unsigned long long *s = static_cast<const unsigned long long *>(src) + so;
        unsigned long long *d0 = dst0 ? static_cast<unsigned long long *>(dst0) + doff : nullptr;
        unsigned long long *d1 = dst1 ? static_cast<unsigned long long *>(dst1) + doff : nullptr;
        k_copy<unsigned long long><<<grid, threads, 0, stream>>>(s, SL->pitch, splane, d0, d1, DL->pitch, dplane, w, ny, nz);
    } else {
        const unsigned *s = static_cast<const unsigned *>(src) + so;
        unsigned *d0 = dst0 ? static_cast<unsigned *>(dst0) + doff : nullptr;
        unsigned *d1 = dst1 ? static_cast<unsigned *>(dst1) + doff : nullptr;
        k_copy<unsigned><<<grid, threads, 0, stream>>>(s, SL->pitch, splane, d0, d1, DL->pitch, dplane, w, ny, nz);
    }
    return cudaGetLastError();
}

const void *pyr_k_probe_symbol(void) { return reinterpret_cast<const void *>(&k_copy<unsigned>); }
