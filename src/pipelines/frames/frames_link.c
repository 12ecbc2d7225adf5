/* Candidates linked into tracks (pyrgrid_frames_io.h, docs/frames.md#tracks).
 *
 * The rows are first put in one canonical order (frame, y, x, then SNR and
 * flux descending, then the caller's index), so that nothing depends on the
 * order the caller gave them in.  Every pair of detections in frames at most
 * max_gap + 1 apart, no faster than max_speed, seeds a track: the line
 * through the pair predicts the next frames, and the nearest unused
 * detection within max_residual of the prediction joins (a tie: the first in
 * the canonical order), the line refitted by least squares after each; then
 * the same backwards from the seed's first frame.  The growth stops after
 * max_gap frames without a detection.  A seed's track counts when it has
 * min_detections, every detection within max_residual of its final line and
 * a speed within [min_speed, max_speed].  The best of all seeds' tracks is
 * taken (most detections, then the smallest RMS, then the first seed in the
 * canonical order), its detections leave the pool, the seeds whose tracks
 * (counted or not) used them grow again, and so on until no seed gives a
 * track.  A seed that used none of the taken detections would grow the same
 * again (each step takes the nearest unused detection, and a detection it
 * did not take changes no step), so only those seeds are grown again. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"
#include "io/atomic.h"
#include "io/fits.h"
#include "pipelines/frames/frames_config.h"
#include "pipelines/frames/frames_table.h"
#include "pyrgrid_frames_io.h"

void pyr_frames_link_options_default(pyr_frames_link_options_t *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->min_detections = 3;
    o->max_gap = 2;
    o->max_speed = 10.0;
    o->min_speed = 0.1;
    o->max_residual = 1.0;
}

pyr_status_t pyr_frames_link_options_set(pyr_frames_link_options_t *options, const char *key, const char *value)
{
    if (!options || !key || !value) return pyr_fail(PYR_ERR_ARG, "pyr_frames_link_options_set: options, key and value are required");
    const char *k = strncasecmp(key, "frames.", 7) ? key : key + 7;
    if (strncasecmp(k, "link_", 5))
        return pyr_fail(PYR_ERR_CONFIG, "frames.%s is not a linking key: these options take link_min_detections, link_max_gap, "
                                        "link_max_speed, link_min_speed and link_max_residual",
                        k);
    return fr_config_set_one(k, value, NULL, options);
}

pyr_status_t pyr_frames_link_options_validate(const pyr_frames_link_options_t *o)
{
    if (!o) return pyr_fail(PYR_ERR_ARG, "pyr_frames_link_options_validate: options is NULL");
    if (o->min_detections < 3)
        return pyr_fail(PYR_ERR_CONFIG, "frames.link_min_detections = %d: a track needs 3 detections or more (any 2 lie on a line)",
                        o->min_detections);
    if (o->max_gap < 0 || o->max_gap > 1000)
        return pyr_fail(PYR_ERR_CONFIG, "frames.link_max_gap = %d: give the frames a track may skip, 0 to 1000", o->max_gap);
    if (!(o->max_speed > 0) || !isfinite(o->max_speed))
        return pyr_fail(PYR_ERR_CONFIG, "frames.link_max_speed = %g: give a speed above 0, in pixels per frame", o->max_speed);
    if (!(o->min_speed >= 0) || !(o->min_speed < o->max_speed))
        return pyr_fail(PYR_ERR_CONFIG, "frames.link_min_speed = %g: give a speed from 0 (stationary objects linked too) to below "
                                        "frames.link_max_speed = %g, in pixels per frame",
                        o->min_speed, o->max_speed);
    if (!(o->max_residual > 0) || !isfinite(o->max_residual))
        return pyr_fail(PYR_ERR_CONFIG, "frames.link_max_residual = %g: give a distance above 0, in pixels (about the positions' "
                                        "error: 0.5 to 2)",
                        o->max_residual);
    return PYR_OK;
}

/* ------------------------------------------------------------------ linking */

