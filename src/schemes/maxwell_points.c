/* The Maxwell scheme's point terms (schemes/scheme.h, the points hooks):
 * its point and line sources, with their waveforms, and its probes. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "schemes/maxwell.h"
#include "schemes/scheme.h"

/* Whether whole-grid node g lies on this problem's grid (a part's window, or the whole). */
static int on_grid(const pyr_problem_t *p, const int64_t g[3])
{
    for (int a = 0; a < 3; a++)
        if (g[a] < p->origin[a] || g[a] >= p->origin[a] + p->n[a]) return 0;
    return 1;
}

/* The nodes of source i (a line source: one per node) on the grid, into
 * out (when not NULL) with their source's index; returns how many. */
static int64_t source_nodes(const pyr_problem_t *p, int i, pyr_scheme_point_t *out, int *of)
{
    const pyr_source_t *src = &p->maxwell.sources[i];
    int64_t k = 0, g[3];
    for (g[2] = src->node[2]; g[2] <= src->node_end[2]; g[2]++)
        for (g[1] = src->node[1]; g[1] <= src->node_end[1]; g[1]++)
            for (g[0] = src->node[0]; g[0] <= src->node_end[0]; g[0]++) {
                if (!on_grid(p, g)) continue;
                if (out) {
                    out[k].field = (int)src->component;
                    for (int a = 0; a < 3; a++) out[k].node[a] = g[a] - p->origin[a];
                    of[k] = i;
                }
                k++;
            }
    return k;
}

void pyr_maxwell_points_free(pyr_scheme_points_t *pts)
{
    free(pts->sources);
    free(pts->probes);
    free(pts->state);
    memset(pts, 0, sizeof *pts);
}

/* The state: the source of each point (its waveform). */
pyr_status_t pyr_maxwell_points(const pyr_problem_t *p, pyr_scheme_points_t *out)
{
    const pyr_maxwell_params_t *m = &p->maxwell;
    memset(out, 0, sizeof *out);
    int64_t nall = 0;
    for (int i = 0; i < m->nsources; i++) {
        int64_t len = 1;
        for (int a = 0; a < 3; a++) len *= m->sources[i].node_end[a] - m->sources[i].node[a] + 1;
        nall += len;
    }
    if (nall > (1 << 24)) return pyr_fail(PYR_ERR_CONFIG, "the line sources hold %lld nodes; at most 16777216", (long long)nall);
    int64_t npts = 0;
    for (int i = 0; i < m->nsources; i++) npts += source_nodes(p, i, NULL, NULL);
    if (npts) {
        out->sources = malloc((size_t)npts * sizeof *out->sources);
        out->state = malloc((size_t)npts * sizeof(int));
        if (!out->sources || !out->state) {
            pyr_maxwell_points_free(out);
            return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the sources");
        }
        int64_t k = 0;
        for (int i = 0; i < m->nsources; i++) k += source_nodes(p, i, out->sources + k, (int *)out->state + k);
        out->nsources = (int)npts;
    }
    if (m->nprobes) {
        out->probes = malloc((size_t)m->nprobes * sizeof *out->probes);
        if (!out->probes) {
            pyr_maxwell_points_free(out);
            return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the probes");
        }
        for (int i = 0; i < m->nprobes; i++) {
            out->probes[i].field = (int)m->probes[i].component;
            for (int a = 0; a < 3; a++) out->probes[i].node[a] = m->probes[i].node[a] - p->origin[a];
        }
        out->nprobes = out->nshown = m->nprobes;
    }
    return PYR_OK;
}

/* In double: E(n+1) gets w((n+1) dt), H(n+1/2) w((n+1/2) dt). */
pyr_status_t pyr_maxwell_amplitudes(const pyr_problem_t *p, pyr_scheme_points_t *pts, int64_t first, int64_t count, double *amp)
{
    double dt = 0;
    PYR_TRY(pyr_maxwell_dt(p, &dt));
    const int *of = pts->state;
    for (int64_t s = 0; s < count; s++)
        for (int i = 0; i < pts->nsources; i++) {
            const double t = (double)(first + s) + (pts->sources[i].field < 3 ? 1.0 : 0.5);
            amp[s * pts->nsources + i] = pyr_maxwell_waveform(&p->maxwell.sources[of[i]], t * dt);
        }
    return PYR_OK;
}
