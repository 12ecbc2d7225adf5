/* The Maxwell (Yee) scheme's CUDA kernels: the expressions of
 * src/schemes/maxwell.c (and of the CPU kernel, bit for bit), with
 * explicitly rounded operations so no FMA contraction changes a bit.
 *
 * Two variants.  `tile` updates the components in place, so a launch may
 * only read what it does not write: each sub-step is its own launch (H from
 * E, then E from H), a thread updating the three components of its node.  A
 * block covers a tile of 32 x R nodes (x, y) and walks up a run of planes
 * along z, so the plane above, read for the derivatives along z, is read
 * again from the caches as the plane itself on the next iteration.
 *
 * `fused` computes a whole step (H, then E) in one launch, so each node's six
 * components are read once and written once per step instead of twice: a
 * block computes H on its tile and on a one-node rim below it in x and y
 * (E's backward differences need the neighbours' new H), keeps the new H of
 * the plane in shared memory and that of the plane below in registers, then
 * computes E.  The rim is computed again by the block that owns it, from the
 * same old values, so the step cannot update in place: it reads one set of
 * buffers and writes another (the piece's and a copy the variant keeps),
 * the two swapping roles each step.  It covers the part of the grid away from
 * the CPML layers (their auxiliaries are updated in place, which a
 * recomputed rim would race with); the layers around it are computed by the
 * tile kernel reading and writing the same two sets, after it.  Calls on
 * pieces of the grid (out-of-core plans, parts), calls whose boxes change
 * from step to step and calls with sources on H run as `tile` does.  The default and calibration's
 * candidates are tile shapes: fused is asked for by name where its copy fits.
 * `wave` (maxwell_wave.cuh) takes K steps of a 2D grid per launch, the
 * stencil kernels' temporal blocking; likewise asked for by name.
 *
 * Sources are a launch after the sub-step of their component, a thread per
 * node they add to, from a table of their nodes made once per list of
 * sources; their amplitudes (or, for sources with terms, the series' rows
 * they are computed from on the device) reach it in one copy per call.
 * Probes are a small launch after E: node offsets travel as launch
 * arguments (many probes: a table per call), values are written straight to
 * the caller's pinned host buffer. */
#include <algorithm>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda_internal.cuh"
#include "backend/cuda/rounded.cuh"
extern "C" {
#include "schemes/maxwell.h"
}

namespace {

template <typename T> __device__ __forceinline__ T ld(const T *p) { return __ldg(p); }

/* Launch shape: warps of 32 nodes along x, `rows` of them per block along y,
 * each thread walking `zrun` planes (variant tile:R,Z; the defaults below). */
constexpr int kTX = 32, kMaxRows = 8, kRowsDefault = 4, kZRunDefault = 16;

/* One sub-step's launch: the three components it updates and what they read. */
template <typename T> struct SubStep {
    T *F[3];          /* the updated field's components (NULL: not in this grid) */
    const T *Fin[3];  /* their values before the sub-step, where it does not update in place */
    const T *G[3];    /* the other field's components */
    T *P[3][2];       /* psi of component c along a1 ([0]) and a2 ([1]); NULL where no layer */
    const T *coef[2]; /* E: ca, cb per node; H: dh ([0]); NULL: the constants */
    T k0[2];          /* E: ca0, cb0; H: dh0 */
    T rh[3];          /* 1/h per axis */
    const double *table; /* the CPML profiles (device), pyr_maxwell_profile's layout */
    int64_t nmax;
    int64_t pitch, plane; /* elements per row, per plane */
    int64_t org[3];       /* grid coordinates of the piece's first node */
    int lo[3], hi[3];     /* the union of the components' update boxes (grid coordinates) */
    int rlo[3][3], rhi[3][3]; /* per component: the part of the sub-step's box it updates */
    int dims;
    int zrun;             /* planes per thread */
    int64_t wrap[3];      /* periodic axis a (the piece spans it whole): (n - 1) * step[a], else 0 */
    int end[3];           /* the node whose difference along a periodic axis wraps: E's first, H's last */
};

template <typename T>
__device__ __forceinline__ T through_layer(T d, T *P, int64_t i, const double *prof, int64_t nmax, int axis, int half, int64_t pos)
{
    const double *base = prof + (int64_t)((axis * 2 + half) * 4) * nmax;
    if (base[3 * nmax + pos] == 0) return d;
    const T kv = (T)base[pos], b = (T)base[nmax + pos], a = (T)base[2 * nmax + pos];
    const T psi = add(mul(b, P[i]), mul(a, d));
    P[i] = psi;
    return add(mul(d, kv), psi);
}

/* One sub-step on a tile: Cpml instantiates the layers' code only for
 * launches whose box meets a layer, Apart the reading of the old values
 * from other buffers than the new ones (pointers are __restrict__: a launch
 * writes one field and reads the other, so loads may be reordered and
 * shared across the components). */
/* Wrap: the call has a periodic axis (its differences at the axis's end read the other end); a
 * launch without one carries no test of it per node. */
template <typename T, bool Electric, bool Cpml, bool Apart, bool Wrap>
__global__ void __launch_bounds__(kTX *kMaxRows) yee_substep(SubStep<T> s)
{
    const int x = s.lo[0] + blockIdx.x * kTX + threadIdx.x;
    const int y = s.lo[1] + blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= s.hi[0] || y >= s.hi[1]) return;
    const int z0 = s.lo[2] + blockIdx.z * s.zrun;
    const int z1 = min(z0 + s.zrun, s.hi[2]);
    const int half = Electric ? 0 : 1;
    int zlo[3], zhi[3];
#pragma unroll
    for (int c = 0; c < 3; c++) {
        const bool on = s.F[c] && x >= s.rlo[c][0] && x < s.rhi[c][0] && y >= s.rlo[c][1] && y < s.rhi[c][1];
        zlo[c] = on ? max(z0, s.rlo[c][2]) : 0;
        zhi[c] = on ? min(z1, s.rhi[c][2]) : 0;
    }
    const int64_t row = (int64_t)(y - s.org[1]) * s.pitch + (x - s.org[0]);
    const int64_t step[3] = {1, s.pitch, s.plane};
    const T *__restrict__ CA = s.coef[0];
    const T *__restrict__ CB = s.coef[1];
    for (int z = z0; z < z1; z++) {
        const int64_t i = (int64_t)(z - s.org[2]) * s.plane + row;
        const int pos[3] = {x, y, z};
#pragma unroll
        for (int c = 0; c < 3; c++) {
            if (z < zlo[c] || z >= zhi[c]) continue;
            T *__restrict__ F = s.F[c];
            const int a1 = (c + 1) % 3, a2 = (c + 2) % 3;
            const bool has1 = a1 < s.dims, has2 = a2 < s.dims;
            T c1 = 0, c2 = 0;
            if (has1) {
                const T *__restrict__ G = s.G[a2];
                const int64_t st = Wrap && s.wrap[a1] && pos[a1] == s.end[a1] ? -s.wrap[a1] : step[a1];
                T d = Electric ? mul(sub(ld(G + i), ld(G + i - st)), s.rh[a1]) : mul(sub(ld(G + i + st), ld(G + i)), s.rh[a1]);
                if (Cpml && s.P[c][0]) d = through_layer(d, s.P[c][0], i, s.table, s.nmax, a1, half, (int64_t)pos[a1]);
                c1 = d;
            }
            if (has2) {
                const T *__restrict__ G = s.G[a1];
                const int64_t st = Wrap && s.wrap[a2] && pos[a2] == s.end[a2] ? -s.wrap[a2] : step[a2];
                T d = Electric ? mul(sub(ld(G + i), ld(G + i - st)), s.rh[a2]) : mul(sub(ld(G + i + st), ld(G + i)), s.rh[a2]);
                if (Cpml && s.P[c][1]) d = through_layer(d, s.P[c][1], i, s.table, s.nmax, a2, half, (int64_t)pos[a2]);
                c2 = d;
            }
            /* The old value is read where it is used, after the coefficient: read
             * before (as one variable for both cases), the in-place load came
             * ahead of the neighbours' and the H launch lost about a fifth of
             * its rate at the same traffic. */
            if (Electric) {
                const T ca = CA ? ld(CA + i) : s.k0[0], cb = CB ? ld(CB + i) : s.k0[1];
                const T f = mul(ca, Apart ? ld(s.Fin[c] + i) : F[i]);
                if (has1 && has2) F[i] = add(f, mul(cb, sub(c1, c2)));
                else if (has1) F[i] = add(f, mul(cb, c1));
                else F[i] = sub(f, mul(cb, c2));
            } else {
                const T dh = CA ? ld(CA + i) : s.k0[0];
                const T old = Apart ? ld(s.Fin[c] + i) : F[i];
                if (has1 && has2) F[i] = sub(old, mul(dh, sub(c1, c2)));
                else if (has1) F[i] = sub(old, mul(dh, c1));
                else F[i] = add(old, mul(dh, c2));
            }
        }
    }
}

