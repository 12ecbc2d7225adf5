/* Results and reports (pyrgrid_output.h): a run's fields by output.field's
 * extension (.npy, or .h5 with snapshots inside and an .xmf sidecar),
 * snapshots numbered from a restart's step, and the JSON reports of the
 * pyrgrid program's commands. */
#include "pyrgrid_output.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "io/hdf5.h"
#include "io/json.h"
#include "outputs/h5_monitors.h"
#include "outputs/h5_result.h"
#include "outputs/report.h"
#include "multi/ranks.h"
#include "plan/plan.h"
#include "schemes/maxwell.h"
#ifdef PYR_HAVE_FRAMES
#include "pyrgrid_frames.h"
#include "pyrgrid_frames_io.h"
#endif

struct pyr_result {
    const pyr_problem_t *problem;
    pyr_problem_outputs_t out;
    pyr_field_t **fields; /* every field of the scheme, in its order (inputs may be NULL for .npy) */
    int nfields;
    int h5;               /* output.field is HDF5 */
    pyr_h5_writer_t *writer;
    int map[PYR_H5_MAX_FIELDS]; /* the file's field k is the scheme's field map[k] (Maxwell: those its problem uses) */
    int nmap;
    char snap_base[PYR_PATH_MAX]; /* .npy snapshots: NAME_000200.npy */
};

int pyr_result_is_h5(const pyr_problem_outputs_t *o) { return o->field && o->field[0] && pyr_h5_is_path(o->field); }

void pyr_result_sidecar(const pyr_problem_t *p, const pyr_problem_outputs_t *o, char *out, size_t size)
{
    out[0] = 0;
    if (pyr_result_is_h5(o) && p->dims >= 2) pyr_h5_sidecar_path(o->field, out, size);
}

void pyr_result_base(const pyr_problem_outputs_t *o, char *out, size_t size)
{
    snprintf(out, size, "%s", o->field ? o->field : "");
    const size_t n = strlen(out);
    if (n > 4 && !strcmp(out + n - 4, ".npy")) out[n - 4] = 0;
}

int64_t pyr_result_step_of(const pyr_problem_outputs_t *o, int64_t done) { return o->start_step + done; }

double pyr_result_time_of(const pyr_problem_t *p, const pyr_problem_outputs_t *o, int64_t done)
{
    /* heat: t advances by dt a step from the restart's time; Maxwell: E's time (no restarts); Poisson has none */
    if (p->equation == PYR_EQ_MAXWELL) {
        double dt = 0;
        if (pyr_maxwell_dt(p, &dt) != PYR_OK) pyr_clear_error();
        return (double)(o->start_step + done) * dt;
    }
    if (p->equation != PYR_EQ_HEAT) return 0.0;
    return o->start_t + (double)done * p->heat.dt;
}

static void shape_of(const pyr_field_t *f, int64_t shape[3])
{
    for (int d = 0; d < f->dims; d++) shape[d] = f->n[f->dims - 1 - d];
}

/* ------------------------------------------------------------ outputs' names */

/* path's suffix (from its last '.' in its last component), or "". */
static const char *suffix_of(const char *path)
{
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    return dot && (!slash || dot > slash) && dot[1] ? dot : "";
}

/* A name whose suffix says what is written: a path that exists and is no
 * regular file (a device, a FIFO, a directory) is left to the path checks
 * (pyr_check_outputs), which write a sink in place or refuse the rest. */
static pyr_status_t check_suffix(const char *key, const char *path, const char *const *ok, int nok, const char *works, const char *stem_hint)
{
    if (!path || !path[0]) return PYR_OK;
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) return PYR_OK;
    const char *suf = suffix_of(path);
    for (int i = 0; i < nok; i++)
        if (!strcasecmp(suf, ok[i])) return PYR_OK;
    const size_t stem = strlen(path) - strlen(suf);
    if (suf[0])
        return pyr_fail(PYR_ERR_CONFIG, "%s = %s: the program does not write %s files; it writes %s; name it e.g. %.*s%s", key, path, suf,
                        works, (int)stem, path, stem_hint);
    return pyr_fail(PYR_ERR_CONFIG, "%s = %s: the name has no suffix to say what to write; the program writes %s; name it e.g. %s%s", key,
                    path, works, path, stem_hint);
}

pyr_status_t pyr_result_check_names(const pyr_problem_t *p, const pyr_problem_outputs_t *o)
{
    if (!p || !o) return pyr_fail(PYR_ERR_ARG, "pyr_result_check_names: a problem and its outputs are required");
    static const char *const field[] = {".npy", ".h5", ".hdf5", ".he5"}, *const png[] = {".png"}, *const csv[] = {".csv"};
    PYR_TRY(check_suffix("output.field", o->field, field, 4,
                         p->equation == PYR_EQ_MAXWELL ? ".npy (NumPy: NAME_Ex.npy ... one per component) or .h5, .hdf5, .he5 (HDF5: every field, "
                                                         "snapshots inside, an XDMF sidecar)"
                                                       : ".npy (NumPy: the state field) or .h5, .hdf5, .he5 (HDF5: every field, snapshots "
                                                         "inside, an XDMF sidecar)",
                         ".npy"));
    PYR_TRY(check_suffix("output.image", o->image, png, 1, ".png (a heat map, or a plot of u(x) in 1D)", ".png"));
    PYR_TRY(check_suffix("output.probes_png", o->probes_png, png, 1, ".png (a plot of the probes' series)", ".png"));
    PYR_TRY(check_suffix("output.spectra_png", o->spectra_png, png, 1, ".png (a plot of the flux monitors' spectra)", ".png"));
    PYR_TRY(check_suffix("output.probes", o->probes, csv, 1, ".csv (one line per step: step, t and each probe's value)", ".csv"));
    PYR_TRY(check_suffix("output.spectra", o->spectra, csv, 1, ".csv (a line per monitor and frequency: monitor, frequency, flux, re, im)",
                         ".csv"));
    return PYR_OK;
}

