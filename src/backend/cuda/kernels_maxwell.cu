/* The Maxwell (Yee) scheme's CUDA kernel: the expressions of
 * src/schemes/maxwell.c (and of the CPU kernel, bit for bit), with
 * explicitly rounded operations so no FMA contraction changes a bit.
 *
 * The components are updated in place, so a launch may only read what it
 * does not write: each sub-step is its own launch (H from E, then E from H),
 * a thread updating the three components of its node.  A block covers a
 * tile of 32 x 4 nodes (x, y) and walks up a run of planes along z, so the
 * plane above, read for the derivatives along z, is read again from the
 * caches as the plane itself on the next iteration.  Soft sources and
 * probes are a small launch after the sub-step of their component:
 * amplitudes and node offsets travel as launch arguments, probe values are
 * written straight to the caller's pinned host buffer. */
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
 * launches whose box meets a layer (pointers are __restrict__: a launch
 * writes one field and reads the other, so loads may be reordered and
 * shared across the components). */
template <typename T, bool Electric, bool Cpml>
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
                const int64_t st = step[a1];
                T d = Electric ? mul(sub(ld(G + i), ld(G + i - st)), s.rh[a1]) : mul(sub(ld(G + i + st), ld(G + i)), s.rh[a1]);
                if (Cpml && s.P[c][0]) d = through_layer(d, s.P[c][0], i, s.table, s.nmax, a1, half, (int64_t)pos[a1]);
                c1 = d;
            }
            if (has2) {
                const T *__restrict__ G = s.G[a1];
                const int64_t st = step[a2];
                T d = Electric ? mul(sub(ld(G + i), ld(G + i - st)), s.rh[a2]) : mul(sub(ld(G + i + st), ld(G + i)), s.rh[a2]);
                if (Cpml && s.P[c][1]) d = through_layer(d, s.P[c][1], i, s.table, s.nmax, a2, half, (int64_t)pos[a2]);
                c2 = d;
            }
            if (Electric) {
                const T ca = CA ? ld(CA + i) : s.k0[0], cb = CB ? ld(CB + i) : s.k0[1];
                const T f = mul(ca, F[i]);
                if (has1 && has2) F[i] = add(f, mul(cb, sub(c1, c2)));
                else if (has1) F[i] = add(f, mul(cb, c1));
                else F[i] = sub(f, mul(cb, c2));
            } else {
                const T dh = CA ? ld(CA + i) : s.k0[0];
                if (has1 && has2) F[i] = sub(F[i], mul(dh, sub(c1, c2)));
                else if (has1) F[i] = sub(F[i], mul(dh, c1));
                else F[i] = add(F[i], mul(dh, c2));
            }
        }
    }
}

/* Sources and probes of one sub-step: at most kPoints per launch. */
constexpr int kPoints = 48;
template <typename T> struct Points {
    T *src[kPoints];
    int64_t src_at[kPoints];
    double amp[kPoints];
    int nsrc;
    const T *probe[kPoints];
    int64_t probe_at[kPoints];
    double *out[kPoints];
    int nprobe;
};

template <typename T> __global__ void yee_points(Points<T> p)
{
    const int i = threadIdx.x;
    /* every source's node is distinct (they are the grid's nodes of distinct
     * sources, or the same node of two sources): add them in order, in one thread */
    if (i == 0)
        for (int k = 0; k < p.nsrc; k++) p.src[k][p.src_at[k]] = add(p.src[k][p.src_at[k]], (T)p.amp[k]);
    __syncthreads();
    if (i < p.nprobe) *p.out[i] = p.probe[i] ? (double)p.probe[i][p.probe_at[i]] : 0.0;
}