/* One whole step on the part of the grid away from the layers (the fused
 * variant): what it reads (in) and what it writes (out) are different
 * buffers, components NULL where the grid has none. */
template <typename T> struct Step {
    const T *Ein[3], *Hin[3];
    T *Eout[3], *Hout[3];
    const T *CA, *CB, *DH; /* per-node coefficients; NULL: the constants */
    T ca0, cb0, dh0;
    T rh[3];
    int64_t pitch, plane;
    int64_t org[3];
    int lo[3], hi[3]; /* the box it updates (grid coordinates): every component at every node */
    int dims;
    int zrun;
};

/* The new H component c at node i (the expressions of yee_substep's H
 * sub-step outside the layers). */
template <typename T>
__device__ __forceinline__ T h_new(const Step<T> &s, int c, int64_t i, const int64_t st[3])
{
    const int a1 = (c + 1) % 3, a2 = (c + 2) % 3;
    const bool has1 = a1 < s.dims, has2 = a2 < s.dims;
    T c1 = 0, c2 = 0;
    if (has1) {
        const T *__restrict__ G = s.Ein[a2];
        c1 = mul(sub(ld(G + i + st[a1]), ld(G + i)), s.rh[a1]);
    }
    if (has2) {
        const T *__restrict__ G = s.Ein[a1];
        c2 = mul(sub(ld(G + i + st[a2]), ld(G + i)), s.rh[a2]);
    }
    const T dh = s.DH ? ld(s.DH + i) : s.dh0;
    const T old = ld(s.Hin[c] + i);
    if (has1 && has2) return sub(old, mul(dh, sub(c1, c2)));
    if (has1) return sub(old, mul(dh, c1));
    return add(old, mul(dh, c2));
}

/* A block: R warps for 32 x R nodes of a plane and one more for the rim,
 * walking zrun planes up (the rim's warp computes what E's differences need
 * there: Hx and Hz on the row y0 - 1, then Hy and Hz on the column x0 - 1,
 * about as much work as an own warp's three components, so no warp holds
 * the others up at the barrier).  The new H of a plane goes to shared memory
 * (sh[b][c][y + 1][x + 1], the rim at index 0), two planes' worth used in
 * turn: while E of plane z is computed from one, H of plane z + 1 is written
 * to the other, so the loads of the two are in flight together and one
 * barrier per plane suffices.  below[] holds the new H of the plane under
 * the one whose E is computed, at the thread's own node. */
template <typename T, bool Three>
__global__ void __launch_bounds__(kTX *(kMaxRows + 1)) yee_step(Step<T> s)
{
    __shared__ T sh[2][3][kMaxRows + 1][kTX + 1];
    const int tx = threadIdx.x, ty = threadIdx.y, rows = blockDim.y - 1;
    const int x0 = s.lo[0] + blockIdx.x * kTX, y0 = s.lo[1] + blockIdx.y * rows;
    const bool rim = ty == rows;
    const int x = x0 + tx, y = rim ? y0 - 1 : y0 + ty;
    const bool own = !rim && x < s.hi[0] && y < s.hi[1];
    const bool rim_row = rim && x < s.hi[0];
    const int cy = y0 + tx;
    const bool rim_col = rim && tx < rows && cy < s.hi[1];
    const int z0 = s.lo[2] + blockIdx.z * s.zrun;
    const int z1 = min(z0 + s.zrun, s.hi[2]);
    const int64_t st[3] = {1, s.pitch, s.plane};
    const int64_t row = (int64_t)(y - s.org[1]) * s.pitch + (x - s.org[0]);
    const int64_t row_c = (int64_t)(cy - s.org[1]) * s.pitch + (x0 - 1 - s.org[0]);
    /* the new H of plane z into buffer b: the thread's own node, or its rim nodes */
    auto h_plane = [&](int z, int b) {
        const int64_t zo = (int64_t)(z - s.org[2]) * s.plane;
        const int64_t i = zo + row;
        if (own) {
#pragma unroll
            for (int c = 0; c < 3; c++) {
                if (!s.Hin[c]) continue;
                const T h = h_new(s, c, i, st);
                s.Hout[c][i] = h;
                sh[b][c][ty + 1][tx + 1] = h;
            }
        } else if (rim) {
            if (rim_row) {
                if (s.Hin[0]) sh[b][0][0][tx + 1] = h_new(s, 0, i, st);
                if (s.Hin[2]) sh[b][2][0][tx + 1] = h_new(s, 2, i, st);
            }
            if (rim_col) {
                if (s.Hin[1]) sh[b][1][tx + 1][0] = h_new(s, 1, zo + row_c, st);
                if (s.Hin[2]) sh[b][2][tx + 1][0] = h_new(s, 2, zo + row_c, st);
            }
        }
    };
    T below[2] = {0, 0};
    if (Three && own) {
        const int64_t i = (int64_t)(z0 - 1 - s.org[2]) * s.plane + row;
#pragma unroll
        for (int c = 0; c < 2; c++)
            if (s.Hin[c]) below[c] = h_new(s, c, i, st);
    }
    h_plane(z0, 0);
    __syncthreads();
    for (int z = z0; z < z1; z++) {
        const int b = (z - z0) & 1;
        if (z + 1 < z1) h_plane(z + 1, b ^ 1);
        if (own) {
            const int64_t i = (int64_t)(z - s.org[2]) * s.plane + row;
#pragma unroll
            for (int c = 0; c < 3; c++) {
                if (!s.Ein[c]) continue;
                const int a1 = (c + 1) % 3, a2 = (c + 2) % 3;
                const bool has1 = a1 < s.dims, has2 = a2 < s.dims;
                T c1 = 0, c2 = 0;
                /* the new H component k here and one node down along axis a */
                auto here = [&](int k) { return sh[b][k][ty + 1][tx + 1]; };
                auto down = [&](int k, int a) { return a == 0 ? sh[b][k][ty + 1][tx] : a == 1 ? sh[b][k][ty][tx + 1] : below[k]; };
                if (has1) c1 = mul(sub(here(a2), down(a2, a1)), s.rh[a1]);
                if (has2) c2 = mul(sub(here(a1), down(a1, a2)), s.rh[a2]);
                const T ca = s.CA ? ld(s.CA + i) : s.ca0, cb = s.CB ? ld(s.CB + i) : s.cb0;
                const T f = mul(ca, ld(s.Ein[c] + i));
                T e;
                if (has1 && has2) e = add(f, mul(cb, sub(c1, c2)));
                else if (has1) e = add(f, mul(cb, c1));
                else e = sub(f, mul(cb, c2));
                s.Eout[c][i] = e;
            }
            if (Three)
#pragma unroll
                for (int c = 0; c < 2; c++) below[c] = sh[b][c][ty + 1][tx + 1];
        }
        __syncthreads();
    }
}

/* The nodes of a piece's buffer outside box b copied from src to dst: what a
 * step leaves as it is must be in both sets of buffers. */
template <typename T>
__global__ void copy_outside(T *__restrict__ dst, const T *__restrict__ src, int64_t pitch, int nx, int ny, int nz, int bx0, int bx1,
                             int by0, int by1, int bz0, int bz1)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= nx || y >= ny) return;
    const bool inside_xy = x >= bx0 && x < bx1 && y >= by0 && y < by1;
    for (int z = 0; z < nz; z++) {
        if (inside_xy && z >= bz0 && z < bz1) continue;
        const int64_t i = ((int64_t)z * ny + y) * pitch + x;
        dst[i] = src[i];
    }
}

/* Probes of one sub-step: at most kPoints per launch. */
constexpr int kPoints = 48;
template <typename T> struct Points {
    const T *probe[kPoints];
    int64_t probe_at[kPoints];
    double *out[kPoints];
    int nprobe;
};

template <typename T> __global__ void yee_points(Points<T> p)
{
    const int i = threadIdx.x;
    if (i < p.nprobe) *p.out[i] = p.probe[i] ? (double)p.probe[i][p.probe_at[i]] : 0.0;
}

/* A source on the device: its term of the series' row (k >= 0; schemes/
 * scheme.h pyr_scheme_term_t) or, k < 0, its column of the call's compact
 * amplitudes. */
struct DevTerm {
    double coef;
    double w[4];
    int64_t k;
    int nw;
    int col;
};

/* pyr_scheme_term_value's expression, each operation rounded as the host's. */
__device__ __forceinline__ double term_value(const DevTerm &t, const double *row, const double *amp)
{
    if (t.k < 0) return amp[t.col];
    if (t.nw == 1) return mul(t.coef, row[t.k]);
    const double *v = row + t.k;
    return mul(t.coef, add(add(add(mul(t.w[0], v[0]), mul(t.w[1], v[1])), mul(t.w[2], v[2])), mul(t.w[3], v[3])));
}

/* The sources of one kind (E or H) at one step of a call, in one launch: a
 * thread per distinct node (field and position) that they add to, which adds
 * its node's sources in the order of the call's list, as one thread adding
 * every source in that order would: the same bits wherever two sources meet
 * on a node (a plane wave's corrections on the box's edges, point sources). */