static pyr_status_t h5_finish(pyr_result_t *r, const pyr_run_info_t *run, int complete);

/* What an HDF5 result of p holds: the fields of fields[] it stores (the
 * file's field k is the scheme's map[k]), their names and offsets. */
static pyr_status_t h5_desc(const pyr_problem_t *p, const pyr_problem_outputs_t *o, pyr_field_t *const *fields, int nfields, int map[PYR_H5_MAX_FIELDS],
                            int *nmap, pyr_h5_desc_t *d)
{
    memset(d, 0, sizeof *d);
    *nmap = 0;
    d->problem = p;
    /* heat and Poisson: every field; Maxwell: the components of its grid's mode and the coefficients it
     * was given (those that vary per node), never its CPML auxiliaries */
    for (int i = 0; i < nfields; i++) {
        if (p->equation == PYR_EQ_MAXWELL && (i >= PYR_MAXWELL_PSI0 || !pyr_problem_field_used(p, i) || !fields[i])) continue;
        if (*nmap == PYR_H5_MAX_FIELDS) return pyr_fail(PYR_ERR_INTERNAL, "output.field: more than %d fields", PYR_H5_MAX_FIELDS);
        const int k = (*nmap)++;
        map[k] = i;
        d->name[k] = pyr_scheme_field_name(p->equation, i);
        d->updated[k] = pyr_scheme_field_updated(p->equation, i);
        if (p->equation == PYR_EQ_MAXWELL) {
            /* the Yee offsets (pyrgrid.h): E_c half a cell along c, H_c half a cell along the other two;
             * H lags E by half a step; a coefficient applies at its node */
            d->staggered = 1;
            for (int a = 0; a < 3 && i < 6; a++) d->offset[k][a] = a < p->dims && ((i < 3) == (a == i % 3)) ? 0.5 : 0.0;
            if (i >= 3 && i < 6) {
                double dt = 0;
                if (pyr_maxwell_dt(p, &dt) != PYR_OK) pyr_clear_error();
                d->time_offset[k] = -0.5 * dt;
            }
        }
    }
    d->nfields = *nmap;
    d->compression = o->compression;
    d->end_step = o->end_step;
    d->xdmf = 1;
    static const char *const kinds[] = {"sine", "gauss", "random", "file", "zero"};
    d->initial = p->init == PYR_INIT_FILE ? p->init_file : p->init <= PYR_INIT_ZERO ? kinds[p->init] : "";
    return PYR_OK;
}

/* The file's field k is an input stored once (the problem uses it and it is there). */
static int h5_stores_input(const pyr_problem_t *p, const pyr_h5_desc_t *d, pyr_field_t *const *fields, const int *map, int k)
{
    return !d->updated[k] && fields[map[k]] && pyr_problem_field_used(p, map[k]);
}

static pyr_status_t result_open(pyr_result_t *r, const pyr_problem_t *p, const pyr_problem_outputs_t *o, const pyr_plan_t *plan,
                                pyr_field_t **fields, int nfields)
{
    r->problem = p;
    r->out = *o;
    r->fields = fields;
    r->nfields = nfields;
    r->h5 = pyr_result_is_h5(o);
    pyr_result_base(o, r->snap_base, sizeof r->snap_base);
    if (!r->h5) return PYR_OK;
    pyr_h5_desc_t d;
    PYR_TRY(h5_desc(p, o, fields, nfields, r->map, &r->nmap, &d));
    pyr_json_t j;
    pyr_json_init(&j, 0);
    pyr_report_plan(&j, NULL, plan);
    d.plan_json = pyr_json_text(&j);
    pyr_status_t st = pyr_h5_writer_open(o->field, &d, &r->writer);
    pyr_json_free(&j);
    if (st != PYR_OK) return pyr_fail_context(st, "output.field: ");
    /* inputs (Poisson's f, Maxwell's coefficients) are stored once, when the problem uses them */
    for (int k = 0; k < r->nmap && st == PYR_OK; k++)
        if (h5_stores_input(p, &d, fields, r->map, k)) st = pyr_h5_writer_input(r->writer, k, fields[r->map[k]]);
    if (st != PYR_OK) {
        pyr_h5_writer_abort(&r->writer);
        return pyr_fail_context(st, "output.field: ");
    }
    return PYR_OK;
}

