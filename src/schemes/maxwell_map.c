/* The Maxwell scheme's per-node material map ([material] map = FILE.npy): an
 * integer label per node of the whole grid, label 0 the background, label k
 * the material [material] labelk (eps_r, sigma, mu_r and dispersive terms).
 *
 * The map is read whole once per file and kept for the process (a list that
 * only grows, keyed by path, device, inode, size and modification time, so a
 * rewritten file is read again): the coefficients and the dispersive table
 * ask for a node's label once per node, from every part of the grid and from
 * every block of a streamed plan, and a file read per question would cost more
 * than the run.  The whole grid's labels are 4 bytes a node in host memory;
 * the labels' bounding boxes are kept with them (the dispersive states' support
 * and the slots a layer may share follow from them). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/error.h"
#include "io/npy.h"
#include "schemes/maxwell.h"

typedef struct map_entry {
    struct map_entry *next;
    char path[PYR_PATH_MAX];
    int64_t n[3];
    int dims;
    struct stat st;
    struct timespec loaded; /* when it was read (a file changed within a timestamp's tick of that reads the same) */
    int32_t *labels;
    /* per label 0 .. PYR_MAXWELL_MAX_LABELS: the whole-grid nodes [lo, hi) holding it (lo > hi: none) */
    int64_t lo[PYR_MAXWELL_MAX_LABELS + 1][3], hi[PYR_MAXWELL_MAX_LABELS + 1][3];
    /* the first node (flat, C order) whose label is negative or above PYR_MAXWELL_MAX_LABELS, -1 none */
    int64_t first_bad;
    /* the first node of each label 1 .. PYR_MAXWELL_MAX_LABELS, -1 none */
    int64_t first[PYR_MAXWELL_MAX_LABELS + 1];
} map_entry_t;

static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;
static map_entry_t *maps;
static unsigned generation;
static _Thread_local const map_entry_t *last_hit;
static _Thread_local unsigned last_generation;

static void whole_of(const pyr_problem_t *p, int64_t n[3])
{
    for (int a = 0; a < 3; a++) n[a] = pyr_problem_whole(p, a);
}

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
           a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

static int matches(const map_entry_t *e, const char *path, const int64_t n[3], int dims)
{
    return e->dims == dims && e->n[0] == n[0] && e->n[1] == n[1] && e->n[2] == n[2] && !strcmp(e->path, path);
}

/* The newest entry of p's map (NULL: not read yet). Under maps_lock. */
static map_entry_t *find_locked(const pyr_problem_t *p)
{
    int64_t n[3];
    whole_of(p, n);
    for (map_entry_t *e = maps; e; e = e->next)
        if (matches(e, p->maxwell.map_file, n, p->dims)) return e;
    return NULL;
}

/* Read p's map into a new entry at the head of the list (the file as it is now), or, where its labels
 * are those of `old`, into old (its stamp renewed; the new copy dropped, so that checks of an unchanged
 * file keep no copies). Under maps_lock. */
