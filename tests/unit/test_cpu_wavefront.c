/* The CPU backend's compute operation against a layer-by-layer reference
 * kept here (the one-step loop the backend had before its wavefront): random
 * pieces (offsets, row padding, pitch), random boxes per layer (shrinking
 * pyramids, one box for every layer, unrelated boxes, boxes one plane thick,
 * boxes reaching the piece edge less its one-node boundary, empty boxes),
 * 1 to 20 layers, float and double, 1 to 3 threads, and forced tile widths,
 * slab thicknesses and layers per sweep (the kernel variant wave:T,S,G), as
 * well as the kernel's own choices (auto) and a sweep per layer.  Both layers of the piece, padding included, must
 * equal the reference bit for bit.
 *
 *   test_cpu_wavefront [cases] [seed]     (defaults: 500 1) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/device.h"
#include "backend/kernels.h"
#include "check.h"
#include "heat_util.h"

extern const pyr_kernel_t pyr_kernel_cpu_heat;

static int verbose_ = 0;

/* The reference: every layer over its whole box, in order, with the
 * expression of schemes/heat.c. */
#define DEFINE_REF(NAME, T)                                                                                  \
    static void NAME(const pyr_piece_t *p, T *lay[2], int cur, const pyr_coef_t *coef,                      \
                     const pyr_box_t *boxes, int n)                                                          \
    {                                                                                                        \
        const T rx = (T)coef->c[0], ry = (T)coef->c[1], rz = (T)coef->c[2];                                  \
        const int64_t dx = 1, dy = p->pitch, dz = p->pitch * (p->box.hi[1] - p->box.lo[1]);                  \
        for (int l = 0; l < n; l++) {                                                                        \
            const T *s = lay[(cur + l) & 1];                                                                 \
            T *d = lay[(cur + l + 1) & 1];                                                                   \
            const pyr_box_t *b = &boxes[l];                                                                  \
            for (int64_t z = b->lo[2]; z < b->hi[2]; z++)                                                    \
                for (int64_t y = b->lo[1]; y < b->hi[1]; y++)                                                \
                    for (int64_t x = b->lo[0]; x < b->hi[0]; x++) {                                          \
                        const int64_t i = pyr_piece_index(p, x, y, z);                                       \
                        const T u = s[i];                                                                    \
                        if (coef->dims == 1)                                                                 \
                            d[i] = u + rx * ((s[i - dx] + s[i + dx]) - (u + u));                             \
                        else if (coef->dims == 2)                                                            \
                            d[i] = u + (rx * ((s[i - dx] + s[i + dx]) - (u + u)) +                           \
                                        ry * ((s[i - dy] + s[i + dy]) - (u + u)));                           \
                        else                                                                                 \
                            d[i] = u + ((rx * ((s[i - dx] + s[i + dx]) - (u + u)) +                          \
                                         ry * ((s[i - dy] + s[i + dy]) - (u + u))) +                         \
                                        rz * ((s[i - dz] + s[i + dz]) - (u + u)));                           \
                    }                                                                                        \
        }                                                                                                    \
    }

DEFINE_REF(ref_f32, float)
DEFINE_REF(ref_f64, double)

/* A random sub-box of `in` along the used axes: often reaching its edges,
 * sometimes one node thick. */
static pyr_box_t random_sub(rng_t *r, const pyr_box_t *in, int dims)
{
    pyr_box_t b = *in;
    for (int a = 0; a < dims; a++) {
        int64_t lo = in->lo[a], hi = in->hi[a];
        int64_t x0 = rng_range(r, 0, 2) == 0 ? lo : rng_range(r, lo, hi - 1);
        int64_t x1 = rng_range(r, 0, 2) == 0 ? hi : rng_range(r, x0 + 1, hi);
        if (rng_range(r, 0, 7) == 0) x1 = x0 + 1;
        b.lo[a] = x0;
        b.hi[a] = x1;
    }
    return b;
}