template <typename T> struct SrcLaunch {
    T *f[PYR_MAX_FIELDS];
    const int4 *node; /* x, y, z, field */
    const int *start, *list;
    const DevTerm *term;
    const double *row, *amp; /* the step's row of the series and of the compact amplitudes */
    int n;
    int lo[3], hi[3];
    int org[3];
    int64_t pitch, rows;
};

template <typename T> __global__ void yee_sources(SrcLaunch<T> a)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= a.n) return;
    const int4 q = a.node[i];
    if (q.x < a.lo[0] || q.x >= a.hi[0] || q.y < a.lo[1] || q.y >= a.hi[1] || q.z < a.lo[2] || q.z >= a.hi[2]) return;
    T *F = a.f[q.w];
    if (!F) return;
    const int64_t at = ((int64_t)(q.z - a.org[2]) * a.rows + (q.y - a.org[1])) * a.pitch + (q.x - a.org[0]);
    T v = F[at];
    for (int j = a.start[i]; j < a.start[i + 1]; j++) v = add(v, (T)term_value(a.term[a.list[j]], a.row, a.amp));
    F[at] = v;
}

/* Many probes at once (monitors over planes and boxes are probes, one per
 * node and component): a thread per probe reads its field at its index, both
 * from a table on the device that the context keeps per queue. */
template <typename T> struct Gather {
    const T *f[PYR_MAX_FIELDS];
    const int64_t *at;
    const unsigned char *field;
    double *out;
    int64_t n;
};

template <typename T> __global__ void yee_gather(Gather<T> g)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= g.n) return;
    const T *f = g.f[g.field[i]];
    g.out[i] = f ? (double)f[g.at[i]] : 0.0;
}

/* Along axis a, the positions [lo, hi) of the longest run of nodes in no
 * layer (for E's derivatives nor H's). */
void free_run(const pyr_coef_t *k, int a, int64_t n, int64_t *lo, int64_t *hi)
{
    *lo = 0;
    *hi = n;
    const int64_t naux = pyr_maxwell_cpml_naux(k);
    if (!k->aux || naux < 24) return;
    const double *in0 = pyr_maxwell_profile(k->aux, naux, a, 0, 3), *in1 = pyr_maxwell_profile(k->aux, naux, a, 1, 3);
    int64_t best = 0, start = 0;
    *hi = 0;
    for (int64_t i = 0; i <= n; i++) {
        const int in_layer = i == n || in0[i] != 0 || in1[i] != 0;
        if (!in_layer) continue;
        if (i - start > best) {
            best = i - start;
            *lo = start;
            *hi = i;
        }
        start = i + 1;
    }
}

/* b less the box `in` inside it, as at most six boxes. */
int minus(const pyr_box_t *b, const pyr_box_t *in, pyr_box_t out[6])
{
    int n = 0;
    pyr_box_t rest = *b;
    for (int a = 2; a >= 0; a--) {
        pyr_box_t lo = rest, hi = rest;
        lo.hi[a] = in->lo[a];
        hi.lo[a] = in->hi[a];
        if (lo.hi[a] > lo.lo[a]) out[n++] = lo;
        if (hi.hi[a] > hi.lo[a]) out[n++] = hi;
        rest.lo[a] = in->lo[a];
        rest.hi[a] = in->hi[a];
    }
    return n;
}

/* Where a step reads and writes the six components: the piece's buffers
 * (in place), or one set of buffers for the old values and another for the
 * new (the fused variant's steps, also for the layers around its part). */
template <typename T> struct Sets {
    const T *in[6];
    T *out[6];
};

/* The nodes of `box` where component comp (0-2 E, 3-5 H) is updated
 * (maxwell.h pyr_maxwell_update_range); 0 where there are none. */
int update_box(const pyr_kernel_call_t *call, int comp, const pyr_box_t *box, int lo[3], int hi[3])
{
    const int dims = call->coef->dims, electric = comp < 3, cc = comp % 3;
    int ok = 1;
    for (int a = 0; a < 3; a++) {
        int64_t l, h;
        if (a < dims) {
            const int64_t n = call->grid->n[a];
            const int along = cc == a;
            if ((call->coef->periodic >> a) & 1) l = 0, h = n; /* the node past the last is the first */
            else if (electric) l = along ? 0 : 1, h = n - 1;
            else l = 0, h = along ? n : n - 1;
        } else {
            l = 0, h = 1;
        }
        if (box->lo[a] > l) l = box->lo[a];
        if (box->hi[a] < h) h = box->hi[a];
        if (h <= l) ok = 0;
        lo[a] = (int)l;
        hi[a] = (int)h;
    }
    return ok;
}

/* One launch of a sub-step on box; layers = 0: the box meets no layer (the
 * launch without the layers' code). */
template <typename T>
pyr_status_t substep_launch(pyrcu::ctx_t *c, cudaStream_t st, const pyr_kernel_call_t *call, const double *table, int electric,
                            const pyr_box_t *box, const Sets<T> *sets, int layers)
{
    const pyr_piece_t *pc = call->piece;
    const pyr_coef_t *k = call->coef;
    const int dims = k->dims;
    SubStep<T> s;
    memset(&s, 0, sizeof s);
    s.dims = dims;
    s.table = table;
    s.nmax = pyr_maxwell_cpml_naux(k) / 24;
    const double *D = pyr_maxwell_disp_table(k); /* (host: which psi slots hold dispersive states) */
    s.pitch = pc->pitch;
    s.plane = pc->pitch * (pc->box.hi[1] - pc->box.lo[1]);
    for (int a = 0; a < 3; a++) {
        s.org[a] = pc->box.lo[a];
        s.rh[a] = a < dims ? (T)k->c[a] : (T)0;
        /* a periodic axis: the difference at its end reads the other end (the piece spans the axis whole) */
        const int64_t stride = a == 0 ? 1 : a == 1 ? s.pitch : s.plane;
        s.wrap[a] = a < dims && ((k->periodic >> a) & 1) ? (call->grid->n[a] - 1) * stride : 0;
        s.end[a] = electric ? 0 : (int)(call->grid->n[a] - 1);
    }
    const int first = electric ? 0 : 3, other = electric ? 3 : 0;
    if (electric) {
        s.coef[0] = (const T *)pc->buf[PYR_MAXWELL_CA][0];
        s.coef[1] = (const T *)pc->buf[PYR_MAXWELL_CB][0];
        s.k0[0] = (T)k->c[4];
        s.k0[1] = (T)k->c[5];
    } else {
        s.coef[0] = (const T *)pc->buf[PYR_MAXWELL_DH][0];
        s.k0[0] = (T)k->c[6];
    }
    int any = 0;
    for (int a = 0; a < 3; a++) {
        s.lo[a] = INT32_MAX;
        s.hi[a] = INT32_MIN;
    }
    for (int cc = 0; cc < 3; cc++) {
        const int comp = first + cc;
        /* E reads the new H, H the old E */
        s.G[cc] = sets ? (electric ? sets->out[other + cc] : sets->in[other + cc]) : (const T *)pc->buf[other + cc][0];
        T *F = sets ? sets->out[comp] : (T *)pc->buf[comp][0];
        if (!F) continue;
        s.Fin[cc] = sets ? sets->in[comp] : NULL;
        const int a1 = (cc + 1) % 3, a2 = (cc + 2) % 3;
        if (!update_box(call, comp, box, s.rlo[cc], s.rhi[cc])) continue;
        s.F[cc] = F;
        const int p1 = a1 < dims ? pyr_maxwell_psi_field(comp, a1) : -1, p2 = a2 < dims ? pyr_maxwell_psi_field(comp, a2) : -1;
        s.P[cc][0] = p1 >= 0 && !pyr_maxwell_disp_owns(D, p1) ? (T *)pc->buf[p1][0] : NULL;
        s.P[cc][1] = p2 >= 0 && !pyr_maxwell_disp_owns(D, p2) ? (T *)pc->buf[p2][0] : NULL;
        if ((s.P[cc][0] || s.P[cc][1]) && !table) return pyr_fail(PYR_ERR_INTERNAL, "CUDA Maxwell kernel: CPML fields without profiles");
        for (int a = 0; a < 3; a++) {
            if (s.rlo[cc][a] < s.lo[a]) s.lo[a] = s.rlo[cc][a];
            if (s.rhi[cc][a] > s.hi[a]) s.hi[a] = s.rhi[cc][a];
        }
        any = 1;
    }
    if (!any) return PYR_OK;
    const int rows = call->variant->p[0] ? call->variant->p[0] : kRowsDefault;
    s.zrun = dims < 3 ? 1 : call->variant->p[1] ? call->variant->p[1] : kZRunDefault;
    dim3 grid((unsigned)((s.hi[0] - s.lo[0] + kTX - 1) / kTX), (unsigned)((s.hi[1] - s.lo[1] + rows - 1) / rows),
              (unsigned)((s.hi[2] - s.lo[2] + s.zrun - 1) / s.zrun));
    int cpml = 0;
    for (int cc = 0; cc < 3; cc++) cpml |= layers && (s.P[cc][0] || s.P[cc][1]);
    const dim3 block(kTX, (unsigned)rows);
    /* (fused calls, the ones with sets, decline periodic axes: fused_box) */
    if (sets && k->periodic) return pyr_fail(PYR_ERR_INTERNAL, "CUDA Maxwell kernel: a fused call on a periodic grid");
    if (sets) {
        if (electric) {
            if (cpml) yee_substep<T, true, true, true, false><<<grid, block, 0, st>>>(s);
            else yee_substep<T, true, false, true, false><<<grid, block, 0, st>>>(s);
        } else {
            if (cpml) yee_substep<T, false, true, true, false><<<grid, block, 0, st>>>(s);
            else yee_substep<T, false, false, true, false><<<grid, block, 0, st>>>(s);
        }
    } else if (k->periodic) {
        if (electric) {
            if (cpml) yee_substep<T, true, true, false, true><<<grid, block, 0, st>>>(s);
            else yee_substep<T, true, false, false, true><<<grid, block, 0, st>>>(s);
        } else {
            if (cpml) yee_substep<T, false, true, false, true><<<grid, block, 0, st>>>(s);
            else yee_substep<T, false, false, false, true><<<grid, block, 0, st>>>(s);
        }
    } else if (electric) {
        if (cpml) yee_substep<T, true, true, false, false><<<grid, block, 0, st>>>(s);
        else yee_substep<T, true, false, false, false><<<grid, block, 0, st>>>(s);
    } else {
        if (cpml) yee_substep<T, false, true, false, false><<<grid, block, 0, st>>>(s);
        else yee_substep<T, false, false, false, false><<<grid, block, 0, st>>>(s);
    }
    PYR_CU(cudaGetLastError());
    pyrcu::count(c->dev->stats.launches);
    return PYR_OK;
}

