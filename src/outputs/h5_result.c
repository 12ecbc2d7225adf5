/* pyrgrid's HDF5 results (outputs/h5_result.h), written through the
 * format's calls of io/hdf5.h. */
#include "outputs/h5_result.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/hdf5.h"
#include "outputs/h5_monitors.h"
#include "outputs/xdmf.h"
#include "schemes/maxwell.h"
#include "schemes/poisson.h"

struct pyr_h5_writer {
    pyr_h5_file_t *file;
    char *path;
    pyr_h5_desc_t d;
    pyr_problem_t problem;
    char names[PYR_H5_MAX_FIELDS][32];
    int inputs_written; /* bit i */
    pyr_xdmf_step_t *entries; /* the steps written, in order: the sidecar's time series */
    int nentries, cap;
    int final_linked;
    pyr_h5_slab_fn slab; /* the fields' source when no process holds them whole */
    void *slab_user;
};

typedef struct {
    pyr_h5_writer_t *w;
    int i;
} slab_of_t;

static pyr_status_t fill_slab(void *user, int64_t first, int64_t count, void *buf)
{
    const slab_of_t *s = user;
    return s->w->slab(s->w->slab_user, s->i, first, count, buf);
}

void pyr_h5_writer_slabs(pyr_h5_writer_t *w, pyr_h5_slab_fn slab, void *user)
{
    if (!w) return;
    w->slab = slab;
    w->slab_user = user;
}

static const char *const axis_name[3] = {"x", "y", "z"};

/* The coordinate (dimension scale) of axis a for field i: the nodes ("x"),
 * or the nodes half a cell on ("x_half", a Yee grid's staggered
 * components); NULL for another offset, which gets none. */
static const char *scale_of(const pyr_h5_writer_t *w, int i, int a)
{
    static const char *const half[3] = {"x_half", "y_half", "z_half"};
    const double o = w->d.staggered ? w->d.offset[i][a] : 0.0;
    return o == 0.0 ? axis_name[a] : o == 0.5 ? half[a] : NULL;
}

/* What a reader shows of field i: its name, what it is, and its unit
 * (pyrgrid's problems are in units of their own: lengths and fields are
 * numbers, "1" in CF's notation). */
static void field_labels(const pyr_h5_writer_t *w, int i, char *long_name, size_t size)
{
    const char *n = w->names[i];
    const pyr_equation_t eq = w->problem.equation;
    if (eq == PYR_EQ_MAXWELL && (n[0] == 'E' || n[0] == 'H') && n[1] >= 'x' && n[1] <= 'z' && !n[2])
        snprintf(long_name, size, "%s field, %c component (c = eps0 = mu0 = 1)", n[0] == 'E' ? "electric" : "magnetic", n[1]);
    else if (eq == PYR_EQ_MAXWELL && !strcmp(n, "ca")) snprintf(long_name, size, "E update coefficient ca (E = ca E + cb curl H)");
    else if (eq == PYR_EQ_MAXWELL && !strcmp(n, "cb")) snprintf(long_name, size, "E update coefficient cb (E = ca E + cb curl H)");
    else if (eq == PYR_EQ_MAXWELL && !strcmp(n, "dh")) snprintf(long_name, size, "H update coefficient dh (H -= dh curl E)");
    else if (eq == PYR_EQ_POISSON && !strcmp(n, "f")) snprintf(long_name, size, "right-hand side f of -laplace(u) = f");
    else if (eq == PYR_EQ_POISSON && !strcmp(n, "u")) snprintf(long_name, size, "solution u of -laplace(u) = f");
    else if (eq == PYR_EQ_HEAT && !strcmp(n, "u")) snprintf(long_name, size, "temperature u of u_t = alpha^2 laplace(u)");
    else snprintf(long_name, size, "%s", n);
}

/* Attach field i's coordinates to dataset `name`, NumPy order (a leading
 * time axis for a time series). */
static pyr_status_t attach(pyr_h5_writer_t *w, int i, const char *name, int with_time)
{
    const char *sc[4];
    int r = 0;
    if (with_time) sc[r++] = "time";
    for (int a = w->problem.dims - 1; a >= 0; a--) sc[r++] = scale_of(w, i, a);
    return pyr_h5_attach_scales(w->file, name, r, sc);
}

