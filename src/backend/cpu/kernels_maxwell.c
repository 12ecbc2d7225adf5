/* The Maxwell (Yee) scheme's CPU kernel: the expressions of
 * src/schemes/maxwell.c, one component at a time over its part of each
 * sub-step's box (H, then E), then the sources of the step and its probes.
 *
 * Component c along axis ac = c % 3 takes the curl along ac with
 * a1 = (ac + 1) % 3 and a2 = (ac + 2) % 3: curl = c1 - c2, c1 the
 * derivative along a1 of the other field's component a2, c2 the derivative
 * along a2 of its component a1 (E: differences behind, H: ahead), each
 * through the CPML along its axis where the node lies in a layer.  In 2D a
 * term along the missing z axis is left out (see maxwell.c). */
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_internal.h"
#include "backend/kernels.h"
#include "core/error.h"
#include "schemes/maxwell.h"

typedef struct {
    int64_t lo[3], hi[3];
} range_t;

/* The part of box b (grid coordinates) where component c is updated. */
static int component_range(const pyr_kernel_call_t *call, int c, const pyr_box_t *b, range_t *r)
{
    const int dims = call->coef->dims;
    for (int a = 0; a < 3; a++) {
        int64_t lo = 0, hi = 1;
        if (a < dims) {
            const int64_t n = call->grid->n[a];
            const int along = c % 3 == a;
            if ((call->coef->periodic >> a) & 1) lo = 0, hi = n; /* the node past the last is the first */
            else if (c < 3) lo = along ? 0 : 1, hi = n - 1;
            else lo = 0, hi = along ? n : n - 1;
        }
        r->lo[a] = b->lo[a] > lo ? b->lo[a] : lo;
        r->hi[a] = b->hi[a] < hi ? b->hi[a] : hi;
        if (r->hi[a] <= r->lo[a]) return 0;
    }
    return 1;
}

/* The layers of the CPML along x at a sub-step's positions: x in [0, lo_end)
 * and [hi_start, n) lie in a layer (the flags of the profile are contiguous
 * runs at the ends). */
static void x_layers(const double *in, int64_t n, int64_t *lo_end, int64_t *hi_start)
{
    int64_t a = 0, b = n;
    if (in) {
        while (a < n && in[a] != 0) a++;
        while (b > a && in[b - 1] != 0) b--;
    }
    *lo_end = a;
    *hi_start = b;
}

/* One row's update where no CPML applies: every operation in the order of
 * the general loop below (the bits must match); E1/E2 say which terms exist,
 * CA/CB/DH whether the coefficients are per node.  Inlined with constant
 * flags, so each instance is a straight, vectorisable loop. */