int pyr_result_h5_order(const pyr_problem_t *p, pyr_field_t *const *fields, int nfields, int order[PYR_H5_MAX_FIELDS], int file_index[PYR_H5_MAX_FIELDS])
{
    pyr_problem_outputs_t o;
    memset(&o, 0, sizeof o);
    pyr_h5_desc_t d;
    int map[PYR_H5_MAX_FIELDS], nmap = 0, n = 0;
    if (h5_desc(p, &o, fields, nfields, map, &nmap, &d) != PYR_OK) {
        pyr_clear_error();
        return -1;
    }
    /* as result_open and h5_finish write them: the inputs, then the final updated fields */
    for (int k = 0; k < nmap; k++)
        if (h5_stores_input(p, &d, fields, map, k)) order[n] = map[k], file_index[n++] = k;
    for (int k = 0; k < nmap; k++)
        if (d.updated[k]) order[n] = map[k], file_index[n++] = k;
    return n;
}

pyr_status_t pyr_result_write_h5_slabs(const pyr_problem_t *p, const pyr_problem_outputs_t *o, pyr_field_t *const *fields, int nfields,
                                       const pyr_run_info_t *run, const char *plan_json, pyr_h5_slab_fn slab, void *user)
{
    if (!p || !o || !fields || !run || !slab) return pyr_fail(PYR_ERR_ARG, "pyr_result_write_h5_slabs: a problem, its outputs, fields, the run and slabs are required");
    pyr_result_t r;
    memset(&r, 0, sizeof r);
    r.problem = p;
    r.out = *o;
    r.fields = (pyr_field_t **)fields;
    r.nfields = nfields;
    r.h5 = 1;
    pyr_h5_desc_t d;
    PYR_TRY(h5_desc(p, o, fields, nfields, r.map, &r.nmap, &d));
    d.plan_json = plan_json;
    pyr_status_t st = pyr_h5_writer_open(o->field, &d, &r.writer);
    if (st == PYR_OK) pyr_h5_writer_slabs(r.writer, slab, user);
    for (int k = 0; k < r.nmap && st == PYR_OK; k++)
        if (h5_stores_input(p, &d, fields, r.map, k)) st = pyr_h5_writer_input(r.writer, k, fields[r.map[k]]);
    if (st != PYR_OK) {
        pyr_h5_writer_abort(&r.writer);
        return pyr_fail_context(st, "output.field: ");
    }
    st = h5_finish(&r, run, 1);
    if (st != PYR_OK) pyr_fail_context(st, "output.field: ");
    return st;
}

pyr_status_t pyr_result_open(pyr_result_t **result, const pyr_problem_t *p, const pyr_problem_outputs_t *o, const pyr_plan_t *plan,
                             pyr_field_t **fields, int nfields)
{
    if (!result) return pyr_fail(PYR_ERR_ARG, "pyr_result_open: result is NULL");
    *result = NULL;
    if (!p || !o || !fields || nfields < 1)
        return pyr_fail(PYR_ERR_ARG, "pyr_result_open: a problem, its outputs and the run's fields are required");
    PYR_TRY(pyr_result_check_names(p, o));
    pyr_result_t *r = calloc(1, sizeof *r);
    if (!r) return pyr_fail(PYR_ERR_NOMEM, "out of host memory opening output.field");
    pyr_status_t st = result_open(r, p, o, plan, fields, nfields);
    if (st != PYR_OK) {
        free(r);
        return st;
    }
    *result = r;
    return PYR_OK;
}

/* The ranks of an MPI run write an HDF5 result through this writer (multi/ranks.h), which is a floor
 * above them: handed over when the library is loaded. */
static const pyr_ranks_h5_writer_t ranks_h5_writer = {sizeof(pyr_ranks_h5_writer_t), pyr_result_h5_order, pyr_result_write_h5_slabs};

__attribute__((constructor)) static void attach_to_ranks(void) { pyr_ranks_attach_h5(&ranks_h5_writer); }

/* The fields in the file's order. */
static void file_fields(const pyr_result_t *r, const pyr_field_t *out[PYR_H5_MAX_FIELDS])
{
    for (int k = 0; k < r->nmap; k++) out[k] = r->fields[r->map[k]];
}

pyr_status_t pyr_result_snapshot(pyr_result_t *r, int64_t done)
{
    if (!r) return pyr_fail(PYR_ERR_ARG, "pyr_result_snapshot: no result (pyr_result_open)");
    const int64_t step = pyr_result_step_of(&r->out, done);
    const pyr_field_t *ff[PYR_H5_MAX_FIELDS];
    file_fields(r, ff);
    pyr_status_t st;
    if (r->h5) {
        st = pyr_h5_writer_snapshot(r->writer, ff, step, pyr_result_time_of(r->problem, &r->out, done));
    } else {
        char path[PYR_PATH_MAX + 32];
        snprintf(path, sizeof path, "%s_%06lld.npy", r->snap_base, (long long)step);
        const pyr_field_t *f = r->fields[0];
        int64_t shape[3];
        shape_of(f, shape);
        st = pyr_npy_write(path, f->dims, shape, f->precision, f->data);
    }
    return st == PYR_OK ? PYR_OK : pyr_fail_context(st, "output.every: ");
}

/* ------------------------------------------------------------ snapshots' names */

static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The directory part of path ("." when it has none) into out. */
static void dir_of(const char *path, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(out, size, ".");
    else if (slash == path) snprintf(out, size, "/");
    else snprintf(out, size, "%.*s", (int)(slash - path), path);
}

