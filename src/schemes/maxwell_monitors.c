/* The Maxwell scheme's frequency-domain monitors (pyr_monitor_t): their
 * layout on the whole grid, their refusals, and the spectra a run puts its
 * transforms into (pyr_spectra_t, the public API).  The sums themselves are
 * made by the record hook (maxwell_points.c), per node by the one run that
 * owns it; a flux is summed here from the stored transforms in the grid's
 * order, so it is the same whatever the plan. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "pyrgrid_output.h"
#include "schemes/maxwell.h"

#define MAX_MON (2 * PYR_MAXWELL_MAX_MONITORS)
#define MAX_RANGE 100000

struct pyr_spectra {
    pyr_problem_t problem; /* the problem made for (its spectra pointer NULL) */
    int count;
    pyr_maxwell_monitor_t mon[MAX_MON];
    int64_t offset[MAX_MON]; /* of monitor m's values in re, im */
    int64_t steps[MAX_MON];
    double *re, *im;
};

static const char *const comp_names[6] = {"Ex", "Ey", "Ez", "Hx", "Hy", "Hz"};

int pyr_maxwell_monitor_count(const pyr_problem_t *p) { return p->equation == PYR_EQ_MAXWELL ? p->maxwell.ndft + p->maxwell.nflux : 0; }

static const pyr_monitor_t *monitor_of(const pyr_problem_t *p, int m, int *flux, int *number)
{
    const pyr_maxwell_params_t *x = &p->maxwell;
    *flux = m >= x->ndft;
    *number = *flux ? m - x->ndft + 1 : m + 1;
    return *flux ? &x->flux[m - x->ndft] : &x->dft[m];
}

void pyr_maxwell_free_range(const pyr_problem_t *p, int a, int64_t *lo, int64_t *hi)
{
    const pyr_maxwell_params_t *m = &p->maxwell;
    const int64_t last = pyr_problem_whole(p, a) - 1, L = m->cpml_cells > 0 ? m->cpml_cells : 0;
    *lo = L && (m->cpml_faces & (1u << (2 * a))) ? L : 0;
    *hi = L && (m->cpml_faces & (1u << (2 * a + 1))) ? last - L : last;
}

/* Whether component c lies half a cell above its node along axis x. */
static int half_along(int c, int x) { return c < 3 ? x == c : x != c - 3; }

/* Whether a monitor's nodes lo .. hi span periodic axis a whole: its cells
 * then go round, the last one's upper end the first node. */
static int wraps(const pyr_problem_t *p, int a, int64_t lo, int64_t hi)
{
    return a < p->dims && ((p->maxwell.periodic >> a) & 1) && lo == 0 && hi == pyr_problem_whole(p, a) - 1;
}

static void monitor_freqs(const pyr_monitor_t *d, double *out)
{
    for (int f = 0; f < d->nfreq; f++)
        out[f] = !d->range ? d->freq[f] : d->nfreq == 1 ? d->freq[0] : d->freq[0] + (d->freq[1] - d->freq[0]) * (double)f / (double)(d->nfreq - 1);
}

/* The nodes a monitor's transforms are kept for, on the whole grid (no checks). */
static void monitor_box(const pyr_problem_t *p, const pyr_monitor_t *d, int flux, int64_t lo[3], int64_t hi[3])
{
    for (int a = 0; a < 3; a++) {
        lo[a] = a < p->dims ? d->lo[a] : 0;
        hi[a] = a < p->dims ? d->hi[a] : 0;
        if (d->region == PYR_REGION_PLANE && a < p->dims && a != d->axis) {
            if (!d->limits) pyr_maxwell_free_range(p, a, &lo[a], &hi[a]);
        }
    }
    if (flux) {
        lo[d->axis] = d->lo[d->axis] - 1; /* H's averages across the plane */
        hi[d->axis] = d->lo[d->axis];
    }
}

void pyr_maxwell_monitor_clear(pyr_maxwell_monitor_t *mon)
{
    free(mon->freq);
    memset(mon, 0, sizeof *mon);
}