/* A field's dataset with its labels, for an updated one its step and time,
 * and its offset on a staggered grid. */
static pyr_status_t write_field(pyr_h5_writer_t *w, int i, const char *name, const pyr_field_t *f, int with_time, int64_t step, double t)
{
    char long_name[96];
    field_labels(w, i, long_name, sizeof long_name);
    pyr_h5_attr_t a[5];
    int n = 0;
    a[n++] = pyr_h5_attr_str("long_name", long_name);
    a[n++] = pyr_h5_attr_str("units", "1");
    if (with_time) {
        a[n++] = pyr_h5_attr_i64("step", step);
        a[n++] = pyr_h5_attr_f64("t", t + (w->d.staggered ? w->d.time_offset[i] : 0.0));
    }
    if (w->d.staggered) a[n++] = pyr_h5_attr_f64v("offset", 3, w->d.offset[i]);
    if (w->slab) {
        slab_of_t so = {w, i};
        return pyr_h5_write_field_slabs(w->file, name, w->problem.dims, w->problem.n, w->problem.precision, w->d.compression, a, n, fill_slab, &so);
    }
    return pyr_h5_write_field(w->file, name, f, w->d.compression, a, n);
}

/* The coordinates x, y, z of the nodes (i h, as the XDMF sidecar's grid)
 * and those half a cell on that staggered fields use, as dimension scales. */
static pyr_status_t write_coordinates(pyr_h5_writer_t *w)
{
    const pyr_problem_t *p = &w->problem;
    pyr_status_t st = PYR_OK;
    for (int a = 0; a < p->dims && st == PYR_OK; a++) {
        for (int half = 0; half < 2 && st == PYR_OK; half++) {
            int used = !half;
            for (int i = 0; i < w->d.nfields && half; i++)
                if (w->d.staggered && w->d.offset[i][a] == 0.5) used = 1;
            if (!used) continue;
            const double h = pyr_problem_h(p, a);
            double *v = malloc((size_t)p->n[a] * sizeof *v);
            if (!v) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
            for (int64_t k = 0; k < p->n[a]; k++) v[k] = ((double)k + 0.5 * half) * h;
            char name[16], long_name[64];
            snprintf(name, sizeof name, "%s%s", axis_name[a], half ? "_half" : "");
            snprintf(long_name, sizeof long_name, "%s%s", axis_name[a], half ? " half a cell on from the nodes" : "");
            const pyr_h5_attr_t at[3] = {pyr_h5_attr_str("long_name", long_name), pyr_h5_attr_str("units", "1"),
                                         pyr_h5_attr_str("axis", a == 0 ? "X" : a == 1 ? "Y" : "Z")};
            st = pyr_h5_write_vector(w->file, name, p->n[a], v, NULL, at, 3);
            free(v);
            if (st == PYR_OK) st = pyr_h5_make_scale(w->file, name);
        }
    }
    return st;
}

static const char *rhs_name(pyr_rhs_kind_t k)
{
    return k == PYR_RHS_SINE ? "sine" : k == PYR_RHS_FILE ? "file" : "zero";
}

