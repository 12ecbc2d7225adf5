/* Candidates linked into tracks (pyr_frames_link, pyrgrid_frames_io.h) on
 * synthetic candidate lists: two movers that cross, one with a gap of one
 * frame and one with a gap of two, a stationary false positive, and random
 * noise detections.  Exactly the two true tracks come back, with the
 * least-squares velocities of their detections (computed here on their own),
 * whatever the order of the rows; the link_* keys refuse bad values; the
 * tracks table is written as ECSV, FITS and CSV. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pyrgrid.h"
#include "pyrgrid_frames.h"
#include "pyrgrid_frames_io.h"

#define T 14
#define MAXROWS 256

static uint64_t lcg = 12345;
static double uniform(void)
{
    lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(lcg >> 11) / 9007199254740992.0;
}

typedef struct {
    pyr_frames_table_row_t r[MAXROWS];
    int truth[MAXROWS]; /* 0: mover A, 1: mover B, -1: neither */
    int n;
} rows_t;

static void add(rows_t *s, int64_t f, double x, double y, double snr, int truth)
{
    s->r[s->n] = (pyr_frames_table_row_t){f, 60000.0 + 0.02 * (double)f, x, y, NAN, NAN, 100.0, snr, -1};
    s->truth[s->n++] = truth;
}

/* The least-squares velocity of the rows of one truth, against the frame index and against the MJD. */
static void lsq(const rows_t *s, int truth, double *vx, double *vy, double *vx_day)
{
    double tm = 0, xm = 0, ym = 0, dm = 0;
    int k = 0;
    for (int i = 0; i < s->n; i++)
        if (s->truth[i] == truth) {
            tm += (double)s->r[i].frame;
            dm += s->r[i].mjd;
            xm += s->r[i].x;
            ym += s->r[i].y;
            k++;
        }
    tm /= k;
    dm /= k;
    xm /= k;
    ym /= k;
    double stt = 0, stx = 0, sty = 0, sdd = 0, sdx = 0;
    for (int i = 0; i < s->n; i++)
        if (s->truth[i] == truth) {
            double dt = (double)s->r[i].frame - tm, dd = s->r[i].mjd - dm;
            stt += dt * dt;
            stx += dt * (s->r[i].x - xm);
            sty += dt * (s->r[i].y - ym);
            sdd += dd * dd;
            sdx += dd * (s->r[i].x - xm);
        }
    *vx = stx / stt;
    *vy = sty / stt;
    *vx_day = sdx / sdd;
}

static void scene(rows_t *s)
{
    memset(s, 0, sizeof *s);
    for (int f = 0; f < T; f++) {
        /* A: (10, 40) + (2, 0.5) per frame, missing in frame 5 */
        if (f != 5) add(s, f, 10 + 2.0 * f + 0.1 * (uniform() - 0.5), 40 + 0.5 * f + 0.1 * (uniform() - 0.5), 9.0, 0);
        /* B: crosses A between frames 7 and 8, missing in frames 3 and 4 */
        if (f != 3 && f != 4) add(s, f, 40 - 2.0 * f + 0.1 * (uniform() - 0.5), 42 + 0.3 * f + 0.1 * (uniform() - 0.5), 7.0, 1);
        /* a stationary false positive (a star's residual) */
        add(s, f, 70 + 0.05 * (uniform() - 0.5), 12 + 0.05 * (uniform() - 0.5), 6.0, -1);
        /* noise detections */
        for (int k = 0; k < 4; k++) add(s, f, 128 * uniform(), 128 * uniform(), 5.0 + uniform(), -1);
    }
}

static int tracks_equal(const pyr_frames_track_t *a, const pyr_frames_track_t *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (a[i].n != b[i].n || a[i].first_frame != b[i].first_frame || a[i].last_frame != b[i].last_frame || a[i].x0 != b[i].x0 ||
            a[i].y0 != b[i].y0 || a[i].vx != b[i].vx || a[i].vy != b[i].vy || a[i].rms != b[i].rms)
            return 0;
    return 1;
}

