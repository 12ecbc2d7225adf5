/* Stencil kernels of the CUDA backend, shared by every scheme whose sub-step
 * is one ping-pong stencil reading one node each way (heat, Poisson).  A
 * scheme supplies an Op: its update of one node from the node, its 2*dims
 * neighbours and (when Op::kAux) the value of its input field at the node,
 * each written with explicitly rounded adds and multiplies (__fadd_rn,
 * __fmul_rn, ...), so no FMA contraction can change a bit whatever the
 * compiler flags.  Coordinates here are piece-local: column c = x -
 * piece.lo.x, row = y - piece.lo.y, plane = z - piece.lo.z; boxes are
 * half-open [lo, hi) in those coordinates.  An input field shares the
 * piece's layout, so it is read at the same element offset.
 *
 * Fused kernels ("2.5D" temporal blocking): a block owns a tile of columns
 * (2D; columns x rows in 3D) and streams along the slowest axis (rows in 2D,
 * planes in 3D; a 3D launch on a box thin in z streams y instead, its rows
 * then z: backend/launch_tiles3d.h chooses).  When row r of the source layer
 * arrives, the block computes row r-1 of step 1, r-2 of step 2, ..., r-K of step K, keeping for every step
 * the two rows before (in registers; 3D float keeps its planes in shared
 * memory instead, see fused3d_planes).  The x (and y) neighbours of the row a
 * step needs were produced in the previous iteration, so one shared-memory
 * exchange and one barrier per streamed row serve all K steps.  Tiles overlap
 * by K nodes on each side (the halo, recomputed); only the middle is written.
 * A node outside the box of its step keeps the value of the previous step:
 * for the box sequences the executor gives (nested, shrinking by one per step
 * on every side away from the piece edge) such nodes are never read except
 * piece-edge nodes, which hold the same value in both layers; so the 3D
 * kernels test only those (test_boxes).
 *
 * Include once per scheme file (kernels_heat.cu, kernels_poisson.cu): it
 * defines templates in an anonymous namespace. */
#ifndef PYR_BACKEND_CUDA_STENCIL_FUSED_CUH
#define PYR_BACKEND_CUDA_STENCIL_FUSED_CUH

#include <string.h>

#include <mutex>
#include <type_traits>

#include "backend/cuda/cuda_internal.cuh"
#include "backend/cuda/rounded.cuh"
#include "backend/launch_segments.h"
#include "backend/launch_split.h"
#include "backend/launch_tiles3d.h"

/* The largest number of time steps one fused launch may take. */
#define PYR_CUDA_KMAX 15

typedef struct {
    int lo[3], hi[3];
} pyr_kbox_t;

/* A launch's halo through the skewed stores (kernels.h halo): the box it saves and the box it reads from
 * its fill store, in the piece's local coordinates (an empty box: none), and the elements from a node of
 * the launch's input to its place in each store. */
typedef struct {
    pyr_kbox_t save, fill;
    int64_t sdelta, fdelta;
} pyr_khalo_t;

/* Geometry of one piece buffer. */
typedef struct {
    int64_t pitch; /* elements per row */
    int rows;      /* rows per plane */
    int planes;
} pyr_klayout_t;

/* Launch shapes of a variant: steps per fused launch and threads. */
typedef struct {
    int kmax;  /* steps per fused launch (odd) */
    int nt2d;  /* threads per block of the 2D fused kernel (128 or 256) */
    int nty3d; /* rows per block of the 3D fused kernel (8..32) */
    int plain; /* one step per launch with the plain kernel */
    int sms;   /* multiprocessors */
    int force_stream;      /* the axis 3D fused launches stream, forced by the tests (cuda_api.h pyr_cuda_force_stream):
                              0 the layout's choice, 1 z, 2 y */
    pyrcu::stats_t *stats; /* the device's counters (NULL: none) */
} pyr_ktune_t;