/* A sub-step on box: where the grid has layers, the part of the box in none
 * of them is a launch without the layers' code (their lookups per node and
 * per derivative), the slabs around it each a launch with it. */
template <typename T>
pyr_status_t substep(pyrcu::ctx_t *c, cudaStream_t st, const pyr_kernel_call_t *call, const double *table, int electric,
                     const pyr_box_t *box, const Sets<T> *sets)
{
    const pyr_coef_t *k = call->coef;
    if (!table || !k->aux) return substep_launch<T>(c, st, call, table, electric, box, sets, 1);
    pyr_box_t in = *box;
    for (int a = 0; a < k->dims; a++) {
        int64_t lo, hi;
        free_run(k, a, call->grid->n[a], &lo, &hi);
        in.lo[a] = std::max(in.lo[a], lo);
        in.hi[a] = std::min(in.hi[a], hi);
        if (in.hi[a] <= in.lo[a]) return substep_launch<T>(c, st, call, table, electric, box, sets, 1);
    }
    PYR_TRY(substep_launch<T>(c, st, call, table, electric, &in, sets, 0));
    pyr_box_t around[6];
    const int n = minus(box, &in, around);
    for (int b = 0; b < n; b++) PYR_TRY(substep_launch<T>(c, st, call, table, electric, &around[b], sets, 1));
    return PYR_OK;
}

/* A call's table of probe indices on the device (n int64 indices into the
 * piece's buffers, then n field numbers), made for the call alone on its
 * queue (stream-ordered allocation, freed after the call's launches), so
 * nothing of it outlives the call or is shared between queues or threads. */
pyr_status_t gather_make(cudaStream_t st, const pyr_kernel_call_t *call, void **dev)
{
    *dev = NULL;
    const int64_t n = call->nprobes;
    const size_t bytes = (size_t)n * (sizeof(int64_t) + 1);
    int64_t *host = (int64_t *)malloc(bytes);
    if (!host) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for %lld probes", (long long)n);
    unsigned char *field = (unsigned char *)(host + n);
    for (int64_t i = 0; i < n; i++) {
        const pyr_kernel_point_t *q = &call->probes[i];
        host[i] = pyr_piece_index(call->piece, q->node[0], q->node[1], q->node[2]);
        field[i] = (unsigned char)q->field;
    }
    cudaError_t e = cudaMallocAsync(dev, bytes, st);
    /* from pageable memory the copy has taken the host's bytes when it returns */
    if (e == cudaSuccess) e = cudaMemcpyAsync(*dev, host, bytes, cudaMemcpyHostToDevice, st);
    free(host);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        if (*dev) (void)cudaFreeAsync(*dev, st);
        *dev = NULL;
        return pyr_fail(PYR_ERR_DEVICE, "CUDA Maxwell kernel: the table of %lld probes: %s", (long long)n, cudaGetErrorString(e));
    }
    return PYR_OK;
}

/* A list of sources on the device (made once per list: kept in the
 * context under the call's sources_id): for each kind (0: H, 1: E) the
 * distinct nodes its sources add to, each with its sources' indices in
 * increasing order (start, list), and every source's term.  A context runs
 * one execution at a time and each run has a list of its own, so two tables
 * suffice; a run's table stays until a later run's replaces it (it takes
 * some 80 bytes per source, beside the plan's budget). */
struct SrcTable {
    uint64_t id, used;
    int ntarget[2], namp;
    int *amp_src; /* (host) the source of each column of the compact amplitudes */
    void *dev;
    const int4 *node[2];
    const int *start[2], *list[2];
    const DevTerm *term;
};
constexpr int kSrcTables = 2;
struct SrcTables {
    SrcTable t[kSrcTables];
    uint64_t clock;
};
const char srctab_key = 0;

void srctab_clear(pyrcu::ctx_t *c, SrcTable *t)
{
    if (t->dev) pyr_device_cuda.dev_free(c, t->dev);
    free(t->amp_src);
    memset(t, 0, sizeof *t);
}

void srctabs_free(pyrcu::ctx_t *c, void *data)
{
    SrcTables *ts = (SrcTables *)data;
    for (int i = 0; i < kSrcTables; i++) srctab_clear(c, &ts->t[i]);
    free(ts);
}

size_t align16(size_t n) { return (n + 15) & ~(size_t)15; }

/* The table of the call's sources, into t (empty). */
pyr_status_t srctab_make(pyrcu::ctx_t *c, const pyr_kernel_call_t *call, SrcTable *t)
{
    const int n = call->nsources;
    int *ord = (int *)malloc((size_t)n * sizeof(int));
    DevTerm *term = (DevTerm *)calloc((size_t)n, sizeof(DevTerm));
    t->amp_src = (int *)malloc((size_t)n * sizeof(int));
    if (!ord || !term || !t->amp_src) {
        free(ord);
        free(term);
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the table of %d sources", n);
    }
    for (int i = 0; i < n; i++) {
        ord[i] = i;
        const pyr_scheme_term_t *tm = call->terms && call->terms[i].k >= 0 ? &call->terms[i] : NULL;
        if (tm) {
            term[i].coef = tm->coef;
            memcpy(term[i].w, tm->w, sizeof term[i].w);
            term[i].k = tm->k;
            term[i].nw = tm->nw;
        } else {
            term[i].k = -1;
            term[i].col = t->namp;
            t->amp_src[t->namp++] = i;
        }
    }
    /* by kind, node and field; a node's sources in the list's order (a stable sort) */
    const pyr_kernel_point_t *src = call->sources;
    std::stable_sort(ord, ord + n, [src](int a, int b) {
        const pyr_kernel_point_t &p = src[a], &q = src[b];
        const int ka = p.field < 3, kb = q.field < 3;
        if (ka != kb) return ka < kb;
        for (int d = 2; d >= 0; d--)
            if (p.node[d] != q.node[d]) return p.node[d] < q.node[d];
        return p.field < q.field;
    });
    int nt = 0;
    for (int j = 0; j < n; j++) {
        const pyr_kernel_point_t &p = src[ord[j]];
        const int fresh = j == 0 || p.field != src[ord[j - 1]].field || memcmp(p.node, src[ord[j - 1]].node, sizeof p.node);
        if (fresh) {
            nt++;
            t->ntarget[p.field < 3]++;
        }
    }
    const size_t b_node = align16((size_t)nt * sizeof(int4)), b_start = align16((size_t)(nt + 2) * sizeof(int)),
                 b_list = align16((size_t)n * sizeof(int)), b_term = (size_t)n * sizeof(DevTerm);
    const size_t bytes = b_node + b_start + b_list + b_term;
    char *host = (char *)malloc(bytes);
    if (!host) {
        free(ord);
        free(term);
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the table of %d sources", n);
    }
    int4 *node = (int4 *)host;
    int *start = (int *)(host + b_node), *list = (int *)(host + b_node + b_start);
    memcpy(host + b_node + b_start + b_list, term, b_term);
    /* H's nodes first, then E's; the starts of H's nodes and its end, then E's and its end */
    int k = -1;
    for (int j = 0; j < n; j++) {
        const pyr_kernel_point_t &p = src[ord[j]];
        const int fresh = j == 0 || p.field != src[ord[j - 1]].field || memcmp(p.node, src[ord[j - 1]].node, sizeof p.node);
        if (fresh) {
            k++;
            node[k] = make_int4((int)p.node[0], (int)p.node[1], (int)p.node[2], p.field);
            start[k + (k >= t->ntarget[0])] = j;
        }
        list[j] = ord[j];
    }
    /* each kind's end: H's at start[ntarget[0]], E's at start[nt + 1] */
    start[t->ntarget[0]] = t->ntarget[1] ? start[t->ntarget[0] + 1] : n;
    start[nt + 1] = n;
    free(ord);
    free(term);
    pyr_status_t r = pyr_device_cuda.dev_alloc(c, bytes, &t->dev);
    if (r == PYR_OK && cudaMemcpy(t->dev, host, bytes, cudaMemcpyHostToDevice) != cudaSuccess)
        r = pyr_fail(PYR_ERR_DEVICE, "CUDA Maxwell kernel: the table of %d sources: %s", n, cudaGetErrorString(cudaGetLastError()));
    free(host);
    if (r != PYR_OK) return r;
    const char *d = (const char *)t->dev;
    t->node[0] = (const int4 *)d;
    t->node[1] = t->node[0] + t->ntarget[0];
    t->start[0] = (const int *)(d + b_node);
    t->start[1] = t->start[0] + t->ntarget[0] + 1;
    t->list[0] = t->list[1] = (const int *)(d + b_node + b_start);
    t->term = (const DevTerm *)(d + b_node + b_start + b_list);
    return PYR_OK;
}