static pyr_status_t root_attributes(pyr_h5_writer_t *w, const char *plan_json, const char *initial)
{
    const pyr_problem_t *p = &w->problem;
    char fields[PYR_H5_MAX_FIELDS * 33] = "";
    for (int i = 0; i < w->d.nfields; i++) {
        if (i) strcat(fields, " ");
        strcat(fields, w->names[i]);
    }
    double h[3];
    for (int a = 0; a < 3; a++) h[a] = pyr_problem_h(p, a);
    pyr_h5_attr_t at[40];
    int n = 0;
    at[n++] = pyr_h5_attr_str("format", PYR_H5_FORMAT);
    at[n++] = pyr_h5_attr_i64("format_version", PYR_H5_FORMAT_VERSION);
    at[n++] = pyr_h5_attr_str("pyrgrid_version", pyr_version());
    at[n++] = pyr_h5_attr_str("equation", pyr_equation_name(p->equation));
    at[n++] = pyr_h5_attr_str("fields", fields);
    at[n++] = pyr_h5_attr_i64("dims", p->dims);
    at[n++] = pyr_h5_attr_i64v("n", 3, p->n);
    at[n++] = pyr_h5_attr_f64v("lengths", 3, p->length);
    at[n++] = pyr_h5_attr_f64v("h", 3, h);
    at[n++] = pyr_h5_attr_str("precision", pyr_precision_name(p->precision));
    at[n++] = pyr_h5_attr_i64("steps", w->d.end_step);
    char faces[64] = "", poisson_faces[512];
    int64_t neumann[6];
    double flux[6];
    if (p->equation == PYR_EQ_HEAT) {
        at[n++] = pyr_h5_attr_f64("alpha", p->heat.alpha);
        at[n++] = pyr_h5_attr_f64("dt", p->heat.dt);
    } else if (p->equation == PYR_EQ_POISSON) {
        at[n++] = pyr_h5_attr_i64("iterations", w->d.end_step);
        at[n++] = pyr_h5_attr_f64("tolerance", p->poisson.tolerance);
        at[n++] = pyr_h5_attr_i64("check_every", p->poisson.check_every);
        at[n++] = pyr_h5_attr_f64("omega", p->poisson.omega);
        at[n++] = pyr_h5_attr_str("rhs", rhs_name(p->poisson.rhs));
        if (p->poisson.rhs == PYR_RHS_FILE) at[n++] = pyr_h5_attr_str("rhs_file", p->poisson.rhs_file);
        /* the faces: their kinds (problem-file syntax), and per axis (low face, high face) 1 where Neumann and the outward flux du/dn */
        static const char *const neumann_name[3] = {"neumann_x", "neumann_y", "neumann_z"}, *const flux_name[3] = {"flux_x", "flux_y", "flux_z"};
        pyr_poisson_faces_text(p, poisson_faces, sizeof poisson_faces);
        at[n++] = pyr_h5_attr_str("boundary", !pyr_poisson_has_neumann(p) ? "dirichlet" : pyr_poisson_pure_neumann(p) ? "neumann" : "mixed");
        at[n++] = pyr_h5_attr_str("faces", poisson_faces);
        for (int a = 0; a < p->dims; a++) {
            for (int side = 0; side < 2; side++) {
                neumann[2 * a + side] = p->poisson.face[2 * a + side] == PYR_FACE_NEUMANN;
                flux[2 * a + side] = neumann[2 * a + side] ? p->poisson.flux[2 * a + side] : 0;
            }
            at[n++] = pyr_h5_attr_i64v(neumann_name[a], 2, neumann + 2 * a);
            at[n++] = pyr_h5_attr_f64v(flux_name[a], 2, flux + 2 * a);
        }
    } else if (p->equation == PYR_EQ_MAXWELL) {
        const pyr_maxwell_params_t *m = &p->maxwell;
        double dt = 0;
        if (pyr_maxwell_dt(p, &dt) != PYR_OK) pyr_clear_error();
        at[n++] = pyr_h5_attr_f64("dt", dt);
        at[n++] = pyr_h5_attr_f64("courant", m->courant);
        if (p->dims == 2) at[n++] = pyr_h5_attr_str("mode", m->te ? "te" : "tm");
        static const char *const face[6] = {"x-", "x+", "y-", "y+", "z-", "z+"};
        for (int f = 0; f < 2 * p->dims && m->cpml_cells > 0; f++)
            if ((m->cpml_faces >> f) & 1) snprintf(faces + strlen(faces), sizeof faces - strlen(faces), "%s%s", faces[0] ? "," : "", face[f]);
        at[n++] = pyr_h5_attr_str("boundary", faces[0] ? "cpml" : "pec");
        if (faces[0]) {
            at[n++] = pyr_h5_attr_i64("cpml_cells", m->cpml_cells);
            at[n++] = pyr_h5_attr_str("cpml_faces", faces);
        }
        at[n++] = pyr_h5_attr_f64("eps_r", m->eps_r);
        at[n++] = pyr_h5_attr_f64("sigma", m->sigma);
        at[n++] = pyr_h5_attr_f64("mu_r", m->mu_r);
        at[n++] = pyr_h5_attr_i64("shapes", m->nshapes);
        at[n++] = pyr_h5_attr_i64("sources", m->nsources);
        at[n++] = pyr_h5_attr_i64("probes", m->nprobes);
    }
    if (initial) at[n++] = pyr_h5_attr_str("initial", initial);
    if (plan_json) at[n++] = pyr_h5_attr_str("plan", plan_json);
    return pyr_h5_write_attrs(w->file, NULL, at, n, "writing the root attributes");
}