namespace {

/* The block's barrier where its warps may reach it from different places:
 * in an edge tile the warps with nodes outside a step's box run the row
 * (plane) loop with the per-node box tests, the others the loop without
 * them (warp_inside), and the two loops meet at each row's barrier.
 * barrier.sync without .aligned is PTX's barrier for that case
 * (__syncthreads is the .aligned form: every thread at the same one); like
 * it, it orders the block's shared-memory accesses. */
__device__ __forceinline__ void block_sync() { asm volatile("barrier.sync 0;" ::: "memory"); }

/* Whether every thread of the calling warp has its nodes inside every
 * step's box (the warp's threads are converged here). */
__device__ __forceinline__ bool warp_inside(const bool mine) { return __all_sync(__activemask(), mine); }

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
 * Reads src at the node and its 2*DIMS neighbours (and the input field at
 * the node), writes dst at the node. */
template <typename T, int DIMS, typename Op>
__global__ void k_step_plain(const T *__restrict__ src, T *__restrict__ dst, int64_t pitch, int64_t plane, pyr_kbox_t b, Op op)
{
    int x = b.lo[0] + (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (x >= b.hi[0]) return;
    for (int z = b.lo[2] + (int)blockIdx.z; z < b.hi[2]; z += (int)gridDim.z)
        for (int y = b.lo[1] + (int)blockIdx.y; y < b.hi[1]; y += (int)gridDim.y) {
            int64_t i = (int64_t)z * plane + (int64_t)y * pitch + x;
            T u = src[i];
            const T f = op.aux_at(i);
            T v;
            if (DIMS == 1) v = op.s1(u, src[i - 1], src[i + 1], f);
            else if (DIMS == 2) v = op.s2(u, src[i - 1], src[i + 1], src[i - pitch], src[i + pitch], f);
            else v = op.s3(u, src[i - 1], src[i + 1], src[i - pitch], src[i + pitch], src[i - plane], src[i + plane], f);
            dst[i] = v;
        }
}

/* ------------------------------------------------------------------ fused */

template <int K> struct kboxes {
    int x0[K], x1[K], y0[K], y1[K], z0[K], z1[K];
};

/* Every step's box has the same columns (in core; a piece's sides at the grid's walls) */
template <int K> __host__ __device__ __forceinline__ bool same_columns(const kboxes<K> &b)
{
    bool same = true;
    for (int l = 1; l < K; l++) same = same && b.x0[l] == b.x0[0] && b.x1[l] == b.x1[0];
    return same;
}

/* Steps the streaming loops share (each a few straight lines, inlined).
 * take_next: the vector loaded one row (plane) ahead becomes this
 * iteration's, and the next is loaded from g when `load`.  rotate: a
 * thread's register rows move one on (a <- m <- nw <- out) after a step.
 * aux_start / aux_shift: the input field's ring (fa[l] at the plane step
 * l + 1 computes, fn at the newest) starts at zero / moves one plane on, fn
 * loaded at `off` when `load`.  store_part: the last step's result at g,
 * the whole vector when `full`, else its columns in [wx0, wx1). */
template <typename T, int V> __device__ __forceinline__ void take_next(T (&nw)[V], T (&next)[V], const bool load, const T *g)
{
#pragma unroll
    for (int v = 0; v < V; v++) {
        nw[v] = next[v];
        next[v] = T(0);
    }
    if (load) load_vec<T, V>(g, next);
}

template <typename T, int V> __device__ __forceinline__ void rotate(T (&a)[V], T (&m)[V], T (&nw)[V], const T (&out)[V])
{
#pragma unroll
    for (int v = 0; v < V; v++) {
        a[v] = m[v];
        m[v] = nw[v];
        nw[v] = out[v];
    }
}

template <typename T, int V, int N, typename Op>
__device__ __forceinline__ void aux_start(T (&fa)[N][V], T (&fn)[V], const bool load, const Op &op, const int64_t off)
{
#pragma unroll
    for (int v = 0; v < V; v++) fn[v] = T(0);
#pragma unroll
    for (int l = 0; l < N; l++)
#pragma unroll
        for (int v = 0; v < V; v++) fa[l][v] = T(0);
    if (load) op.aux_vec(off, fn);
}

template <typename T, int V, int N, typename Op>
__device__ __forceinline__ void aux_shift(T (&fa)[N][V], T (&fn)[V], const bool load, const Op &op, const int64_t off)
{
#pragma unroll
    for (int l = N - 1; l > 0; l--)
#pragma unroll
        for (int v = 0; v < V; v++) fa[l][v] = fa[l - 1][v];
#pragma unroll
    for (int v = 0; v < V; v++) {
        fa[0][v] = fn[v];
        fn[v] = T(0);
    }
    if (load) op.aux_vec(off, fn);
}

/* The streamed range [s, e) of a loop where at index i step l (0-based)
 * computes row (plane) i - 1 - l: [a, b) are the indices where every step's
 * lies inside its box lo[l] .. hi[l] - 1 (run without a test per step). */
template <int K>
__device__ __forceinline__ void untested_range(const int s, const int e, const int (&lo)[K], const int (&hi)[K], int &a, int &b)
{
    a = s;
    b = e;
#pragma unroll
    for (int l = 0; l < K; l++) {
        a = max(a, lo[l] + l + 1);
        b = min(b, hi[l] + l + 1);
    }
    a = min(a, e);
    b = max(b, a);
}

template <typename T, int V>
__device__ __forceinline__ void store_part(T *g, const T (&nw)[V], const bool full, const int c0, const int wx0, const int wx1)
{
    if (full) store_vec<T, V>(g, nw);
    else {
#pragma unroll
        for (int v = 0; v < V; v++)
            if (c0 + v >= wx0 && c0 + v < wx1) g[v] = nw[v];
    }
}

/* 2D, K steps.  Block = NT threads (blockDim.x) in a row, thread t owning the
 * V columns c0 = ox - K + t*V ..; the block writes columns [ox, ox + OW) of
 * rows [oy, oy + seg) (clipped to the last box) and streams rows oy-K ..
 * oy+seg+K-1.  Shared memory: [2 buffers][K steps][left/right edge][NT + 2]:
 * thread t puts its edges at t + 1, so its neighbours' are at t and t + 2
 * (the two pads, never written, hold zeros: they reach only the tile's halo,
 * which is recomputed and never written).
 *
 * The rows are streamed by fused2d_rows, made three times: a warp whose
 * columns lie inside every step's box (all warps but those at the box's
 * sides) runs the copy without a per-node column test (EDGE = 0), the others
 * with a select per node: EDGE = 1 where every step's box has the same
 * columns (each column's test made once, before the rows), EDGE = 2 where
 * they differ (a test per node and step).  Per warp, not per block: in a
 * tile at the box's side only the outer warp pays for the tests; and one
 * test per column for the grid's walls (EDGE = 1) rather than one per node
 * and step (EDGE = 2).  Both measured faster.
 * The row loop runs in three parts: rows where some step's row lies outside
 * its box (a test per step), between them the rows where none does (no test,
 * no select per node); the global addresses advance by a row per iteration
 * (no 64-bit multiplies).  Those two are what made the fused launches fast,
 * and deeper launches pay (measured: docs/performance.md#heat-2d-temporal-blocking). */
/* The row loop's unrolling and the blocks per SM the register budget must
 * allow (blocks of 256 threads).  Double up to seven steps: unrolled by three
 * (the rotation's period: no moves) with three blocks up to five steps, two
 * at seven, which ran faster than rolled.  Float: rolled, and no bound (80
 * registers: three blocks anyway); unrolled it needs ~100 registers, two
 * blocks, and ran slower (measured: docs/performance.md#heat-2d-temporal-blocking).
 * An Op says whether its rows may be unrolled (Op::kUnrollRows: Jacobi's spill). */
template <typename T, int K, typename Op> struct unroll2d {
    static constexpr int value = sizeof(T) == 8 && K <= 7 && Op::kUnrollRows ? 3 : 1;
};
template <typename T, int K, typename Op> struct min_blocks2d {
    static constexpr int value = unroll2d<T, K, Op>::value == 3 ? (K <= 5 ? 3 : 2) : 1;
};

template <typename T, int V, int K, int EDGE, typename Op>
__device__ __forceinline__ void fused2d_rows(const T *__restrict__ src, T *__restrict__ dst, const int64_t pitch, const int rows,
                                             const kboxes<K> &b, const Op &op, T *sh, const int NT, const int tid, const int c0,
                                             const int oy, const int oy_end, const int wx0, const int wx1, const int rs, const int re,
                                             const bool col_ok)
{
    const int SE = NT + 2;        /* one edge array */
    const int SB = K * 2 * SE;    /* one buffer */
    T a[K][V], m[K][V]; /* per step: the two source rows before the newest */
#pragma unroll
    for (int l = 0; l < K; l++)
#pragma unroll
        for (int v = 0; v < V; v++) a[l][v] = m[l][v] = T(0);
    T nxt[V];
#pragma unroll
    for (int v = 0; v < V; v++) nxt[v] = T(0);
    const T *gl = src + (int64_t)(rs + 1) * pitch + c0; /* row r + 1 (read only when col_ok) */
    T *gs = dst + (int64_t)(rs - K) * pitch + c0;       /* row r - K */
    if (col_ok && rs < rows) load_vec<T, V>(gl - pitch, nxt);
    const bool full_store = c0 >= wx0 && c0 + V <= wx1;
    const bool some_store = c0 + V > wx0 && c0 < wx1;
    const int rload = min(rows, re);
    /* EDGE == 1: every step's box has the same columns (the grid's walls: in core, and a piece's sides
     * at a wall), so whether a node's column lies inside is known here, once */
    bool cin[V];
#pragma unroll
    for (int v = 0; v < V; v++) cin[v] = c0 + v >= b.x0[0] && c0 + v < b.x1[0];
    block_sync();

    /* one row; YT: test each step's row against its box */
    auto body = [&](const int r, auto yt) {
        constexpr bool YT = decltype(yt)::value;
        T nw[V];
        take_next<T, V>(nw, nxt, col_ok && r + 1 < rload, gl);
        gl += pitch;
        const int odd = r & 1;
        const T *sp = sh + (odd ? 0 : SB) + tid;
        T *sc = sh + (odd ? SB : 0) + tid + 1;
#pragma unroll
        for (int t = 1; t <= K; t++) {
            const int L = t - 1, y = r - t;
            const T left = sp[(L * 2 + 1) * SE];
            const T right = sp[(L * 2) * SE + 2];
            const bool row_in = !YT || (y >= b.y0[L] && y < b.y1[L]);
            T aux[V];
#pragma unroll
            for (int v = 0; v < V; v++) aux[v] = T(0);
            if (Op::kAux && row_in && col_ok) op.aux_vec((int64_t)y * pitch + c0, aux);
            T out[V];
#pragma unroll
            for (int v = 0; v < V; v++) {
                const int c = c0 + v;
                const T u = m[L][v];
                const T xm = v > 0 ? m[L][v - 1] : left;
                const T xp = v < V - 1 ? m[L][v + 1] : right;
                const bool in = EDGE == 2 ? row_in && c >= b.x0[L] && c < b.x1[L] : EDGE == 1 ? row_in && cin[v] : row_in;
                const T val = op.s2(u, xm, xp, a[L][v], nw[v], aux[v]);
                out[v] = (EDGE || YT) ? (in ? val : u) : val;
            }
            rotate<T, V>(a[L], m[L], nw, out);
        }
        const int y = r - K;
        if (some_store && y >= oy && y < oy_end) store_part<T, V>(gs, nw, full_store, c0, wx0, wx1);
        gs += pitch;
#pragma unroll
        for (int L = 0; L < K; L++) {
            sc[(L * 2) * SE] = m[L][0];
            sc[(L * 2 + 1) * SE] = m[L][V - 1];
        }
        block_sync();
    };
    /* rows [ra, rb): every step's row inside its box (no test) */
    int ra, rb;
    untested_range<K>(rs, re, b.y0, b.y1, ra, rb);
    int r = rs;
    for (; r < ra; r++) body(r, std::true_type());
    constexpr int U2 = unroll2d<T, K, Op>::value;
#pragma unroll (U2)
    for (; r < rb; r++) body(r, std::false_type());
    for (; r < re; r++) body(r, std::true_type());
}

template <typename T, int V, int K, typename Op>
__global__ void __launch_bounds__(256, min_blocks2d<T, K, Op>::value) k_fused2d(const T *__restrict__ src, T *__restrict__ dst, int64_t pitch, int rows,
                                                 kboxes<K> b, Op op, int ox0, int OW, int seg, int seg_edge)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *sh = reinterpret_cast<T *>(smem_raw);
    const int NT = (int)blockDim.x, tid = (int)threadIdx.x;
    const int ox = ox0 + (int)blockIdx.x * OW;
    const int c0 = ox - K + tid * V;
    /* the block's columns [ox - K, ox - K + NT*V) inside every step's box?  (the same test as
     * pyr_edge_tiles's: a tile that is not takes segments of seg_edge rows) */
    const int bx0 = ox - K, bx1 = ox - K + NT * V;
    bool inner = bx0 >= 0 && (int64_t)bx1 <= pitch;
#pragma unroll
    for (int l = 0; l < K; l++) inner = inner && bx0 >= b.x0[l] && bx1 <= b.x1[l];
    const int sg = inner ? seg : seg_edge;
    const int oy = b.y0[K - 1] + (int)blockIdx.y * sg;
    if (oy >= b.y1[K - 1]) return; /* the grid has rows for the edge tiles' extra segments */
    const int oy_end = min(oy + sg, b.y1[K - 1]);
    const int wx0 = max(ox, b.x0[K - 1]), wx1 = min(ox + OW, b.x1[K - 1]);
    const int rs = max(oy - K, 0), re = oy_end + K;
    const bool col_ok = c0 >= 0 && (int64_t)c0 + V <= pitch;
    for (int i = tid; i < 2 * K * 2 * (NT + 2); i += NT) sh[i] = T(0);
    /* in an edge tile, the warps whose columns lie inside every step's box skip the tests too */
    int xlo = b.x0[0], xhi = b.x1[0];
#pragma unroll
    for (int l = 1; l < K; l++) xlo = max(xlo, b.x0[l]), xhi = min(xhi, b.x1[l]);
    if (!inner) inner = warp_inside(c0 >= xlo && c0 + V <= xhi);
    if (inner) fused2d_rows<T, V, K, 0, Op>(src, dst, pitch, rows, b, op, sh, NT, tid, c0, oy, oy_end, wx0, wx1, rs, re, true);
    else if (same_columns<K>(b))
        fused2d_rows<T, V, K, 1, Op>(src, dst, pitch, rows, b, op, sh, NT, tid, c0, oy, oy_end, wx0, wx1, rs, re, col_ok);
    else fused2d_rows<T, V, K, 2, Op>(src, dst, pitch, rows, b, op, sh, NT, tid, c0, oy, oy_end, wx0, wx1, rs, re, col_ok);
}

/* A 3D fused launch's view of a piece buffer: x stays the fastest axis (nx columns per row); a block's
 * rows and streamed planes are y and z, or z and y when the launch streams y (TR, launch_tiles3d.h): rows
 * ys elements apart, planes zs.  The kernels take the pitch and the rows and planes in their own terms
 * (TR: the buffer's planes and rows) and derive the strides, so the kernel of z keeps its parameters. */
struct geom3 {
    int64_t nx; /* columns of a row (the pitch) */
    int64_t ys; /* elements from one of a block's rows to the next */
    int64_t zs; /* elements from one streamed plane to the next */
    int rows, planes;
};
template <bool TR> __device__ __forceinline__ geom3 geom_of(int64_t pitch, int rows, int planes)
{
    if constexpr (TR) return geom3{pitch, pitch * planes, pitch, rows, planes};
    else return geom3{pitch, pitch, pitch * rows, rows, planes};
}

/* The update of a node from its x neighbours, its neighbours in the block's rows (rm, rp) and in the
 * streamed planes (pm, pp): the scheme's s3 takes them in the grid's order (y, then z) whichever the
 * launch streams, so both orientations round alike, bit for bit. */
template <bool TR, typename T, typename Op>
__device__ __forceinline__ T s3_of(const Op &op, T u, T xm, T xp, T rm, T rp, T pm, T pp, T f)
{
    if constexpr (TR) return op.s3(u, xm, xp, pm, pp, rm, rp, f);
    else return op.s3(u, xm, xp, rm, rp, pm, pp, f);
}

/* A 3D launch's halo through the skewed stores (kernels.h halo), in the kernel's terms (columns, rows,
 * streamed planes).  The save: nodes of columns [x0, x1), rows [r0, r1), planes [p0, p1) of the input go,
 * as they are loaded, from src + o to src + o + sdelta (a store has the buffer's pitch and rows), each
 * written by the one thread whose block owns it: columns and rows by the tile's output range, planes by
 * the segment's, the first and last tile and segment of each axis stretched to its ends (a window's top
 * planes and its boundary faces lie past the last box).  The fill: the input's rows [fr0, fr1) of planes
 * [fp0, fp1), whole rows, are loaded from src + o + fdelta instead (the window's low planes, the previous
 * piece's, from its store). */
struct khalo {
    int64_t sdelta, fdelta;
    int x0, x1, r0, r1, p0, p1;
    int fr0, fr1, fp0, fp1;
};

/* One block's share of a save: its columns [x0, x1), rows [r0, r1) and planes [p0, p1). */
struct ksave_own {
    int x0, x1, r0, r1, p0, p1;
};
__device__ __forceinline__ ksave_own save_own(const khalo &sv, const pyr_kbox_t &last, int ox, int OWx, int oy, int OWy, int oz,
                                              int oz_end)
{
    ksave_own o;
    o.x0 = max(sv.x0, ox <= last.lo[0] ? INT_MIN : ox);
    o.x1 = min(sv.x1, ox + OWx >= last.hi[0] ? INT_MAX : ox + OWx);
    o.r0 = max(sv.r0, oy <= last.lo[1] ? INT_MIN : oy);
    o.r1 = min(sv.r1, oy + OWy >= last.hi[1] ? INT_MAX : oy + OWy);
    o.p0 = max(sv.p0, oz <= last.lo[2] ? INT_MIN : oz);
    o.p1 = min(sv.p1, oz_end >= last.hi[2] ? INT_MAX : oz_end);
    return o;
}

/* 3D, K steps, for float: block = BX x NTY threads (BX <= 32, chosen per
 * launch so that the tiles cover the box's width with little to spare);
 * thread (tx, ty) owns the V columns c0 = ox - K + tx*V .. of row y = oy - K +
 * ty; the block writes columns [ox, ox + OWx) x rows [oy, oy + OWy) of planes
 * [oz, oz + seg) and streams planes, loading one plane ahead.
 *
 * Every step's planes live in shared memory, not in registers: [NTY + 2
 * rows][2 buffers][K steps][32 slots of V values] (row ty at ty + 1, with a
 * zero pad row above and below, so a thread reads its in-plane neighbours
 * without a test; what the pads and the row ends give reaches only the
 * tile's halo, recomputed and never written).  The strides are constants
 * whatever the block's width, so every shared access of a step is a base
 * register plus an immediate; thread (tx, ty) keeps its V values in slot (tx
 * + ty*BX) mod 32 of its row, so the warps that span two rows (BX < 32) reach
 * every bank once (with slot tx, those warps met bank conflicts).
 * The x neighbours across threads come from a second array of the same
 * shape, [NTY + 2][2][K][first, last][32 slots]: reading them from the
 * neighbours' vectors would be a four-way bank conflict.
 *
 * When plane p arrives, step t (layer L = t - 1) computes plane z = p - t:
 * buffer (p & 1) ^ 1 holds layer L's plane z (the centre and its in-plane
 * neighbours, stored in the iteration before), buffer p & 1 at the thread's
 * own nodes its plane z - 1 (stored two iterations before; the thread reads
 * it, then overwrites it with plane z + 1, which it holds in registers: the
 * loaded plane, or the step before's result).  So a thread keeps no planes
 * across iterations (in registers they cost three moves per node-step and 24
 * registers), and one barrier per plane serves all K steps.  For float that
 * is faster than k_fused3d_reg's planes in registers; two rows per thread,
 * for fewer halo rows, spilled and ran slower (measured:
 * docs/performance.md#heat-3d-kernels).
 *
 * The plane loop runs in three parts: planes where some step's plane lies
 * outside its box (a test per step), between them the planes where none does
 * (no test); and, as in 2D, fused3d_planes is made twice: warps whose nodes
 * lie inside every step's box in x and y run without per-node row and column
 * tests (EDGE = false), the others with them. */
template <typename T, int V, int K> struct shape3d {
    static constexpr int WS = 32 * V;  /* one step's row */
    static constexpr int BUF = K * WS; /* one buffer's row */
    static constexpr int LS = 2 * BUF; /* row stride */
    static constexpr int EW = 64;      /* one step's edge row: first values, then last values */
    static constexpr int EBUF = K * EW;
    static constexpr int ELS = 2 * EBUF;
    __host__ __device__ static size_t smem(int NTY) { return (size_t)(NTY + 2) * (LS + ELS) * sizeof(T); }
};

template <typename T, int V, int K, int R, bool EDGE, bool TR, bool HALO, typename Op>
__device__ __forceinline__ void fused3d_planes(const T *__restrict__ src, T *__restrict__ dst, const geom3 &g, const kboxes<K> &b,
                                               const Op &op, T *sh, const int BX, const int NR,
                                               const int tx, const int ty, const int c0, const int y, const int oz, const int oz_end,
                                               const int wx0, const int wx1, const int ry0, const int ry1, const bool col_ok,
                                               const khalo &sv, const ksave_own &so)
{
    typedef shape3d<T, V, K> S;
    T *ed = sh + (NR + 2) * S::LS; /* the edge arrays */
    const int64_t plane = g.zs, pitch = g.ys;
    const int rows = g.rows, planes = g.planes;
    const int zs = max(oz - K, 0), ze = oz_end + K;
    const int zload = min(ze, planes);
    const bool full_store = c0 >= wx0 && c0 + V <= wx1;
    /* this thread's rows y .. y + R - 1: loaded when inside the piece, stored when in [ry0, ry1) */
    bool ld_ok[R], store_ok[R];
#pragma unroll
    for (int r = 0; r < R; r++) {
        ld_ok[r] = col_ok && (EDGE ? y + r >= 0 && y + r < rows : true);
        store_ok[r] = y + r >= ry0 && y + r < ry1 && c0 + V > wx0 && c0 < wx1;
    }
    /* slots: this thread's V values sit at slot (tx + ty*BX) mod 32 in each of its rows, so the rows
     * above and below come from the threads ty - 1 and ty + 1 at theirs; the x neighbours' edges in row j */
    const int slot = (tx + ty * BX) & 31;
    const int me = (ty * R + 1) * S::LS + slot * V;                                  /* row 0 of this thread */
    const int mu = (ty * R) * S::LS + ((tx + (ty - 1) * BX) & 31) * V;               /* the row above row 0 */
    const int md = ((ty + 1) * R + 1) * S::LS + ((tx + (ty + 1) * BX) & 31) * V;     /* the row below row R - 1 */
    const int ee = (ty * R + 1) * S::ELS + slot;
    const int el = (ty * R + 1) * S::ELS + ((tx - 1 + ty * BX) & 31) + 32; /* the last value of thread tx - 1 */
    const int er = (ty * R + 1) * S::ELS + ((tx + 1 + ty * BX) & 31);      /* the first value of thread tx + 1 */
    const T *gl = src + (int64_t)(zs + 1) * plane + (int64_t)y * pitch + c0; /* plane p + 1 (read only when ld_ok) */
    T *gs = dst + (int64_t)(zs - K) * plane + (int64_t)y * pitch + c0;       /* plane p - K */
    /* The input field (Op::kAux).  With room in registers (blocks of at most 512 threads: 128 registers
     * each) fa[L] holds it at plane p - 1 - L, the plane step L + 1 computes, shifted along as the planes
     * stream, and fn at plane p, loaded one iteration ahead: each plane is read once (rows outside a step's
     * dependency cone may see zeros: their values are never used).  Otherwise each step reads its plane of
     * the input from the caches. */
    constexpr bool ring_f = Op::kAux && Op::kMaxThreads3D <= 512;
    static_assert(!Op::kAux || R == 1, "an input field's ring is kept for one row per thread");
    T fa[ring_f ? K : 1][V], fn[V];
    aux_start(fa, fn, ring_f && ld_ok[0] && zs >= 1 && zs - 1 < planes, op, (int64_t)(zs - 1) * plane + (int64_t)y * pitch + c0);
    /* the halo (HALO): this thread's rows and columns of the save, a plane going out as it is loaded; its rows
     * of the fill, loaded from the fill store */
    bool sv_row[R], fl_row[R];
#pragma unroll
    for (int r = 0; r < R; r++) {
        sv_row[r] = HALO && ld_ok[r] && y + r >= so.r0 && y + r < so.r1 && c0 + V > so.x0 && c0 < so.x1;
        fl_row[r] = HALO && y + r >= sv.fr0 && y + r < sv.fr1;
    }
    const bool sv_full = c0 >= so.x0 && c0 + V <= so.x1;
    T ring[R][V];
#pragma unroll
    for (int r = 0; r < R; r++) {
#pragma unroll
        for (int v = 0; v < V; v++) ring[r][v] = T(0);
        if (ld_ok[r] && zs < zload) {
            const T *g = gl - plane + r * pitch;
            load_vec<T, V>(HALO && fl_row[r] && zs >= sv.fp0 && zs < sv.fp1 ? g + sv.fdelta : g, ring[r]);
            if (HALO && sv_row[r] && zs >= so.p0 && zs < so.p1) store_part<T, V>(const_cast<T *>(g) + sv.sdelta, ring[r], sv_full, c0, so.x0, so.x1);
        }
    }
    block_sync();

    /* one plane; ZT: test each step's plane against its box */
    auto body = [&](const int p, auto zt) {
        constexpr bool ZT = decltype(zt)::value;
        T nw[R][V];
        const bool fill_p = HALO && p + 1 >= sv.fp0 && p + 1 < sv.fp1;
#pragma unroll
        for (int r = 0; r < R; r++)
            take_next<T, V>(nw[r], ring[r], ld_ok[r] && p + 1 < zload, HALO && fill_p && fl_row[r] ? gl + r * pitch + sv.fdelta : gl + r * pitch);
        if (HALO && p + 1 >= so.p0 && p + 1 < so.p1 && p + 1 < zload) {
#pragma unroll
            for (int r = 0; r < R; r++)
                if (sv_row[r]) store_part<T, V>(const_cast<T *>(gl + r * pitch) + sv.sdelta, ring[r], sv_full, c0, so.x0, so.x1);
        }
        gl += plane;
        if (ring_f) aux_shift(fa, fn, ld_ok[0] && p < planes, op, (int64_t)p * plane + (int64_t)y * pitch + c0);
        /* buffer p & 1 takes this iteration's stores; the other holds plane z of each step */
        const int odd = p & 1;
        const T *sp = sh + (odd ? 0 : S::BUF), *ep = ed + (odd ? 0 : S::EBUF);
        T *sc = sh + (odd ? S::BUF : 0), *ec = ed + (odd ? S::EBUF : 0);
#pragma unroll
        for (int t = 1; t <= K; t++) {
            const int L = t - 1, z = p - t;
            const bool z_in = !ZT || (z >= b.z0[L] && z < b.z1[L]);
            /* rows -1 .. R of this thread's column at plane z: the rows above and below from the neighbours */
            T u[R + 2][V];
            load_shared<T, V>(sp + mu + L * S::WS, u[0]);
#pragma unroll
            for (int r = 0; r < R; r++) load_shared<T, V>(sp + me + r * S::LS + L * S::WS, u[r + 1]);
            load_shared<T, V>(sp + md + L * S::WS, u[R + 1]);
#pragma unroll
            for (int r = 0; r < R; r++) {
                const int yr = y + r;
                const T left = ep[el + r * S::ELS + L * S::EW];
                const T right = ep[er + r * S::ELS + L * S::EW];
                T zm[V];
                T *o = sc + me + r * S::LS + L * S::WS;
                load_shared<T, V>(o, zm);
                store_vec<T, V>(o, nw[r]);
                ec[ee + r * S::ELS + L * S::EW] = nw[r][0];
                ec[ee + r * S::ELS + L * S::EW + 32] = nw[r][V - 1];
                const bool yz_in = EDGE ? z_in && yr >= b.y0[L] && yr < b.y1[L] : z_in;
                T aux[V];
#pragma unroll
                for (int v = 0; v < V; v++) aux[v] = ring_f ? fa[ring_f ? L : 0][v] : T(0);
                if (Op::kAux && !ring_f && yz_in && ld_ok[r]) op.aux_vec((int64_t)z * plane + (int64_t)yr * pitch + c0, aux);
#pragma unroll
                for (int v = 0; v < V; v++) {
                    const int c = c0 + v;
                    const T xm = v > 0 ? u[r + 1][v - 1] : left;
                    const T xp = v < V - 1 ? u[r + 1][v + 1] : right;
                    const bool in = EDGE ? yz_in && c >= b.x0[L] && c < b.x1[L] : yz_in;
                    const T val = s3_of<TR>(op, u[r + 1][v], xm, xp, u[r][v], u[r + 2][v], zm[v], nw[r][v], aux[v]);
                    nw[r][v] = (EDGE || ZT) ? (in ? val : u[r + 1][v]) : val;
                }
            }
        }
        const int z = p - K;
#pragma unroll
        for (int r = 0; r < R; r++) {
            if (store_ok[r] && z >= oz && z < oz_end) store_part<T, V>(gs + r * pitch, nw[r], full_store, c0, wx0, wx1);
        }
        gs += plane;
        block_sync();
    };
    /* planes [pa, pb): every step's plane inside its box */
    int pa, pb;
    untested_range<K>(zs, ze, b.z0, b.z1, pa, pb);
    int p = zs;
    for (; p < pa; p++) body(p, std::true_type());
    for (; p < pb; p++) body(p, std::false_type());
    for (; p < ze; p++) body(p, std::true_type());
}

/* 3D, K steps, for double: the tiles and blocks of k_fused3d, with each
 * step's planes z - 1 and z held in registers (a[L], m[L]) and only the plane
 * z shared, for the in-plane neighbours: [2 buffers][K steps][NTY + 2
 * rows][BX*V columns].  Double's shared traffic per node is twice float's;
 * keeping two planes in registers (at the cost of moving them along, three
 * moves per node-step) halves it, and that is faster for double than
 * k_fused3d (measured: docs/performance.md#heat-3d-kernels).  Planes are
 * loaded D ahead (a register ring: D = 1 for fused launches; deeper spilled
 * at 64 registers).  The plane loop is unrolled by D, so the ring is indexed
 * by constants (unrolled by lcm(D, 3), to drop the rotation's moves, it
 * spilled: 1180 bytes per thread at K=3). */
template <typename T, int V, int K, int D, bool EDGE, bool TR, typename Op>
__device__ __forceinline__ void fused3d_planes_reg(const T *__restrict__ src, T *__restrict__ dst, const geom3 &g, const kboxes<K> &b,
                                                   const Op &op, T *sh, const int BX, const int NTY,
                                               const int tx, const int ty, const int c0, const int y, const int oz, const int oz_end,
                                               const int wx0, const int wx1, const bool row_out, const bool ld_ok)
{
    const int W = BX * V;                /* columns of a block */
    const int step_sz = (NTY + 2) * W;   /* elements of one step's plane */
    const int64_t plane = g.zs, pitch = g.ys;
    const int planes = g.planes;
    const int zs = max(oz - K, 0), ze = oz_end + K;
    const int zload = min(ze, planes);
    const int me = (ty + 1) * W + tx * V;

    T a[K][V], m[K][V];
#pragma unroll
    for (int l = 0; l < K; l++)
#pragma unroll
        for (int v = 0; v < V; v++) a[l][v] = m[l][v] = T(0);
    const T *srow = src + (int64_t)y * pitch + c0; /* only dereferenced when ld_ok */
    const T *gl = srow + (int64_t)(zs + D) * plane;                  /* plane p + D */
    T *gs = dst + (int64_t)(zs - K) * plane + (int64_t)y * pitch + c0; /* plane p - K */
    T ring[D][V];
#pragma unroll
    for (int j = 0; j < D; j++) {
#pragma unroll
        for (int v = 0; v < V; v++) ring[j][v] = T(0);
        if (ld_ok && zs + j < zload) load_vec<T, V>(srow + (int64_t)(zs + j) * plane, ring[j]);
    }
    /* The input field (Op::kAux).  With room in registers (blocks of at most 512 threads: 128 registers
     * each) fa[L] holds it at plane p - 1 - L, the plane step L + 1 computes, shifted along as the planes
     * stream, and fn at plane p, loaded one iteration ahead: each plane is read once (rows outside a step's
     * dependency cone may see zeros: their values are never used).  With 64 registers that ring spills
     * and runs slower than without it, so there each step reads its plane of the input from the caches
     * (docs/performance.md#poisson). */
    constexpr bool ring_f = Op::kAux && Op::kMaxThreads3D <= 512;
    T fa[ring_f ? K : 1][V], fn[V];
    aux_start(fa, fn, ring_f && ld_ok && zs >= 1 && zs - 1 < planes, op, (int64_t)(zs - 1) * plane + (int64_t)y * pitch + c0);
    const bool full_store = c0 >= wx0 && c0 + V <= wx1;
    const bool some_store = row_out && c0 + V > wx0 && c0 < wx1;
    block_sync();

    for (int p0 = zs; p0 < ze; p0 += D) {
#pragma unroll
        for (int j = 0; j < D; j++) {
            const int p = p0 + j;
            if (p >= ze) break; /* uniform over the block */
            T nw[V];
            take_next<T, V>(nw, ring[j % D], ld_ok && p + D < zload, gl);
            gl += plane;
            if (ring_f) aux_shift(fa, fn, ld_ok && p < planes, op, (int64_t)p * plane + (int64_t)y * pitch + c0);
            const T *sp = sh + ((p & 1) ^ 1) * (K * step_sz) + me;
            T *sc = sh + (p & 1) * (K * step_sz) + me;
#pragma unroll
            for (int t = 1; t <= K; t++) {
                const int L = t - 1, z = p - t;
                const T *s = sp + L * step_sz;
                const T left = s[-1];
                const T right = s[V];
                T up[V], dn[V];
                load_shared<T, V>(s - W, up);
                load_shared<T, V>(s + W, dn);
                const bool z_in = z >= b.z0[L] && z < b.z1[L];
                const bool yz_in = EDGE ? z_in && y >= b.y0[L] && y < b.y1[L] : z_in;
                T aux[V];
#pragma unroll
                for (int v = 0; v < V; v++) aux[v] = ring_f ? fa[ring_f ? L : 0][v] : T(0);
                if (Op::kAux && !ring_f && yz_in && ld_ok) op.aux_vec((int64_t)z * plane + (int64_t)y * pitch + c0, aux);
                T out[V];
#pragma unroll
                for (int v = 0; v < V; v++) {
                    const int c = c0 + v;
                    const T u = m[L][v];
                    const T xm = v > 0 ? m[L][v - 1] : left;
                    const T xp = v < V - 1 ? m[L][v + 1] : right;
                    const bool in = EDGE ? yz_in && c >= b.x0[L] && c < b.x1[L] : yz_in;
                    out[v] = in ? s3_of<TR>(op, u, xm, xp, up[v], dn[v], a[L][v], nw[v], aux[v]) : u;
                }
                rotate<T, V>(a[L], m[L], nw, out);
            }
            const int z = p - K;
            if (some_store && z >= oz && z < oz_end) store_part<T, V>(gs, nw, full_store, c0, wx0, wx1);
            gs += plane;
#pragma unroll
            for (int L = 0; L < K; L++) store_vec<T, V>(sc + L * step_sz, m[L]);
            block_sync();
        }
    }
}

/* A 3D block's tile and planes: from the split launch's 1D grid (launch_segments.h), or, for kernels that
 * read a second field (Op::kAux: Poisson's right-hand side), from a grid of tiles x tiles x segments as
 * before the split - the same prologue through pyr_seg_split_place ran Poisson 3D slower than these
 * segments (measured: docs/performance.md#poisson). */
template <typename Op>
__device__ __forceinline__ void block_place(const pyr_seg_split_t &sp, int tiles_x, int tiles, int lo, int hi, int *tile, int *z0, int *z1)
{
    if constexpr (Op::kAux) {
        *tile = (int)blockIdx.x + (int)blockIdx.y * tiles_x;
        *z0 = lo + (int)blockIdx.z * sp.seg;
        *z1 = min(*z0 + sp.seg, hi);
    } else {
        pyr_seg_split_place(&sp, tiles, (long long)blockIdx.x, lo, hi, tile, z0, z1);
    }
}

template <typename T, int V, int K, int D, bool TR, typename Op>
__global__ void __launch_bounds__(Op::kMaxThreads3D) k_fused3d_reg(const T *__restrict__ src, T *__restrict__ dst, int64_t pitch, int rows,
                                                  int planes, kboxes<K> b, pyr_kbox_t last, Op op, int ox0, int OWx, int oy0,
                                                  int OWy, pyr_seg_split_t sp, int tiles_x, int tiles)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *sh = reinterpret_cast<T *>(smem_raw);
    int tile, oz, oz_end;
    block_place<Op>(sp, tiles_x, tiles, last.lo[2], last.hi[2], &tile, &oz, &oz_end);
    if (oz >= oz_end) return; /* a split pair with fewer planes than blocks (the whole block leaves) */
    const geom3 g = geom_of<TR>(pitch, rows, planes);
    const int BX = (int)blockDim.x, NTY = (int)blockDim.y, tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    const int ox = ox0 + (Op::kAux ? (int)blockIdx.x : tile % tiles_x) * OWx;
    const int c0 = ox - K + tx * V;
    const int oy = oy0 + (Op::kAux ? (int)blockIdx.y : tile / tiles_x) * OWy;
    const int y = oy - K + ty;
    const int wx0 = max(ox, last.lo[0]), wx1 = min(ox + OWx, last.hi[0]);
    const bool row_out = y >= max(oy, last.lo[1]) && y < min(oy + OWy, last.hi[1]);
    const bool ld_ok = c0 >= 0 && (int64_t)c0 + V <= g.nx && y >= 0 && y < g.rows;
    for (int i = ty * BX + tx; i < 2 * K * (NTY + 2) * BX * V; i += BX * NTY) sh[i] = T(0);
    /* the block's columns and rows inside the piece and every tested step's box (the steps before the last:
     * test_boxes)? */
    const int bx0 = ox - K, bx1 = ox - K + BX * V, by0 = oy - K, by1 = oy - K + NTY;
    bool inner = bx0 >= 0 && (int64_t)bx1 <= g.nx && by0 >= 0 && by1 <= g.rows;
#pragma unroll
    for (int l = 0; l + 1 < K; l++) inner = inner && bx0 >= b.x0[l] && bx1 <= b.x1[l] && by0 >= b.y0[l] && by1 <= b.y1[l];
    /* in an edge tile, the warps whose nodes lie inside them skip the tests too */
    int xlo = 0, xhi = (int)g.nx, ylo = 0, yhi = g.rows;
#pragma unroll
    for (int l = 0; l + 1 < K; l++) xlo = max(xlo, b.x0[l]), xhi = min(xhi, b.x1[l]), ylo = max(ylo, b.y0[l]), yhi = min(yhi, b.y1[l]);
    if (!inner) inner = warp_inside(c0 >= xlo && c0 + V <= xhi && y >= ylo && y < yhi);
    if (inner)
        fused3d_planes_reg<T, V, K, D, false, TR, Op>(src, dst, g, b, op, sh, BX, NTY, tx, ty, c0, y, oz, oz_end, wx0, wx1,
                                              row_out, true);
    else
        fused3d_planes_reg<T, V, K, D, true, TR, Op>(src, dst, g, b, op, sh, BX, NTY, tx, ty, c0, y, oz, oz_end, wx0, wx1,
                                             row_out, ld_ok);
}