/* The table of the call's sources: the context's under its sources_id, or
 * made now (the least recently used one making room, once the work that may
 * read it is done); *mine: made for this call alone (sources_id 0). */
pyr_status_t srctab_get(pyrcu::ctx_t *c, const pyr_kernel_call_t *call, SrcTable **out, SrcTable *mine)
{
    *out = NULL;
    if (!call->sources_id) {
        memset(mine, 0, sizeof *mine);
        PYR_TRY(srctab_make(c, call, mine));
        *out = mine;
        return PYR_OK;
    }
    SrcTables *ts = (SrcTables *)pyrcu::state_of(c, &srctab_key);
    if (!ts) {
        ts = (SrcTables *)calloc(1, sizeof *ts);
        if (!ts) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
        pyr_status_t r = pyrcu::state_keep(c, &srctab_key, ts, srctabs_free);
        if (r != PYR_OK) {
            free(ts);
            return r;
        }
    }
    SrcTable *t = NULL;
    for (int i = 0; i < kSrcTables && !t; i++)
        if (ts->t[i].id == call->sources_id) t = &ts->t[i];
    if (!t) {
        t = &ts->t[0];
        for (int i = 1; i < kSrcTables; i++)
            if (ts->t[i].used < t->used) t = &ts->t[i];
        if (t->dev) PYR_CU(cudaDeviceSynchronize()); /* work queued before may still read it */
        srctab_clear(c, t);
        pyr_status_t r = srctab_make(c, call, t);
        if (r != PYR_OK) {
            srctab_clear(c, t);
            return r;
        }
        t->id = call->sources_id;
    }
    t->used = ++ts->clock;
    *out = t;
    return PYR_OK;
}

/* What a call's launches read of its point terms: its sources' table and
 * their rows (the series' and the compact amplitudes', a step each, in one
 * upload for the call), the probes' table. */
struct CallTables {
    const void *gather;
    const SrcTable *src;
    const double *series, *amp; /* (device) step s's rows at + s * nseries, + s * namp */
    int nseries;
};

/* The call's rows on the device, in one copy, made for the call alone on its
 * queue (freed after its launches, as the probes' table). */
pyr_status_t rows_make(cudaStream_t st, const pyr_kernel_call_t *call, const SrcTable *t, CallTables *ct, void **dev)
{
    *dev = NULL;
    const int64_t steps = (call->nboxes + 1) / 2, ns = call->terms && call->series ? call->nseries : 0;
    if (t->namp < call->nsources && !ns)
        return pyr_fail(PYR_ERR_INTERNAL, "CUDA Maxwell kernel: a call with sources' terms without the series they read");
    const size_t nv = (size_t)(steps * (ns + t->namp));
    if (!nv) return PYR_OK;
    double *host = (double *)malloc(nv * sizeof(double));
    if (!host) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the sources' amplitudes");
    if (ns) memcpy(host, call->series, (size_t)(steps * ns) * sizeof(double));
    double *amp = host + steps * ns;
    for (int64_t s = 0; s < steps; s++)
        for (int j = 0; j < t->namp; j++) amp[s * t->namp + j] = call->amplitudes[s * call->nsources + t->amp_src[j]];
    cudaError_t e = cudaMallocAsync(dev, nv * sizeof(double), st);
    /* from pageable memory the copy has taken the host's bytes when it returns */
    if (e == cudaSuccess) e = cudaMemcpyAsync(*dev, host, nv * sizeof(double), cudaMemcpyHostToDevice, st);
    free(host);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        if (*dev) (void)cudaFreeAsync(*dev, st);
        *dev = NULL;
        return pyr_fail(PYR_ERR_DEVICE, "CUDA Maxwell kernel: the sources' amplitudes: %s", cudaGetErrorString(e));
    }
    ct->series = (const double *)*dev;
    ct->amp = ct->series + steps * ns;
    ct->nseries = (int)ns;
    return PYR_OK;
}

/* The sources of component kind `electric` at step s of the call (inside
 * box; one launch), then (after E) the probes.  tables: the call's
 * CallTables. */
template <typename T>
pyr_status_t points(pyrcu::ctx_t *c, cudaStream_t st, const pyr_kernel_call_t *call, int electric, const pyr_box_t *b, int64_t s,
                    const Sets<T> *sets, const void *tables)
{
    const pyr_piece_t *pc = call->piece;
    const CallTables *ct = (const CallTables *)tables;
    const void *gather = ct ? ct->gather : NULL;
    const SrcTable *t = ct ? ct->src : NULL;
    if (t && t->ntarget[electric]) {
        SrcLaunch<T> a;
        memset(&a, 0, sizeof a);
        for (int f = 0; f < PYR_MAX_FIELDS; f++)
            a.f[f] = !pc->buf[f][0] ? NULL : sets && f < 6 ? sets->out[f] : (T *)pc->buf[f][0];
        a.node = t->node[electric];
        a.start = t->start[electric];
        a.list = t->list[electric];
        a.term = t->term;
        a.row = ct->series ? ct->series + s * ct->nseries : NULL;
        a.amp = ct->amp ? ct->amp + s * t->namp : NULL;
        a.n = t->ntarget[electric];
        for (int d = 0; d < 3; d++) {
            a.lo[d] = (int)b->lo[d];
            a.hi[d] = (int)b->hi[d];
            a.org[d] = (int)pc->box.lo[d];
        }
        a.pitch = pc->pitch;
        a.rows = pc->box.hi[1] - pc->box.lo[1];
        yee_sources<T><<<(unsigned)((a.n + 255) / 256), 256, 0, st>>>(a);
        PYR_CU(cudaGetLastError());
        pyrcu::count(c->dev->stats.launches);
    }
    Points<T> p;
    memset(&p, 0, sizeof p);
    auto flush = [&]() -> pyr_status_t {
        if (!p.nprobe) return PYR_OK;
        yee_points<T><<<1, kPoints, 0, st>>>(p);
        PYR_CU(cudaGetLastError());
        pyrcu::count(c->dev->stats.launches);
        p.nprobe = 0;
        return PYR_OK;
    };
    if (electric && gather) {
        /* every probe in one launch */
        const void *table = gather;
        Gather<T> g;
        memset(&g, 0, sizeof g);
        for (int f = 0; f < PYR_MAX_FIELDS; f++) g.f[f] = sets && f < 6 ? sets->out[f] : (const T *)pc->buf[f][0];
        g.at = (const int64_t *)table;
        g.field = (const unsigned char *)(g.at + call->nprobes);
        g.out = &call->probes_out[s * call->nprobes];
        g.n = call->nprobes;
        yee_gather<T><<<(unsigned)((g.n + 255) / 256), 256, 0, st>>>(g);
        PYR_CU(cudaGetLastError());
        pyrcu::count(c->dev->stats.launches);
        return PYR_OK;
    }
    if (electric)
        for (int i = 0; i < call->nprobes; i++) {
            const pyr_kernel_point_t *q = &call->probes[i];
            if (p.nprobe == kPoints) PYR_TRY(flush());
            p.probe[p.nprobe] = sets && q->field < 6 ? sets->out[q->field] : (const T *)pc->buf[q->field][0];
            p.probe_at[p.nprobe] = pyr_piece_index(pc, q->node[0], q->node[1], q->node[2]);
            p.out[p.nprobe++] = &call->probes_out[s * call->nprobes + i];
        }
    return flush();
}

/* The dispersive terms of E component c over a box (maxwell.h's table D, on
 * the device): Post = false advances the states from E before E's update,
 * true takes their currents from the updated E; a thread per node, which
 * finds its material in its row's runs. */