template <typename T>
pyr_status_t substep(pyrcu::ctx_t *c, cudaStream_t st, const pyr_kernel_call_t *call, const double *table, int electric,
                     const pyr_box_t *box)
{
    const pyr_piece_t *pc = call->piece;
    const pyr_coef_t *k = call->coef;
    const int dims = k->dims;
    SubStep<T> s;
    memset(&s, 0, sizeof s);
    s.dims = dims;
    s.table = table;
    s.nmax = k->naux / 24;
    s.pitch = pc->pitch;
    s.plane = pc->pitch * (pc->box.hi[1] - pc->box.lo[1]);
    for (int a = 0; a < 3; a++) {
        s.org[a] = pc->box.lo[a];
        s.rh[a] = a < dims ? (T)k->c[a] : (T)0;
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
        s.G[cc] = (const T *)pc->buf[other + cc][0];
        T *F = (T *)pc->buf[comp][0];
        if (!F) continue;
        const int a1 = (cc + 1) % 3, a2 = (cc + 2) % 3;
        int ok = 1;
        for (int a = 0; a < 3; a++) {
            int64_t lo, hi;
            if (a < dims) {
                const int64_t n = call->grid->n[a];
                const int along = cc == a;
                if (electric) lo = along ? 0 : 1, hi = n - 1;
                else lo = 0, hi = along ? n : n - 1;
            } else {
                lo = 0, hi = 1;
            }
            if (box->lo[a] > lo) lo = box->lo[a];
            if (box->hi[a] < hi) hi = box->hi[a];
            if (hi <= lo) ok = 0;
            s.rlo[cc][a] = (int)lo;
            s.rhi[cc][a] = (int)hi;
        }
        if (!ok) continue;
        s.F[cc] = F;
        const int p1 = a1 < dims ? pyr_maxwell_psi_field(comp, a1) : -1, p2 = a2 < dims ? pyr_maxwell_psi_field(comp, a2) : -1;
        s.P[cc][0] = p1 >= 0 ? (T *)pc->buf[p1][0] : NULL;
        s.P[cc][1] = p2 >= 0 ? (T *)pc->buf[p2][0] : NULL;
        if ((s.P[cc][0] || s.P[cc][1]) && !table) return pyr_fail(PYR_ERR_INTERNAL, "CUDA Maxwell kernel: CPML fields without profiles");
        for (int a = 0; a < 3; a++) {
            if (s.rlo[cc][a] < s.lo[a]) s.lo[a] = s.rlo[cc][a];
            if (s.rhi[cc][a] > s.hi[a]) s.hi[a] = s.rhi[cc][a];
        }
        any = 1;
    }
    if (!any) return PYR_OK;
    const int rows = call->variant->p[0] ? call->variant->p[0] : kRowsDefault;
    s.zrun = call->variant->p[1] ? call->variant->p[1] : kZRunDefault;
    dim3 grid((unsigned)((s.hi[0] - s.lo[0] + kTX - 1) / kTX), (unsigned)((s.hi[1] - s.lo[1] + rows - 1) / rows),
              (unsigned)((s.hi[2] - s.lo[2] + s.zrun - 1) / s.zrun));
    int cpml = 0;
    for (int cc = 0; cc < 3; cc++) cpml |= s.P[cc][0] || s.P[cc][1];
    const dim3 block(kTX, (unsigned)rows);
    if (electric) {
        if (cpml) yee_substep<T, true, true><<<grid, block, 0, st>>>(s);
        else yee_substep<T, true, false><<<grid, block, 0, st>>>(s);
    } else {
        if (cpml) yee_substep<T, false, true><<<grid, block, 0, st>>>(s);
        else yee_substep<T, false, false><<<grid, block, 0, st>>>(s);
    }
    PYR_CU(cudaGetLastError());
    pyrcu::count(c->dev->stats.launches);
    return PYR_OK;
}

/* The sources of component kind `electric` at step s of the call (inside
 * box), then (after E) the probes. */