static void writer_free(pyr_h5_writer_t *w)
{
    free(w->entries);
    free(w->path);
    free(w);
}

void pyr_h5_writer_abort(pyr_h5_writer_t **wp)
{
    if (!wp || !*wp) return;
    pyr_h5_writer_t *w = *wp;
    pyr_h5_abort(&w->file);
    writer_free(w);
    *wp = NULL;
}

pyr_status_t pyr_h5_writer_open(const char *path, const pyr_h5_desc_t *desc, pyr_h5_writer_t **out)
{
    *out = NULL;
    PYR_TRY(pyr_h5_require(path));
    if (!desc || !desc->problem || desc->nfields < 1 || desc->nfields > PYR_H5_MAX_FIELDS)
        return pyr_fail(PYR_ERR_ARG, "pyr_h5_writer_open: a problem and 1 to %d fields are needed", PYR_H5_MAX_FIELDS);
    if (desc->compression < 0 || desc->compression > 9)
        return pyr_fail(PYR_ERR_CONFIG, "output.compression = %d: use 0 (none) to 9", desc->compression);
    if (desc->compression > 0 && !pyr_h5_has_gzip())
        return pyr_fail(PYR_ERR_UNSUPPORTED, "output.compression = %d: this HDF5 has no gzip filter; use output.compression = 0",
                        desc->compression);
    pyr_h5_writer_t *w = calloc(1, sizeof *w);
    if (!w) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    w->d = *desc;
    w->problem = *desc->problem;
    w->d.problem = &w->problem;
    for (int i = 0; i < desc->nfields; i++) {
        snprintf(w->names[i], sizeof w->names[i], "%s", desc->name[i] ? desc->name[i] : "u");
        w->d.name[i] = w->names[i];
    }
    w->d.plan_json = NULL; /* written now, not kept */
    w->d.initial = NULL;
    w->path = strdup(path);
    if (!w->path) {
        writer_free(w);
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    }
    pyr_status_t st = pyr_h5_create(path, &w->file);
    if (st == PYR_OK) st = root_attributes(w, desc->plan_json, desc->initial);
    if (st == PYR_OK) st = write_coordinates(w);
    if (st != PYR_OK) {
        pyr_h5_writer_abort(&w);
        return st;
    }
    *out = w;
    return PYR_OK;
}

static pyr_status_t check_field(pyr_h5_writer_t *w, const pyr_field_t *f, const char *name)
{
    if (!f || !f->data) return pyr_fail(PYR_ERR_ARG, "writing %s: field %s is missing", w->path, name);
    if (w->slab) return PYR_OK; /* a part: its values come from the slabs */
    for (int a = 0; a < 3; a++)
        if (f->n[a] != w->problem.n[a] || f->dims != w->problem.dims || f->precision != w->problem.precision)
            return pyr_fail(PYR_ERR_ARG, "writing %s: field %s does not match the problem's grid", w->path, name);
    return PYR_OK;
}

pyr_status_t pyr_h5_writer_input(pyr_h5_writer_t *w, int i, const pyr_field_t *field)
{
    if (!w || i < 0 || i >= w->d.nfields) return pyr_fail(PYR_ERR_ARG, "pyr_h5_writer_input: no field %d", i);
    PYR_TRY(check_field(w, field, w->names[i]));
    if (w->inputs_written & (1 << i)) return PYR_OK;
    pyr_status_t st = write_field(w, i, w->names[i], field, 0, 0, 0);
    if (st == PYR_OK) st = attach(w, i, w->names[i], 0);
    if (st == PYR_OK) w->inputs_written |= 1 << i;
    return st;
}

static pyr_status_t add_entry(pyr_h5_writer_t *w, int64_t step, double t, const char *group)
{
    if (w->nentries == w->cap) {
        int cap = w->cap ? 2 * w->cap : 16;
        pyr_xdmf_step_t *e = realloc(w->entries, (size_t)cap * sizeof *e);
        if (!e) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
        w->entries = e;
        w->cap = cap;
    }
    pyr_xdmf_step_t *e = &w->entries[w->nentries++];
    e->step = step;
    e->t = t;
    snprintf(e->group, sizeof e->group, "%s", group);
    return PYR_OK;
}