template <typename T> struct Disp {
    T *E;
    T *J[PYR_MAXWELL_MAX_POLES], *P[PYR_MAXWELL_MAX_POLES];
    const T *CB;
    T cb0, dt;
    const double *D; /* the table (device) */
    int ns;
    int64_t n1, starts, runs;
    int64_t pitch, plane, org[3];
    int lo[3], hi[3];
};

template <typename T, bool Post> __device__ __forceinline__ void disp_node(const Disp<T> &d, int x, int y, int z)
{
    const int64_t row = (int64_t)z * d.n1 + y;
    const int64_t j0 = (int64_t)d.D[d.starts + row], j1 = (int64_t)d.D[d.starts + row + 1];
    int m = 0;
    for (int64_t j = j0; j < j1; j++) {
        const double *run = d.D + d.runs + 3 * j;
        if (x >= (int64_t)run[0] && x < (int64_t)run[1]) {
            m = (int)run[2];
            break;
        }
    }
    if (!m) return;
    const int64_t i = (int64_t)(z - d.org[2]) * d.plane + (int64_t)(y - d.org[1]) * d.pitch + (x - d.org[0]);
    if (Post) {
        T sum = d.J[0][i];
        for (int q = 1; q < d.ns; q++) sum = add(sum, d.J[q][i]);
        const T cb = d.CB ? d.CB[i] : d.cb0;
        const T e = sub(d.E[i], mul(cb, sum));
        d.E[i] = e;
        for (int q = 0; q < d.ns; q++) {
            const double *kq = d.D + PYR_MAXWELL_DISP_COEF + ((int64_t)m * d.ns + q) * 4;
            if (kq[0] == 2 && d.P[q]) d.P[q][i] = add(d.P[q][i], mul((T)kq[3], e));
        }
        return;
    }
    const T e = d.E[i];
    for (int q = 0; q < d.ns; q++) {
        const double *kq = d.D + PYR_MAXWELL_DISP_COEF + ((int64_t)m * d.ns + q) * 4;
        const T cj = (T)kq[1], cp = (T)kq[2], ce = (T)kq[3];
        T *J = d.J[q], *P = d.P[q];
        if (kq[0] == 2 && P) {
            const T p = P[i];
            J[i] = mul(cp, p);
            P[i] = add(mul(cj, p), mul(ce, e));
        } else if (kq[0] == 1 && P) {
            const T v = add(add(mul(cj, J[i]), mul(cp, P[i])), mul(ce, e));
            J[i] = v;
            P[i] = add(P[i], mul(d.dt, v));
        } else if (kq[0] == 1) {
            J[i] = add(mul(cj, J[i]), mul(ce, e));
        }
    }
}

/* (rows and planes by grid-stride loops: a launch's y and z extents are limited) */
template <typename T, bool Post> __global__ void yee_disp(Disp<T> d)
{
    const int x = d.lo[0] + blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= d.hi[0]) return;
    for (int z = d.lo[2] + (int)blockIdx.z; z < d.hi[2]; z += (int)gridDim.z)
        for (int y = d.lo[1] + (int)blockIdx.y; y < d.hi[1]; y += (int)gridDim.y) disp_node<T, Post>(d, x, y, z);
}

/* The dispersive terms of the E sub-step on box (before: post = 0; after: 1), for each E component. */
template <typename T>
pyr_status_t disp_launch(pyrcu::ctx_t *c, cudaStream_t st, const pyr_kernel_call_t *call, const double *table, const pyr_box_t *box, int post)
{
    const pyr_coef_t *k = call->coef;
    const double *D = pyr_maxwell_disp_table(k);
    if (!D) return PYR_OK;
    if (!table) return pyr_fail(PYR_ERR_INTERNAL, "CUDA Maxwell kernel: dispersive terms without their table on the device");
    const pyr_piece_t *pc = call->piece;
    for (int comp = 0; comp < 3; comp++) {
        if (!pc->buf[comp][0]) continue;
        Disp<T> d;
        memset(&d, 0, sizeof d);
        if (!update_box(call, comp, box, d.lo, d.hi)) continue;
        d.E = (T *)pc->buf[comp][0];
        d.ns = (int)D[0];
        for (int q = 0; q < d.ns; q++) {
            const int fj = pyr_maxwell_disp_field(D, q, comp, 0), fp = pyr_maxwell_disp_field(D, q, comp, 1);
            d.J[q] = fj >= 0 ? (T *)pc->buf[fj][0] : NULL;
            d.P[q] = fp >= 0 ? (T *)pc->buf[fp][0] : NULL;
            if (!d.J[q]) return pyr_fail(PYR_ERR_INTERNAL, "CUDA Maxwell kernel: a dispersive term without its field");
        }
        d.CB = (const T *)pc->buf[PYR_MAXWELL_CB][0];
        d.cb0 = (T)k->c[5];
        d.dt = (T)D[2];
        d.D = table + (k->naux - pyr_maxwell_disp_length(k));
        d.n1 = (int64_t)D[4];
        d.starts = (int64_t)D[5];
        d.runs = (int64_t)D[6];
        d.pitch = pc->pitch;
        d.plane = pc->pitch * (pc->box.hi[1] - pc->box.lo[1]);
        for (int a = 0; a < 3; a++) d.org[a] = pc->box.lo[a];
        const dim3 grid((unsigned)((d.hi[0] - d.lo[0] + 127) / 128), (unsigned)std::min(d.hi[1] - d.lo[1], 65535),
                        (unsigned)std::min(d.hi[2] - d.lo[2], 65535));
        if (post) yee_disp<T, true><<<grid, 128, 0, st>>>(d);
        else yee_disp<T, false><<<grid, 128, 0, st>>>(d);
        PYR_CU(cudaGetLastError());
        pyrcu::count(c->dev->stats.launches);
    }
    return PYR_OK;
}

/* A step of the tile variant (in place), or its sub-steps on the given sets. */
template <typename T>
pyr_status_t tile_step(pyrcu::ctx_t *c, cudaStream_t st, const pyr_kernel_call_t *call, const double *table, int s, const Sets<T> *sets,
                       const void *tables)
{
    for (int l = 2 * s; l < 2 * s + 2 && l < call->nboxes; l++) {
        const int electric = l % 2; /* a call starts at a step: H, E, H, E ... */
        /* (no sets with dispersive terms: fused_box declines them) */
        if (electric && !sets) PYR_TRY(disp_launch<T>(c, st, call, table, &call->boxes[l], 0));
        PYR_TRY(substep<T>(c, st, call, table, electric, &call->boxes[l], sets));
        if (electric && !sets) PYR_TRY(disp_launch<T>(c, st, call, table, &call->boxes[l], 1));
        if (call->nsources || (electric && call->nprobes)) PYR_TRY(points<T>(c, st, call, electric, &call->boxes[l], s, sets, tables));
    }
    return PYR_OK;
}

/* The fused variant's second set of buffers, kept in the context (grown,
 * never shrunk, while the context lives). */
struct copies_t {
    void *dev;
    size_t bytes;
};
const char copies_key = 0;

void copies_free(pyrcu::ctx_t *c, void *data)
{
    copies_t *t = (copies_t *)data;
    pyr_device_cuda.dev_free(c, t->dev);
    free(t);
}

pyr_status_t copies(pyrcu::ctx_t *c, size_t bytes, void **dev)
{
    copies_t *t = (copies_t *)pyrcu::state_of(c, &copies_key);
    if (!t) {
        t = (copies_t *)calloc(1, sizeof *t);
        if (!t) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
        pyr_status_t st = pyrcu::state_keep(c, &copies_key, t, copies_free);
        if (st != PYR_OK) {
            free(t);
            return st;
        }
    }
    if (t->bytes < bytes) {
        if (t->dev) {
            PYR_CU(cudaDeviceSynchronize()); /* work queued before may still read them */
            pyr_device_cuda.dev_free(c, t->dev);
            t->dev = NULL;
            t->bytes = 0;
        }
        PYR_TRY(pyr_device_cuda.dev_alloc(c, bytes, &t->dev));
        t->bytes = bytes;
    }
    *dev = t->dev;
    return PYR_OK;
}

int same_box(const pyr_box_t *a, const pyr_box_t *b)
{
    for (int d = 0; d < 3; d++)
        if (a->lo[d] != b->lo[d] || a->hi[d] != b->hi[d]) return 0;
    return 1;
}

/* The part of a call the fused kernel takes: every step's H box and every
 * E box the same, no source on H, and a box inside every component's
 * update range, out of the layers with a node to spare below it (the rim
 * its blocks compute again) inside the H box.  0: none (the call runs as
 * the tile variant does). */