static pyr_status_t load_locked(const pyr_problem_t *p, const struct stat *st, map_entry_t *old, const map_entry_t **out)
{
    map_entry_t *e = calloc(1, sizeof *e);
    if (!e) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the material map");
    snprintf(e->path, sizeof e->path, "%s", p->maxwell.map_file);
    whole_of(p, e->n);
    e->dims = p->dims;
    e->st = *st;
    clock_gettime(CLOCK_REALTIME, &e->loaded);
    int64_t shape[3];
    const int nd = p->dims == 3 ? 3 : 2;
    for (int d = 0; d < nd; d++) shape[d] = e->n[nd - 1 - d];
    pyr_status_t s = pyr_npy_read_labels(e->path, nd, shape, &e->labels);
    if (s != PYR_OK) {
        free(e);
        return pyr_fail_context(s, "material.map: ");
    }
    for (int l = 0; l <= PYR_MAXWELL_MAX_LABELS; l++) {
        e->first[l] = -1;
        for (int a = 0; a < 3; a++) e->lo[l][a] = INT64_MAX, e->hi[l][a] = INT64_MIN;
    }
    e->first_bad = -1;
    const int64_t nx = e->n[0], ny = e->n[1], count = e->n[0] * e->n[1] * e->n[2];
    if (old && !memcmp(old->labels, e->labels, (size_t)count * sizeof *e->labels)) {
        old->st = e->st;
        old->loaded = e->loaded;
        free(e->labels);
        free(e);
        *out = old;
        return PYR_OK;
    }
    for (int64_t k = 0; k < count; k++) {
        const int32_t l = e->labels[k];
        if (l < 0 || l > PYR_MAXWELL_MAX_LABELS) {
            if (e->first_bad < 0) e->first_bad = k;
            continue;
        }
        if (e->first[l] < 0) e->first[l] = k;
        const int64_t g[3] = {k % nx, k / nx % ny, k / (nx * ny)};
        for (int a = 0; a < 3; a++) {
            if (g[a] < e->lo[l][a]) e->lo[l][a] = g[a];
            if (g[a] + 1 > e->hi[l][a]) e->hi[l][a] = g[a] + 1;
        }
    }
    e->next = maps;
    maps = e;
    generation++;
    *out = e;
    return PYR_OK;
}

/* Whether the file was modified less than a tenth of a second before it was read (or after): a
 * rewrite within the file system's clock tick would then keep its size and time stamp. */
static int recent(const struct stat *st, const struct timespec *loaded)
{
    const double modified = (double)st->st_mtim.tv_sec + 1e-9 * (double)st->st_mtim.tv_nsec;
    return modified + 0.1 >= (double)loaded->tv_sec + 1e-9 * (double)loaded->tv_nsec;
}

/* p's map, read when not yet read or when the file changed since (fresh = 1: checked against the
 * file; else the entry at hand).  A file read within a tenth of a second of its modification is read again at
 * each check until a reading is later than that: its size and time stamp may not tell a rewrite in
 * the same tick of the file system's clock (a reading that finds the same labels keeps no copy). */
static pyr_status_t entry_of(const pyr_problem_t *p, int fresh, const map_entry_t **out)
{
    if (!fresh && last_hit && last_generation == generation) {
        int64_t n[3];
        whole_of(p, n);
        if (matches(last_hit, p->maxwell.map_file, n, p->dims)) {
            *out = last_hit;
            return PYR_OK;
        }
    }
    pthread_mutex_lock(&maps_lock);
    map_entry_t *found = find_locked(p);
    const map_entry_t *e = found;
    pyr_status_t s = PYR_OK;
    if (!e || fresh) {
        struct stat st;
        if (stat(p->maxwell.map_file, &st) != 0)
            s = pyr_fail(PYR_ERR_IO, "material.map: cannot read %s: %s", p->maxwell.map_file, strerror(errno));
        else if (!e || !same_file(&e->st, &st) || recent(&st, &e->loaded))
            s = load_locked(p, &st, found, &e);
    }
    if (s == PYR_OK) {
        last_hit = e;
        last_generation = generation;
        *out = e;
    }
    pthread_mutex_unlock(&maps_lock);
    return s;
}

/* "(y, x)" or "(z, y, x)": NumPy's index of flat node k. */
static void numpy_index(const map_entry_t *e, int64_t k, char *buf, size_t size)
{
    const int64_t x = k % e->n[0], y = k / e->n[0] % e->n[1], z = k / (e->n[0] * e->n[1]);
    if (e->dims == 3) snprintf(buf, size, "[%lld, %lld, %lld]", (long long)z, (long long)y, (long long)x);
    else snprintf(buf, size, "[%lld, %lld]", (long long)y, (long long)x);
}