pyr_status_t pyr_h5_writer_snapshot(pyr_h5_writer_t *w, const pyr_field_t *const *fields, int64_t step, double t)
{
    if (!w || !fields) return pyr_fail(PYR_ERR_ARG, "pyr_h5_writer_snapshot: writer and fields are required");
    for (int i = 0; i < w->d.nfields; i++)
        if (w->d.updated[i]) PYR_TRY(check_field(w, fields[i], w->names[i]));
    pyr_status_t st = PYR_OK;
    char name[128], group[64];
    snprintf(group, sizeof group, "snapshots/%06lld", (long long)step);
    for (int i = 0; i < w->d.nfields && st == PYR_OK; i++) {
        if (!w->d.updated[i]) continue;
        pyr_h5_snapshot_name(step, w->names[i], name, sizeof name);
        st = write_field(w, i, name, fields[i], 1, step, t);
    }
    if (st == PYR_OK) {
        const pyr_h5_attr_t at[2] = {pyr_h5_attr_i64("step", step), pyr_h5_attr_f64("t", t)};
        st = pyr_h5_write_attrs(w->file, group, at, 2, "writing a snapshot's attributes");
    }
    /* a snapshot is on disk as it is made: a reader of the temporary, or a crash, finds whole ones */
    if (st == PYR_OK) st = pyr_h5_flush(w->file, "flushing a snapshot");
    if (st == PYR_OK) st = add_entry(w, step, t, group);
    return st;
}

/* The steps written as a time axis ("time", its values the t of each step;
 * Poisson's the sweep count, as in the sidecar; "step" along it) and each
 * updated field's steps stacked along it (NAME_series, a virtual dataset of
 * the snapshots and the final field, no copy): what netCDF-4 readers such
 * as xarray open as NAME(time, z, y, x). */
static pyr_status_t write_series(pyr_h5_writer_t *w)
{
    const int n = w->nentries;
    double *tv = malloc((size_t)n * sizeof *tv);
    int64_t *sv = malloc((size_t)n * sizeof *sv);
    char(*src)[128] = malloc((size_t)n * sizeof *src);
    const char **srcp = malloc((size_t)n * sizeof *srcp);
    pyr_status_t st = PYR_OK;
    if (!tv || !sv || !src || !srcp) st = pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    const int poisson = w->problem.equation == PYR_EQ_POISSON;
    for (int e = 0; e < n && st == PYR_OK; e++) {
        tv[e] = poisson ? (double)w->entries[e].step : w->entries[e].t;
        sv[e] = w->entries[e].step;
    }
    if (st == PYR_OK) {
        const pyr_h5_attr_t at[3] = {pyr_h5_attr_str("long_name", poisson ? "sweeps" : "time t"), pyr_h5_attr_str("units", "1"),
                                     pyr_h5_attr_str("axis", "T")};
        st = pyr_h5_write_vector(w->file, "time", n, tv, NULL, at, 3);
    }
    if (st == PYR_OK) st = pyr_h5_make_scale(w->file, "time");
    if (st == PYR_OK) {
        const pyr_h5_attr_t at[2] = {pyr_h5_attr_str("long_name", "step"), pyr_h5_attr_str("units", "1")};
        st = pyr_h5_write_vector(w->file, "step", n, NULL, sv, at, 2);
    }
    if (st == PYR_OK) {
        const char *sc[1] = {"time"};
        st = pyr_h5_attach_scales(w->file, "step", 1, sc);
    }
    for (int i = 0; i < w->d.nfields && st == PYR_OK; i++) {
        if (!w->d.updated[i]) continue;
        for (int e = 0; e < n; e++) {
            if (w->entries[e].group[0]) pyr_h5_snapshot_name(w->entries[e].step, w->names[i], src[e], sizeof src[e]);
            else snprintf(src[e], sizeof src[e], "%s", w->names[i]);
            srcp[e] = src[e];
        }
        char name[48], long_name[96];
        snprintf(name, sizeof name, "%s_series", w->names[i]);
        field_labels(w, i, long_name, sizeof long_name);
        pyr_h5_attr_t at[4];
        int na = 0;
        at[na++] = pyr_h5_attr_str("long_name", long_name);
        at[na++] = pyr_h5_attr_str("units", "1");
        /* H lags E by half a step: its values are at time + time_offset */
        if (w->d.staggered) at[na++] = pyr_h5_attr_f64("time_offset", w->d.time_offset[i]);
        if (w->d.staggered) at[na++] = pyr_h5_attr_f64v("offset", 3, w->d.offset[i]);
        st = pyr_h5_write_stack(w->file, name, n, srcp, at, na);
        if (st == PYR_OK) st = attach(w, i, name, 1);
    }
    free(srcp);
    free(src);
    free(sv);
    free(tv);
    return st;
}