#define DEFINE_MAXWELL(SUFFIX, T)                                                                                              \
    static inline __attribute__((always_inline)) void plain_##SUFFIX(                                                        \
        T *restrict F, const T *restrict G1, const T *restrict G2, const T *restrict CA, const T *restrict CB, const T *restrict DH, \
        int64_t s1, int64_t s2, T rh1, T rh2, T ca0, T cb0, T dh0, int64_t n, const int electric, const int E1, const int E2,  \
        const int hasca, const int hascb, const int hasdh)                                                                   \
    {                                                                                                                          \
        for (int64_t i = 0; i < n; i++) {                                                                                     \
            T c1 = 0, c2 = 0;                                                                                                  \
            if (E1) c1 = electric ? (G1[i] - G1[i - s1]) * rh1 : (G1[i + s1] - G1[i]) * rh1;                                    \
            if (E2) c2 = electric ? (G2[i] - G2[i - s2]) * rh2 : (G2[i + s2] - G2[i]) * rh2;                                    \
            if (electric) {                                                                                                    \
                const T ca = hasca ? CA[i] : ca0, cb = hascb ? CB[i] : cb0;                                                    \
                if (E1 && E2) F[i] = ca * F[i] + cb * (c1 - c2);                                                               \
                else if (E1) F[i] = ca * F[i] + cb * c1;                                                                       \
                else F[i] = ca * F[i] - cb * c2;                                                                               \
            } else {                                                                                                           \
                const T dh = hasdh ? DH[i] : dh0;                                                                              \
                if (E1 && E2) F[i] = F[i] - dh * (c1 - c2);                                                                    \
                else if (E1) F[i] = F[i] - dh * c1;                                                                            \
                else F[i] = F[i] + dh * c2;                                                                                    \
            }                                                                                                                  \
        }                                                                                                                      \
    }                                                                                                                          \
                                                                                                                               \
    static void plain_row_##SUFFIX(T *F, const T *G1, const T *G2, const T *CA, const T *CB, const T *DH, int64_t s1, int64_t s2, \
                                   T rh1, T rh2, T ca0, T cb0, T dh0, int64_t n, int electric, int E1, int E2)                 \
    {                                                                                                                          \
        const int k = (E1 && E2) ? 0 : E1 ? 1 : 2;                                                                             \
        if (electric) {                                                                                                        \
            const int m = (CA ? 2 : 0) + (CB ? 1 : 0);                                                                         \
            switch (k * 4 + m) {                                                                                               \
            case 0: plain_##SUFFIX(F, G1, G2, CA, CB, DH, s1, s2, rh1, rh2, ca0, cb0, dh0, n, 1, 1, 1, 0, 0, 0); break;       \
            case 1: plain_##SUFFIX(F, G1, G2, CA, CB, DH, s1, s2, rh1, rh2, ca0, cb0, dh0, n, 1, 1, 1, 0, 1, 0); break;       \
            case 2: plain_##SUFFIX(F, G1, G2, CA, CB, DH, s1, s2, rh1, rh2, ca0, cb0, dh0, n, 1, 1, 1, 1, 0, 0); break;       \
            case 3: plain_##SUFFIX(F, G1, G2, CA, CB, DH, s1, s2, rh1, rh2, ca0, cb0, dh0, n, 1, 1, 1, 1, 1, 0); break;       \
            case 4: plain_##SUFFIX(F, G1, G2, CA, CB, DH, s1, s2, rh1, rh2, ca0, cb0, dh0, n, 1, 1, 0, 0, 0, 0); break;       \
            case 5: plain_##SUFFIX(F, G1, G2, CA, CB, DH, s1, s2, rh1, rh2, ca0, cb0, dh0, n, 1, 1, 0, 0, 1, 0); break;       \
            case 6: plain_##SUFFIX(F, G1, G2, CA, CB, DH, s1, s2, rh1, rh2, ca0, cb0, dh0, n, 1, 1, 0, 1, 0, 0); break;       \
            case 7: plain_##SUFFIX(F, G1, G2, CA, CB, DH, s1, s2, rh1, rh2, ca0, cb0, dh0, n, 1, 1, 0, 1, 1, 0); break;       \
            case 8: plain_##SUFFIX(F, G1, G2, CA, CB, DH, s1, s2, rh1, rh2, ca0, cb0, dh0, n, 1, 0, 1, 0, 0, 0); break;       \
            case 9: plain_##SUFFIX(F, G1, G2, CA, CB, DH, s1, s2, rh1, rh2, ca0, cb0, dh0, n, 1, 0, 1, 0, 1, 0); break;       \
            case 10: plain_##SUFFIX(F, G1, G2, CA, CB, DH, s1, s2, rh1, rh2, ca0, cb0, dh0, n, 1, 0, 1, 1, 0, 0); break;      \
            default: plain_##SUFFIX(F, G1, G2, CA, CB, DH, s1, s2, rh1, rh2, ca0, cb0, dh0, n, 1, 0, 1, 1, 1, 0); break;      \
            }                                                                                                                  \
        } else {                                                                                                               \
            switch (k * 2 + (DH ? 1 : 0)) {                                                                                    \
            case 0: plain_##SUFFIX(F, G1, G2, CA, CB, DH, s1, s2, rh1, rh2, ca0, cb0, dh0, n, 0, 1, 1, 0, 0, 0); break;       \
            case 1: plain_##SUFFIX(F, G1, G2, CA, CB, DH, s1, s2, rh1, rh2, ca0, cb0, dh0, n, 0, 1, 1, 0, 0, 1); break;       \
            case 2: plain_##SUFFIX(F, G1, G2, CA, CB, DH, s1, s2, rh1, rh2, ca0, cb0, dh0, n, 0, 1, 0, 0, 0, 0); break;       \
            case 3: plain_##SUFFIX(F, G1, G2, CA, CB, DH, s1, s2, rh1, rh2, ca0, cb0, dh0, n, 0, 1, 0, 0, 0, 1); break;       \
            case 4: plain_##SUFFIX(F, G1, G2, CA, CB, DH, s1, s2, rh1, rh2, ca0, cb0, dh0, n, 0, 0, 1, 0, 0, 0); break;       \
            default: plain_##SUFFIX(F, G1, G2, CA, CB, DH, s1, s2, rh1, rh2, ca0, cb0, dh0, n, 0, 0, 1, 0, 0, 1); break;      \
            }                                                                                                                  \
        }                                                                                                                      \
    }                                                                                                                          \
                                                                                                                               \
    static void update_##SUFFIX(const pyr_cpu_ctx_t *cx, const pyr_kernel_call_t *call, int c, const range_t *r)              \
    {                                                                                                                          \
        const pyr_piece_t *pc = call->piece;                                                                                   \
        const pyr_coef_t *k = call->coef;                                                                                      \
        const int dims = k->dims, electric = c < 3, ac = c % 3, a1 = (ac + 1) % 3, a2 = (ac + 2) % 3;                            \
        const int has1 = a1 < dims, has2 = a2 < dims;                                                                          \
        const int other = electric ? 3 : 0; /* the field the curl is of */                                                     \
        T *F = pc->buf[c][0];                                                                                                  \
        const T *G1 = has1 ? pc->buf[other + a2][0] : NULL; /* differenced along a1 */                                         \
        const T *G2 = has2 ? pc->buf[other + a1][0] : NULL; /* differenced along a2 */                                         \
        /* (a psi slot that holds a dispersive state is no layer's) */                                                        \
        const double *Dt = pyr_maxwell_disp_table(k);                                                                          \
        const int f1 = has1 ? pyr_maxwell_psi_field(c, a1) : -1, f2 = has2 ? pyr_maxwell_psi_field(c, a2) : -1;               \
        T *P1 = f1 >= 0 && !pyr_maxwell_disp_owns(Dt, f1) ? pc->buf[f1][0] : NULL;                                             \
        T *P2 = f2 >= 0 && !pyr_maxwell_disp_owns(Dt, f2) ? pc->buf[f2][0] : NULL;                                             \
        const int64_t naux = pyr_maxwell_cpml_naux(k);                                                                         \
        const T *CA = electric ? pc->buf[PYR_MAXWELL_CA][0] : NULL, *CB = electric ? pc->buf[PYR_MAXWELL_CB][0] : NULL;        \
        const T *DH = electric ? NULL : pc->buf[PYR_MAXWELL_DH][0];                                                            \
        const T rh1 = has1 ? (T)k->c[a1] : 0, rh2 = has2 ? (T)k->c[a2] : 0;                                                    \
        const T ca0 = (T)k->c[4], cb0 = (T)k->c[5], dh0 = (T)k->c[6];                                                          \
        const int half = electric ? 0 : 1;                                                                                     \
        const int64_t pitch = pc->pitch, plane = pc->pitch * (pc->box.hi[1] - pc->box.lo[1]);                                  \
        const int64_t step[3] = {1, pitch, plane};                                                                             \
        const int64_t s1 = has1 ? step[a1] : 0, s2 = has2 ? step[a2] : 0;                                                      \
        /* a periodic axis (spanned whole by the piece): the difference at its end reads the other end, wrap away */          \
        const int64_t n1 = has1 ? call->grid->n[a1] : 1, n2 = has2 ? call->grid->n[a2] : 1;                                    \
        const int64_t wrap1 = has1 && ((k->periodic >> a1) & 1) ? (n1 - 1) * s1 : 0;                                            \
        const int64_t wrap2 = has2 && ((k->periodic >> a2) & 1) ? (n2 - 1) * s2 : 0;                                            \
        const int64_t end1 = electric ? 0 : n1 - 1, end2 = electric ? 0 : n2 - 1;                                               \
        const double *in1 = NULL, *b1 = NULL, *ca1 = NULL, *kv1 = NULL, *in2 = NULL, *b2 = NULL, *ca2 = NULL, *kv2 = NULL;     \
        if (P1) {                                                                                                              \
            kv1 = pyr_maxwell_profile(k->aux, naux, a1, half, 0);                                                           \
            b1 = pyr_maxwell_profile(k->aux, naux, a1, half, 1);                                                            \
            ca1 = pyr_maxwell_profile(k->aux, naux, a1, half, 2);                                                           \
            in1 = pyr_maxwell_profile(k->aux, naux, a1, half, 3);                                                           \
        }                                                                                                                      \
        if (P2) {                                                                                                              \
            kv2 = pyr_maxwell_profile(k->aux, naux, a2, half, 0);                                                           \
            b2 = pyr_maxwell_profile(k->aux, naux, a2, half, 1);                                                            \
            ca2 = pyr_maxwell_profile(k->aux, naux, a2, half, 2);                                                           \
            in2 = pyr_maxwell_profile(k->aux, naux, a2, half, 3);                                                           \
        }                                                                                                                      \
        /* the x-range where no derivative along x passes through a layer */                                                  \
        int64_t xa = 0, xb = call->grid->n[0];                                                                                 \
        if (a1 == 0) x_layers(in1, call->grid->n[0], &xa, &xb);                                                                \
        if (a2 == 0) x_layers(in2, call->grid->n[0], &xa, &xb);                                                                \
        const int64_t ny = r->hi[1] - r->lo[1], nz = r->hi[2] - r->lo[2];                                                      \
        _Pragma("omp parallel for collapse(2) schedule(static) num_threads(cx->threads) if (ny * nz * (r->hi[0] - r->lo[0]) > 16384)") \
        for (int64_t z = r->lo[2]; z < r->hi[2]; z++)                                                                         \
            for (int64_t y = r->lo[1]; y < r->hi[1]; y++) {                                                                   \
                const int64_t pos[3] = {0, y, z};                                                                             \
                const int64_t base = pyr_piece_index(pc, r->lo[0], y, z);                                                     \
                /* a layer along y or z covers the whole row or none of it */                                                 \
                const int row1 = P1 && a1 != 0 && in1[pos[a1]] != 0, row2 = P2 && a2 != 0 && in2[pos[a2]] != 0;               \
                const int64_t r1 = wrap1 && a1 != 0 && pos[a1] == end1 ? -wrap1 : s1;                                          \
                const int64_t r2 = wrap2 && a2 != 0 && pos[a2] == end2 ? -wrap2 : s2;                                          \
                int64_t pa = r->lo[0] > xa ? r->lo[0] : xa, pb = r->hi[0] < xb ? r->hi[0] : xb;                               \
                /* the row's wrapping node along a periodic x takes the general loop */                                         \
                if ((wrap1 && a1 == 0) || (wrap2 && a2 == 0)) {                                                                \
                    const int64_t e = electric ? 0 : call->grid->n[0] - 1;                                                     \
                    if (electric && pa <= e) pa = e + 1;                                                                       \
                    if (!electric && pb > e) pb = e;                                                                           \
                }                                                                                                              \
                if (row1 || row2 || pb < pa) pa = pb = r->hi[0];                                                             \
                if (pb > pa) {                                                                                                 \
                    const int64_t o = base + (pa - r->lo[0]);                                                                 \
                    plain_row_##SUFFIX(F + o, G1 ? G1 + o : NULL, G2 ? G2 + o : NULL, CA ? CA + o : NULL, CB ? CB + o : NULL,     \
                                       DH ? DH + o : NULL, r1, r2, rh1, rh2, ca0, cb0, dh0, pb - pa, electric, has1, has2);  \
                }                                                                                                              \
                for (int64_t x = r->lo[0]; x < r->hi[0]; x++) {                                                                \
                    if (x == pa) x = pb;                                                                                       \
                    if (x >= r->hi[0]) break;                                                                                  \
                    const int64_t i = base + (x - r->lo[0]);                                                                   \
                    const int64_t p1 = a1 == 0 ? x : pos[a1], p2 = a2 == 0 ? x : pos[a2];                                     \
                    const int64_t t1 = wrap1 && a1 == 0 && x == end1 ? -wrap1 : r1;                                            \
                    const int64_t t2 = wrap2 && a2 == 0 && x == end2 ? -wrap2 : r2;                                            \
                    T c1 = 0, c2 = 0;                                                                                          \
                    if (has1) {                                                                                                \
                        const T d = electric ? (G1[i] - G1[i - t1]) * rh1 : (G1[i + t1] - G1[i]) * rh1;                         \
                        if (P1 && in1[p1] != 0) {                                                                              \
                            P1[i] = (T)b1[p1] * P1[i] + (T)ca1[p1] * d;                                                        \
                            c1 = d * (T)kv1[p1] + P1[i];                                                                       \
                        } else {                                                                                               \
                            c1 = d;                                                                                            \
                        }                                                                                                      \
                    }                                                                                                          \
                    if (has2) {                                                                                                \
                        const T d = electric ? (G2[i] - G2[i - t2]) * rh2 : (G2[i + t2] - G2[i]) * rh2;                         \
                        if (P2 && in2[p2] != 0) {                                                                              \
                            P2[i] = (T)b2[p2] * P2[i] + (T)ca2[p2] * d;                                                        \
                            c2 = d * (T)kv2[p2] + P2[i];                                                                       \
                        } else {                                                                                               \
                            c2 = d;                                                                                            \
                        }                                                                                                      \
                    }                                                                                                          \
                    if (electric) {                                                                                            \
                        const T ca = CA ? CA[i] : ca0, cb = CB ? CB[i] : cb0;                                                  \
                        if (has1 && has2) F[i] = ca * F[i] + cb * (c1 - c2);                                                   \
                        else if (has1) F[i] = ca * F[i] + cb * c1;                                                             \
                        else F[i] = ca * F[i] - cb * c2;                                                                       \
                    } else {                                                                                                   \
                        const T dh = DH ? DH[i] : dh0;                                                                         \
                        if (has1 && has2) F[i] = F[i] - dh * (c1 - c2);                                                        \
                        else if (has1) F[i] = F[i] - dh * c1;                                                                  \
                        else F[i] = F[i] + dh * c2;                                                                            \
                    }                                                                                                          \
                }                                                                                                              \
            }                                                                                                                  \
    }                                                                                                                          \
                                                                                                                               \
    static void points_##SUFFIX(const pyr_kernel_call_t *call, int electric, const pyr_box_t *b, int64_t s, const int *order)  \
    {                                                                                                                          \
        const pyr_piece_t *pc = call->piece;                                                                                   \
        int j0 = 0, j1 = call->nsources;                                                                                       \
        if (order) source_planes(call, order, b, &j0, &j1);                                                                    \
        for (int j = j0; j < j1; j++) {                                                                                        \
            const int i = order ? order[j] : j;                                                                                \
            const pyr_kernel_point_t *q = &call->sources[i];                                                                   \
            if ((q->field < 3) != electric || !pc->buf[q->field][0]) continue;                                                 \
            const int64_t *nd = q->node;                                                                                       \
            if (nd[0] < b->lo[0] || nd[0] >= b->hi[0] || nd[1] < b->lo[1] || nd[1] >= b->hi[1] || nd[2] < b->lo[2] ||          \
                nd[2] >= b->hi[2])                                                                                             \
                continue;                                                                                                      \
            T *F = pc->buf[q->field][0];                                                                                       \
            const pyr_scheme_term_t *tm = call->terms && call->terms[i].k >= 0 ? &call->terms[i] : NULL;                       \
            const double a = tm ? pyr_scheme_term_value(tm, call->series + s * call->nseries) : call->amplitudes[s * call->nsources + i]; \
            F[pyr_piece_index(pc, nd[0], nd[1], nd[2])] += (T)a;                                                               \
        }                                                                                                                      \
        if (!electric) return;                                                                                                 \
        for (int i = 0; i < call->nprobes; i++) {                                                                              \
            const pyr_kernel_point_t *q = &call->probes[i];                                                                    \
            const T *F = pc->buf[q->field][0];                                                                                 \
            call->probes_out[s * call->nprobes + i] = F ? (double)F[pyr_piece_index(pc, q->node[0], q->node[1], q->node[2])] : 0; \
        }                                                                                                                      \
    }

