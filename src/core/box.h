/* Boxes of grid nodes: half-open ranges [lo, hi) per axis (x, y, z). Axes a
 * problem does not use are [0, 1). */
#ifndef PYR_CORE_BOX_H
#define PYR_CORE_BOX_H

#include <stdint.h>

typedef struct {
    int64_t lo[3], hi[3];
} pyr_box_t;

static inline int64_t pyr_box_extent(const pyr_box_t *b, int a)
{
    return b->hi[a] > b->lo[a] ? b->hi[a] - b->lo[a] : 0;
}

static inline int64_t pyr_box_volume(const pyr_box_t *b)
{
    return pyr_box_extent(b, 0) * pyr_box_extent(b, 1) * pyr_box_extent(b, 2);
}

static inline int pyr_box_empty(const pyr_box_t *b) { return pyr_box_volume(b) == 0; }

static inline pyr_box_t pyr_box_intersect(const pyr_box_t *a, const pyr_box_t *b)
{
    pyr_box_t r;
    for (int d = 0; d < 3; d++) {
        r.lo[d] = a->lo[d] > b->lo[d] ? a->lo[d] : b->lo[d];
        r.hi[d] = a->hi[d] < b->hi[d] ? a->hi[d] : b->hi[d];
        if (r.hi[d] < r.lo[d]) r.hi[d] = r.lo[d];
    }
    return r;
}

/* The smallest box holding every non-empty box of boxes[0..n) (empty, all
 * zero, when there is none). */
static inline pyr_box_t pyr_box_hull(const pyr_box_t *boxes, int n)
{
    pyr_box_t h = {{0, 0, 0}, {0, 0, 0}};
    int any = 0;
    for (int i = 0; i < n; i++) {
        if (pyr_box_empty(&boxes[i])) continue;
        for (int d = 0; d < 3; d++) {
            if (!any || boxes[i].lo[d] < h.lo[d]) h.lo[d] = boxes[i].lo[d];
            if (!any || boxes[i].hi[d] > h.hi[d]) h.hi[d] = boxes[i].hi[d];
        }
        any = 1;
    }
    return h;
}

static inline int pyr_box_contains(const pyr_box_t *outer, const pyr_box_t *inner)
{
    for (int d = 0; d < 3; d++)
        if (inner->lo[d] < outer->lo[d] || inner->hi[d] > outer->hi[d]) return 0;
    return 1;
}

#endif