pyr_status_t pyr_h5_writer_final(pyr_h5_writer_t *w, const pyr_field_t *const *fields, int64_t step, double t, const char *run_json)
{
    if (!w || !fields) return pyr_fail(PYR_ERR_ARG, "pyr_h5_writer_final: writer and fields are required");
    for (int i = 0; i < w->d.nfields; i++)
        if (w->d.updated[i]) PYR_TRY(check_field(w, fields[i], w->names[i]));
    pyr_status_t st = PYR_OK;
    /* the last snapshot holds these very fields: link, do not copy */
    const int link = w->nentries > 0 && w->entries[w->nentries - 1].step == step;
    for (int i = 0; i < w->d.nfields && st == PYR_OK; i++) {
        if (!w->d.updated[i]) continue;
        if (link) {
            char name[128];
            pyr_h5_snapshot_name(step, w->names[i], name, sizeof name);
            st = pyr_h5_link(w->file, name, w->names[i], "linking the final field");
        } else {
            st = write_field(w, i, w->names[i], fields[i], 1, step, t);
        }
    }
    if (st == PYR_OK) {
        /* a whole run until pyr_h5_writer_incomplete says otherwise: a reader asks /complete, never the step count */
        pyr_h5_attr_t at[5] = {pyr_h5_attr_i64("step", step), pyr_h5_attr_f64("t", t), pyr_h5_attr_i64("complete", 1),
                               pyr_h5_attr_i64("steps_done", step), pyr_h5_attr_str("run", run_json)};
        st = pyr_h5_write_attrs(w->file, NULL, at, run_json ? 5 : 4, "writing the root attributes");
    }
    if (st == PYR_OK && !link) st = add_entry(w, step, t, "");
    w->final_linked = link;
    for (int i = 0; i < w->d.nfields && st == PYR_OK; i++)
        if (w->d.updated[i]) st = attach(w, i, w->names[i], 0);
    if (st == PYR_OK) st = write_series(w);
    return st;
}

pyr_status_t pyr_h5_writer_incomplete(pyr_h5_writer_t *w, int64_t step)
{
    if (!w) return pyr_fail(PYR_ERR_ARG, "pyr_h5_writer_incomplete: no writer");
    const pyr_h5_attr_t at[2] = {pyr_h5_attr_i64("complete", 0), pyr_h5_attr_i64("steps_done", step)};
    return pyr_h5_write_attrs(w->file, NULL, at, 2, "marking the file incomplete");
}

pyr_status_t pyr_h5_writer_commit(pyr_h5_writer_t **wp)
{
    if (!wp || !*wp) return pyr_fail(PYR_ERR_ARG, "pyr_h5_writer_commit: no writer");
    pyr_h5_writer_t *w = *wp;
    pyr_status_t st = pyr_h5_commit(&w->file);
    if (st == PYR_OK && w->d.xdmf && w->problem.dims >= 2) {
        char xmf[PYR_PATH_MAX + 8];
        pyr_h5_sidecar_path(w->path, xmf, sizeof xmf);
        const pyr_xdmf_t x = {.problem = &w->problem,
                              .h5_path = w->path,
                              .nfields = w->d.nfields,
                              .name = w->d.name,
                              .updated = w->d.updated,
                              .inputs = (unsigned)w->inputs_written,
                              .steps = w->entries,
                              .nsteps = w->nentries};
        st = pyr_xdmf_write(xmf, &x);
    }
    writer_free(w);
    *wp = NULL;
    return st;
}

pyr_h5_file_t *pyr_h5_writer_file(pyr_h5_writer_t *w) { return w ? w->file : NULL; }