/* Rows per thread of the 3D float kernel (fused3d_planes) and its largest
 * block.  One row: two rows per thread (blocks of at most 768 threads, 85
 * registers, 46-48 rows: less of the y halo recomputed, and the rows above
 * and below the first come from the thread's own registers) ran slower on
 * some shapes and faster on others, by a few percent either way, and so did
 * three (measured: docs/performance.md#heat-3d-kernels).  The loop takes R as
 * a parameter (its two-row form passed the property test); a planner
 * choosing R per shape would gain at most those few percent. */
template <typename Op> struct rows3d {
    static constexpr int R = 1;
    static constexpr int kMaxThreads = Op::kMaxThreads3D;
};

template <typename T, int V, int K, bool TR, bool HALO, typename Op>
__global__ void __launch_bounds__(rows3d<Op>::kMaxThreads) k_fused3d(const T *__restrict__ src, T *__restrict__ dst, int64_t pitch, int rows,
                                                  int planes, kboxes<K> b, pyr_kbox_t last, Op op, int ox0, int OWx, int oy0,
                                                  int OWy, pyr_seg_split_t sp, int tiles_x, int tiles, khalo sv)
{
    constexpr int R = rows3d<Op>::R;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *sh = reinterpret_cast<T *>(smem_raw);
    int tile, oz, oz_end;
    block_place<Op>(sp, tiles_x, tiles, last.lo[2], last.hi[2], &tile, &oz, &oz_end);
    if (oz >= oz_end) return; /* a split pair with fewer planes than blocks (the whole block leaves) */
    const geom3 g = geom_of<TR>(pitch, rows, planes);
    const int BX = (int)blockDim.x, NR = (int)blockDim.y * R, tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    const int ox = ox0 + (Op::kAux ? (int)blockIdx.x : tile % tiles_x) * OWx;
    const int c0 = ox - K + tx * V;
    const int oy = oy0 + (Op::kAux ? (int)blockIdx.y : tile / tiles_x) * OWy;
    const int y = oy - K + ty * R;
    const int wx0 = max(ox, last.lo[0]), wx1 = min(ox + OWx, last.hi[0]);
    const int ry0 = max(oy, last.lo[1]), ry1 = min(oy + OWy, last.hi[1]);
    const bool col_ok = c0 >= 0 && (int64_t)c0 + V <= g.nx;
    const int n = (int)(shape3d<T, V, K>::smem(NR) / sizeof(T));
    for (int i = ty * BX + tx; i < n; i += BX * (int)blockDim.y) sh[i] = T(0);
    /* the block's columns and rows inside the piece and every tested step's box (the steps before the last:
     * test_boxes)? */
    const int bx0 = ox - K, bx1 = ox - K + BX * V, by0 = oy - K, by1 = oy - K + NR;
    bool inner = bx0 >= 0 && (int64_t)bx1 <= g.nx && by0 >= 0 && by1 <= g.rows;
#pragma unroll
    for (int l = 0; l + 1 < K; l++) inner = inner && bx0 >= b.x0[l] && bx1 <= b.x1[l] && by0 >= b.y0[l] && by1 <= b.y1[l];
    /* in an edge tile, the warps whose nodes lie inside them skip the tests too */
    int xlo = 0, xhi = (int)g.nx, ylo = 0, yhi = g.rows;
#pragma unroll
    for (int l = 0; l + 1 < K; l++) xlo = max(xlo, b.x0[l]), xhi = min(xhi, b.x1[l]), ylo = max(ylo, b.y0[l]), yhi = min(yhi, b.y1[l]);
    if (!inner) inner = warp_inside(c0 >= xlo && c0 + V <= xhi && y >= ylo && y + R <= yhi);
    const ksave_own so = HALO ? save_own(sv, last, ox, OWx, oy, OWy, oz, oz_end) : ksave_own{0, 0, 0, 0, 0, 0};
    if (inner)
        fused3d_planes<T, V, K, R, false, TR, HALO, Op>(src, dst, g, b, op, sh, BX, NR, tx, ty, c0, y, oz, oz_end, wx0, wx1, ry0,
                                                    ry1, true, sv, so);
    else
        fused3d_planes<T, V, K, R, true, TR, HALO, Op>(src, dst, g, b, op, sh, BX, NR, tx, ty, c0, y, oz, oz_end, wx0, wx1, ry0,
                                                   ry1, col_ok, sv, so);
}