pyr_status_t pyr_maxwell_monitor_layout(const pyr_problem_t *p, int m, pyr_maxwell_monitor_t *out)
{
    memset(out, 0, sizeof *out);
    int flux, number;
    const pyr_monitor_t *d = monitor_of(p, m, &flux, &number);
    snprintf(out->name, sizeof out->name, "%s%d", flux ? "flux" : "dft", number);
    out->flux = flux;
    out->axis = d->region == PYR_REGION_PLANE ? d->axis : -1;
    monitor_box(p, d, flux, out->lo, out->hi);
    out->nnodes = 1;
    for (int a = 0; a < 3; a++) out->nnodes *= out->hi[a] - out->lo[a] + 1;
    for (int c = 0; c < 6; c++) {
        int take;
        if (flux) take = c % 3 != d->axis && pyr_maxwell_component_used(p, c);
        else take = (d->components >> c) & 1;
        if (take) out->comp[out->ncomp++] = c;
    }
    out->nfreq = d->nfreq;
    out->freq = malloc((size_t)(d->nfreq > 0 ? d->nfreq : 1) * sizeof *out->freq);
    if (!out->freq) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for monitor %s", out->name);
    monitor_freqs(d, out->freq);
    return PYR_OK;
}

/* ----------------------------------------------------------------- refusals */

static pyr_status_t check_freqs(const pyr_problem_t *p, const char *name, const pyr_monitor_t *d, double dt)
{
    if (d->nfreq < 1 || (!d->range && d->nfreq > PYR_MAXWELL_MAX_FREQS) || (d->range && d->nfreq > MAX_RANGE))
        return pyr_fail(PYR_ERR_CONFIG, "monitor.%s: %d frequencies; give 1 to %d in a list (freqs=f1,f2,...) or up to %d in a range (freqs=fmin:fmax:n)",
                        name, d->nfreq, PYR_MAXWELL_MAX_FREQS, MAX_RANGE);
    const double fmin = 1.0 / ((double)p->steps * dt), fmax = 1.0 / (2.0 * dt);
    const int n = d->range ? 2 : d->nfreq;
    for (int f = 0; f < n; f++) {
        const double v = d->freq[f];
        if (!isfinite(v) || v < fmin || v > fmax)
            return pyr_fail(PYR_ERR_CONFIG,
                            "monitor.%s: frequency %.6g is outside what the run resolves: from 1 / (steps dt) = %.6g (%lld steps of dt = %.6g; "
                            "more steps resolve lower frequencies) to the grid's Nyquist frequency 1 / (2 dt) = %.6g",
                            name, v, fmin, (long long)p->steps, dt, fmax);
    }
    if (d->range && !(d->freq[0] < d->freq[1] || (d->nfreq == 1 && d->freq[0] == d->freq[1])))
        return pyr_fail(PYR_ERR_CONFIG, "monitor.%s: the range %.6g:%.6g:%d; write fmin:fmax:n with fmin < fmax (n = 1: fmin = fmax)", name,
                        d->freq[0], d->freq[1], d->nfreq);
    return PYR_OK;
}

/* Nodes lo .. hi along axis a inside the grid and outside the CPML. */
static pyr_status_t check_span(const pyr_problem_t *p, const char *name, int a, int64_t lo, int64_t hi, const char *what)
{
    const int64_t n = pyr_problem_whole(p, a);
    if (lo < 0 || hi >= n || lo > hi)
        return pyr_fail(PYR_ERR_CONFIG, "monitor.%s: %s runs from node %lld to %lld along %c, outside the grid's nodes 0 .. %lld; use nodes inside it, "
                                        "the smaller first",
                        name, what, (long long)lo, (long long)hi, "xyz"[a], (long long)(n - 1));
    int64_t flo, fhi;
    pyr_maxwell_free_range(p, a, &flo, &fhi);
    if (lo < flo || hi > fhi)
        return pyr_fail(PYR_ERR_CONFIG, "monitor.%s: %s reaches into the CPML along %c (nodes %lld .. %lld); keep it within nodes %lld .. %lld", name,
                        what, "xyz"[a], (long long)lo, (long long)hi, (long long)flo, (long long)fhi);
    return PYR_OK;
}

