/* The Maxwell scheme's point terms (schemes/scheme.h, the points hooks):
 * its point and line sources, with their waveforms, its plane waves' face
 * corrections (maxwell_planewave.c), its probes, and its
 * frequency-domain monitors: a probe per node and component beyond the
 * caller's, whose running Fourier sums the record hook adds up. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "schemes/maxwell.h"
#include "schemes/scheme.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define MAX_MON (2 * PYR_MAXWELL_MAX_MONITORS)

/* A run's state: the source of each point (its waveform), and per monitor
 * its layout, its first probe and its sums (component, frequency, node; the
 * dt is applied when they are stored in the spectra). */
typedef struct {
    int *of;
    int nmon;
    pyr_maxwell_monitor_t mon[MAX_MON];
    int64_t first[MAX_MON];
    double *re[MAX_MON], *im[MAX_MON];
    int npoint;    /* the sources before the plane waves' face corrections */
    pyr_maxwell_planewaves_t *pw;
} mx_state_t;

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

static void state_free(mx_state_t *st)
{
    if (!st) return;
    free(st->of);
    for (int m = 0; m < st->nmon; m++) {
        pyr_maxwell_monitor_clear(&st->mon[m]);
        free(st->re[m]);
        free(st->im[m]);
    }
    pyr_maxwell_planewaves_free(st->pw);
    free(st);
}

void pyr_maxwell_points_free(pyr_scheme_points_t *pts)
{
    free(pts->sources);
    free(pts->probes);
    state_free(pts->state);
    memset(pts, 0, sizeof *pts);
}

/* The monitors' probes after the caller's, each with its node in this
 * run's coordinates (possibly off its window), and their zeroed sums. */
static pyr_status_t monitor_points(const pyr_problem_t *p, mx_state_t *st, pyr_scheme_points_t *out)
{
    int64_t total = 0;
    st->nmon = pyr_maxwell_monitor_count(p);
    for (int m = 0; m < st->nmon; m++) {
        PYR_TRY(pyr_maxwell_monitor_layout(p, m, &st->mon[m]));
        const pyr_maxwell_monitor_t *mon = &st->mon[m];
        st->first[m] = out->nprobes + total;
        total += mon->ncomp * mon->nnodes;
        const size_t n = (size_t)(mon->ncomp * mon->nfreq * mon->nnodes);
        st->re[m] = calloc(n, sizeof(double));
        st->im[m] = calloc(n, sizeof(double));
        if (!st->re[m] || !st->im[m]) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for monitor %s's sums", mon->name);
    }
    if (!total) return PYR_OK;
    if (out->nprobes + total > (1 << 24)) return pyr_fail(PYR_ERR_CONFIG, "the monitors hold %lld node values; at most 16777216", (long long)total);
    pyr_scheme_point_t *all = realloc(out->probes, (size_t)(out->nprobes + total) * sizeof *all);
    if (!all) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the monitors");
    out->probes = all;
    for (int m = 0; m < st->nmon; m++) {
        const pyr_maxwell_monitor_t *mon = &st->mon[m];
        pyr_scheme_point_t *pt = all + st->first[m];
        for (int c = 0; c < mon->ncomp; c++) {
            int64_t g[3];
            for (g[2] = mon->lo[2]; g[2] <= mon->hi[2]; g[2]++)
                for (g[1] = mon->lo[1]; g[1] <= mon->hi[1]; g[1]++)
                    for (g[0] = mon->lo[0]; g[0] <= mon->hi[0]; g[0]++) {
                        pt->field = mon->comp[c];
                        for (int a = 0; a < 3; a++) pt->node[a] = g[a] - p->origin[a];
                        pt++;
                    }
        }
    }
    out->nprobes += (int)total;
    return PYR_OK;
}

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
    mx_state_t *st = calloc(1, sizeof *st);
    if (!st) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the sources");
    out->state = st;
    int64_t npts = 0;
    for (int i = 0; i < m->nsources; i++) npts += source_nodes(p, i, NULL, NULL);
    if (npts) {
        out->sources = malloc((size_t)npts * sizeof *out->sources);
        st->of = malloc((size_t)npts * sizeof(int));
        if (!out->sources || !st->of) {
            pyr_maxwell_points_free(out);
            return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the sources");
        }
        int64_t k = 0;
        for (int i = 0; i < m->nsources; i++) k += source_nodes(p, i, out->sources + k, st->of + k);
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
    st->npoint = out->nsources;
    pyr_status_t s = pyr_maxwell_planewaves_points(p, out, &st->pw);
    if (s == PYR_OK) s = monitor_points(p, st, out);
    if (s != PYR_OK) {
        pyr_maxwell_points_free(out);
        return s;
    }
    return PYR_OK;
}