/* 3D, one step, no shared memory: thread (tx, ty) owns the V columns c0 ..
 * c0+V-1 of row y and walks planes [z0, z1) of its segment keeping planes
 * z-1, z, z+1 (and z+2, loaded ahead) in registers; the y neighbours come as
 * vectors and the x edges as scalars through the L1 cache, where the
 * neighbouring threads' loads of the same rows already brought them.  Writes
 * the nodes of box `b` only. */
template <typename T, int V, typename Op>
__global__ void __launch_bounds__(256) k_stream3d(const T *__restrict__ src, T *__restrict__ dst, int64_t pitch, int rows, pyr_kbox_t b,
                                                  Op op, int cbase, int seg)
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
        T aux[V];
#pragma unroll
        for (int v = 0; v < V; v++) aux[v] = T(0);
        if (Op::kAux) op.aux_vec((int64_t)z * plane + (int64_t)y * pitch + c0, aux);
        T out[V];
        bool all = c0 >= b.lo[0] && c0 + V <= b.hi[0];
#pragma unroll
        for (int v = 0; v < V; v++) {
            const T xm = v > 0 ? u[v - 1] : xm0;
            const T xp = v < V - 1 ? u[v + 1] : xpv;
            out[v] = op.s3(u[v], xm, xp, ym[v], yp[v], zm[v], zp[v], aux[v]);
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

/* ----------------------------------------------------------------- launch */

int imin(int a, int b) { return a < b ? a : b; }
int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int ceil_div(int a, int b) { return (a + b - 1) / b; }

template <typename K_> cudaError_t occupancy(K_ kernel, int threads, size_t smem, int *per_sm)
{
    /* The kernel may use up to the device's opt-in limit, set alike by every
     * host thread: a limit of this launch's size would race with another
     * thread's smaller one (several parts on one GPU, exec/parts.c) and fail
     * that launch as an invalid argument. */
    int dev = 0, optin = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (e != cudaSuccess) return e;
    if ((size_t)optin < smem) return cudaErrorInvalidValue;
    e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin);
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

/* The boxes a 3D fused launch's nodes are tested against (a node outside keeps its value); the kernels get
 * the last step's box apart, where its results are stored.  A side at the piece's edge, which the steps'
 * boxes share (the grid's wall: its nodes hold the boundary values), needs its test; a side that moves in
 * by at least one node every step does not: a node outside step l's box is read only by nodes outside step
 * l + 1's (a stencil of reach one), so whatever it computes never reaches the last box.  Nor does the last
 * step need tests: only its box is stored.  So only the walls of the steps before the last remain (an
 * untested side takes the buffer's bound, so a kernel reading an input field at a tested node stays inside
 * it), and the tiles and warps at a piece's inner sides (the sides of cubes, a skewed window's trapezoid,
 * which streaming y puts in a block's rows) run without tests.  Bit for bit what the boxes give.  The 2D
 * kernel keeps every box: the same change there made blocks' passes and float in core faster, but 2D
 * double in core slower at every width (measured: docs/performance.md#heat-2d-temporal-blocking). */
template <int K> kboxes<K> test_boxes(const pyr_kbox_t *boxes, int64_t pitch, int rows, int planes)
{
    kboxes<K> t = pack<K>(boxes);
    int *lo[3] = {t.x0, t.y0, t.z0}, *hi[3] = {t.x1, t.y1, t.z1};
    const int64_t n[3] = {pitch, rows, planes}; /* an untested side's bound: the buffer's (no node outside it is read) */
    for (int a = 0; a < 3; a++) {
        bool in_lo = K > 1, in_hi = K > 1;
        for (int l = 0; l + 1 < K; l++) {
            in_lo = in_lo && boxes[l + 1].lo[a] >= boxes[l].lo[a] + 1;
            in_hi = in_hi && boxes[l + 1].hi[a] <= boxes[l].hi[a] - 1;
        }
        for (int l = 0; l < K; l++) {
            if (in_lo || l == K - 1) lo[a][l] = 0;
            if (in_hi || l == K - 1) hi[a][l] = (int)n[a];
        }
    }
    return t;
}

template <typename T, int V, int K, typename Op>
cudaError_t launch2d(const T *src, T *dst, const pyr_klayout_t *L, const pyr_kbox_t *boxes, const Op &op, const pyr_ktune_t *tune,
                     cudaStream_t stream)
{
    const pyr_kbox_t &last = boxes[K - 1];
    /* As few tiles as blocks of tune->nt2d threads need, each made only as wide
     * as an even share of the box needs (whole warps): a box of 4094 columns
     * takes 5 tiles of 224 threads, not 4 full ones and a fifth of 40 columns
     * that costs as much as a full one. */
    const int ox0 = floor_div(last.lo[0] - K, V) * V + K;
    const int span = last.hi[0] - ox0;
    if (span <= 0 || last.hi[1] <= last.lo[1]) return cudaSuccess;
    const int OWmax = (tune->nt2d * V - 2 * K) / V * V;
    const int share = ceil_div(span, ceil_div(span, OWmax));
    const int NT = imin(tune->nt2d, ceil_div(ceil_div(share + 2 * K, V), 32) * 32);
    const int OW = (NT * V - 2 * K) / V * V;
    const int tiles = ceil_div(span, OW);
    const size_t smem = (size_t)2 * K * 2 * (NT + 2) * sizeof(T);
    int per_sm = 1;
    cudaError_t e = occupancy(k_fused2d<T, V, K, Op>, NT, smem, &per_sm);
    if (e != cudaSuccess) return e;
    const int rows_out = last.hi[1] - last.lo[1];
    const kboxes<K> kb = pack<K>(boxes);
    int seg_edge = 0;
    const int seg = pyr_segment_choose(rows_out, tiles, pyr_edge_tiles(L->pitch, kb.x0, kb.x1, K, ox0, OW, NT * V, tiles),
                                       same_columns<K>(kb) ? pyr_edge_row_cost_walls : pyr_edge_row_cost, per_sm * tune->sms, K,
                                       &seg_edge, NULL);
    dim3 grid((unsigned)tiles, (unsigned)ceil_div(rows_out, seg_edge));
    k_fused2d<T, V, K, Op><<<grid, NT, smem, stream>>>(src, dst, L->pitch, L->rows, kb, op, ox0, OW, seg, seg_edge);
    return cudaGetLastError();
}

/* Blocks of `kernel` resident per multiprocessor at `threads` threads and `smem` bytes of shared memory, asked
 * of the runtime once per kernel, device and shape (a 3D launch weighs several layouts, and a skewed pass
 * makes hundreds of launches: a query per launch costs a pass a measurable share of its time). */
template <typename K_> cudaError_t occupancy_cached(K_ kernel, int threads, size_t smem, int *per_sm)
{
    struct entry {
        const void *fn;
        int dev, threads;
        size_t smem;
        int per_sm;
    };
    static entry cache[64];
    static int n = 0;
    static std::mutex lock;
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess) return e;
    const void *fn = reinterpret_cast<const void *>(kernel);
    {
        std::lock_guard<std::mutex> g(lock);
        for (int i = 0; i < n; i++)
            if (cache[i].fn == fn && cache[i].dev == dev && cache[i].threads == threads && cache[i].smem == smem) {
                *per_sm = cache[i].per_sm;
                return cudaSuccess;
            }
    }
    e = occupancy(kernel, threads, smem, per_sm);
    if (e != cudaSuccess) return e;
    std::lock_guard<std::mutex> g(lock);
    if (n < 64) cache[n++] = entry{fn, dev, threads, smem, *per_sm};
    return cudaSuccess;
}