int fused_box(const pyr_kernel_call_t *call, pyr_box_t *in)
{
    if (call->nboxes < 4 || call->nboxes % 2) return 0;
    /* the dispersive terms' states are updated in place, which a recomputed rim would apply twice */
    if (pyr_maxwell_disp_table(call->coef)) return 0;
    /* (a periodic axis's differences wrap in the tile kernel only) */
    if (call->coef->periodic) return 0;
    for (int l = 2; l < call->nboxes; l++)
        if (!same_box(&call->boxes[l], &call->boxes[l % 2])) return 0;
    for (int i = 0; i < call->nsources; i++)
        if (call->sources[i].field >= 3) return 0;
    const pyr_box_t *hb = &call->boxes[0], *eb = &call->boxes[1];
    const pyr_piece_t *pc = call->piece;
    const int dims = call->coef->dims;
    /* the whole grid (a resident plan's piece): plans in pieces do not count the copy */
    for (int a = 0; a < dims; a++)
        if (pc->box.lo[a] != 0 || pc->box.hi[a] != call->grid->n[a]) return 0;
    for (int a = 0; a < 3; a++) {
        if (a >= dims) {
            in->lo[a] = 0;
            in->hi[a] = 1;
            if (hb->lo[a] != 0 || hb->hi[a] != 1 || eb->lo[a] != 0 || eb->hi[a] != 1) return 0;
            continue;
        }
        const int64_t n = call->grid->n[a];
        int64_t flo, fhi;
        free_run(call->coef, (int)a, n, &flo, &fhi);
        int64_t lo = 1, hi = n - 1;
        lo = std::max(lo, std::max(hb->lo[a] + 1, eb->lo[a]));
        lo = std::max(lo, std::max(flo + 1, pc->box.lo[a] + 1));
        hi = std::min(hi, std::min(hb->hi[a], eb->hi[a]));
        hi = std::min(hi, std::min(fhi, pc->box.hi[a] - 1));
        if (hi <= lo) return 0;
        in->lo[a] = lo;
        in->hi[a] = hi;
    }
    return 1;
}

template <typename T>
pyr_status_t fused_steps(pyrcu::ctx_t *c, cudaStream_t st, const pyr_kernel_call_t *call, const double *table, const pyr_box_t *in,
                         const void *tables)
{
    const pyr_piece_t *pc = call->piece;
    const pyr_coef_t *k = call->coef;
    const int nsteps = call->nboxes / 2;
    int s0 = 0;
    if (nsteps % 2) {
        /* an odd count: the first step in place, so the last ends in the piece's buffers */
        PYR_TRY(tile_step<T>(c, st, call, table, 0, (const Sets<T> *)NULL, tables));
        s0 = 1;
    }
    const int64_t ext[3] = {pyr_box_extent(&pc->box, 0), pyr_box_extent(&pc->box, 1), pyr_box_extent(&pc->box, 2)};
    const size_t layer = (size_t)pc->pitch * (size_t)ext[1] * (size_t)ext[2] * sizeof(T);
    void *dev = NULL;
    PYR_TRY(copies(c, 6 * layer, &dev));
    Sets<T> A, B;
    for (int f = 0; f < 6; f++) {
        T *mine = (T *)pc->buf[f][0];
        A.in[f] = A.out[f] = mine;
        B.out[f] = mine ? (T *)((char *)dev + f * layer) : NULL;
        B.in[f] = B.out[f];
        if (!mine) continue;
        /* what no step updates, in both sets */
        int lo[3], hi[3];
        if (!update_box(call, f, &call->boxes[f < 3 ? 1 : 0], lo, hi))
            for (int a = 0; a < 3; a++) lo[a] = hi[a] = (int)pc->box.lo[a];
        const dim3 cb(32, 8), cg((unsigned)((ext[0] + 31) / 32), (unsigned)((ext[1] + 7) / 8));
        copy_outside<T><<<cg, cb, 0, st>>>(B.out[f], mine, pc->pitch, (int)ext[0], (int)ext[1], (int)ext[2], lo[0] - (int)pc->box.lo[0],
                                           hi[0] - (int)pc->box.lo[0], lo[1] - (int)pc->box.lo[1], hi[1] - (int)pc->box.lo[1],
                                           lo[2] - (int)pc->box.lo[2], hi[2] - (int)pc->box.lo[2]);
        PYR_CU(cudaGetLastError());
        pyrcu::count(c->dev->stats.launches);
    }
    Step<T> fs;
    memset(&fs, 0, sizeof fs);
    fs.CA = (const T *)pc->buf[PYR_MAXWELL_CA][0];
    fs.CB = (const T *)pc->buf[PYR_MAXWELL_CB][0];
    fs.DH = (const T *)pc->buf[PYR_MAXWELL_DH][0];
    fs.ca0 = (T)k->c[4];
    fs.cb0 = (T)k->c[5];
    fs.dh0 = (T)k->c[6];
    fs.dims = k->dims;
    fs.pitch = pc->pitch;
    fs.plane = pc->pitch * ext[1];
    for (int a = 0; a < 3; a++) {
        fs.rh[a] = a < k->dims ? (T)k->c[a] : (T)0;
        fs.org[a] = pc->box.lo[a];
        fs.lo[a] = (int)in->lo[a];
        fs.hi[a] = (int)in->hi[a];
    }
    const int rows = call->variant->p[0] ? call->variant->p[0] : kRowsDefault;
    fs.zrun = k->dims < 3 ? 1 : call->variant->p[1] ? call->variant->p[1] : kZRunDefault;
    const dim3 block(kTX, (unsigned)rows + 1); /* and the rim's warp */
    const dim3 grid((unsigned)((in->hi[0] - in->lo[0] + kTX - 1) / kTX), (unsigned)((in->hi[1] - in->lo[1] + rows - 1) / rows),
                    (unsigned)((in->hi[2] - in->lo[2] + fs.zrun - 1) / fs.zrun));
    pyr_box_t shell_h[6], shell_e[6];
    const int nh = minus(&call->boxes[0], in, shell_h), ne = minus(&call->boxes[1], in, shell_e);
    for (int s = s0; s < nsteps; s++) {
        const Sets<T> &from = (s - s0) % 2 ? B : A, &to = (s - s0) % 2 ? A : B;
        Sets<T> io;
        for (int f = 0; f < 6; f++) {
            io.in[f] = from.in[f];
            io.out[f] = to.out[f];
        }
        for (int cc = 0; cc < 3; cc++) {
            fs.Ein[cc] = io.in[cc];
            fs.Hin[cc] = io.in[3 + cc];
            fs.Eout[cc] = io.out[cc];
            fs.Hout[cc] = io.out[3 + cc];
        }
        if (k->dims == 3) yee_step<T, true><<<grid, block, 0, st>>>(fs);
        else yee_step<T, false><<<grid, block, 0, st>>>(fs);
        PYR_CU(cudaGetLastError());
        pyrcu::count(c->dev->stats.launches);
        for (int b = 0; b < nh; b++) PYR_TRY(substep<T>(c, st, call, table, 0, &shell_h[b], &io));
        for (int b = 0; b < ne; b++) PYR_TRY(substep<T>(c, st, call, table, 1, &shell_e[b], &io));
        if (call->nsources || call->nprobes) PYR_TRY(points<T>(c, st, call, 1, &call->boxes[1], s, &io, tables));
    }
    return PYR_OK;
}

} // namespace

#include "backend/cuda/maxwell_wave.cuh"