template <typename T>
pyr_status_t points(pyrcu::ctx_t *c, cudaStream_t st, const pyr_kernel_call_t *call, int electric, const pyr_box_t *b, int64_t s)
{
    const pyr_piece_t *pc = call->piece;
    Points<T> p;
    memset(&p, 0, sizeof p);
    auto flush = [&]() -> pyr_status_t {
        if (!p.nsrc && !p.nprobe) return PYR_OK;
        yee_points<T><<<1, kPoints, 0, st>>>(p);
        PYR_CU(cudaGetLastError());
        pyrcu::count(c->dev->stats.launches);
        p.nsrc = p.nprobe = 0;
        return PYR_OK;
    };
    for (int i = 0; i < call->nsources; i++) {
        const pyr_kernel_point_t *q = &call->sources[i];
        if ((q->field < 3) != (electric != 0) || !pc->buf[q->field][0]) continue;
        const int64_t *nd = q->node;
        if (nd[0] < b->lo[0] || nd[0] >= b->hi[0] || nd[1] < b->lo[1] || nd[1] >= b->hi[1] || nd[2] < b->lo[2] || nd[2] >= b->hi[2])
            continue;
        if (p.nsrc == kPoints) PYR_TRY(flush());
        p.src[p.nsrc] = (T *)pc->buf[q->field][0];
        p.src_at[p.nsrc] = pyr_piece_index(pc, nd[0], nd[1], nd[2]);
        p.amp[p.nsrc++] = call->amplitudes[s * call->nsources + i];
    }
    if (electric)
        for (int i = 0; i < call->nprobes; i++) {
            const pyr_kernel_point_t *q = &call->probes[i];
            if (p.nprobe == kPoints) PYR_TRY(flush());
            p.probe[p.nprobe] = (const T *)pc->buf[q->field][0];
            p.probe_at[p.nprobe] = pyr_piece_index(pc, q->node[0], q->node[1], q->node[2]);
            p.out[p.nprobe++] = &call->probes_out[s * call->nprobes + i];
        }
    return flush();
}

template <typename T> pyr_status_t run_calls(pyrcu::ctx_t *c, cudaStream_t st, const pyr_kernel_call_t *call, const double *table)
{
    for (int l = 0; l < call->nboxes; l++) {
        const int electric = l % 2; /* a call starts at a step: H, E, H, E ... */
        PYR_TRY(substep<T>(c, st, call, table, electric, &call->boxes[l]));
        if (call->nsources || (electric && call->nprobes)) PYR_TRY(points<T>(c, st, call, electric, &call->boxes[l], l / 2));
    }
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
    pyr_status_t r = c->elem == 8 ? run_calls<double>(c, st, call, table) : run_calls<float>(c, st, call, table);
    pyrcu::span_end(c, span, slot);
    PYR_TRY(r);
    return pyrcu::serial_end(c, slot, t0, &c->dev->stats.compute_ns);
}

pyr_status_t maxwell_check(const pyr_variant_t *v, int dims, pyr_precision_t precision)
{
    (void)dims;
    (void)precision;
    if (strcmp(v->name, "tile"))
        return pyr_fail(PYR_ERR_CONFIG, "no CUDA Maxwell kernel variant '%s'; use tile[:R[,Z]] (R rows of 32 nodes per block: 1, 2, 4 "
                                        "or 8; Z planes per thread: 1 to 64)",
                        v->name);
    if (v->p[0] && v->p[0] != 1 && v->p[0] != 2 && v->p[0] != 4 && v->p[0] != 8)
        return pyr_fail(PYR_ERR_CONFIG, "tile:%d: a block takes 1, 2, 4 or 8 rows of 32 nodes", v->p[0]);
    if (v->p[1] < 0 || v->p[1] > 64) return pyr_fail(PYR_ERR_CONFIG, "tile:%d,%d: a thread walks 1 to 64 planes", v->p[0], v->p[1]);
    if (v->p[2]) return pyr_fail(PYR_ERR_CONFIG, "tile takes at most two parameters (R,Z)");
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

} // namespace

extern "C" const pyr_kernel_t pyr_kernel_cuda_maxwell = {
    PYR_EQ_MAXWELL, PYR_BACKEND_CUDA, "tile[:R[,Z]] (R rows of 32 nodes per block: 1, 2, 4, 8; Z planes per thread: 1-64)",
    maxwell_check, maxwell_default, maxwell_candidates, maxwell_run,
    NULL, /* no work memory */
    NULL, /* launch steps: not run skewed (several fields) */
    NULL, /* last box only: likewise */
    NULL, /* halo: likewise */
};