/* A list of sources in order of their nodes (z, y, x, field), a node's in
 * the list's order: each node's sources are then added in the list's order,
 * as the kernels' contract asks (backend/kernels.h), and a sub-step visits
 * only those on its box's planes. */
typedef struct {
    int64_t z, y, x;
    int field, i;
} src_key_t;

static int src_key_cmp(const void *pa, const void *pb)
{
    const src_key_t *a = pa, *b = pb;
    if (a->z != b->z) return a->z < b->z ? -1 : 1;
    if (a->y != b->y) return a->y < b->y ? -1 : 1;
    if (a->x != b->x) return a->x < b->x ? -1 : 1;
    if (a->field != b->field) return a->field < b->field ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

/* The call's sources' order (the context keeps the last list's under its
 * sources_id); NULL where there is none to keep or no memory for it (the
 * sources are then visited in the list's order, all of them). */
static const int *source_order(pyr_cpu_ctx_t *cx, const pyr_kernel_call_t *call)
{
    if (!call->sources_id || call->nsources < 64) return NULL;
    if (cx->src_order && cx->src_id == call->sources_id) return cx->src_order;
    free(cx->src_order);
    cx->src_order = NULL;
    cx->src_id = 0;
    const int n = call->nsources;
    src_key_t *key = malloc((size_t)n * sizeof *key);
    int *order = malloc((size_t)n * sizeof *order);
    if (!key || !order) {
        free(key);
        free(order);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        const pyr_kernel_point_t *q = &call->sources[i];
        key[i] = (src_key_t){q->node[2], q->node[1], q->node[0], q->field, i};
    }
    qsort(key, (size_t)n, sizeof *key, src_key_cmp);
    for (int j = 0; j < n; j++) order[j] = key[j].i;
    free(key);
    cx->src_order = order;
    cx->src_id = call->sources_id;
    return order;
}

/* The range [*j0, *j1) of order whose sources lie on planes z of box b. */
static void source_planes(const pyr_kernel_call_t *call, const int *order, const pyr_box_t *b, int *j0, int *j1)
{
    int lo = 0, hi = call->nsources;
    while (lo < hi) {
        const int m = lo + (hi - lo) / 2;
        if (call->sources[order[m]].node[2] < b->lo[2]) lo = m + 1;
        else hi = m;
    }
    *j0 = lo;
    hi = call->nsources;
    while (lo < hi) {
        const int m = lo + (hi - lo) / 2;
        if (call->sources[order[m]].node[2] < b->hi[2]) lo = m + 1;
        else hi = m;
    }
    *j1 = lo;
}

DEFINE_MAXWELL(f32, float)
DEFINE_MAXWELL(f64, double)

/* The dispersive terms of E component c over r (maxwell.h's table D): post = 0
 * advances the terms' states from E before E's update, post = 1 takes their
 * currents from the updated E.  Only the nodes of the runs of a material. */
#define DEFINE_DISP(SUFFIX, T)                                                                                                 \
    static void disp_##SUFFIX(const pyr_cpu_ctx_t *cx, const pyr_kernel_call_t *call, int c, const range_t *r, const double *D,  \
                              int post)                                                                                      \
    {                                                                                                                          \
        const pyr_piece_t *pc = call->piece;                                                                                   \
        const int ns = (int)D[0];                                                                                              \
        T *E = pc->buf[c][0], *J[PYR_MAXWELL_MAX_POLES] = {NULL}, *P[PYR_MAXWELL_MAX_POLES] = {NULL};                          \
        for (int q = 0; q < ns; q++) {                                                                                         \
            const int fj = pyr_maxwell_disp_field(D, q, c, 0), fp = pyr_maxwell_disp_field(D, q, c, 1);                        \
            J[q] = fj >= 0 ? pc->buf[fj][0] : NULL;                                                                            \
            P[q] = fp >= 0 ? pc->buf[fp][0] : NULL;                                                                            \
            if (!J[q]) return; /* (validate refuses a problem without the fields) */                                          \
        }                                                                                                                      \
        const T *CB = pc->buf[PYR_MAXWELL_CB][0];                                                                              \
        const T cb0 = (T)call->coef->c[5], dt = (T)D[2];                                                                       \
        const int64_t n1 = (int64_t)D[4], starts = (int64_t)D[5], runs = (int64_t)D[6];                                        \
        const int64_t ny = r->hi[1] - r->lo[1], nz = r->hi[2] - r->lo[2];                                                      \
        _Pragma("omp parallel for collapse(2) schedule(static) num_threads(cx->threads) if (ny * nz * (r->hi[0] - r->lo[0]) > 16384)") \
        for (int64_t z = r->lo[2]; z < r->hi[2]; z++)                                                                         \
            for (int64_t y = r->lo[1]; y < r->hi[1]; y++) {                                                                   \
                const int64_t row = z * n1 + y;                                                                               \
                for (int64_t j = (int64_t)D[starts + row]; j < (int64_t)D[starts + row + 1]; j++) {                           \
                    const double *run = D + runs + 3 * j;                                                                      \
                    const int64_t x0 = (int64_t)run[0] > r->lo[0] ? (int64_t)run[0] : r->lo[0];                               \
                    const int64_t x1 = (int64_t)run[1] < r->hi[0] ? (int64_t)run[1] : r->hi[0];                               \
                    if (x1 <= x0) continue;                                                                                    \
                    const int m = (int)run[2];                                                                                 \
                    const int64_t i0 = pyr_piece_index(pc, x0, y, z);                                                         \
                    const int64_t i1 = i0 + (x1 - x0);                                                                         \
                    if (post) {                                                                                                \
                        for (int64_t i = i0; i < i1; i++) {                                                                    \
                            T sum = J[0][i];                                                                                   \
                            for (int q = 1; q < ns; q++) sum = sum + J[q][i];                                                  \
                            const T cb = CB ? CB[i] : cb0;                                                                     \
                            E[i] = E[i] - cb * sum;                                                                            \
                        }                                                                                                      \
                        for (int q = 0; q < ns; q++) {                                                                         \
                            const double *kq = pyr_maxwell_disp_coef(D, m, q);                                                 \
                            const T ce = (T)kq[3];                                                                             \
                            T *Pq = P[q];                                                                                      \
                            if (kq[0] == 2 && Pq)                                                                              \
                                for (int64_t i = i0; i < i1; i++) Pq[i] = Pq[i] + ce * E[i];                                   \
                        }                                                                                                      \
                        continue;                                                                                              \
                    }                                                                                                          \
                    for (int q = 0; q < ns; q++) {                                                                             \
                        const double *kq = pyr_maxwell_disp_coef(D, m, q);                                                     \
                        const T cj = (T)kq[1], cp = (T)kq[2], ce = (T)kq[3];                                                   \
                        T *Jq = J[q], *Pq = P[q];                                                                              \
                        if (kq[0] == 2 && Pq) {                                                                                \
                            for (int64_t i = i0; i < i1; i++) {                                                                \
                                Jq[i] = cp * Pq[i];                                                                            \
                                Pq[i] = cj * Pq[i] + ce * E[i];                                                                \
                            }                                                                                                  \
                        } else if (kq[0] == 1 && Pq) {                                                                         \
                            for (int64_t i = i0; i < i1; i++) {                                                                \
                                Jq[i] = (cj * Jq[i] + cp * Pq[i]) + ce * E[i];                                                 \
                                Pq[i] = Pq[i] + dt * Jq[i];                                                                    \
                            }                                                                                                  \
                        } else if (kq[0] == 1) {                                                                               \
                            for (int64_t i = i0; i < i1; i++) Jq[i] = cj * Jq[i] + ce * E[i];                                  \
                        }                                                                                                      \
                    }                                                                                                          \
                }                                                                                                              \
            }                                                                                                                  \
    }