namespace {

template <typename T>
pyr_status_t run_calls(pyrcu::ctx_t *c, cudaStream_t st, const pyr_kernel_call_t *call, const double *table, const void *tables)
{
    pyr_box_t in;
    if (!strcmp(call->variant->name, "wave")) {
        /* what it declines runs as tile's default shape (wave's parameters are not tile's) */
        pyr_variant_t tv;
        memset(&tv, 0, sizeof tv);
        strcpy(tv.name, "tile");
        tv.p[0] = kRowsDefault;
        tv.p[1] = call->coef->dims == 3 ? kZRunDefault : 1;
        pyr_kernel_call_t tc = *call;
        tc.variant = &tv;
        const int te = wave_mode(call);
        if (te >= 0) return wave_steps<T>(c, st, call, &tc, table, te, tables);
        for (int s = 0; 2 * s < call->nboxes; s++) PYR_TRY(tile_step<T>(c, st, &tc, table, s, (const Sets<T> *)NULL, tables));
        return PYR_OK;
    }
    if (!strcmp(call->variant->name, "fused") && fused_box(call, &in)) return fused_steps<T>(c, st, call, table, &in, tables);
    for (int s = 0; 2 * s < call->nboxes; s++) PYR_TRY(tile_step<T>(c, st, call, table, s, (const Sets<T> *)NULL, tables));
    return PYR_OK;
}

/* The scheme's read-only table (pyr_coef_t.aux: the CPML profiles) on the
 * device, uploaded once per context and table: the kernel's own state in the
 * context (cuda_internal.cuh state_of). */
struct profiles_t {
    const double *src;
    int64_t n;
    void *dev;
};
const char profiles_key = 0;

void profiles_free(pyrcu::ctx_t *c, void *data)
{
    profiles_t *t = (profiles_t *)data;
    pyr_device_cuda.dev_free(c, t->dev);
    free(t);
}

pyr_status_t device_profiles(pyrcu::ctx_t *c, const double *host, int64_t n, const double **dev)
{
    *dev = NULL;
    if (!host || n <= 0) return PYR_OK;
    profiles_t *t = (profiles_t *)pyrcu::state_of(c, &profiles_key);
    if (!t) {
        t = (profiles_t *)calloc(1, sizeof *t);
        if (!t) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
        pyr_status_t st = pyrcu::state_keep(c, &profiles_key, t, profiles_free);
        if (st != PYR_OK) {
            free(t);
            return st;
        }
    }
    if (t->dev && t->src == host && t->n == n) {
        *dev = (const double *)t->dev;
        return PYR_OK;
    }
    if (t->dev) {
        /* a new table: let the work that reads the old one finish first */
        PYR_CU(cudaDeviceSynchronize());
        pyr_device_cuda.dev_free(c, t->dev);
        t->dev = NULL;
    }
    PYR_TRY(pyr_device_cuda.dev_alloc(c, (size_t)n * sizeof(double), &t->dev));
    PYR_CU(cudaMemcpy(t->dev, host, (size_t)n * sizeof(double), cudaMemcpyHostToDevice));
    t->src = host;
    t->n = n;
    *dev = (const double *)t->dev;
    return PYR_OK;
}

pyr_status_t maxwell_run(void *ctx, int slot, const pyr_kernel_call_t *call)
{
    pyrcu::ctx_t *c = (pyrcu::ctx_t *)ctx;
    PYR_TRY(pyrcu::check_slot(c, slot));
    if (!call->grid) return pyr_fail(PYR_ERR_INTERNAL, "CUDA Maxwell kernel: called without the grid's size");
    for (int a = 0; a < 3; a++)
        if (call->grid->n[a] > INT32_MAX / 2) return pyr_fail(PYR_ERR_CONFIG, "CUDA Maxwell kernel: at most 2^30 nodes per axis");
    double t0 = pyrcu::serial(c) ? pyrcu::now_s() : 0;
    PYR_CU(cudaSetDevice(c->device));
    const double *table = NULL;
    PYR_TRY(device_profiles(c, call->coef->aux, call->coef->naux, &table));
    const int span = pyrcu::span_begin(c, PYR_SPAN_COMPUTE, slot);
    cudaStream_t st = c->stream[slot];
    /* many probes (monitors' nodes): gathered in one launch a step from a table made for this call */
    void *gather = NULL, *rows = NULL;
    CallTables ct;
    memset(&ct, 0, sizeof ct);
    SrcTable mine;
    memset(&mine, 0, sizeof mine);
    pyr_status_t r = call->nprobes > kPoints ? gather_make(st, call, &gather) : PYR_OK;
    ct.gather = gather;
    /* the sources: their table (once per list), their rows (once per call) */
    if (r == PYR_OK && call->nsources > 0) {
        SrcTable *t = NULL;
        r = srctab_get(c, call, &t, &mine);
        if (r == PYR_OK) r = rows_make(st, call, t, &ct, &rows);
        ct.src = t;
    }
    if (r == PYR_OK) r = c->elem == 8 ? run_calls<double>(c, st, call, table, &ct) : run_calls<float>(c, st, call, table, &ct);
    if (gather && cudaFreeAsync(gather, st) != cudaSuccess && r == PYR_OK)
        r = pyr_fail(PYR_ERR_DEVICE, "CUDA Maxwell kernel: freeing the probes' table: %s", cudaGetErrorString(cudaGetLastError()));
    if (rows && cudaFreeAsync(rows, st) != cudaSuccess && r == PYR_OK)
        r = pyr_fail(PYR_ERR_DEVICE, "CUDA Maxwell kernel: freeing the sources' rows: %s", cudaGetErrorString(cudaGetLastError()));
    if (mine.dev) {
        /* a table for this call alone: freed once its launches are done */
        if (cudaStreamSynchronize(st) != cudaSuccess && r == PYR_OK)
            r = pyr_fail(PYR_ERR_DEVICE, "CUDA Maxwell kernel: %s", cudaGetErrorString(cudaGetLastError()));
    }
    srctab_clear(c, &mine);
    pyrcu::span_end(c, span, slot);
    PYR_TRY(r);
    return pyrcu::serial_end(c, slot, t0, &c->dev->stats.compute_ns);
}

pyr_status_t maxwell_check(const pyr_variant_t *v, int dims, pyr_precision_t precision)
{
    (void)dims;
    (void)precision;
    if (!strcmp(v->name, "wave")) {
        if (v->p[0] < 0 || v->p[0] > kWaveMaxK) return pyr_fail(PYR_ERR_CONFIG, "wave:%d: 1 to %d steps per launch", v->p[0], kWaveMaxK);
        const int k = v->p[0] ? v->p[0] : kWaveKDefault;
        if (v->p[1] && (v->p[1] % 32 || v->p[1] > kWaveMaxThreads || v->p[1] <= 2 * k))
            return pyr_fail(PYR_ERR_CONFIG, "wave:%d,%d: a block of a multiple of 32 threads, at most %d and more than twice the steps", k,
                            v->p[1], kWaveMaxThreads);
        if (v->p[2] < 0 || v->p[2] > 65536) return pyr_fail(PYR_ERR_CONFIG, "wave:%d,%d,%d: 1 to 65536 rows per block", k, v->p[1], v->p[2]);
        return PYR_OK;
    }
    if (strcmp(v->name, "tile") && strcmp(v->name, "fused"))
        return pyr_fail(PYR_ERR_CONFIG, "no CUDA Maxwell kernel variant '%s'; use tile[:R[,Z]] (a launch per sub-step), fused[:R[,Z]] (a "
                                        "launch per step) or wave[:K[,B[,S]]] (K steps a launch, 2D) - R rows of 32 nodes per block: 1, 2, 4 or 8; Z planes per thread: 1 to 64",
                        v->name);
    if (v->p[0] && v->p[0] != 1 && v->p[0] != 2 && v->p[0] != 4 && v->p[0] != 8)
        return pyr_fail(PYR_ERR_CONFIG, "%s:%d: a block takes 1, 2, 4 or 8 rows of 32 nodes", v->name, v->p[0]);
    if (v->p[1] < 0 || v->p[1] > 64) return pyr_fail(PYR_ERR_CONFIG, "%s:%d,%d: a thread walks 1 to 64 planes", v->name, v->p[0], v->p[1]);
    if (v->p[2]) return pyr_fail(PYR_ERR_CONFIG, "%s takes at most two parameters (R,Z)", v->name);
    return PYR_OK;
}

void maxwell_default(int dims, pyr_precision_t precision, pyr_variant_t *v)
{
    (void)precision;
    memset(v, 0, sizeof *v);
    strcpy(v->name, "tile");
    v->p[0] = kRowsDefault;
    v->p[1] = dims == 3 ? kZRunDefault : 1;
}

int maxwell_candidates(int dims, pyr_precision_t precision, pyr_variant_t *v, int max)
{
    /* tile shapes only: fused needs six more layers of device memory, which a
     * record in the wisdom would then ask of plans that fit without them */
    static const int shapes3[][2] = {{4, 16}, {8, 8}, {2, 16}, {4, 1}, {8, 32}, {4, 4}};
    static const int rows2[] = {4, 8, 2, 1};
    const int count = dims == 3 ? 6 : 4;
    int n = 0;
    for (int i = 0; i < count && n < max; i++, n++) {
        memset(&v[n], 0, sizeof v[n]);
        strcpy(v[n].name, "tile");
        v[n].p[0] = dims == 3 ? shapes3[i][0] : rows2[i];
        v[n].p[1] = dims == 3 ? shapes3[i][1] : 1;
    }
    (void)precision;
    return n;
}

/* fused keeps a second buffer of each of the six components, wave of its
 * mode's components and CPML auxiliaries. */
uint64_t maxwell_scratch_bytes(const pyr_variant_t *v, uint64_t layer_bytes)
{
    if (!strcmp(v->name, "wave")) return 7 * layer_bytes; /* 2D: the mode's three components and four psi */
    return strcmp(v->name, "fused") ? 0 : 6 * layer_bytes;
}

} // namespace

extern "C" const pyr_kernel_t pyr_kernel_cuda_maxwell = {
    PYR_EQ_MAXWELL, PYR_BACKEND_CUDA,
    "tile[:R[,Z]] (a launch per sub-step, in place), fused[:R[,Z]] (a launch per step, a second copy of the components) - R rows of "
    "32 nodes per block: 1, 2, 4, 8; Z planes per thread: 1-64 - or wave[:K[,B[,S]]] (2D: K steps per launch, 1-8; B threads per "
    "block; S rows per block)",
    maxwell_check, maxwell_default, maxwell_candidates, maxwell_run,
    maxwell_scratch_bytes,
    NULL, /* launch steps: skewed pieces of in-place state take a piece's steps in one call (exec/skewed.c) */
    NULL, /* last box only: in place, the halo stores' questions do not arise */
    NULL, /* halo: likewise */
    1,    /* fused's copy: only on the whole grid */
};