/* The step of the snapshot that the file name `fname` is (PREFIX_000010.npy,
 * written as the run writes it: stem is PREFIX's last component), when the
 * run writes that step; else -1. */
static int64_t snapshot_step(const pyr_problem_outputs_t *cfg, const char *stem, const char *fname)
{
    const size_t n = strlen(stem);
    if (strncmp(fname, stem, n) || fname[n] != '_') return -1;
    const char *d = fname + n + 1;
    const size_t digits = strspn(d, "0123456789");
    if (digits < 6 || digits > 19 || strcmp(d + digits, ".npy")) return -1;
    const long long step = strtoll(d, NULL, 10);
    char canon[32];
    /* another spelling of the number (more leading zeros, past the largest step) names another file */
    if ((size_t)snprintf(canon, sizeof canon, "%06lld", step) != digits || strncmp(canon, d, digits)) return -1;
    if (step <= cfg->start_step || step > cfg->end_step || step % cfg->every) return -1;
    return step;
}

/* The snapshot path (PREFIX_000010.npy) whose file name fname is, for the
 * prefixes in directory dir (NULL: any); 0 when it is none. */
static int snapshot_named(const pyr_problem_outputs_t *cfg, const char *const *prefixes, int nprefixes, const char *dir, const char *fname,
                          char *snap, size_t size)
{
    char d[PYR_PATH_MAX];
    for (int i = 0; i < nprefixes; i++) {
        if (dir) {
            dir_of(prefixes[i], d, sizeof d);
            if (strcmp(d, dir)) continue;
        }
        const int64_t step = snapshot_step(cfg, base_of(prefixes[i]), fname);
        if (step < 0) continue;
        snprintf(snap, size, "%s_%06lld.npy", prefixes[i], (long long)step);
        return 1;
    }
    return 0;
}

/* A snapshot, other than `except`, that writing `path` would write too: path
 * names it, or so does a link of path's chain of symbolic links (a link to
 * a snapshot that exists, or to one not written yet).  Its path into snap;
 * 0 when there is none. */
static int snapshot_reached(const pyr_problem_outputs_t *cfg, const char *const *prefixes, int nprefixes, const char *path, const char *except,
                            char *snap, size_t size)
{
    char cur[PYR_PATH_MAX], link[PYR_PATH_MAX], dir[PYR_PATH_MAX];
    const size_t len = strlen(path);
    if (len >= sizeof cur) return 0; /* longer than any path the run could write */
    memcpy(cur, path, len + 1);
    for (int hop = 0; hop < 40; hop++) {
        if (snapshot_named(cfg, prefixes, nprefixes, NULL, base_of(cur), snap, size) && (!except || strcmp(snap, except)) &&
            pyr_same_file(snap, path))
            return 1;
        const ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n <= 0) return 0;
        link[n] = 0;
        if (link[0] == '/') {
            snprintf(cur, sizeof cur, "%s", link);
        } else {
            dir_of(cur, dir, sizeof dir);
            if ((size_t)snprintf(cur, sizeof cur, "%s/%s", dir, link) >= sizeof cur) return 0;
        }
    }
    return 0;
}

static pyr_status_t snapshot_clash(const pyr_problem_outputs_t *cfg, const char *snap, int exists, const pyr_named_path_t *f, int input)
{
    const char *role = input ? "the input " : "";
    const char *harm = input ? "writing the snapshot would destroy the input" : "one would overwrite the other";
    if (exists)
        return pyr_fail(PYR_ERR_IO, "output.every = %lld writes the snapshot %s, which exists already and is the same file as %s%s = %s "
                        "(a link); %s; remove %s or choose another output.field", (long long)cfg->every, snap, role, f->name, f->path,
                        harm, snap);
    return pyr_fail(PYR_ERR_IO, "output.every = %lld writes the snapshot %s, which is the same file as %s%s = %s; %s; %s",
                    (long long)cfg->every, snap, role, f->name, f->path, harm,
                    input ? "choose another output.field or rename that file"
                          : "give each output its own name (output.field names the snapshots)");
}