/* A 3D launch's kernels and their shared memory (float: the planes in shared memory, k_fused3d; double: in
 * registers, k_fused3d_reg), the per_sm query of launch_tiles3d.h */
template <typename T, int V, int K, typename Op> struct launch3d_kind {
    static constexpr bool shared_planes = sizeof(T) == 4;
    static constexpr int D = K == 1 ? 4 : 1;
    static constexpr int R = shared_planes ? rows3d<Op>::R : 1;
    static constexpr int max_threads = shared_planes ? rows3d<Op>::kMaxThreads : Op::kMaxThreads3D;
    /* bytes for a block of rows rows, bx threads across (bx = 32: the most any block takes) */
    static size_t smem(int bx, int rows)
    {
        return shared_planes ? shape3d<T, V, K>::smem(rows) : (size_t)2 * K * (rows + 2) * bx * V * sizeof(T);
    }
    template <bool TR, bool HALO> static cudaError_t per_sm(int threads, size_t bytes, int *out)
    {
        if constexpr (shared_planes) return occupancy_cached(k_fused3d<T, V, K, TR, HALO, Op>, threads, bytes, out);
        else return occupancy_cached(k_fused3d_reg<T, V, K, D, TR, Op>, threads, bytes, out);
    }
    template <bool HALO> static int per_sm_of(void *ctx, int stream_y, int bx, int rows)
    {
        int n = 0;
        const int threads = bx * (rows / R);
        const cudaError_t e =
            stream_y ? per_sm<true, HALO>(threads, smem(bx, rows), &n) : per_sm<false, HALO>(threads, smem(bx, rows), &n);
        if (e != cudaSuccess) {
            *(cudaError_t *)ctx = e;
            return 0;
        }
        return n;
    }
};