/* In double: E(n+1) gets w((n+1) dt), H(n+1/2) w((n+1/2) dt). */
pyr_status_t pyr_maxwell_amplitudes(const pyr_problem_t *p, pyr_scheme_points_t *pts, int64_t first, int64_t count, double *amp)
{
    double dt = 0;
    PYR_TRY(pyr_maxwell_dt(p, &dt));
    mx_state_t *st = pts->state;
    const int *of = st->of;
    for (int64_t s = 0; s < count; s++)
        for (int i = 0; i < st->npoint; i++) {
            const double t = (double)(first + s) + (pts->sources[i].field < 3 ? 1.0 : 0.5);
            amp[s * pts->nsources + i] = pyr_maxwell_waveform(&p->maxwell.sources[of[i]], t * dt);
        }
    return pyr_maxwell_planewaves_amplitudes(p, st->pw, pts->sources, st->npoint, pts->nsources, first, count, amp, pts->series);
}

/* Each owned monitor probe's sums, step by step in order: re += v cos(2 pi f t),
 * im -= v sin(2 pi f t), t the component's time; stored in the spectra (times
 * dt) on the run's last pass. */
pyr_status_t pyr_maxwell_record(const pyr_problem_t *p, pyr_scheme_points_t *pts, int64_t first, int64_t count, const double *values,
                                const unsigned char *owned, int last)
{
    mx_state_t *st = pts->state;
    if (!st || !st->nmon) return PYR_OK;
    double dt = 0;
    PYR_TRY(pyr_maxwell_dt(p, &dt));
    for (int m = 0; m < st->nmon; m++) {
        const pyr_maxwell_monitor_t *mon = &st->mon[m];
        const int nf = mon->nfreq;
        /* the phases of every step of the call: cos, sin at E's time, then at H's */
        double *ph = malloc((size_t)(count * nf * 4 + 1) * sizeof *ph);
        if (!ph) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the monitors' phases");
        for (int64_t s = 0; s < count; s++) {
            const double tE = ((double)(first + s) + 1.0) * dt, tH = ((double)(first + s) + 0.5) * dt;
            for (int f = 0; f < nf; f++) {
                const double w = 2.0 * M_PI * mon->freq[f];
                double *q = ph + (s * nf + f) * 4;
                q[0] = cos(w * tE);
                q[1] = sin(w * tE);
                q[2] = cos(w * tH);
                q[3] = sin(w * tH);
            }
        }
        const int64_t nn = mon->nnodes, np = pts->nprobes;
        for (int c = 0; c < mon->ncomp; c++) {
            const int64_t k0 = st->first[m] + (int64_t)c * nn;
            const int h = mon->comp[c] >= 3 ? 2 : 0;
            double *re0 = st->re[m] + (int64_t)c * nf * nn, *im0 = st->im[m] + (int64_t)c * nf * nn;
            /* nodes in blocks over the threads; each node's sums step by step in order, as one thread would */
#pragma omp parallel for schedule(static) if (nn * count * nf > 65536)
            for (int64_t b = 0; b < nn; b += 512) {
                const int64_t e = b + 512 < nn ? b + 512 : nn;
                for (int64_t s = 0; s < count; s++) {
                    const double *row = values + s * np + k0;
                    for (int f = 0; f < nf; f++) {
                        const double co = ph[(s * nf + f) * 4 + h], si = ph[(s * nf + f) * 4 + h + 1];
                        double *re = re0 + (int64_t)f * nn, *im = im0 + (int64_t)f * nn;
                        for (int64_t k = b; k < e; k++) {
                            if (!owned[k0 + k]) continue;
                            const double v = row[k];
                            re[k] += v * co;
                            im[k] -= v * si;
                        }
                    }
                }
            }
        }
        free(ph);
    }
    if (last && p->maxwell.spectra)
        for (int m = 0; m < st->nmon; m++)
            pyr_maxwell_spectra_store(p->maxwell.spectra, m, st->re[m], st->im[m], owned + st->first[m], dt, p->steps);
    return PYR_OK;
}