pyr_status_t pyr_result_check_snapshots(const pyr_problem_outputs_t *cfg, const char *const *prefixes, int nprefixes, const pyr_named_path_t *outs,
                                     int nout, const pyr_named_path_t *ins, int nin)
{
    if (cfg->every <= 0) return PYR_OK;
    char snap[PYR_PATH_MAX + 32], other[PYR_PATH_MAX + 32];
    /* an input or output that is a snapshot by its name, or by links to one (written or not) */
    for (int k = 0; k < nout + nin; k++) {
        const pyr_named_path_t *f = k < nout ? &outs[k] : &ins[k - nout];
        if (!f->path || !f->path[0] || (k < nout && pyr_is_char_device(f->path))) continue;
        if (snapshot_reached(cfg, prefixes, nprefixes, f->path, NULL, snap, sizeof snap))
            return snapshot_clash(cfg, snap, 0, f, k >= nout);
    }
    /* a snapshot that exists already (an earlier run's, or a link put there) and is an input or output, or a link to
     * another snapshot: found by reading its directory, once for each directory of the prefixes */
    char dir[PYR_PATH_MAX], seen[PYR_PATH_MAX];
    for (int i = 0; i < nprefixes; i++) {
        dir_of(prefixes[i], dir, sizeof dir);
        int again = 0;
        for (int j = 0; j < i && !again; j++) {
            dir_of(prefixes[j], seen, sizeof seen);
            again = !strcmp(seen, dir);
        }
        DIR *d = again ? NULL : opendir(dir);
        if (!d) continue; /* a directory that is not there holds no snapshot (the outputs' checks say whether it could be written) */
        pyr_status_t st = PYR_OK;
        for (struct dirent *e; st == PYR_OK && (e = readdir(d)) != NULL;) {
            if (!snapshot_named(cfg, prefixes, nprefixes, dir, e->d_name, snap, sizeof snap)) continue;
            for (int k = 0; k < nout + nin && st == PYR_OK; k++) {
                const pyr_named_path_t *f = k < nout ? &outs[k] : &ins[k - nout];
                if (!f->path || !f->path[0] || !pyr_same_file(snap, f->path) || (k < nout && pyr_is_char_device(snap))) continue;
                st = snapshot_clash(cfg, snap, 1, f, k >= nout);
            }
            if (st == PYR_OK && !pyr_is_char_device(snap) && snapshot_reached(cfg, prefixes, nprefixes, snap, snap, other, sizeof other))
                st = pyr_fail(PYR_ERR_IO, "output.every = %lld writes the snapshots %s and %s, which are the same file (%s is a symbolic "
                              "link); one would overwrite the other; remove %s or choose another output.field", (long long)cfg->every, snap,
                              other, snap, snap);
        }
        closedir(d);
        if (st != PYR_OK) return st;
    }
    return PYR_OK;
}

/* The HDF5 file's final fields after run->steps steps, marked complete or
 * not, and its commit. */
static pyr_status_t h5_finish(pyr_result_t *r, const pyr_run_info_t *run, int complete)
{
    if (!r->writer) return pyr_fail(PYR_ERR_ARG, "output.field %s: written already", r->out.field);
    pyr_json_t j;
    pyr_json_init(&j, 0);
    pyr_report_run(&j, NULL, run);
    const char *run_json = complete ? pyr_json_text(&j) : NULL;
    const pyr_field_t *ff[PYR_H5_MAX_FIELDS];
    file_fields(r, ff);
    const int64_t step = pyr_result_step_of(&r->out, run->steps);
    pyr_status_t st = pyr_h5_writer_final(r->writer, ff, step, pyr_result_time_of(r->problem, &r->out, run->steps), run_json);
    pyr_json_free(&j);
    /* a finished Maxwell run's monitors (the spectra attached to its problem) */
    const pyr_problem_t *p = r->problem;
    if (st == PYR_OK && complete && p->equation == PYR_EQ_MAXWELL && p->maxwell.spectra)
        st = pyr_h5_write_monitors(pyr_h5_writer_file(r->writer), p->maxwell.spectra, p->dims, r->out.compression);
    if (st == PYR_OK && !complete) st = pyr_h5_writer_incomplete(r->writer, step);
    if (st == PYR_OK) st = pyr_h5_writer_commit(&r->writer);
    else pyr_h5_writer_abort(&r->writer);
    return st;
}

pyr_status_t pyr_result_final(pyr_result_t *r, const pyr_run_info_t *run)
{
    if (!r || !run) return pyr_fail(PYR_ERR_ARG, "pyr_result_final: a result and the run's info are required");
    const pyr_field_t *f = r->fields[0];
    if (!r->h5) {
        int64_t shape[3];
        shape_of(f, shape);
        return pyr_npy_write(r->out.field, f->dims, shape, f->precision, f->data);
    }
    return h5_finish(r, run, 1);
}

/* The step a restart from what an interrupted run wrote can start at: the
 * largest of `reached` (the final fields) and the snapshots before it that a
 * restart accepts (multiples of output.every and of a Poisson run's checks:
 * problem/restart.h); 0 when none is past the run's start. */
static int64_t restart_step(const pyr_result_t *r, int64_t reached, int final_written)
{
    const pyr_problem_t *p = r->problem;
    const int64_t every = r->out.every, check = p->equation == PYR_EQ_POISSON && p->poisson.tolerance > 0 ? p->poisson.check_every : 0;
    for (int64_t k = reached; k > r->out.start_step; k--) {
        const int snapshot = every > 0 && k % every == 0;
        if (!(snapshot || (final_written && k == reached))) continue;
        if ((every > 0 && k % every) || (check > 0 && k % check)) continue;
        return k;
    }
    return 0;
}