/* The launch of the chosen layout.  The kernel's shared-memory limit is set again here, whatever the cached
 * queries found (a device reset between plans would have cleared it). */
template <typename T, int V, int K, bool TR, bool HALO, typename Op>
cudaError_t launch3d_go(const T *src, T *dst, int64_t pitch, int rows, int planes, const pyr_kbox_t *boxes, const Op &op,
                        const pyr_tiles3d_t &t, size_t smem, int optin, const khalo &sv, cudaStream_t stream)
{
    typedef launch3d_kind<T, V, K, Op> KD;
    cudaError_t e;
    if constexpr (KD::shared_planes)
        e = cudaFuncSetAttribute(k_fused3d<T, V, K, TR, HALO, Op>, cudaFuncAttributeMaxDynamicSharedMemorySize, optin);
    else e = cudaFuncSetAttribute(k_fused3d_reg<T, V, K, KD::D, TR, Op>, cudaFuncAttributeMaxDynamicSharedMemorySize, optin);
    if (e != cudaSuccess) return e;
    const int tiles = t.tx * t.ty;
    const dim3 grid = Op::kAux ? dim3((unsigned)t.tx, (unsigned)t.ty, (unsigned)t.sp.nseg)
                               : dim3((unsigned)pyr_seg_split_blocks(&t.sp, tiles));
    const dim3 block((unsigned)t.BX, (unsigned)t.NTY);
    const kboxes<K> tb = test_boxes<K>(boxes, pitch, rows, planes);
    if constexpr (KD::shared_planes)
        k_fused3d<T, V, K, TR, HALO, Op><<<grid, block, smem, stream>>>(src, dst, pitch, rows, planes, tb, boxes[K - 1], op, t.ox0, t.OWx,
                                                                        t.oy0, t.OWy, t.sp, t.tx, tiles, sv);
    else
        k_fused3d_reg<T, V, K, KD::D, TR, Op><<<grid, block, smem, stream>>>(src, dst, pitch, rows, planes, tb, boxes[K - 1], op, t.ox0,
                                                                             t.OWx, t.oy0, t.OWy, t.sp, t.tx, tiles);
    return cudaSuccess;
}

/* One fused 3D launch: the layout launch_tiles3d.h chooses (the streamed axis, tiles, segments), then the
 * kernel of that orientation.  Kernels that read a second field (Poisson's right-hand side) keep whole
 * segments, the unsplit choice: with the split's longer ones Poisson 3D in core ran slower, where heat
 * gained (measured: docs/performance.md#poisson). */
template <typename T, int V, int K, typename Op>
cudaError_t launch3d(const T *src, T *dst, const pyr_klayout_t *L, const pyr_kbox_t *boxes, const Op &op, const pyr_ktune_t *tune,
                     const pyr_khalo_t *save, cudaStream_t stream)
{
    typedef launch3d_kind<T, V, K, Op> KD;
    /* a halo (kernels.h): the float kernel (planes in shared memory), for schemes of one field (heat, the
     * skewed decomposition's); the double kernel, planes in registers, spills with a save (24 bytes at K = 3) */
    constexpr bool CAN_SAVE = !Op::kAux && KD::shared_planes;
    if constexpr (!CAN_SAVE) {
        if (save) return cudaErrorInvalidValue;
    }
    const bool SV = save != NULL;
    const pyr_kbox_t &last = boxes[K - 1];
    if (last.hi[0] <= last.lo[0] || last.hi[1] <= last.lo[1] || last.hi[2] <= last.lo[2]) return cudaSuccess;
    int dev = 0, optin = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (e != cudaSuccess) return e;
    pyr_tiles3d_in_t in;
    in.k = K;
    in.v = V;
    in.r = KD::R;
    in.max_threads = KD::max_threads;
    in.want_threads = tune->nty3d * 32;
    in.rows_smem = 0;
    while (KD::smem(32, in.rows_smem + KD::R) <= (size_t)optin && in.rows_smem < 4096) in.rows_smem += KD::R;
    in.per_wave_sm = tune->sms;
    in.split = !Op::kAux;
    in.only = tune->force_stream - 1;
    cudaError_t occ = cudaSuccess;
    in.per_sm = KD::template per_sm_of<false>;
    if constexpr (CAN_SAVE) {
        if (SV) in.per_sm = KD::template per_sm_of<true>;
    }
    in.ctx = &occ;
    pyr_tiles3d_t t;
    if (!pyr_tiles3d_plan(last.lo, last.hi, &in, &t)) return occ != cudaSuccess ? occ : cudaErrorInvalidValue;
    const long long blocks = pyr_seg_split_blocks(&t.sp, t.tx * t.ty);
    if (blocks > 0x7fffffffLL || (Op::kAux && (t.sp.nseg > PYR_SEGMENTS_MAX || t.ty > PYR_SEGMENTS_MAX))) return cudaErrorInvalidValue;
    const size_t smem = KD::smem(t.BX, t.NTY * KD::R);
    /* the halo in the kernel's terms: its rows and planes are y and z, or z and y when it streams y */
    khalo sv = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    if (SV) {
        const int r = t.stream_y ? 2 : 1, p = t.stream_y ? 1 : 2;
        const pyr_kbox_t &a = save->save, &f = save->fill;
        sv = khalo{save->sdelta, save->fdelta, a.lo[0], a.hi[0], a.lo[r], a.hi[r], a.lo[p], a.hi[p], f.lo[r], f.hi[r], f.lo[p], f.hi[p]};
    }
    if (!t.stream_y) {
        if (pyrcu::stats_t *n = tune->stats) {
            pyrcu::count(n->fused3d_z);
            pyrcu::count(n->saves3d_z, SV && save->save.hi[0] > save->save.lo[0]);
            pyrcu::count(n->fills3d_z, SV && save->fill.hi[0] > save->fill.lo[0]);
        }
        if constexpr (CAN_SAVE) {
            if (SV) e = launch3d_go<T, V, K, false, true, Op>(src, dst, L->pitch, L->rows, L->planes, boxes, op, t, smem, optin, sv, stream);
            else e = launch3d_go<T, V, K, false, false, Op>(src, dst, L->pitch, L->rows, L->planes, boxes, op, t, smem, optin, sv, stream);
        } else {
            e = launch3d_go<T, V, K, false, false, Op>(src, dst, L->pitch, L->rows, L->planes, boxes, op, t, smem, optin, sv, stream);
        }
    } else {
        if (pyrcu::stats_t *n = tune->stats) {
            pyrcu::count(n->fused3d_y);
            pyrcu::count(n->saves3d_y, SV && save->save.hi[0] > save->save.lo[0]);
            pyrcu::count(n->fills3d_y, SV && save->fill.hi[0] > save->fill.lo[0]);
        }
        /* the boxes with y and z swapped: the kernel's rows are z, its planes y */
        pyr_kbox_t sw[K];
        for (int l = 0; l < K; l++) {
            sw[l] = boxes[l];
            sw[l].lo[1] = boxes[l].lo[2], sw[l].hi[1] = boxes[l].hi[2];
            sw[l].lo[2] = boxes[l].lo[1], sw[l].hi[2] = boxes[l].hi[1];
        }
        if constexpr (CAN_SAVE) {
            if (SV) e = launch3d_go<T, V, K, true, true, Op>(src, dst, L->pitch, L->planes, L->rows, sw, op, t, smem, optin, sv, stream);
            else e = launch3d_go<T, V, K, true, false, Op>(src, dst, L->pitch, L->planes, L->rows, sw, op, t, smem, optin, sv, stream);
        } else {
            e = launch3d_go<T, V, K, true, false, Op>(src, dst, L->pitch, L->planes, L->rows, sw, op, t, smem, optin, sv, stream);
        }
    }
    return e != cudaSuccess ? e : cudaGetLastError();
}