pyr_status_t pyr_maxwell_map_check(const pyr_problem_t *p)
{
    const pyr_maxwell_params_t *m = &p->maxwell;
    if (m->nlabels < 0 || m->nlabels > PYR_MAXWELL_MAX_LABELS)
        return pyr_fail(PYR_ERR_CONFIG, "material: %d labels; give at most %d (label1 .. label%d)", m->nlabels, PYR_MAXWELL_MAX_LABELS,
                        PYR_MAXWELL_MAX_LABELS);
    if (!m->map_file[0]) {
        if (m->nlabels > 0)
            return pyr_fail(PYR_ERR_CONFIG, "material.label%d is given without material.map; add map = FILE.npy (an integer label per node) "
                                            "or leave the labels out",
                            m->nlabels);
        return PYR_OK;
    }
    if (m->eps_file[0] || m->sigma_file[0] || m->mu_file[0])
        return pyr_fail(PYR_ERR_CONFIG, "material.map and material.%s both give the nodes' materials; give per-node values by one of them: "
                                        "the map with label1 .. labelN (eps_r, sigma, mu_r and dispersive terms per label), or eps_file, "
                                        "sigma_file and mu_file without the map",
                        m->eps_file[0] ? "eps_file" : m->sigma_file[0] ? "sigma_file" : "mu_file");
    const map_entry_t *e = NULL;
    PYR_TRY(entry_of(p, 1, &e));
    char at[96];
    if (e->first_bad >= 0) {
        numpy_index(e, e->first_bad, at, sizeof at);
        return pyr_fail(PYR_ERR_CONFIG, "material.map %s: label %" PRId32 " at index %s; labels are 0 (the background) and 1 .. %d "
                                        "(material.label1 .. label%d)",
                        e->path, e->labels[e->first_bad], at, PYR_MAXWELL_MAX_LABELS, PYR_MAXWELL_MAX_LABELS);
    }
    for (int l = 1; l <= PYR_MAXWELL_MAX_LABELS; l++)
        if (e->first[l] >= 0 && l > m->nlabels) {
            numpy_index(e, e->first[l], at, sizeof at);
            return pyr_fail(PYR_ERR_CONFIG, "material.map %s: label %d (first at index %s) is not defined; add material.label%d = eps_r=... "
                                            "sigma=... mu_r=... (and drude=, lorentz=, debye= terms), or relabel those nodes",
                            e->path, l, at, l);
        }
    for (int l = 0; l < m->nlabels; l++) {
        const pyr_shape_t *s = &m->labels[l];
        if (!(s->eps_r > 0) || !(s->mu_r > 0) || !(s->sigma >= 0) || !(s->eps_r < INFINITY) || !(s->mu_r < INFINITY) || !(s->sigma < INFINITY))
            return pyr_fail(PYR_ERR_CONFIG, "material.label%d: eps_r = %g, sigma = %g, mu_r = %g; use finite eps_r > 0, mu_r > 0 and sigma >= 0",
                            l + 1, s->eps_r, s->sigma, s->mu_r);
    }
    return PYR_OK;
}

int pyr_maxwell_map_label(const pyr_problem_t *p, const int64_t g[3])
{
    if (!p->maxwell.map_file[0]) return 0;
    const map_entry_t *e = NULL;
    if (entry_of(p, 0, &e) != PYR_OK) return 0; /* validate refuses an unreadable map before any run */
    const int64_t k = (g[2] * e->n[1] + g[1]) * e->n[0] + g[0];
    const int32_t l = e->labels[k];
    return l >= 0 && l <= p->maxwell.nlabels ? (int)l : 0;
}

int pyr_maxwell_map_bbox(const pyr_problem_t *p, unsigned mask, int64_t lo[3], int64_t hi[3])
{
    const map_entry_t *e = NULL;
    if (!p->maxwell.map_file[0] || entry_of(p, 0, &e) != PYR_OK) return 0;
    int any = 0;
    for (int a = 0; a < 3; a++) lo[a] = INT64_MAX, hi[a] = INT64_MIN;
    for (int l = 0; l <= PYR_MAXWELL_MAX_LABELS; l++) {
        if (!((mask >> l) & 1) || e->first[l] < 0) continue;
        any = 1;
        for (int a = 0; a < 3; a++) {
            if (e->lo[l][a] < lo[a]) lo[a] = e->lo[l][a];
            if (e->hi[l][a] > hi[a]) hi[a] = e->hi[l][a];
        }
    }
    return any;
}