pyr_status_t pyr_result_interrupted(pyr_result_t *r, int64_t done, char *note, size_t size)
{
    if (note && size) note[0] = 0;
    if (!r || done < 0) return pyr_fail(PYR_ERR_ARG, "pyr_result_interrupted: a result and the steps done (0 or more) are required");
    const int64_t step = pyr_result_step_of(&r->out, done);
    pyr_status_t st = PYR_OK;
    const char *from = NULL;
    char snap[PYR_PATH_MAX + 32];
    int64_t k = 0;
    if (r->h5) {
        /* what the run has, whole: its snapshots and the fields at the step reached, marked incomplete */
        pyr_run_info_t run;
        memset(&run, 0, sizeof run);
        run.steps = done;
        st = h5_finish(r, &run, 0); /* commits (staged when a stage is active), or aborts on failure */
        if (st == PYR_OK) {
            from = r->out.field;
            k = restart_step(r, step, 1);
        }
    } else {
        /* output.field is a finished result's: left as it was; the last snapshot is the place to go on from */
        k = restart_step(r, step, 0);
        if (k > 0) {
            snprintf(snap, sizeof snap, "%s_%06lld.npy", r->snap_base, (long long)k);
            from = snap;
        }
    }
    if (!note || !size) return st;
    if (st != PYR_OK) {
        snprintf(note, size, "interrupted at step %lld; output.field %s could not be written", (long long)step, r->out.field);
    } else if (r->problem->equation == PYR_EQ_MAXWELL) {
        /* its E and H are half a step apart: restarts of it are not done (problem/restart.h) */
        if (from) snprintf(note, size, "interrupted at step %lld; %s holds the fields of that step, marked incomplete (complete = 0)", (long long)step, from);
        else snprintf(note, size, "interrupted at step %lld; output.field was not written", (long long)step);
    } else if (from && k > 0) {
        snprintf(note, size, "interrupted at step %lld; restart with initial.kind=file initial.file=%s initial.step=%lld (and another output.field)%s",
                 (long long)step, from, (long long)k, r->h5 ? "; the file is marked incomplete (complete = 0)" : "");
    } else if (from) {
        snprintf(note, size, "interrupted at step %lld; %s holds what the run has, marked incomplete (complete = 0); no step of it can be restarted from: run again",
                 (long long)step, from);
    } else {
        snprintf(note, size, "interrupted at step %lld; output.field was not written and no snapshot can be restarted from: run again", (long long)step);
    }
    return st;
}

/* ------------------------------------------------------------- interrupts */

static volatile sig_atomic_t interrupt_seen;
static volatile sig_atomic_t interrupt_caught;
static struct sigaction interrupt_previous;

static void on_interrupt(int sig)
{
    /* async-signal-safe only: a second Ctrl-C ends the program as the handler before would have */
    if (interrupt_seen) {
        sigaction(sig, &interrupt_previous, NULL);
        raise(sig);
        return;
    }
    interrupt_seen = 1;
}

void pyr_interrupt_catch(void)
{
    if (interrupt_caught) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    interrupt_seen = 0;
    if (sigaction(SIGINT, &sa, &interrupt_previous) == 0) interrupt_caught = 1;
}

void pyr_interrupt_release(void)
{
    if (!interrupt_caught) return;
    sigaction(SIGINT, &interrupt_previous, NULL);
    interrupt_caught = 0;
}

int pyr_interrupt_requested(void) { return interrupt_seen != 0; }

void pyr_result_abort(pyr_result_t **r)
{
    if (!r || !*r) return;
    pyr_h5_writer_abort(&(*r)->writer);
    free(*r);
    *r = NULL;
}

/* The run report (--report FILE.json): what ran, how, how long and where. */
static void report_run(pyr_json_t *j, const pyr_problem_t *p, const pyr_problem_outputs_t *cfg, const pyr_options_t *options,
                       const pyr_plan_t *plan, const pyr_run_info_t *ri, const double t[4], double gcells, const char *sidecar, int status)
{
    pyr_problem_t whole = *p; /* the problem as the file states it: steps up to the end */
    whole.steps = cfg->end_step;
    pyr_report_problem(j, "problem", &whole);
    pyr_report_options(j, "options", options);
    if (cfg->start_step > 0) {
        pyr_json_object(j, "restart");
        pyr_json_string(j, "from", p->init_file);
        pyr_json_int(j, "step", cfg->start_step);
        if (p->equation == PYR_EQ_HEAT) pyr_json_real(j, "t", cfg->start_t);
        pyr_json_end(j);
    } else {
        pyr_json_null(j, "restart");
    }
    pyr_report_plan(j, "plan", plan);
    pyr_report_run(j, "run", ri);
    pyr_json_int(j, "step", pyr_result_step_of(cfg, ri->steps));
    if (p->equation != PYR_EQ_POISSON) pyr_json_real(j, "t", pyr_result_time_of(p, cfg, ri->steps));
    pyr_json_object(j, "seconds");
    pyr_json_real(j, "plan", t[0]);
    pyr_json_real(j, "initial", t[1]);
    pyr_json_real(j, "execute", t[2]);
    pyr_json_real(j, "output", t[3]);
    pyr_json_real(j, "total", t[0] + t[1] + t[2] + t[3]);
    pyr_json_end(j);
    pyr_json_real(j, "gcells_per_second", gcells);
    pyr_json_object(j, "outputs");
    pyr_json_string(j, "field", cfg->field[0] ? cfg->field : NULL);
    pyr_json_string(j, "xdmf", sidecar && sidecar[0] ? sidecar : NULL);
    pyr_json_string(j, "image", cfg->image[0] ? cfg->image : NULL);
    if (p->equation == PYR_EQ_MAXWELL) pyr_json_string(j, "probes", cfg->probes[0] ? cfg->probes : NULL);
    pyr_json_int(j, "every", cfg->every);
    pyr_json_end(j);
    pyr_json_int(j, "exit_status", status);
}