typedef struct {
    int64_t frame, index; /* index: the caller's row */
    double x, y, mjd, snr, flux;
} point_t;

static int cmp_point(const void *pa, const void *pb)
{
    const point_t *a = pa, *b = pb;
    if (a->frame != b->frame) return a->frame < b->frame ? -1 : 1;
    if (a->y != b->y) return a->y < b->y ? -1 : 1;
    if (a->x != b->x) return a->x < b->x ? -1 : 1;
    if (a->snr != b->snr) return a->snr > b->snr ? -1 : 1;
    if (a->flux != b->flux) return a->flux > b->flux ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

typedef struct {
    const point_t *p;
    int64_t n;
    const pyr_frames_link_options_t *o;
    const uint8_t *used;
} linker_t;

/* The points of frame f: [*lo, *hi). */
static void frame_range(const linker_t *L, int64_t f, int64_t *lo, int64_t *hi)
{
    int64_t a = 0, b = L->n;
    while (a < b) {
        int64_t m = a + (b - a) / 2;
        if (L->p[m].frame < f) a = m + 1;
        else b = m;
    }
    *lo = a;
    b = L->n;
    while (a < b) {
        int64_t m = a + (b - a) / 2;
        if (L->p[m].frame <= f) a = m + 1;
        else b = m;
    }
    *hi = a;
}

/* The first point of [lo, hi) (sorted by y within a frame) with y >= y0. */
static int64_t lower_y(const linker_t *L, int64_t lo, int64_t hi, double y0)
{
    while (lo < hi) {
        int64_t m = lo + (hi - lo) / 2;
        if (L->p[m].y < y0) lo = m + 1;
        else hi = m;
    }
    return lo;
}

typedef struct {
    double xm, ym, tm, vx, vy;
} line_t;

/* Least squares x = xm + vx (t - tm), y likewise, over the members (t: the frame). */
static line_t fit(const point_t *p, const int64_t *m, int64_t k)
{
    line_t l = {0, 0, 0, 0, 0};
    for (int64_t i = 0; i < k; i++) {
        l.xm += p[m[i]].x;
        l.ym += p[m[i]].y;
        l.tm += (double)p[m[i]].frame;
    }
    l.xm /= (double)k;
    l.ym /= (double)k;
    l.tm /= (double)k;
    double stt = 0, stx = 0, sty = 0;
    for (int64_t i = 0; i < k; i++) {
        double dt = (double)p[m[i]].frame - l.tm;
        stt += dt * dt;
        stx += dt * (p[m[i]].x - l.xm);
        sty += dt * (p[m[i]].y - l.ym);
    }
    if (stt > 0) {
        l.vx = stx / stt;
        l.vy = sty / stt;
    }
    return l;
}

/* The nearest unused point of frame f within r of (x, y), the first in the
 * canonical order on a tie; -1 when none. */
static int64_t nearest(const linker_t *L, int64_t f, double x, double y, double r)
{
    int64_t lo, hi;
    frame_range(L, f, &lo, &hi);
    int64_t best = -1;
    double bd = r * r;
    for (int64_t i = lower_y(L, lo, hi, y - r); i < hi && L->p[i].y <= y + r; i++) {
        if (L->used[i]) continue;
        double dx = L->p[i].x - x, dy = L->p[i].y - y, d = dx * dx + dy * dy;
        if (d < bd || (d == bd && best < 0)) {
            bd = d;
            best = i;
        }
    }
    return best;
}

typedef struct {
    int64_t a, b;   /* the seed's points */
    int64_t *m, k;  /* the members (indices of points), k of them; capacity cap */
    int64_t cap;
    int valid;      /* a track by the options */
    double rms;
} seed_t;

static int add_member(seed_t *s, int64_t i)
{
    if (s->k == s->cap) {
        int64_t cap = s->cap ? 2 * s->cap : 8;
        int64_t *nm = realloc(s->m, (size_t)cap * sizeof *nm);
        if (!nm) return -1;
        s->m = nm;
        s->cap = cap;
    }
    s->m[s->k++] = i;
    return 0;
}

static double rms_of(const point_t *p, const int64_t *m, int64_t k, line_t l, double *worst)
{
    double s = 0;
    *worst = 0;
    for (int64_t i = 0; i < k; i++) {
        double dt = (double)p[m[i]].frame - l.tm;
        double dx = p[m[i]].x - (l.xm + l.vx * dt), dy = p[m[i]].y - (l.ym + l.vy * dt), d = dx * dx + dy * dy;
        s += d;
        if (d > *worst) *worst = d;
    }
    *worst = sqrt(*worst);
    return sqrt(s / (double)k);
}

static pyr_status_t grow(const linker_t *L, seed_t *s)
{
    const pyr_frames_link_options_t *o = L->o;
    const point_t *p = L->p;
    s->k = 0;
    s->valid = 0;
    if (add_member(s, s->a) || add_member(s, s->b)) return pyr_fail(PYR_ERR_NOMEM, "out of host memory linking tracks");
    line_t l = fit(p, s->m, s->k);
    const int64_t step = o->max_gap + 1;
    for (int dir = 1; dir >= -1; dir -= 2) {
        int64_t last = dir > 0 ? p[s->b].frame : p[s->a].frame;
        int64_t end = dir > 0 ? p[L->n - 1].frame : p[0].frame;
        for (int64_t f = last + dir; dir > 0 ? (f <= end && f - last <= step) : (f >= end && last - f <= step); f += dir) {
            double dt = (double)f - l.tm;
            int64_t j = nearest(L, f, l.xm + l.vx * dt, l.ym + l.vy * dt, o->max_residual);
            if (j < 0) continue;
            if (add_member(s, j)) return pyr_fail(PYR_ERR_NOMEM, "out of host memory linking tracks");
            l = fit(p, s->m, s->k);
            last = f;
        }
    }
    double worst, speed = hypot(l.vx, l.vy);
    s->rms = rms_of(p, s->m, s->k, l, &worst);
    s->valid = s->k >= o->min_detections && worst <= o->max_residual && speed <= o->max_speed && speed >= o->min_speed;
    return PYR_OK;
}

/* The order tracks are taken in: most detections, then the smallest RMS, then the first seed. */
typedef struct {
    int64_t k, seed, version;
    double rms;
} entry_t;

static int before(const entry_t *a, const entry_t *b)
{
    if (a->k != b->k) return a->k > b->k;
    if (a->rms != b->rms) return a->rms < b->rms;
    return a->seed < b->seed;
}

/* A binary heap of the valid seeds' tracks, the best on top; an entry whose
 * seed grew again since (version) or whose points were taken is dropped
 * when it comes up. */
typedef struct {
    entry_t *e;
    int64_t n, cap;
} heap_t;

static int heap_push(heap_t *h, entry_t x)
{
    if (h->n == h->cap) {
        int64_t cap = h->cap ? 2 * h->cap : 256;
        entry_t *ne = realloc(h->e, (size_t)cap * sizeof *ne);
        if (!ne) return -1;
        h->e = ne;
        h->cap = cap;
    }
    int64_t i = h->n++;
    while (i > 0 && before(&x, &h->e[(i - 1) / 2])) {
        h->e[i] = h->e[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->e[i] = x;
    return 0;
}

static entry_t heap_pop(heap_t *h)
{
    entry_t top = h->e[0], x = h->e[--h->n];
    int64_t i = 0;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && before(&h->e[c + 1], &h->e[c])) c++;
        if (!before(&h->e[c], &x)) break;
        h->e[i] = h->e[c];
        i = c;
    }
    if (h->n > 0) h->e[i] = x;
    return top;
}

/* Which seeds took each point (seeds listed more than once, or no longer
 * holding it, only cost a growth that changes nothing). */
typedef struct {
    int64_t *head, *next, *seed, n, cap;
} users_t;

static int users_add(users_t *u, int64_t point, int64_t seed)
{
    if (u->n == u->cap) {
        int64_t cap = u->cap ? 2 * u->cap : 1024;
        int64_t *nn = realloc(u->next, (size_t)cap * sizeof *nn);
        if (!nn) return -1;
        u->next = nn;
        int64_t *ns = realloc(u->seed, (size_t)cap * sizeof *ns);
        if (!ns) return -1;
        u->seed = ns;
        u->cap = cap;
    }
    u->seed[u->n] = seed;
    u->next[u->n] = u->head[point];
    u->head[point] = u->n++;
    return 0;
}

/* After a seed grew: its track into the heap when it counts, and its points' users. */
static pyr_status_t enlist(heap_t *h, users_t *u, const seed_t *s, int64_t id, int64_t version)
{
    if (s->valid && heap_push(h, (entry_t){s->k, id, version, s->rms}))
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory linking tracks");
    for (int64_t i = 0; i < s->k; i++)
        if (users_add(u, s->m[i], id)) return pyr_fail(PYR_ERR_NOMEM, "out of host memory linking tracks");
    return PYR_OK;
}

static int cmp_i64(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return a < b ? -1 : a > b;
}

static int cmp_track(const void *pa, const void *pb)
{
    const pyr_frames_track_t *a = pa, *b = pb;
    if (a->first_frame != b->first_frame) return a->first_frame < b->first_frame ? -1 : 1;
    if (a->y0 != b->y0) return a->y0 < b->y0 ? -1 : 1;
    if (a->x0 != b->x0) return a->x0 < b->x0 ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id; /* the order taken in */
}

/* The track's figures from its members (sorted by frame). */
static pyr_status_t describe(const point_t *p, const int64_t *m, int64_t k, pyr_frames_wcs_t *wcs, pyr_frames_track_t *t)
{
    line_t l = fit(p, m, k);
    double worst;
    t->n = k;
    t->first_frame = p[m[0]].frame;
    t->last_frame = p[m[k - 1]].frame;
    t->first_mjd = p[m[0]].mjd;
    t->last_mjd = p[m[k - 1]].mjd;
    t->vx = l.vx;
    t->vy = l.vy;
    t->x0 = l.xm + l.vx * ((double)t->first_frame - l.tm);
    t->y0 = l.ym + l.vy * ((double)t->first_frame - l.tm);
    t->rms = rms_of(p, m, k, l, &worst);
    t->snr_mean = 0;
    for (int64_t i = 0; i < k; i++) t->snr_mean += p[m[i]].snr;
    t->snr_mean /= (double)k;
    /* per day: the same least squares against the MJD, where every detection has one */
    t->vx_day = t->vy_day = NAN;
    double tm = 0, xm = 0, ym = 0;
    int all = 1;
    for (int64_t i = 0; i < k; i++) {
        all &= isfinite(p[m[i]].mjd);
        tm += p[m[i]].mjd;
        xm += p[m[i]].x;
        ym += p[m[i]].y;
    }
    if (all) {
        tm /= (double)k;
        xm /= (double)k;
        ym /= (double)k;
        double stt = 0, stx = 0, sty = 0;
        for (int64_t i = 0; i < k; i++) {
            double dt = p[m[i]].mjd - tm;
            stt += dt * dt;
            stx += dt * (p[m[i]].x - xm);
            sty += dt * (p[m[i]].y - ym);
        }
        if (stt > 0) {
            t->vx_day = stx / stt;
            t->vy_day = sty / stt;
        }
    }
    t->ra = t->dec = t->rate = t->pa = NAN;
    if (wcs) {
        PYR_TRY(pyr_frames_wcs_sky(wcs, t->x0, t->y0, &t->ra, &t->dec));
        double span = t->last_mjd - t->first_mjd, ra1, dec1;
        if (isfinite(span) && span > 0) {
            double n = (double)(t->last_frame - t->first_frame);
            PYR_TRY(pyr_frames_wcs_sky(wcs, t->x0 + t->vx * n, t->y0 + t->vy * n, &ra1, &dec1));
            const double d2r = 3.14159265358979323846 / 180.0;
            double a0 = t->ra * d2r, d0 = t->dec * d2r, a1 = ra1 * d2r, d1 = dec1 * d2r;
            /* the angle between the two by the haversine (accurate for small ones) */
            double sd = sin(0.5 * (d1 - d0)), sa = sin(0.5 * (a1 - a0));
            double h = sd * sd + cos(d0) * cos(d1) * sa * sa;
            double sep = 2 * asin(sqrt(h < 1 ? h : 1));
            t->rate = sep / d2r * 3600.0 / (span * 24.0);
            double pa = atan2(sin(a1 - a0) * cos(d1), cos(d0) * sin(d1) - sin(d0) * cos(d1) * cos(a1 - a0)) / d2r;
            t->pa = pa < 0 ? pa + 360.0 : pa;
        }
    }
    return PYR_OK;
}

pyr_status_t pyr_frames_link(const pyr_frames_table_row_t *rows, int64_t n, const pyr_frames_link_options_t *options,
                             pyr_frames_wcs_t *wcs, int64_t *track_of, pyr_frames_track_t **tracks, int64_t *ntracks)
{
    if (!tracks || !ntracks || !options || (n > 0 && !rows))
        return pyr_fail(PYR_ERR_ARG, "pyr_frames_link: rows, options, tracks and ntracks are required");
    *tracks = NULL;
    *ntracks = 0;
    PYR_TRY(pyr_frames_link_options_validate(options));
    if (n < 0) return pyr_fail(PYR_ERR_ARG, "pyr_frames_link: n = %lld rows", (long long)n);
    for (int64_t i = 0; i < n; i++) {
        if (track_of) track_of[i] = -1;
        if (!isfinite(rows[i].x) || !isfinite(rows[i].y) || rows[i].frame < 0)
            return pyr_fail(PYR_ERR_ARG, "pyr_frames_link: row %lld has frame %lld at (%g, %g): rows need a frame >= 0 and "
                                         "finite positions",
                            (long long)i, (long long)rows[i].frame, rows[i].x, rows[i].y);
    }
    if (n < options->min_detections) return PYR_OK;
    point_t *p = malloc((size_t)n * sizeof *p);
    uint8_t *used = calloc((size_t)n, 1);
    int64_t *owner = malloc((size_t)n * sizeof *owner);
    seed_t *seeds = NULL;
    pyr_frames_track_t *out = NULL;
    int64_t nseeds = 0, capseeds = 0, nout = 0, *version = NULL;
    heap_t heap = {NULL, 0, 0};
    users_t users = {malloc((size_t)n * sizeof(int64_t)), NULL, NULL, 0, 0};
    pyr_status_t st = PYR_OK;
    if (!p || !used || !owner || !users.head) {
        st = pyr_fail(PYR_ERR_NOMEM, "out of host memory linking %lld candidates", (long long)n);
        goto done;
    }
    for (int64_t i = 0; i < n; i++) {
        p[i] = (point_t){rows[i].frame, i, rows[i].x, rows[i].y, rows[i].mjd, rows[i].snr, rows[i].flux};
        owner[i] = -1;
        users.head[i] = -1;
    }
    qsort(p, (size_t)n, sizeof *p, cmp_point);
    linker_t L = {p, n, options, used};
    /* the seeds: pairs no faster than max_speed, frames at most max_gap + 1 apart */
    for (int64_t a = 0; a < n && st == PYR_OK; a++) {
        for (int64_t df = 1; df <= options->max_gap + 1 && st == PYR_OK; df++) {
            int64_t lo, hi;
            frame_range(&L, p[a].frame + df, &lo, &hi);
            double r = options->max_speed * (double)df;
            for (int64_t b = lower_y(&L, lo, hi, p[a].y - r); b < hi && p[b].y <= p[a].y + r; b++) {
                if (hypot(p[b].x - p[a].x, p[b].y - p[a].y) > r) continue;
                if (nseeds == capseeds) {
                    int64_t cap = capseeds ? 2 * capseeds : 256;
                    seed_t *ns = realloc(seeds, (size_t)cap * sizeof *ns);
                    if (!ns) {
                        st = pyr_fail(PYR_ERR_NOMEM, "out of host memory for %lld pairs of candidates", (long long)cap);
                        break;
                    }
                    seeds = ns;
                    capseeds = cap;
                }
                seeds[nseeds++] = (seed_t){a, b, NULL, 0, 0, 0, 0};
                st = grow(&L, &seeds[nseeds - 1]);
                if (st == PYR_OK) st = enlist(&heap, &users, &seeds[nseeds - 1], nseeds - 1, 0);
                if (st != PYR_OK) break;
            }
        }
    }
    if (st == PYR_OK && !(version = calloc((size_t)(nseeds > 0 ? nseeds : 1), sizeof *version)))
        st = pyr_fail(PYR_ERR_NOMEM, "out of host memory for %lld pairs of candidates", (long long)nseeds);
    while (st == PYR_OK && heap.n > 0) {
        entry_t top = heap_pop(&heap);
        seed_t *b = &seeds[top.seed];
        if (top.version != version[top.seed] || used[b->a] || used[b->b]) continue;
        qsort(b->m, (size_t)b->k, sizeof *b->m, cmp_i64); /* by frame: the canonical order */
        pyr_frames_track_t *no = realloc(out, (size_t)(nout + 1) * sizeof *no);
        if (!no) {
            st = pyr_fail(PYR_ERR_NOMEM, "out of host memory for %lld tracks", (long long)(nout + 1));
            break;
        }
        out = no;
        memset(&out[nout], 0, sizeof out[nout]);
        out[nout].id = nout;
        st = describe(p, b->m, b->k, wcs, &out[nout]);
        if (st != PYR_OK) break;
        for (int64_t i = 0; i < b->k; i++) {
            used[b->m[i]] = 1;
            owner[b->m[i]] = nout;
        }
        nout++;
        /* the seeds whose tracks took one of these grow again (a track that failed may pass without the
         * detection that led it astray) */
        for (int64_t i = 0; i < b->k && st == PYR_OK; i++) {
            for (int64_t e = users.head[b->m[i]]; e >= 0 && st == PYR_OK; e = users.next[e]) {
                int64_t s = users.seed[e];
                seed_t *q = &seeds[s];
                if (q == b || used[q->a] || used[q->b]) continue;
                int touched = 0;
                for (int64_t j = 0; j < q->k && !touched; j++) touched = used[q->m[j]];
                if (!touched) continue;
                st = grow(&L, q);
                if (st == PYR_OK) st = enlist(&heap, &users, q, s, ++version[s]);
            }
        }
    }
    if (st == PYR_OK && nout > 0) {
        /* ids by first frame, then position; the owners follow */
        qsort(out, (size_t)nout, sizeof *out, cmp_track);
        int64_t *newid = malloc((size_t)nout * sizeof *newid);
        if (!newid) {
            st = pyr_fail(PYR_ERR_NOMEM, "out of host memory for %lld tracks", (long long)nout);
        } else {
            for (int64_t i = 0; i < nout; i++) newid[out[i].id] = i;
            for (int64_t i = 0; i < nout; i++) out[i].id = i;
            for (int64_t i = 0; i < n; i++)
                if (track_of) track_of[p[i].index] = owner[i] >= 0 ? newid[owner[i]] : -1;
            free(newid);
        }
    }
done:
    for (int64_t s = 0; s < nseeds; s++) free(seeds[s].m);
    free(seeds);
    free(version);
    free(heap.e);
    free(users.head);
    free(users.next);
    free(users.seed);
    free(p);
    free(used);
    free(owner);
    if (st != PYR_OK) {
        free(out);
        if (track_of)
            for (int64_t i = 0; i < n; i++) track_of[i] = -1;
        return st;
    }
    *tracks = out;
    *ntracks = nout;
    return PYR_OK;
}

void pyr_frames_tracks_free(pyr_frames_track_t **tracks)
{
    if (!tracks) return;
    free(*tracks);
    *tracks = NULL;
}

/* ------------------------------------------------------------------ table */

enum { C_I64, C_F64 };

typedef struct {
    const char *name, *unit;
    int type;
    size_t offset;
    const char *description;
} tcol_t;

static int track_columns(const pyr_frames_table_opts_t *o, int rich, tcol_t *c)
{
    int n = 0;
#define COL(name, unit, type, member, text) c[n++] = (tcol_t){name, unit, type, offsetof(pyr_frames_track_t, member), text}
    COL("id", NULL, C_I64, id, "track number (0-based; by first frame, then y0, then x0); the candidates' track column");
    COL("n", NULL, C_I64, n, "detections in the track");
    COL("first_frame", NULL, C_I64, first_frame, "index of the frame of the first detection (0-based)");
    COL("last_frame", NULL, C_I64, last_frame, "index of the frame of the last detection (0-based)");
    if (rich && o->mjd) {
        COL("first_mjd", "d", C_F64, first_mjd, "time of the first detection's frame (MJD)");
        COL("last_mjd", "d", C_F64, last_mjd, "time of the last detection's frame (MJD)");
    }
    COL("x0", "pix", C_F64, x0, "fitted position along NAXIS1 at first_frame, 0-based as the candidates' x");
    COL("y0", "pix", C_F64, y0, "fitted position along NAXIS2 at first_frame, 0-based as the candidates' y");
    COL("vx", NULL, C_F64, vx, "velocity along x in pixels per frame (least squares against the frame index)");
    COL("vy", NULL, C_F64, vy, "velocity along y in pixels per frame");
    if (rich && o->mjd) {
        COL("vx_day", "pix / d", C_F64, vx_day, "velocity along x against time (least squares against the MJD)");
        COL("vy_day", "pix / d", C_F64, vy_day, "velocity along y against time");
    }
    if (rich && o->sky) {
        COL("ra", "deg", C_F64, ra, "right ascension of (x0, y0) by the WCS");
        COL("dec", "deg", C_F64, dec, "declination of (x0, y0) by the WCS");
    }
    if (rich && o->sky && o->mjd) {
        COL("rate", "arcsec / h", C_F64, rate, "rate of motion on the sky, between the fitted first and last positions");
        COL("pa", "deg", C_F64, pa, "position angle of the motion, east of north");
    }
    COL("rms", "pix", C_F64, rms, "root mean square distance of the detections from the fitted line");
    COL("snr_mean", NULL, C_F64, snr_mean, "mean matched-filter SNR of the detections");
#undef COL
    return n;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcasecmp(s + n - m, suffix);
}

static void yaml_quoted(FILE *fp, const char *s)
{
    fputc('\'', fp);
    for (; *s; s++) {
        if (*s == '\'') fputc('\'', fp);
        fputc(*s, fp);
    }
    fputc('\'', fp);
}

pyr_status_t pyr_frames_tracks_write(const char *path, const pyr_frames_track_t *tracks, int64_t ntracks,
                                     const pyr_frames_table_opts_t *opts)
{
    if (!path || !path[0]) return pyr_fail(PYR_ERR_ARG, "pyr_frames_tracks_write: no path given");
    if (ntracks < 0 || (ntracks > 0 && !tracks))
        return pyr_fail(PYR_ERR_ARG, "pyr_frames_tracks_write: %lld tracks at %p", (long long)ntracks, (const void *)tracks);
    const pyr_frames_table_opts_t none = {0, 0, NULL, NULL, 0};
    const pyr_frames_table_opts_t *o = opts ? opts : &none;
    const int fits = ends_with(path, ".fits") || ends_with(path, ".fit"), ecsv = ends_with(path, ".ecsv");
    tcol_t c[24];
    const int nc = track_columns(o, fits || ecsv, c);
    if (fits) {
        /* FITS tables here hold int32 and double: ids and frames fit int32 */
        const int64_t m = ntracks > 0 ? ntracks : 1;
        double *d = malloc((size_t)(m * nc) * sizeof *d);
        int *iv = malloc((size_t)(m * nc) * sizeof *iv);
        pyr_fits_column_t fc[24];
        pyr_status_t st = PYR_OK;
        if (!d || !iv) st = pyr_fail(PYR_ERR_NOMEM, "out of host memory writing %lld tracks", (long long)ntracks);
        for (int j = 0; st == PYR_OK && j < nc; j++) {
            for (int64_t i = 0; i < ntracks; i++) {
                const char *base = (const char *)&tracks[i] + c[j].offset;
                if (c[j].type == C_I64) {
                    int64_t v;
                    memcpy(&v, base, sizeof v);
                    iv[j * m + i] = (int)v;
                } else {
                    memcpy(&d[j * m + i], base, sizeof(double));
                }
            }
            fc[j] = (pyr_fits_column_t){c[j].name, c[j].unit, c[j].description, c[j].type == C_I64 ? 'J' : 'D',
                                        c[j].type == C_I64 ? (const void *)(iv + j * m) : (const void *)(d + j * m)};
        }
        if (st == PYR_OK) {
            char cards[2][81];
            snprintf(cards[0], 81, "%-8s= %20d / %-47s", "PIXORIGN", 0, "x0, y0 count pixels from 0 (FITS counts from 1)");
            snprintf(cards[1], 81, "HISTORY pyrgrid %s frames: tracks", PYR_VERSION_STRING);
            st = pyr_fits_write_table(path, "TRACKS", fc, nc, ntracks, (const char(*)[81])cards, 2);
        }
        free(d);
        free(iv);
        return st;
    }
    pyr_atomic_file_t af;
    PYR_TRY(pyr_atomic_open(&af, path));
    FILE *fp = af.fp;
    if (ecsv) {
        fprintf(fp, "# %%ECSV 1.0\n# ---\n# datatype:\n");
        for (int i = 0; i < nc; i++) {
            fprintf(fp, "# - {name: %s, ", c[i].name);
            if (c[i].unit) fprintf(fp, "unit: %s, ", c[i].unit);
            fprintf(fp, "datatype: %s, description: ", c[i].type == C_I64 ? "int64" : "float64");
            yaml_quoted(fp, c[i].description);
            fprintf(fp, "}\n");
        }
        fprintf(fp, "# meta: !!omap\n# - {pixel_origin: 0}\n# - {positions: ");
        yaml_quoted(fp, o->positions ? o->positions : "the candidates'");
        fprintf(fp, "}\n# - {source: 'pyrgrid %s frames tracks'}\n# schema: astropy-2.0\n", PYR_VERSION_STRING);
    }
    const char sep = ecsv ? ' ' : ',';
    for (int i = 0; i < nc; i++) fprintf(fp, "%s%s", i ? (sep == ' ' ? " " : ",") : "", c[i].name);
    fputc('\n', fp);
    for (int64_t r = 0; r < ntracks; r++) {
        for (int j = 0; j < nc; j++) {
            const char *base = (const char *)&tracks[r] + c[j].offset;
            if (j) fputc(sep, fp);
            if (c[j].type == C_I64) {
                int64_t v;
                memcpy(&v, base, sizeof v);
                fprintf(fp, "%lld", (long long)v);
            } else {
                double v;
                memcpy(&v, base, sizeof v);
                if (!isfinite(v)) fprintf(fp, "nan");
                else if (!strcmp(c[j].name, "ra") || !strcmp(c[j].name, "dec")) fprintf(fp, "%.12f", v);
                else fprintf(fp, "%.10g", v);
            }
        }
        fputc('\n', fp);
    }
    if (ferror(fp)) {
        pyr_atomic_abort(&af);
        return pyr_fail(PYR_ERR_IO, "%s: writing the tracks failed", path);
    }
    return pyr_atomic_commit(&af);
}