DEFINE_DISP(f32, float)
DEFINE_DISP(f64, double)

static pyr_status_t maxwell_run(void *ctx, int slot, const pyr_kernel_call_t *call)
{
    (void)slot;
    pyr_cpu_ctx_t *cx = ctx;
    if (!call->grid) return pyr_fail(PYR_ERR_INTERNAL, "Maxwell kernel: called without the grid's size");
    const int *order = call->nsources ? source_order(cx, call) : NULL;
    for (int l = 0; l < call->nboxes; l++) {
        const int electric = l % 2; /* a call starts at a step: H, E, H, E ... */
        const int64_t s = l / 2;
        const double *D = electric ? pyr_maxwell_disp_table(call->coef) : NULL;
        for (int c = electric ? 0 : 3; c < (electric ? 3 : 6); c++) {
            if (!call->piece->buf[c][0]) continue;
            range_t r;
            if (!component_range(call, c, &call->boxes[l], &r)) continue;
            if (D) {
                if (cx->precision == PYR_DOUBLE) disp_f64(cx, call, c, &r, D, 0);
                else disp_f32(cx, call, c, &r, D, 0);
            }
            if (cx->precision == PYR_DOUBLE) update_f64(cx, call, c, &r);
            else update_f32(cx, call, c, &r);
            if (D) {
                if (cx->precision == PYR_DOUBLE) disp_f64(cx, call, c, &r, D, 1);
                else disp_f32(cx, call, c, &r, D, 1);
            }
        }
        if (call->nsources || (electric && call->nprobes)) {
            if (cx->precision == PYR_DOUBLE) points_f64(call, electric, &call->boxes[l], s, order);
            else points_f32(call, electric, &call->boxes[l], s, order);
        }
    }
    return PYR_OK;
}

static pyr_status_t maxwell_check(const pyr_variant_t *v, int dims, pyr_precision_t precision)
{
    (void)dims;
    (void)precision;
    if (!strcmp(v->name, "auto") && !v->p[0] && !v->p[1] && !v->p[2]) return PYR_OK;
    return pyr_fail(PYR_ERR_CONFIG, "the CPU Maxwell kernel has one variant, auto; got '%s'", v->name);
}

static void maxwell_default(int dims, pyr_precision_t precision, pyr_variant_t *v)
{
    (void)dims;
    (void)precision;
    memset(v, 0, sizeof *v);
    strcpy(v->name, "auto");
}

static int maxwell_candidates(int dims, pyr_precision_t precision, pyr_variant_t *v, int max)
{
    if (max < 1) return 0;
    maxwell_default(dims, precision, v);
    return 1;
}

const pyr_kernel_t pyr_kernel_cpu_maxwell = {
    .equation = PYR_EQ_MAXWELL,
    .backend = PYR_BACKEND_CPU,
    .help = "auto",
    .check = maxwell_check,
    .default_variant = maxwell_default,
    .candidates = maxwell_candidates,
    .run = maxwell_run,
};