template <typename T, int V, typename Op>
cudaError_t launch_stream3d(const T *src, T *dst, const pyr_klayout_t *L, const pyr_kbox_t &b, const Op &op, const pyr_ktune_t *tune,
                            cudaStream_t stream)
{
    const int NTY = 8;
    const int cbase = floor_div(b.lo[0], V) * V;
    const int tx = ceil_div(ceil_div(b.hi[0] - cbase, V), 32);
    const int ty = ceil_div(b.hi[1] - b.lo[1], NTY);
    int per_sm = 1;
    cudaError_t e = occupancy(k_stream3d<T, V, Op>, 32 * NTY, 0, &per_sm);
    if (e != cudaSuccess) return e;
    const int planes_out = b.hi[2] - b.lo[2];
    const int seg = pyr_segment_choose(planes_out, tx * ty, 0, 1.0, per_sm * tune->sms, 1, NULL, NULL);
    dim3 grid((unsigned)tx, (unsigned)ty, (unsigned)ceil_div(planes_out, seg));
    dim3 block(32, NTY);
    k_stream3d<T, V, Op><<<grid, block, 0, stream>>>(src, dst, L->pitch, L->rows, b, op, cbase, seg);
    return cudaGetLastError();
}

/* One fused launch of k (odd) steps, from src to dst. */
template <typename T, int V, int V3, typename Op, int KMAX2D, int KMAX3D>
cudaError_t fused_launch(int dims, const T *s, T *d, const pyr_klayout_t *L, const pyr_kbox_t *boxes, int k, const Op &op,
                         const pyr_ktune_t *tune, const pyr_khalo_t *save, cudaStream_t stream)
{
    if (save && (dims != 3 || k < 3)) return cudaErrorInvalidValue; /* a halo: 3D fused launches only */
#define PYR_K2(K)                                                                                                  \
    case K:                                                                                                        \
        if (K <= KMAX2D) return launch2d<T, V, (K <= KMAX2D ? K : 1), Op>(s, d, L, boxes, op, tune, stream);      \
        return cudaErrorInvalidValue;
#define PYR_K3(K)                                                                                                  \
    case K:                                                                                                        \
        if (K <= KMAX3D) return launch3d<T, V3, (K <= KMAX3D ? K : 1), Op>(s, d, L, boxes, op, tune, save, stream); \
        return cudaErrorInvalidValue;
    if (dims == 2) {
        switch (k) {
            PYR_K2(1)
            PYR_K2(3)
            PYR_K2(5)
            PYR_K2(7)
            PYR_K2(9)
            PYR_K2(11)
            PYR_K2(13)
            PYR_K2(15)
        default: return cudaErrorInvalidValue;
        }
    }
    switch (k) {
    case 1: return launch_stream3d<T, V, Op>(s, d, L, boxes[0], op, tune, stream);
        PYR_K3(3)
        PYR_K3(5)
    default: return cudaErrorInvalidValue;
    }
#undef PYR_K2
#undef PYR_K3
}

template <typename T, typename Op>
cudaError_t plain_launch(int dims, const T *s, T *d, const pyr_klayout_t *L, const pyr_kbox_t *b, const Op &op, cudaStream_t stream)
{
    const int w = b->hi[0] - b->lo[0], ny = b->hi[1] - b->lo[1], nz = b->hi[2] - b->lo[2];
    if (w <= 0 || ny <= 0 || nz <= 0) return cudaSuccess;
    const int threads = 256;
    dim3 grid((unsigned)ceil_div(w, threads), (unsigned)imin(ny, 65535), (unsigned)imin(nz, 65535));
    const int64_t plane = L->pitch * L->rows;
    if (dims == 1) k_step_plain<T, 1, Op><<<grid, threads, 0, stream>>>(s, d, L->pitch, plane, *b, op);
    else if (dims == 2) k_step_plain<T, 2, Op><<<grid, threads, 0, stream>>>(s, d, L->pitch, plane, *b, op);
    else k_step_plain<T, 3, Op><<<grid, threads, 0, stream>>>(s, d, L->pitch, plane, *b, op);
    return cudaGetLastError();
}

pyr_klayout_t layout_of(const pyr_piece_t *p)
{
    pyr_klayout_t L;
    L.pitch = p->pitch;
    L.rows = (int)pyr_box_extent(&p->box, 1);
    L.planes = (int)pyr_box_extent(&p->box, 2);
    return L;
}

/* A grid box in the piece's local coordinates. */
pyr_kbox_t local_box(const pyr_piece_t *p, const pyr_box_t *b)
{
    pyr_kbox_t k;
    for (int a = 0; a < 3; a++) {
        k.lo[a] = (int)(b->lo[a] - p->box.lo[a]);
        k.hi[a] = (int)(b->hi[a] - p->box.lo[a]);
    }
    return k;
}

/* Whether boxes[0..n-1] can be computed by fused launches: all non-empty,
 * inside the piece less its edge, and each nested in the one before with
 * every side either one node in or (at the piece edge) unchanged. */
int fusable(const pyr_piece_t *piece, const pyr_box_t *boxes, int n, int dims)
{
    for (int l = 0; l < n; l++) {
        if (pyr_box_empty(&boxes[l])) return 0;
        if (l == 0) continue;
        const pyr_box_t *b0 = &boxes[l - 1], *b1 = &boxes[l];
        for (int a = 0; a < dims; a++) {
            int lo_ok = b1->lo[a] >= b0->lo[a] + 1 || (b1->lo[a] == b0->lo[a] && b0->lo[a] == piece->box.lo[a] + 1);
            int hi_ok = b1->hi[a] <= b0->hi[a] - 1 || (b1->hi[a] == b0->hi[a] && b0->hi[a] == piece->box.hi[a] - 1);
            if (!lo_ok || !hi_ok || b1->hi[a] <= b1->lo[a]) return 0;
        }
    }
    return 1;
}

/* ---------------------------------------------------------------- variants */

/* "fused[:K[,T]]": at most K steps per launch (odd; 2D up to KMAX2D, 3D up
 * to KMAX3D; a launch of one 3D step uses the streaming kernel), T threads
 * per row of a 2D block (128 or 256) or rows of a 3D block (8 to 32);
 * "plain": one step per launch of the plain kernel. */
template <int KMAX2D, int KMAX3D> pyr_status_t stencil_variant_check(const pyr_variant_t *v, int dims, pyr_precision_t precision)
{
    (void)precision;
    if (!strcmp(v->name, "plain")) {
        if (v->p[0] || v->p[1] || v->p[2]) return pyr_fail(PYR_ERR_CONFIG, "the CUDA variant plain takes no parameters");
        return PYR_OK;
    }
    if (strcmp(v->name, "fused"))
        return pyr_fail(PYR_ERR_CONFIG, "no CUDA kernel variant '%s'; use fused[:K[,T]] (K steps per launch) or plain", v->name);
    const int kmax = dims == 3 ? KMAX3D : KMAX2D;
    if (v->p[0] && (v->p[0] > kmax || !(v->p[0] & 1)))
        return pyr_fail(PYR_ERR_CONFIG, "fused:%d: %dD launches take an odd number of steps from 1 to %d", v->p[0], dims, kmax);
    if (dims == 2 && v->p[1] && v->p[1] != 128 && v->p[1] != 256)
        return pyr_fail(PYR_ERR_CONFIG, "fused:%d,%d: 2D blocks have 128 or 256 threads", v->p[0], v->p[1]);
    if (dims == 3 && v->p[1] && (v->p[1] < 8 || v->p[1] > 32))
        return pyr_fail(PYR_ERR_CONFIG, "fused:%d,%d: 3D blocks take 8 to 32 rows", v->p[0], v->p[1]);
    if (v->p[2]) return pyr_fail(PYR_ERR_CONFIG, "fused takes at most two parameters (K,T)");
    return PYR_OK;
}

/* The defaults, what the planner runs without measured choices: eleven steps
 * per launch in 2D float, seven in 2D double, three in 3D (beside a pass's
 * copies far better than the one-step streaming kernel, whose L2 traffic
 * starves the host-to-device copy engine: docs/performance.md#copies-beside-kernels),
 * 2D blocks of 128 threads.  Kernels alone, the fastest depths at every
 * width: five steps run slower, and so do blocks of 256 threads; double
 * gains nothing past seven (measured: docs/performance.md#heat-2d-temporal-blocking). */
inline int stencil_default_k(int dims, pyr_precision_t precision)
{
    return dims == 3 ? 3 : precision == PYR_DOUBLE ? 7 : 11;
}

/* Steps one launch of a variant takes (kernels.h launch_steps): fused's
 * depth, 1 for plain (and the long-vector variant's one-step operations). */
inline int stencil_launch_steps(const pyr_variant_t *v, int dims, pyr_precision_t precision)
{
    if (strcmp(v->name, "fused")) return 1;
    return v->p[0] ? v->p[0] : stencil_default_k(dims, precision);
}

inline int stencil_default_nt2d(pyr_precision_t precision)
{
    (void)precision;
    return 128;
}

inline void stencil_variant_default(int dims, pyr_precision_t precision, pyr_variant_t *v)
{
    memset(v, 0, sizeof *v);
    strcpy(v->name, "fused");
    v->p[0] = stencil_default_k(dims, precision);
}

template <int KMAX2D, int KMAX3D> int stencil_variant_candidates(int dims, pyr_precision_t precision, pyr_variant_t *v, int max)
{
    (void)precision;
    int n = 0;
    const int kmax = dims == 3 ? KMAX3D : KMAX2D;
    for (int k = 1; k <= kmax && n < max; k += 2, n++) {
        memset(&v[n], 0, sizeof v[n]);
        strcpy(v[n].name, "fused");
        v[n].p[0] = k;
    }
    return n;
}