pyr_status_t pyr_maxwell_monitors_check(const pyr_problem_t *p)
{
    const pyr_maxwell_params_t *x = &p->maxwell;
    if (x->ndft < 0 || x->ndft > PYR_MAXWELL_MAX_MONITORS || x->nflux < 0 || x->nflux > PYR_MAXWELL_MAX_MONITORS)
        return pyr_fail(PYR_ERR_CONFIG, "monitor: %d dft and %d flux monitors; at most %d of each", x->ndft, x->nflux, PYR_MAXWELL_MAX_MONITORS);
    const int count = pyr_maxwell_monitor_count(p);
    if (!count) return PYR_OK;
    double dt = 0;
    PYR_TRY(pyr_maxwell_dt(p, &dt));
    int64_t total = 0;
    for (int m = 0; m < count; m++) {
        int flux, number;
        const pyr_monitor_t *d = monitor_of(p, m, &flux, &number);
        char name[16];
        snprintf(name, sizeof name, "%s%d", flux ? "flux" : "dft", number);
        if (d->nfreq == 0)
            return pyr_fail(PYR_ERR_CONFIG, "monitor.%s is not given, but a later %s monitor is; number them from 1 without gaps", name,
                            flux ? "flux" : "dft");
        if ((unsigned)d->region > PYR_REGION_PLANE || (flux && d->region != PYR_REGION_PLANE))
            return pyr_fail(PYR_ERR_CONFIG, "monitor.%s: a %s monitor's region is %s", name, flux ? "flux" : "dft",
                            flux ? "a plane (plane AXIS INDEX)" : "a point, a box or a plane");
        if (d->region == PYR_REGION_PLANE && (d->axis < 0 || d->axis >= p->dims))
            return pyr_fail(PYR_ERR_CONFIG, "monitor.%s: a plane normal to %c on a %dD grid; use %s", name, d->axis >= 0 && d->axis < 3 ? "xyz"[d->axis] : '?',
                            p->dims, p->dims == 3 ? "x, y or z" : "x or y");
        if (!flux) {
            if (!d->components || d->components > 0x3f)
                return pyr_fail(PYR_ERR_CONFIG, "monitor.%s: no components; name them first, e.g. Ez or Ey,Hz", name);
            for (int c = 0; c < 6; c++)
                if ((d->components >> c) & 1 && !pyr_maxwell_component_used(p, c))
                    return pyr_fail(PYR_ERR_CONFIG, "monitor.%s: component %s is not one of this grid's (%s)", name, comp_names[c],
                                    p->dims == 3 ? "Ex Ey Ez Hx Hy Hz" : p->maxwell.te ? "TE: Hz Ex Ey" : "TM: Ez Hx Hy");
        }
        int64_t lo[3], hi[3];
        monitor_box(p, d, 0, lo, hi);
        for (int a = 0; a < p->dims; a++) {
            const int normal = d->region == PYR_REGION_PLANE && a == d->axis;
            if (normal && flux) {
                /* H's averages read the nodes on both sides, and H at i + 1/2 must lie outside the layer */
                PYR_TRY(check_span(p, name, a, lo[a] - 1, lo[a] + 1, "the plane with its neighbours"));
            } else {
                PYR_TRY(check_span(p, name, a, lo[a], hi[a], normal ? "the plane" : d->region == PYR_REGION_POINT ? "the point" : "the region"));
            }
            if (flux && !normal && hi[a] <= lo[a])
                return pyr_fail(PYR_ERR_CONFIG, "monitor.%s: the plane spans no cell along %c (nodes %lld .. %lld); give at least two nodes", name,
                                "xyz"[a], (long long)lo[a], (long long)hi[a]);
        }
        PYR_TRY(check_freqs(p, name, d, dt));
        pyr_maxwell_monitor_t mon;
        PYR_TRY(pyr_maxwell_monitor_layout(p, m, &mon));
        total += mon.nnodes * mon.ncomp;
        pyr_maxwell_monitor_clear(&mon);
    }
    if (total > (1 << 24))
        return pyr_fail(PYR_ERR_CONFIG, "monitor: the monitors hold %lld node values per step; at most 16777216 (each is copied to the host every step)",
                        (long long)total);
    return PYR_OK;
}

/* ------------------------------------------------------------------ spectra */

void pyr_spectra_destroy(pyr_spectra_t **spectra)
{
    if (!spectra || !*spectra) return;
    pyr_spectra_t *s = *spectra;
    for (int m = 0; m < s->count; m++) pyr_maxwell_monitor_clear(&s->mon[m]);
    free(s->re);
    free(s->im);
    free(s);
    *spectra = NULL;
}