static int run_case(int c, uint64_t seed)
{
    rng_t r = {seed * 7919ull + (uint64_t)c * 104729ull};
    int dims = rng_range(&r, 0, 9) == 0 ? 1 : (int)rng_range(&r, 2, 3);
    pyr_precision_t prec = rng_range(&r, 0, 1) ? PYR_DOUBLE : PYR_FLOAT;
    size_t elem = pyr_precision_size(prec);
    int threads = (int)rng_range(&r, 1, 3);

    /* the piece: an offset box with room for at least one interior node */
    pyr_piece_t p;
    memset(&p, 0, sizeof p);
    int big = rng_range(&r, 0, 5) == 0;
    for (int a = 0; a < 3; a++) {
        int64_t cap = dims == 1 ? 400 : dims == 2 ? (big ? 300 : 80) : (big ? 44 : 24);
        int64_t e = a < dims ? rng_range(&r, 3, cap) : 1;
        p.box.lo[a] = a < dims ? rng_range(&r, -5, 9) : 0;
        p.box.hi[a] = p.box.lo[a] + e;
    }
    int64_t nx = p.box.hi[0] - p.box.lo[0], ny = p.box.hi[1] - p.box.lo[1], nz = p.box.hi[2] - p.box.lo[2];
    p.pitch = nx + rng_range(&r, 0, 8);
    p.cur = (int)rng_range(&r, 0, 1);
    size_t count = (size_t)(p.pitch * ny * nz + 8); /* a little slack past the last row */
    void *lay[2], *ref[2];
    for (int l = 0; l < 2; l++) {
        lay[l] = malloc(count * elem);
        ref[l] = malloc(count * elem);
        if (!lay[l] || !ref[l]) {
            CHECK(0, "case %d: out of memory", c);
            return 1;
        }
        for (size_t i = 0; i < count; i++) {
            double v = (double)(rng_next(&r) % 2000001) / 1000000.0 - 1.0;
            if (prec == PYR_DOUBLE) ((double *)lay[l])[i] = v;
            else ((float *)lay[l])[i] = (float)v;
        }
        memcpy(ref[l], lay[l], count * elem);
        p.buf[0][l] = lay[l];
    }

    p.nfields = 1;
    pyr_coef_t coef;
    memset(&coef, 0, sizeof coef);
    coef.equation = PYR_EQ_HEAT;
    coef.dims = dims;
    coef.precision = prec;
    for (int a = 0; a < 3; a++) coef.c[a] = a < dims ? 0.01 + 0.3 * (double)(rng_next(&r) % 1000) / 1000.0 / dims : 0;

    /* the boxes: inside the piece less its one-node edge */
    pyr_box_t inner = p.box;
    for (int a = 0; a < dims; a++) inner.lo[a]++, inner.hi[a]--;
    int n = (int)rng_range(&r, 1, 20);
    pyr_box_t boxes[20];
    int kind = (int)rng_range(&r, 0, 3);
    static const char *kinds[] = {"shrinking", "same box", "unrelated boxes", "one plane thick"};
    for (int l = 0; l < n; l++) {
        if (kind == 0) { /* pyramid: each side one node in, or (sometimes) unchanged */
            if (l == 0) boxes[0] = rng_range(&r, 0, 1) ? inner : random_sub(&r, &inner, dims);
            else {
                boxes[l] = boxes[l - 1];
                for (int a = 0; a < dims; a++) {
                    if (rng_range(&r, 0, 3)) boxes[l].lo[a]++;
                    if (rng_range(&r, 0, 3)) boxes[l].hi[a]--;
                    if (boxes[l].hi[a] < boxes[l].lo[a]) boxes[l].hi[a] = boxes[l].lo[a];
                }
            }
        } else if (kind == 1) {
            if (l == 0) boxes[0] = rng_range(&r, 0, 1) ? inner : random_sub(&r, &inner, dims);
            else boxes[l] = boxes[0];
        } else if (kind == 2) {
            boxes[l] = random_sub(&r, &inner, dims);
        } else { /* one plane (row in 2D) thick along the slowest axis, or any axis */
            boxes[l] = random_sub(&r, &inner, dims);
            int a = rng_range(&r, 0, 1) ? dims - 1 : (int)rng_range(&r, 0, dims - 1);
            boxes[l].hi[a] = boxes[l].lo[a] + 1;
        }
        if (rng_range(&r, 0, 15) == 0) boxes[l].hi[0] = boxes[l].lo[0]; /* empty */
    }

    /* how the backend cuts the work: its own choice, or forced */
    char wave[64] = "";
    switch (rng_range(&r, 0, 5)) {
    case 0: snprintf(wave, sizeof wave, "auto"); break; /* the default rules (most small pieces: layer by layer) */
    case 1: snprintf(wave, sizeof wave, "wave"); break;
    case 2: snprintf(wave, sizeof wave, "sweep"); break;
    default: {
        static const int tiles[] = {0, 1, 2, 3, 5, 8, 17};
        static const int groups[] = {0, 1, 2, 3, 5};
        snprintf(wave, sizeof wave, "wave:%d,%d,%d", tiles[rng_range(&r, 0, 6)], (int)rng_range(&r, 0, 3), groups[rng_range(&r, 0, 4)]);
    }
    }
    pyr_variant_t variant;
    CHECK_OK(pyr_variant_parse(wave, &variant));

    char label[256];
    snprintf(label, sizeof label, "case %d seed %llu: %dD %s piece %lldx%lldx%lld pitch %lld, %d layers (%s), %d threads, kernel %s",
             c, (unsigned long long)seed, dims, pyr_precision_name(prec), (long long)nx, (long long)ny, (long long)nz, (long long)p.pitch,
             n, kinds[kind], threads, wave);

    pyr_options_t o;
    pyr_options_default(&o);
    o.threads = threads;
    void *ctx = NULL;
    CHECK_OK(pyr_device_cpu.create(&o, prec, &ctx));
    if (!ctx) return 1;
    pyr_kernel_call_t call = {.piece = &p, .coef = &coef, .boxes = boxes, .nboxes = n, .variant = &variant};
    CHECK_OK(pyr_kernel_cpu_heat.run(ctx, 0, &call));
    pyr_device_cpu.destroy(ctx);

    if (prec == PYR_DOUBLE) ref_f64(&p, (double **)ref, p.cur, &coef, boxes, n);
    else ref_f32(&p, (float **)ref, p.cur, &coef, boxes, n);
    int bad = 0;
    for (int l = 0; l < 2; l++) {
        size_t i = 0;
        int same = !memcmp(lay[l], ref[l], count * elem);
        if (!same)
            while (memcmp((char *)lay[l] + i * elem, (char *)ref[l] + i * elem, elem) == 0) i++;
        CHECK(same, "%s: layer %d differs from the reference at element %zu", label, l, i);
        bad |= !same;
    }
    if (verbose_) printf("%s: %s\n", label, bad ? "DIFFERS" : "ok");
    for (int l = 0; l < 2; l++) free(lay[l]), free(ref[l]);
    return bad;
}

int main(int argc, char **argv)
{
    int cases = argc > 1 ? atoi(argv[1]) : 500;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    const char *v = getenv("PYR_TEST_VERBOSE");
    verbose_ = v && *v && *v != '0';
    int failed = 0;
    for (int c = 0; c < cases; c++) failed += run_case(c, seed);
    printf("%d of %d random compute calls bit-identical to the layer-by-layer reference (seed %llu)\n", cases - failed, cases,
           (unsigned long long)seed);
    return check_report();
}