/* The common head of a report: command, problem file. */
static void report_begin(pyr_json_t *j, const char *command, const char *source)
{
    pyr_json_init(j, 1);
    pyr_json_object(j, NULL);
    pyr_json_string(j, "report", "pyrgrid-run-report");
    pyr_json_int(j, "report_version", 1);
    pyr_json_string(j, "command", command);
    pyr_json_string(j, "problem_file", source && source[0] ? source : NULL);
}

/* Its tail: versions and machine, then close and write (staged when a stage is active). */
static pyr_status_t report_end(pyr_json_t *j, const char *path, pyr_backend_kind_t backend, int device)
{
    pyr_report_versions(j, "versions");
    pyr_report_machine(j, "machine", backend, device);
    pyr_json_end(j);
    const char *text = pyr_json_text(j);
    pyr_status_t st = text ? pyr_report_write(path, text) : PYR_ERR_NOMEM;
    pyr_json_free(j);
    return st;
}

pyr_status_t pyr_run_report_write(const char *path, const pyr_problem_t *p, const pyr_problem_outputs_t *o, const pyr_options_t *options,
                                  const pyr_plan_t *plan, const pyr_run_info_t *run, const double seconds[4], double gcells,
                                  const char *sidecar, int exit_status)
{
    if (!path || !p || !o || !options || !plan || !run || !seconds)
        return pyr_fail(PYR_ERR_ARG, "pyr_run_report_write: a path, the problem, its outputs, the options, the plan, the run and its seconds are required");
    pyr_plan_info_t info;
    PYR_TRY(pyr_plan_get_info(plan, &info));
    pyr_json_t j;
    report_begin(&j, "run", o->source);
    report_run(&j, p, o, options, plan, run, seconds, gcells, sidecar, exit_status);
    return report_end(&j, path, info.backend, options->device);
}

size_t pyr_plan_report_json(const pyr_problem_t *problem, const pyr_options_t *options, const pyr_plan_t *plan, char *text, size_t size)
{
    pyr_json_t j;
    pyr_json_init(&j, 1);
    pyr_json_object(&j, NULL);
    pyr_report_problem(&j, "problem", problem);
    pyr_report_options(&j, "options", options);
    pyr_report_plan(&j, "plan", plan);
    pyr_json_end(&j);
    const char *json = pyr_json_text(&j);
    const int n = json ? snprintf(text, size, "%s", json) : 0;
    pyr_json_free(&j);
    return n > 0 ? (size_t)n : 0;
}

pyr_status_t pyr_solve_report_write(const char *path, const char *problem_file, const char *kind, const pyr_lgs_system_t *sys,
                                  const pyr_lgs_options_t *opt, const pyr_lgs_result_t *res, const char *const outputs[4],
                                  int exit_status)
{
    pyr_json_t j;
    report_begin(&j, "solve", problem_file);
    pyr_json_object(&j, "system");
    pyr_json_string(&j, "kind", kind);
    pyr_json_string(&j, "description", sys->description);
    pyr_json_int(&j, "n", sys->n);
    pyr_json_int(&j, "m", sys->m);
    pyr_json_end(&j);
    pyr_json_object(&j, "options");
    pyr_json_string(&j, "ordering", pyr_lgs_ordering_name(opt->ordering));
    pyr_json_real(&j, "omega", opt->omega);
    pyr_json_string(&j, "precondition", pyr_lgs_precond_name(opt->precondition));
    pyr_json_real(&j, "tolerance", opt->tolerance);
    pyr_json_int(&j, "max_iterations", opt->max_iterations);
    pyr_json_int(&j, "check_every", opt->check_every);
    pyr_json_string(&j, "backend", pyr_backend_name(opt->backend));
    pyr_json_int(&j, "threads", opt->threads);
    pyr_json_end(&j);
    pyr_json_object(&j, "result");
    pyr_json_string(&j, "stop", pyr_lgs_stop_name(res->stop));
    pyr_json_int(&j, "iterations", res->iterations);
    pyr_json_real(&j, "rel_residual", res->rel_residual);
    pyr_json_real(&j, "f_norm", res->f_norm);
    pyr_json_string(&j, "backend", pyr_backend_name(res->backend));
    pyr_json_int(&j, "threads", res->threads);
    pyr_json_string(&j, "device", res->device);
    pyr_json_string(&j, "warning", res->warning);
    pyr_json_end(&j);
    pyr_json_object(&j, "seconds");
    pyr_json_real(&j, "setup", res->setup_seconds);
    pyr_json_real(&j, "iterate", res->iterate_seconds);
    pyr_json_real(&j, "loop", res->seconds); /* iterations and residual checks */
    pyr_json_real(&j, "per_iteration", res->iterations > 0 ? res->iterate_seconds / (double)res->iterations : 0.0);
    pyr_json_end(&j);
    /* unknowns updated per second, the solver's counterpart of the stencils' cell updates per second */
    pyr_json_real(&j, "gunknowns_per_second",
                  res->iterate_seconds > 0 ? (double)sys->n * (double)sys->m * (double)res->iterations / res->iterate_seconds * 1e-9 : 0.0);
    static const char *const names[4] = {"solution", "history", "image", "history_image"};
    pyr_json_object(&j, "outputs");
    for (int i = 0; i < 4; i++) pyr_json_string(&j, names[i], outputs[i] && outputs[i][0] ? outputs[i] : NULL);
    pyr_json_end(&j);
    pyr_json_int(&j, "exit_status", exit_status);
    return report_end(&j, path, res->backend, 0);
}