pyr_status_t pyr_maxwell_spectra_create(const pyr_problem_t *problem, pyr_spectra_t **spectra)
{
    *spectra = NULL;
    pyr_spectra_t *s = calloc(1, sizeof *s);
    if (!s) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the spectra");
    s->problem = *problem;
    s->problem.maxwell.spectra = NULL;
    memset(s->problem.origin, 0, sizeof s->problem.origin);
    for (int a = 0; a < 3; a++) s->problem.n[a] = pyr_problem_whole(problem, a);
    memset(s->problem.whole, 0, sizeof s->problem.whole);
    s->count = pyr_maxwell_monitor_count(problem);
    int64_t total = 0;
    pyr_status_t st = PYR_OK;
    for (int m = 0; m < s->count && st == PYR_OK; m++) {
        st = pyr_maxwell_monitor_layout(&s->problem, m, &s->mon[m]);
        s->offset[m] = total;
        total += s->mon[m].ncomp * s->mon[m].nfreq * s->mon[m].nnodes;
    }
    if (st == PYR_OK) {
        s->re = calloc((size_t)total + 1, sizeof *s->re);
        s->im = calloc((size_t)total + 1, sizeof *s->im);
        if (!s->re || !s->im) st = pyr_fail(PYR_ERR_NOMEM, "out of host memory for the spectra (%lld values)", (long long)(2 * total));
    }
    if (st != PYR_OK) {
        pyr_spectra_destroy(&s);
        return st;
    }
    *spectra = s;
    return PYR_OK;
}

pyr_status_t pyr_spectra_attach(pyr_problem_t *problem, pyr_spectra_t *spectra)
{
    if (!problem) return pyr_fail(PYR_ERR_ARG, "pyr_spectra_attach: problem is NULL");
    if (spectra) {
        const pyr_maxwell_params_t *a = &problem->maxwell, *b = &spectra->problem.maxwell;
        int same = problem->equation == PYR_EQ_MAXWELL && problem->dims == spectra->problem.dims && a->ndft == b->ndft && a->nflux == b->nflux &&
                   !memcmp(a->dft, b->dft, sizeof a->dft) && !memcmp(a->flux, b->flux, sizeof a->flux) && problem->steps == spectra->problem.steps;
        for (int x = 0; x < 3; x++) same &= pyr_problem_whole(problem, x) == spectra->problem.n[x];
        double dta = 0, dtb = 0;
        if (same && (pyr_maxwell_dt(problem, &dta) != PYR_OK || pyr_maxwell_dt(&spectra->problem, &dtb) != PYR_OK)) pyr_clear_error();
        same &= dta == dtb;
        if (!same)
            return pyr_fail(PYR_ERR_ARG, "pyr_spectra_attach: the spectra were made for another grid, time step, step count or set of monitors; "
                                         "make them with pyr_spectra_create for this problem");
    }
    problem->maxwell.spectra = spectra;
    return PYR_OK;
}

int pyr_spectra_count(const pyr_spectra_t *spectra) { return spectra ? spectra->count : 0; }

static pyr_status_t monitor_arg(const pyr_spectra_t *s, int m, const char *what)
{
    if (!s) return pyr_fail(PYR_ERR_ARG, "%s: spectra is NULL", what);
    if (m < 0 || m >= s->count) return pyr_fail(PYR_ERR_ARG, "%s: monitor %d; the spectra hold %d (0 .. %d)", what, m, s->count, s->count - 1);
    return PYR_OK;
}

pyr_status_t pyr_spectra_info(const pyr_spectra_t *spectra, int m, pyr_monitor_info_t *info)
{
    PYR_TRY(monitor_arg(spectra, m, "pyr_spectra_info"));
    if (!info) return pyr_fail(PYR_ERR_ARG, "pyr_spectra_info: info is NULL");
    const pyr_maxwell_monitor_t *mon = &spectra->mon[m];
    memset(info, 0, sizeof *info);
    snprintf(info->name, sizeof info->name, "%s", mon->name);
    info->flux = mon->flux;
    info->ncomponents = mon->ncomp;
    memcpy(info->components, mon->comp, sizeof info->components);
    info->axis = mon->axis;
    memcpy(info->lo, mon->lo, sizeof info->lo);
    memcpy(info->hi, mon->hi, sizeof info->hi);
    info->nnodes = mon->nnodes;
    info->nfreq = mon->nfreq;
    info->steps = spectra->steps[m];
    return PYR_OK;
}