/* ------------------------------------------------------------------ compute */

/* The sub-steps of a call: fused launches cut as backend/launch_split.h
 * says (odd sizes, as few and as equal as possible); the plain kernel where the boxes do not nest as a
 * pyramid, rows are not 16-byte aligned, or in 1D.  OpOf<T>::make(coef,
 * piece) builds the scheme's update. */
/* How run_stencil computes a call: its tuning, and the fused launches it
 * makes (0: one plain launch per layer). */
template <int KMAX2D, int KMAX3D> int stencil_launches(const pyrcu::ctx_t *c, const pyr_kernel_call_t *call, pyr_ktune_t *tune)
{
    const pyr_piece_t *piece = call->piece;
    const int nlayers = call->nboxes, dims = call->coef->dims;
    memset(tune, 0, sizeof *tune);
    tune->sms = c->sms;
    tune->force_stream = c->dev->force_stream.load(std::memory_order_relaxed) + 1;
    tune->stats = &c->dev->stats;
    tune->plain = !strcmp(call->variant->name, "plain");
    const pyr_precision_t prec = c->elem == 8 ? PYR_DOUBLE : PYR_FLOAT;
    tune->kmax = call->variant->p[0] ? call->variant->p[0] : stencil_default_k(dims, prec);
    if (tune->kmax > (dims == 3 ? KMAX3D : KMAX2D)) tune->kmax = dims == 3 ? KMAX3D : KMAX2D;
    tune->nt2d = dims == 2 && call->variant->p[1] ? call->variant->p[1] : stencil_default_nt2d(prec);
    tune->nty3d = dims == 3 && call->variant->p[1] ? call->variant->p[1] : 32;
    /* the fused kernels move 16-byte vectors: rows must start 16-byte aligned */
    int aligned = (piece->pitch * (int64_t)c->elem) % 16 == 0;
    for (int f = 0; f < piece->nfields; f++)
        for (int l = 0; l < 2; l++)
            if (piece->buf[f][l] && (uintptr_t)piece->buf[f][l] % 16) aligned = 0;
    if (dims == 1 || tune->plain || !aligned || !fusable(piece, call->boxes, nlayers, dims)) return 0;
    return pyr_launch_count(nlayers, tune->kmax, dims == 3 ? KMAX3D : KMAX2D, !call->variant->p[0]);
}

/* kernels.h last_box_only: one fused launch writes only its last box */
template <int KMAX2D, int KMAX3D> int stencil_last_box_only(void *ctx, const pyr_kernel_call_t *call)
{
    pyr_ktune_t tune;
    return call->nboxes > 0 && stencil_launches<KMAX2D, KMAX3D>((const pyrcu::ctx_t *)ctx, call, &tune) == 1;
}

/* Whether a store view (a skewed halo store) has the piece buffer's layout, and the elements from the
 * input's node at plane z0 to the store's (0 while either buffer is unknown: the model asks before any
 * exist); 0 where not, or not 16-byte aligned alike. */
static int store_delta(const pyrcu::ctx_t *c, const pyr_piece_t *piece, const pyr_piece_t *st, int64_t z0, int64_t *delta)
{
    if (st->pitch != piece->pitch || pyr_box_extent(&st->box, 1) != pyr_box_extent(&piece->box, 1) ||
        st->box.lo[0] != piece->box.lo[0] || st->box.lo[1] != piece->box.lo[1])
        return 0;
    *delta = 0;
    if (!st->buf[0][0] || !piece->buf[0][piece->cur]) return 1;
    const int64_t plane = piece->pitch * pyr_box_extent(&piece->box, 1);
    const intptr_t bytes = (intptr_t)((const char *)st->buf[0][0] - (const char *)piece->buf[0][piece->cur]);
    if (bytes % 16 || bytes % (intptr_t)c->elem) return 0;
    *delta = (int64_t)(bytes / (intptr_t)c->elem) + (z0 - st->box.lo[2]) * plane - (z0 - piece->box.lo[2]) * plane;
    return 1;
}

/* A call's halo (kernels.h halo) as its one fused 3D float launch takes it, where it can.  The save: inside
 * the piece and its store, its columns and rows at most one node past the last box's (the boundary faces:
 * the edge tiles read them), its planes inside those the launch reads ([lo - k, hi + k) of the last box).
 * The fill: whole rows and planes of the piece (the kernel loads whole vectors from the store), inside its
 * store.  Stores of the buffer's layout, 16-byte aligned alike.  0 where it cannot (the executor copies). */
template <int KMAX2D, int KMAX3D> int stencil_halo_of(const pyrcu::ctx_t *c, const pyr_kernel_call_t *call, pyr_khalo_t *out)
{
    const pyr_piece_t *piece = call->piece, *st = call->save_to, *fs = call->fill_from;
    /* float only: the double kernel spills with a save (launch3d) */
    if ((!st && !fs) || c->elem != 4 || call->coef->dims != 3 || call->nboxes < 3) return 0;
    pyr_ktune_t tune;
    if (stencil_launches<KMAX2D, KMAX3D>(c, call, &tune) != 1) return 0;
    const pyr_box_t *last = &call->boxes[call->nboxes - 1];
    const int k = call->nboxes;
    memset(out, 0, sizeof *out);
    if (st) {
        const pyr_box_t *sb = &call->save;
        if (pyr_box_empty(sb) || !pyr_box_contains(&piece->box, sb) || !pyr_box_contains(&st->box, sb)) return 0;
        for (int a = 0; a < 3; a++) {
            const int64_t r = a < 2 ? 1 : k;
            if (sb->lo[a] < last->lo[a] - r || sb->hi[a] > last->hi[a] + r) return 0;
        }
        if (!store_delta(c, piece, st, sb->lo[2], &out->sdelta)) return 0;
        out->save = local_box(piece, sb);
    }
    if (fs) {
        const pyr_box_t *fb = &call->fill;
        if (pyr_box_empty(fb) || !pyr_box_contains(&piece->box, fb) || !pyr_box_contains(&fs->box, fb)) return 0;
        for (int a = 0; a < 2; a++)
            if (fb->lo[a] != piece->box.lo[a] || fb->hi[a] != piece->box.hi[a]) return 0;
        if (!store_delta(c, piece, fs, fb->lo[2], &out->fdelta)) return 0;
        out->fill = local_box(piece, fb);
    }
    return 1;
}

/* kernels.h halo */
template <int KMAX2D, int KMAX3D> int stencil_halo(void *ctx, const pyr_kernel_call_t *call)
{
    pyr_khalo_t hv;
    return stencil_halo_of<KMAX2D, KMAX3D>((const pyrcu::ctx_t *)ctx, call, &hv);
}

template <template <typename> class OpOf, int KMAX2D, int KMAX3D>
pyr_status_t run_stencil(void *ctx, int slot, const pyr_kernel_call_t *call)
{
    pyrcu::ctx_t *c = (pyrcu::ctx_t *)ctx;
    pyrcu::stats_t &stats = c->dev->stats;
    PYR_TRY(pyrcu::check_slot(c, slot));
    const pyr_piece_t *piece = call->piece;
    const pyr_box_t *boxes = call->boxes;
    const int nlayers = call->nboxes, dims = call->coef->dims;
    if (nlayers <= 0) return PYR_OK;
    /* Every box must lie inside the piece less its edge (the stencil reads one node further). */
    for (int l = 0; l < nlayers; l++) {
        if (pyr_box_empty(&boxes[l])) continue;
        for (int a = 0; a < 3; a++) {
            int64_t in = a < dims ? 1 : 0;
            if (boxes[l].lo[a] < piece->box.lo[a] + in || boxes[l].hi[a] > piece->box.hi[a] - in)
                return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: layer %d box outside its piece", l);
        }
    }
    pyr_ktune_t tune;
    const int count = stencil_launches<KMAX2D, KMAX3D>(c, call, &tune);
    pyr_khalo_t halo;
    const int saving = call->save_to != NULL || call->fill_from != NULL;
    if (saving && !stencil_halo_of<KMAX2D, KMAX3D>(c, call, &halo))
        return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: a halo the kernel does not take (kernels.h halo)");
    double t0 = pyrcu::serial(c) ? pyrcu::now_s() : 0;
    PYR_CU(cudaSetDevice(c->device));
    cudaStream_t s = c->stream[slot];
    pyr_klayout_t L = layout_of(piece);
    int cur = piece->cur;
    const int span = pyrcu::span_begin(c, PYR_SPAN_COMPUTE, slot);
    if (count == 0) {
        for (int l = 0; l < nlayers; l++) {
            pyr_kbox_t b = local_box(piece, &boxes[l]);
            if (c->elem == 8)
                PYR_CU((plain_launch<double, OpOf<double>>(dims, (const double *)piece->buf[0][cur], (double *)piece->buf[0][cur ^ 1], &L, &b,
                                                            OpOf<double>::make(call->coef, piece), s)));
            else
                PYR_CU((plain_launch<float, OpOf<float>>(dims, (const float *)piece->buf[0][cur], (float *)piece->buf[0][cur ^ 1], &L, &b,
                                                          OpOf<float>::make(call->coef, piece), s)));
            pyrcu::count(stats.launches);
            cur ^= 1;
        }
        pyrcu::span_end(c, span, slot);
        return pyrcu::serial_end(c, slot, t0, &stats.compute_ns);
    }
    pyr_kbox_t kb[PYR_CUDA_KMAX];
    int done = 0;
    for (int i = 0; i < count; i++) {
        const int k = pyr_launch_size(nlayers, count, i);
        for (int l = 0; l < k; l++) kb[l] = local_box(piece, &boxes[done + l]);
        if (c->elem == 8)
            PYR_CU((fused_launch<double, 2, 2, OpOf<double>, KMAX2D, KMAX3D>(dims, (const double *)piece->buf[0][cur],
                                                                          (double *)piece->buf[0][cur ^ 1], &L, kb, k,
                                                                          OpOf<double>::make(call->coef, piece), &tune,
                                                                          saving ? &halo : NULL, s)));
        else
            PYR_CU((fused_launch<float, 4, 4, OpOf<float>, KMAX2D, KMAX3D>(dims, (const float *)piece->buf[0][cur],
                                                                        (float *)piece->buf[0][cur ^ 1], &L, kb, k,
                                                                        OpOf<float>::make(call->coef, piece), &tune,
                                                                        saving ? &halo : NULL, s)));
        pyrcu::count(stats.launches);
        cur ^= 1;
        done += k;
    }
    if (done != nlayers) return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: split %d layers into launches of %d", nlayers, done);
    pyrcu::span_end(c, span, slot);
    return pyrcu::serial_end(c, slot, t0, &stats.compute_ns);
}

} // namespace

#endif