static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    char *b = calloc(1, 1 << 16);
    size_t n = fread(b, 1, (1 << 16) - 1, fp);
    b[n] = 0;
    fclose(fp);
    return b;
}

int main(void)
{
    static rows_t s;
    scene(&s);
    pyr_frames_link_options_t o;
    pyr_frames_link_options_default(&o);
    CHECK(o.min_detections == 3 && o.max_gap == 2, "defaults %d %d", o.min_detections, o.max_gap);
    int64_t track_of[MAXROWS], ntracks = 0;
    pyr_frames_track_t *tr = NULL;
    CHECK_OK(pyr_frames_link(s.r, s.n, &o, NULL, track_of, &tr, &ntracks));
    CHECK(ntracks == 2, "%lld tracks, expected the 2 movers", (long long)ntracks);
    if (ntracks == 2) {
        /* ids by first frame, then y0: A (y0 = 40) before B (y0 = 42) */
        for (int id = 0; id < 2; id++) {
            double vx, vy, vxd;
            lsq(&s, id, &vx, &vy, &vxd);
            int nt = 0;
            for (int i = 0; i < s.n; i++) nt += s.truth[i] == id;
            CHECK(tr[id].n == nt, "track %d has %lld detections, expected %d", id, (long long)tr[id].n, nt);
            CHECK(fabs(tr[id].vx - vx) < 1e-9 && fabs(tr[id].vy - vy) < 1e-9, "track %d: v = (%.12g, %.12g), least squares (%.12g, %.12g)",
                  id, tr[id].vx, tr[id].vy, vx, vy);
            CHECK(fabs(tr[id].vx_day - vxd) < 1e-6 * fabs(vxd), "track %d: vx_day %.12g, least squares %.12g", id, tr[id].vx_day, vxd);
            CHECK(fabs(tr[id].vx - (id ? -2.0 : 2.0)) < 0.02 && fabs(tr[id].vy - (id ? 0.3 : 0.5)) < 0.02, "track %d: v = (%g, %g)",
                  id, tr[id].vx, tr[id].vy);
            CHECK(tr[id].first_frame == 0 && tr[id].last_frame == T - 1, "track %d spans frames %lld..%lld", id,
                  (long long)tr[id].first_frame, (long long)tr[id].last_frame);
            CHECK(fabs(tr[id].x0 - (id ? 40.0 : 10.0)) < 0.1 && fabs(tr[id].y0 - (id ? 42.0 : 40.0)) < 0.1, "track %d starts at (%g, %g)",
                  id, tr[id].x0, tr[id].y0);
            CHECK(tr[id].rms < 0.1, "track %d: rms %g", id, tr[id].rms);
            CHECK(fabs(tr[id].snr_mean - (id ? 7.0 : 9.0)) < 1e-12, "track %d: mean snr %g", id, tr[id].snr_mean);
            CHECK(fabs(tr[id].first_mjd - 60000.0) < 1e-9 && fabs(tr[id].last_mjd - (60000.0 + 0.02 * (T - 1))) < 1e-9,
                  "track %d: mjd %.9f..%.9f", id, tr[id].first_mjd, tr[id].last_mjd);
            CHECK(isnan(tr[id].ra) && isnan(tr[id].rate), "no WCS: no sky");
        }
        int wrong = 0;
        for (int i = 0; i < s.n; i++) wrong += track_of[i] != s.truth[i];
        CHECK(wrong == 0, "%d rows in the wrong track (or in one where none belongs)", wrong);
    }

    /* the same tracks whatever the rows' order */
    static rows_t sh;
    sh = s;
    int perm[MAXROWS];
    for (int i = 0; i < s.n; i++) perm[i] = i;
    for (int i = s.n - 1; i > 0; i--) {
        int j = (int)(uniform() * (i + 1));
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int i = 0; i < s.n; i++) {
        sh.r[i] = s.r[perm[i]];
        sh.truth[i] = s.truth[perm[i]];
    }
    int64_t track_of2[MAXROWS], n2 = 0;
    pyr_frames_track_t *tr2 = NULL;
    CHECK_OK(pyr_frames_link(sh.r, sh.n, &o, NULL, track_of2, &tr2, &n2));
    CHECK(n2 == ntracks && tracks_equal(tr, tr2, ntracks), "shuffled rows give other tracks");
    int moved = 0;
    for (int i = 0; i < s.n; i++) moved += track_of2[i] != track_of[perm[i]];
    CHECK(moved == 0, "%d shuffled rows in another track", moved);
    pyr_frames_tracks_free(&tr2);

    /* a gap longer than link_max_gap splits B (frames 3, 4 missing): with max_gap 1 it is two pieces */
    pyr_frames_link_options_t o1 = o;
    o1.max_gap = 1;
    CHECK_OK(pyr_frames_link(s.r, s.n, &o1, NULL, NULL, &tr2, &n2));
    CHECK(n2 == 3, "max_gap 1: %lld tracks, expected A whole and B in two pieces", (long long)n2);
    pyr_frames_tracks_free(&tr2);
    /* min_speed 0 links the stationary false positive too */
    o1 = o;
    o1.min_speed = 0;
    CHECK_OK(pyr_frames_link(s.r, s.n, &o1, NULL, NULL, &tr2, &n2));
    CHECK(n2 == 3, "min_speed 0: %lld tracks, expected the stationary one too", (long long)n2);
    pyr_frames_tracks_free(&tr2);
    /* max_speed below the movers' 2.06 pixels per frame: none */
    o1 = o;
    o1.max_speed = 1.5;
    CHECK_OK(pyr_frames_link(s.r, s.n, &o1, NULL, NULL, &tr2, &n2));
    CHECK(n2 == 0 && tr2 == NULL, "max_speed 1.5: %lld tracks", (long long)n2);
    /* nothing to link */
    CHECK_OK(pyr_frames_link(NULL, 0, &o, NULL, NULL, &tr2, &n2));
    CHECK(n2 == 0, "no rows: no tracks");

    /* dense noise (chance alignments make many tracks, taken in turn and grown again as their detections
     * go): still the same tracks whatever the order */
    {
        enum { DF = 30, DM = 150, DN = DF * DM };
        pyr_frames_table_row_t *dr = malloc(DN * sizeof *dr), *ds = malloc(DN * sizeof *ds);
        int *dp = malloc(DN * sizeof *dp);
        int64_t *o1of = malloc(DN * sizeof *o1of), *o2of = malloc(DN * sizeof *o2of), na = 0, nb = 0;
        pyr_frames_track_t *ta = NULL, *tb = NULL;
        for (int i = 0; i < DN; i++) {
            dr[i] = (pyr_frames_table_row_t){i / DM, NAN, 256 * uniform(), 256 * uniform(), NAN, NAN, 1.0, 5 + uniform(), -1};
            dp[i] = i;
        }
        for (int i = DN - 1; i > 0; i--) {
            int j = (int)(uniform() * (i + 1)), t = dp[i];
            dp[i] = dp[j];
            dp[j] = t;
        }
        for (int i = 0; i < DN; i++) ds[i] = dr[dp[i]];
        CHECK_OK(pyr_frames_link(dr, DN, &o, NULL, o1of, &ta, &na));
        CHECK_OK(pyr_frames_link(ds, DN, &o, NULL, o2of, &tb, &nb));
        int differ = 0;
        for (int i = 0; i < DN; i++) differ += o2of[i] != o1of[dp[i]];
        CHECK(na > 10 && na == nb && tracks_equal(ta, tb, na) && differ == 0, "dense noise: %lld and %lld tracks, %d rows differ",
              (long long)na, (long long)nb, differ);
        pyr_frames_tracks_free(&ta);
        pyr_frames_tracks_free(&tb);
        free(dr);
        free(ds);
        free(dp);
        free(o1of);
        free(o2of);
    }

    /* a tie: two detections as near to the prediction (0.3 pixels either side in y): the first in the
     * canonical order (frame, y, x) joins, whatever order they came in */
    for (int order = 0; order < 2; order++) {
        pyr_frames_table_row_t tie[6];
        int k = 0;
        for (int f = 0; f < 5; f++)
            if (f != 3) tie[k++] = (pyr_frames_table_row_t){f, NAN, 10.0 + f, 100.0, NAN, NAN, 1.0, 6.0, -1};
        tie[k++] = (pyr_frames_table_row_t){3, NAN, 13.0, order ? 100.3 : 99.7, NAN, NAN, 1.0, 6.0, -1};
        tie[k++] = (pyr_frames_table_row_t){3, NAN, 13.0, order ? 99.7 : 100.3, NAN, NAN, 1.0, 6.0, -1};
        int64_t of[6];
        CHECK_OK(pyr_frames_link(tie, 6, &o, NULL, of, &tr2, &n2));
        int low = order ? 5 : 4, high = order ? 4 : 5;
        CHECK(n2 == 1 && tr2[0].n == 5 && of[low] == 0 && of[high] == -1, "tie (order %d): %lld tracks, rows %lld %lld", order,
              (long long)n2, (long long)of[4], (long long)of[5]);
        pyr_frames_tracks_free(&tr2);
    }

    /* the keys and their refusals */
    pyr_frames_link_options_t k;
    pyr_frames_link_options_default(&k);
    CHECK_OK(pyr_frames_link_options_set(&k, "frames.link_max_gap", "4"));
    CHECK_OK(pyr_frames_link_options_set(&k, "link_max_residual", "0.5"));
    CHECK(k.max_gap == 4 && k.max_residual == 0.5, "set: %d %g", k.max_gap, k.max_residual);
    CHECK_FAILS(pyr_frames_link_options_set(&k, "link_max_gap", "two"), PYR_ERR_CONFIG, "not an integer");
    CHECK_FAILS(pyr_frames_link_options_set(&k, "link_max_sped", "3"), PYR_ERR_CONFIG, "link_max_speed");
    CHECK_FAILS(pyr_frames_link_options_set(&k, "history", "3"), PYR_ERR_CONFIG, "not a linking key");
    CHECK_FAILS(pyr_frames_link_options_set(&k, "link_max_speed", "inf"), PYR_ERR_CONFIG, "finite");
    k.min_detections = 2;
    CHECK_FAILS(pyr_frames_link_options_validate(&k), PYR_ERR_CONFIG, "3 detections or more");
    pyr_frames_link_options_default(&k);
    k.max_speed = 0;
    CHECK_FAILS(pyr_frames_link_options_validate(&k), PYR_ERR_CONFIG, "link_max_speed");
    pyr_frames_link_options_default(&k);
    k.min_speed = 20;
    CHECK_FAILS(pyr_frames_link_options_validate(&k), PYR_ERR_CONFIG, "below frames.link_max_speed");
    pyr_frames_link_options_default(&k);
    k.max_residual = -1;
    CHECK_FAILS(pyr_frames_link_options_validate(&k), PYR_ERR_CONFIG, "link_max_residual");
    pyr_frames_link_options_default(&k);
    k.max_gap = -1;
    CHECK_FAILS(pyr_frames_link(s.r, s.n, &k, NULL, NULL, &tr2, &n2), PYR_ERR_CONFIG, "link_max_gap");
    /* the pipeline's options refuse them, naming where they go */
    pyr_frames_options_t *po = NULL;
    CHECK_OK(pyr_frames_options_create(&po));
    CHECK_FAILS(pyr_frames_options_set(po, "link_max_gap", "3"), PYR_ERR_CONFIG, "pyr_frames_link_options_set");
    pyr_frames_options_destroy(&po);
    /* in a configuration, with the tracks file */
    pyr_frames_config_t *cfg = NULL;
    CHECK_OK(pyr_frames_config_create(&cfg));
    CHECK_OK(pyr_frames_config_set(cfg, "frames.link_min_detections=5"));
    CHECK_OK(pyr_frames_config_set(cfg, "frames.tracks=t.ecsv"));
    CHECK(pyr_frames_config_link_options(cfg)->min_detections == 5, "config's link options");
    CHECK(!strcmp(pyr_frames_config_text(cfg, "tracks"), "t.ecsv"), "config's tracks");
    CHECK_FAILS(pyr_frames_config_set(cfg, "frames.link_min_speed=fast"), PYR_ERR_CONFIG, "not a number");
    pyr_frames_config_destroy(&cfg);

    /* the tables */
    char dir[] = "/tmp/pyr_frames_link_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char path[256];
    pyr_frames_table_opts_t to = {0, 1, NULL, "frame 0's", 0};
    snprintf(path, sizeof path, "%s/tracks.ecsv", dir);
    CHECK_OK(pyr_frames_tracks_write(path, tr, ntracks, &to));
    char *text = slurp(path);
    CHECK(text && strstr(text, "# %ECSV 1.0") && strstr(text, "{name: vx_day, unit: pix / d, datatype: float64") &&
              strstr(text, "\nid n first_frame last_frame first_mjd last_mjd x0 y0 vx vy vx_day vy_day rms snr_mean\n0 13 0 13 "),
          "tracks.ecsv:\n%s", text ? text : "(none)");
    free(text);
    snprintf(path, sizeof path, "%s/tracks.csv", dir);
    CHECK_OK(pyr_frames_tracks_write(path, tr, ntracks, &to));
    text = slurp(path);
    CHECK(text && !strncmp(text, "id,n,first_frame,last_frame,x0,y0,vx,vy,rms,snr_mean\n0,13,0,13,", 61), "tracks.csv:\n%s",
          text ? text : "(none)");
    free(text);
    snprintf(path, sizeof path, "%s/tracks.fits", dir);
    CHECK_OK(pyr_frames_tracks_write(path, tr, ntracks, &to));
    text = slurp(path);
    CHECK(text && strstr(text, "EXTNAME = 'TRACKS  '") && strstr(text, "TTYPE11 = 'vx_day  '"), "tracks.fits has no TRACKS table");
    free(text);
    /* an existing table is replaced whole, never half-written: a failed write leaves it */
    snprintf(path, sizeof path, "%s/nodir/tracks.ecsv", dir);
    CHECK_FAILS(pyr_frames_tracks_write(path, tr, ntracks, &to), PYR_ERR_IO, "nodir");
    /* the candidates with their track column */
    snprintf(path, sizeof path, "%s/cand.csv", dir);
    pyr_frames_table_t *t = NULL;
    pyr_frames_table_opts_t co = {0, 0, NULL, NULL, 1};
    CHECK_OK(pyr_frames_table_open(path, &co, &t));
    for (int i = 0; i < 3; i++) {
        pyr_frames_table_row_t r = s.r[i];
        r.track = track_of[i];
        CHECK_OK(pyr_frames_table_add(t, &r));
    }
    CHECK_OK(pyr_frames_table_commit(&t));
    text = slurp(path);
    CHECK(text && !strncmp(text, "frame,x,y,flux,snr,track\n", 25) && strstr(text, ",0\n") && strstr(text, ",1\n") &&
              strstr(text, ",-1\n"),
          "cand.csv:\n%s", text ? text : "(none)");
    free(text);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (!getenv("PYR_KEEP")) CHECK(system(cmd) == 0, "rm");
    pyr_frames_tracks_free(&tr);
    return check_report();
}