pyr_status_t pyr_spectra_freqs(const pyr_spectra_t *spectra, int m, double *freqs)
{
    PYR_TRY(monitor_arg(spectra, m, "pyr_spectra_freqs"));
    if (!freqs) return pyr_fail(PYR_ERR_ARG, "pyr_spectra_freqs: freqs is NULL");
    memcpy(freqs, spectra->mon[m].freq, (size_t)spectra->mon[m].nfreq * sizeof *freqs);
    return PYR_OK;
}

pyr_status_t pyr_spectra_dft(const pyr_spectra_t *spectra, int m, double *re, double *im)
{
    PYR_TRY(monitor_arg(spectra, m, "pyr_spectra_dft"));
    const pyr_maxwell_monitor_t *mon = &spectra->mon[m];
    const size_t n = (size_t)(mon->ncomp * mon->nfreq * mon->nnodes);
    if (re) memcpy(re, spectra->re + spectra->offset[m], n * sizeof *re);
    if (im) memcpy(im, spectra->im + spectra->offset[m], n * sizeof *im);
    return PYR_OK;
}

void pyr_maxwell_spectra_store(pyr_spectra_t *s, int m, const double *re, const double *im, const unsigned char *own, double dt, int64_t steps)
{
    if (!s || m < 0 || m >= s->count) return;
    const pyr_maxwell_monitor_t *mon = &s->mon[m];
    double *dre = s->re + s->offset[m], *dim = s->im + s->offset[m];
    for (int c = 0; c < mon->ncomp; c++)
        for (int f = 0; f < mon->nfreq; f++)
            for (int64_t k = 0; k < mon->nnodes; k++) {
                if (!own[c * mon->nnodes + k]) continue;
                const int64_t i = ((int64_t)c * mon->nfreq + f) * mon->nnodes + k;
                dre[i] = re[i] * dt;
                dim[i] = im[i] * dt;
            }
    /* every run that owns a node of the monitor stores the same count */
    __atomic_store_n(&s->steps[m], steps, __ATOMIC_RELAXED);
}

/* Component c of a flux monitor averaged to the centre of cell (j, k) on its
 * plane at frequency f: along the normal, a component half a cell off the
 * plane is the mean of the two sides; along a tangential axis, a component on
 * the nodes is the mean of the cell's two ends. */
static void cell_value(const pyr_spectra_t *s, int m, int ci, int f, const int64_t at[3], double *vr, double *vi)
{
    const pyr_maxwell_monitor_t *mon = &s->mon[m];
    const int c = mon->comp[ci], dims = s->problem.dims;
    const int64_t nx = mon->hi[0] - mon->lo[0] + 1, ny = mon->hi[1] - mon->lo[1] + 1;
    int64_t span[3][2];
    int cnt[3];
    for (int a = 0; a < 3; a++) {
        span[a][0] = span[a][1] = at[a] - mon->lo[a];
        cnt[a] = 1;
        if (a >= dims) continue;
        if (a == mon->axis) {
            /* at[axis] is the plane's node, the box's upper node */
            if (half_along(c, a)) span[a][0] = span[a][1] - 1, cnt[a] = 2;
        } else if (!half_along(c, a)) {
            span[a][1] = span[a][0] + 1, cnt[a] = 2;
            if (span[a][1] > mon->hi[a] - mon->lo[a] && wraps(&s->problem, a, mon->lo[a], mon->hi[a])) span[a][1] = 0;
        }
    }
    const double *re = s->re + s->offset[m] + ((int64_t)ci * mon->nfreq + f) * mon->nnodes;
    const double *im = s->im + s->offset[m] + ((int64_t)ci * mon->nfreq + f) * mon->nnodes;
    double sr = 0, si = 0;
    for (int z = 0; z < cnt[2]; z++)
        for (int y = 0; y < cnt[1]; y++)
            for (int x = 0; x < cnt[0]; x++) {
                const int64_t k = (span[2][z] * ny + span[1][y]) * nx + span[0][x];
                sr += re[k];
                si += im[k];
            }
    const double w = 1.0 / (double)(cnt[0] * cnt[1] * cnt[2]);
    *vr = sr * w;
    *vi = si * w;
}