#ifdef PYR_HAVE_FRAMES /* a build without the frames pipeline has no frames report */
pyr_status_t pyr_frames_report_write(const char *path, const char *config, const char *const *inputs, int ninputs, int64_t nx, int64_t ny,
                                   int64_t nframes, const pyr_frames_options_t *o, const pyr_frames_stats_t *fs, double seconds,
                                   const char *const outputs[6], int64_t ntracks)
{
    static const char *const refs[] = {"first", "rolling"}, *const coarse[] = {"always", "never", "auto"};
    pyr_json_t j;
    report_begin(&j, "frames", config);
    pyr_json_array(&j, "inputs");
    for (int i = 0; i < ninputs; i++) pyr_json_string(&j, NULL, inputs[i]);
    pyr_json_end(&j);
    pyr_json_object(&j, "sequence");
    pyr_json_int(&j, "frames", nframes);
    pyr_json_int(&j, "nx", nx);
    pyr_json_int(&j, "ny", ny);
    pyr_json_end(&j);
    pyr_json_object(&j, "options");
    pyr_json_int(&j, "history", o->history);
    pyr_json_real(&j, "epsilon", o->epsilon);
    pyr_json_string(&j, "weights", pyr_frames_weights_name(o->weights));
    pyr_json_int(&j, "poly_degree", o->poly_degree);
    pyr_json_int(&j, "poly_window", o->poly_window);
    pyr_json_string(&j, "reference", refs[o->reference == PYR_FRAMES_REF_ROLLING]);
    pyr_json_int(&j, "reference_every", o->reference_every);
    pyr_json_string(&j, "coarse", (unsigned)o->coarse < 3 ? coarse[o->coarse] : "?");
    pyr_json_int(&j, "max_iterations", o->max_iterations);
    pyr_json_real(&j, "tolerance", o->tolerance);
    pyr_json_int(&j, "border", o->border);
    pyr_json_real(&j, "threshold", o->threshold);
    pyr_json_real(&j, "psf_fwhm", o->psf_fwhm);
    pyr_json_bool(&j, "clean", o->clean);
    pyr_json_real(&j, "clean_radius", o->clean_radius);
    pyr_json_real(&j, "clean_threshold", o->clean_threshold);
    pyr_json_int(&j, "noise_frames", o->noise_frames);
    pyr_json_int(&j, "warmup", o->warmup);
    pyr_json_int(&j, "max_candidates", o->max_candidates);
    pyr_json_string(&j, "backend", pyr_backend_name(o->backend));
    pyr_json_int(&j, "threads", o->threads);
    pyr_json_end(&j);
    pyr_json_object(&j, "seconds");
    pyr_json_real(&j, "total", seconds);
    pyr_json_real(&j, "per_frame", nframes > 0 ? seconds / (double)nframes : 0.0);
    /* the CPU's stages (the GPU overlaps them: 0) */
    pyr_json_real(&j, "shift", fs->shift_s);
    pyr_json_real(&j, "weights", fs->weights_s);
    pyr_json_real(&j, "whiten", fs->whiten_s);
    pyr_json_real(&j, "detect", fs->detect_s);
    pyr_json_end(&j);
    pyr_json_real(&j, "mpixels_per_second", seconds > 0 ? (double)nx * (double)ny * (double)nframes / seconds * 1e-6 : 0.0);
    pyr_json_object(&j, "counts");
    pyr_json_int(&j, "candidates", fs->candidates);
    pyr_json_int(&j, "masked_pixels", fs->masked_pixels);
    pyr_json_int(&j, "cleaned_pixels", fs->cleaned_pixels);
    pyr_json_int(&j, "ill_conditioned", fs->ill_conditioned);
    pyr_json_int(&j, "regularised", fs->regularised);
    pyr_json_int(&j, "reduced", fs->reduced);
    pyr_json_int(&j, "fallback", fs->fallback);
    pyr_json_int(&j, "not_converged", fs->not_converged);
    if (ntracks >= 0) pyr_json_int(&j, "tracks", ntracks);
    pyr_json_end(&j);
    pyr_json_object(&j, "run");
    pyr_json_string(&j, "backend", fs->backend);
    pyr_json_string(&j, "device", fs->device);
    pyr_json_end(&j);
    static const char *const names[6] = {"residual", "shifts", "candidates", "snr_image", "max_snr", "tracks"};
    pyr_json_object(&j, "outputs");
    for (int i = 0; i < 6; i++) pyr_json_string(&j, names[i], outputs[i] && outputs[i][0] ? outputs[i] : NULL);
    pyr_json_end(&j);
    pyr_json_int(&j, "exit_status", 0);
    return report_end(&j, path, strcmp(fs->backend, "cuda") ? PYR_BACKEND_CPU : PYR_BACKEND_CUDA, o->device);
}
#endif
