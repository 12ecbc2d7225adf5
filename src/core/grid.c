/* A problem's grid: its nodes, its spacing and the whole grid a part
 * belongs to.  Arithmetic on the grid members of pyr_problem_t alone, so
 * that every floor (the schemes' tables included) may ask it. */
#include <stdint.h>

#include "pyrgrid.h"

int64_t pyr_problem_whole(const pyr_problem_t *p, int axis)
{
    if (axis < 0 || axis > 2) return 1;
    return p->whole[axis] > 0 ? p->whole[axis] : p->n[axis];
}

double pyr_problem_h(const pyr_problem_t *p, int axis)
{
    const int64_t n = axis >= 0 && axis < 3 ? pyr_problem_whole(p, axis) : 0;
    if (axis >= p->dims || n < 2) return 0.0;
    return p->length[axis] / (double)(n - 1);
}

int64_t pyr_problem_nodes(const pyr_problem_t *p)
{
    int64_t c = 1;
    for (int d = 0; d < 3; d++) c *= p->n[d] > 0 ? p->n[d] : 1;
    return c;
}

int64_t pyr_problem_interior(const pyr_problem_t *p)
{
    int64_t c = 1;
    for (int d = 0; d < p->dims; d++) c *= p->n[d] - 2;
    return c;
}