pyr_status_t pyr_spectra_flux(const pyr_spectra_t *spectra, int m, double *power)
{
    PYR_TRY(monitor_arg(spectra, m, "pyr_spectra_flux"));
    const pyr_maxwell_monitor_t *mon = &spectra->mon[m];
    if (!mon->flux) return pyr_fail(PYR_ERR_ARG, "pyr_spectra_flux: %s is a dft monitor; a flux monitor (monitor.fluxN) gives a power spectrum", mon->name);
    if (!power) return pyr_fail(PYR_ERR_ARG, "pyr_spectra_flux: power is NULL");
    const pyr_problem_t *p = &spectra->problem;
    const int a = mon->axis, b = (a + 1) % 3, c = (a + 2) % 3;
    /* (E x H*) . n = E_b H_c* - E_c H_b*: the index of each in the monitor's components (-1: not of the grid's mode) */
    int eb = -1, ec = -1, hb = -1, hc = -1;
    for (int i = 0; i < mon->ncomp; i++) {
        if (mon->comp[i] == b) eb = i;
        if (mon->comp[i] == c) ec = i;
        if (mon->comp[i] == 3 + b) hb = i;
        if (mon->comp[i] == 3 + c) hc = i;
    }
    double dA = 1;
    int64_t cells[3][2];
    for (int x = 0; x < 3; x++) {
        cells[x][0] = mon->lo[x];
        cells[x][1] = mon->hi[x];
        if (x == a) cells[x][0] = mon->hi[x];
        else if (x < p->dims) {
            cells[x][1] = wraps(p, x, mon->lo[x], mon->hi[x]) ? mon->hi[x] : mon->hi[x] - 1;
            dA *= pyr_problem_h(p, x);
        }
    }
    for (int f = 0; f < mon->nfreq; f++) {
        double sum = 0;
        int64_t at[3];
        for (at[2] = cells[2][0]; at[2] <= cells[2][1]; at[2]++)
            for (at[1] = cells[1][0]; at[1] <= cells[1][1]; at[1]++)
                for (at[0] = cells[0][0]; at[0] <= cells[0][1]; at[0]++) {
                    double er, ei, hr, hi_, s = 0;
                    if (eb >= 0 && hc >= 0) {
                        cell_value(spectra, m, eb, f, at, &er, &ei);
                        cell_value(spectra, m, hc, f, at, &hr, &hi_);
                        s += er * hr + ei * hi_;
                    }
                    if (ec >= 0 && hb >= 0) {
                        cell_value(spectra, m, ec, f, at, &er, &ei);
                        cell_value(spectra, m, hb, f, at, &hr, &hi_);
                        s -= er * hr + ei * hi_;
                    }
                    sum += s;
                }
        power[f] = sum * dA;
    }
    return PYR_OK;
}

pyr_status_t pyr_spectra_write_csv(const pyr_spectra_t *spectra, const char *path)
{
    if (!spectra || !path || !path[0]) return pyr_fail(PYR_ERR_ARG, "pyr_spectra_write_csv: spectra and a path are required");
    pyr_output_file_t *file = NULL;
    PYR_TRY(pyr_output_file_open(&file, path));
    FILE *out = pyr_output_file_stream(file);
    pyr_status_t st = PYR_OK;
    fprintf(out, "monitor,frequency,flux,re,im\n");
    for (int m = 0; m < spectra->count && st == PYR_OK; m++) {
        const pyr_maxwell_monitor_t *mon = &spectra->mon[m];
        if (mon->flux) {
            double *power = malloc((size_t)mon->nfreq * sizeof *power);
            if (!power) st = pyr_fail(PYR_ERR_NOMEM, "out of host memory for %s's spectrum", mon->name);
            if (st == PYR_OK) st = pyr_spectra_flux(spectra, m, power);
            for (int f = 0; f < mon->nfreq && st == PYR_OK; f++) fprintf(out, "%s,%.17g,%.17g,,\n", mon->name, mon->freq[f], power[f]);
            free(power);
        } else if (mon->nnodes == 1) {
            for (int c = 0; c < mon->ncomp; c++)
                for (int f = 0; f < mon->nfreq; f++) {
                    const int64_t i = spectra->offset[m] + (int64_t)c * mon->nfreq + f;
                    fprintf(out, "%s.%s,%.17g,,%.17g,%.17g\n", mon->name, comp_names[mon->comp[c]], mon->freq[f], spectra->re[i], spectra->im[i]);
                }
        }
    }
    if (st == PYR_OK && ferror(out)) st = pyr_fail(PYR_ERR_IO, "%s: writing failed", path);
    if (st != PYR_OK) {
        pyr_output_file_abort(&file);
        return st;
    }
    return pyr_output_file_commit(&file);
}

/* The flux monitors' power spectra as one line plot (the library's, as the
 * probes' plot): a line per flux monitor, frequency on x, P(f) on y, or with
 * reference (the spectra of the empty run of the two-run recipe: the same
 * monitors and frequencies) P / P0, the transmittance.  width: the image's
 * pixels across (0: 900), its height two thirds of it. */
pyr_status_t pyr_spectra_write_png(const pyr_spectra_t *spectra, const char *path, const pyr_spectra_t *reference, int width)
{
    if (!spectra || !path || !path[0]) return pyr_fail(PYR_ERR_ARG, "pyr_spectra_write_png: spectra and a path are required");
    if (width != 0 && (width < 200 || width > 8000))
        return pyr_fail(PYR_ERR_ARG, "pyr_spectra_write_png: width %d; give 200 .. 8000 pixels, or 0 for 900", width);
    int nflux = 0;
    for (int m = 0; m < spectra->count; m++) {
        const pyr_maxwell_monitor_t *mon = &spectra->mon[m];
        if (!mon->flux) continue;
        nflux++;
        if (!spectra->steps[m]) return pyr_fail(PYR_ERR_ARG, "pyr_spectra_write_png: %s holds no run's transforms; plot after a run", mon->name);
        if (!reference) continue;
        const pyr_maxwell_monitor_t *ref = m < reference->count ? &reference->mon[m] : NULL;
        if (!ref || !ref->flux || strcmp(ref->name, mon->name) || ref->nfreq != mon->nfreq ||
            memcmp(ref->freq, mon->freq, (size_t)mon->nfreq * sizeof *mon->freq))
            return pyr_fail(PYR_ERR_ARG, "pyr_spectra_write_png: the reference has no %s of the same frequencies; give the spectra of the same "
                                         "problem's run without the scatterer (the same monitors)",
                            mon->name);
        if (!reference->steps[m]) return pyr_fail(PYR_ERR_ARG, "pyr_spectra_write_png: the reference's %s holds no run's transforms", mon->name);
    }
    if (!nflux) return pyr_fail(PYR_ERR_ARG, "pyr_spectra_write_png: the problem has no flux monitor (monitor.fluxN = plane ...) to plot");
    pyr_plot_series_t series[MAX_MON];
    double *y[MAX_MON] = {NULL};
    int k = 0;
    pyr_status_t st = PYR_OK;
    for (int m = 0; m < spectra->count && st == PYR_OK; m++) {
        const pyr_maxwell_monitor_t *mon = &spectra->mon[m];
        if (!mon->flux) continue;
        double *p0 = NULL;
        y[k] = malloc((size_t)mon->nfreq * sizeof(double));
        if (reference) p0 = malloc((size_t)mon->nfreq * sizeof(double));
        if (!y[k] || (reference && !p0)) st = pyr_fail(PYR_ERR_NOMEM, "out of host memory for the plot of %s", mon->name);
        if (st == PYR_OK) st = pyr_spectra_flux(spectra, m, y[k]);
        if (st == PYR_OK && reference) st = pyr_spectra_flux(reference, m, p0);
        for (int f = 0; st == PYR_OK && reference && f < mon->nfreq; f++) y[k][f] = p0[f] != 0 ? y[k][f] / p0[f] : NAN;
        free(p0);
        series[k] = (pyr_plot_series_t){.label = mon->name, .x = mon->freq, .y = y[k], .n = mon->nfreq, .markers = mon->nfreq <= 40 ? 2 : 0};
        k++;
    }
    if (st == PYR_OK) {
        const pyr_plot_opts_t po = {.title = reference ? "flux spectra over the reference run's" : "flux spectra",
                                    .xlabel = "frequency f (c = 1)",
                                    .ylabel = reference ? "transmittance P / P0" : "power P(f)",
                                    .width = width,
                                    .height = width * 2 / 3};
        st = pyr_plot_write_png(path, series, k, &po);
    }
    for (int i = 0; i < k; i++) free(y[i]);
    return st;
}
