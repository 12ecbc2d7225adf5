/* pyrgrid frames [--config FILE.ini] [--set frames.key=value]... [options] INPUT...
 *
 * Shift estimation, temporal whitening and detection over a frame sequence
 * (pyrgrid_frames.h).  Every output is checked before the first frame is
 * read (writable, not an input, not another output); they are written under
 * temporary names while the sequence runs and committed together at the end
 * (a stage, pyrgrid_output.h): a failure anywhere leaves every old output
 * as it was.  Devices and FIFOs are written in place and never removed. */
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "pyrgrid.h"
#include "pyrgrid_frames.h"
#include "pyrgrid_frames_io.h"
#include "pyrgrid_output.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: pyrgrid frames [--config FILE.ini] [--set frames.key=value]... [options] INPUT...\n"
            "  INPUT: a FITS cube (NAXIS3 = frames), 2D FITS files or glob patterns ('night1/*.fits'),\n"
            "         calibrated exposures (extensions IMAGE, MASK, VARIANCE: one per file, or cubes),\n"
            "         or a .npy stack (T, ny, nx) of uint16, int16, float32 or float64\n"
            "  -o, --residual FILE   whitened residual cube, .fits or .npy (default residual.fits; '' for none)\n"
            "  --shifts FILE         frame,dx,dy,iterations (default shifts.csv)\n"
            "  --candidates FILE     .csv: frame,x,y,flux,snr (default candidates.csv); .ecsv or .fits: a table\n"
            "                        with units, mjd and ra, dec from the frames' WCS (x, y 0-based)\n"
            "  --snr-png FILE        maximum matched-filter SNR over the sequence (default max_snr.png)\n"
            "  --max-snr FILE        the same map as .fits or .npy\n"
            "  --tracks FILE         the candidates linked into tracks (straight lines, constant velocity): .ecsv,\n"
            "                        .fits or .csv, one row per track; the candidates gain a track column\n"
            "                        (frames.link_* keys: docs/frames.md#tracks)\n"
            "  --mask-bits BITS      bits of a MASK plane that mark bad pixels: all | 0x2f | BAD,SAT,CR (names\n"
            "                        from the MASK header's MP_ cards)\n"
            "  --history N           frames predicting each frame (20)\n"
            "  --weights W           align (register the history) | poly (shift-aware polynomial) | plain\n"
            "  --threshold K         detection threshold in sigma (5)\n"
            "  --no-clean            keep detected objects in the history\n"
            "  --backend B           auto | cpu | cuda\n"
            "  --quiet               no progress bar or notices\n"
            "  --report FILE.json    also write a report: inputs, options, timings per stage, counts, versions, machine\n"
            "  every key of the [frames] section can be set with --set frames.key=value (README.md)\n");
}

typedef struct {
    int64_t nframes, nx, ny;
    pyr_frames_cube_t *residual;
    pyr_output_file_t *shifts;
    pyr_frames_table_t *table;
    /* the candidates' times and sky positions */
    pyr_frames_source_t *src;
    const double *mjd;
    pyr_frames_wcs_t *wcs; /* of frame wcs_frame (0: every frame's positions are in frame 0's grid) */
    int64_t wcs_frame;
    int wcs_each;  /* positions in each frame's own grid: its own WCS */
    /* linking: every candidate kept (the table's rows are added once their tracks are known) */
    int linking;
    pyr_frames_table_row_t *rows;
    int64_t nrows, caprows;
    float *dx, *dy;
    int *iters;
    /* progress */
    double start, last_draw, after;
    int tty, quiet, drawn;
    int64_t ncand, detecting_frames;
    const char *failed; /* the output a write into failed, for the message */
} sink_t;

static pyr_status_t on_result(void *user, const pyr_frames_result_t *r)
{
    sink_t *s = user;
    pyr_status_t st = PYR_OK;
    if (s->residual) st = pyr_frames_cube_write(s->residual, r->frame, r->residual);
    if (st != PYR_OK) {
        s->failed = "frames.residual: ";
        return st;
    }
    s->dx[r->frame] = (float)r->dx;
    s->dy[r->frame] = (float)r->dy;
    s->iters[r->frame] = r->iterations;
    if (s->shifts) fprintf(pyr_output_file_stream(s->shifts), "%lld,%.5f,%.5f,%d\n", (long long)r->frame, r->dx, r->dy, r->iterations);
    if (s->table && s->wcs && s->wcs_each && s->wcs_frame != r->frame && r->ncandidates) {
        pyr_frames_wcs_destroy(&s->wcs);
        st = pyr_frames_source_frame_wcs(s->src, r->frame, &s->wcs);
        if (st == PYR_OK && !s->wcs)
            st = pyr_fail(PYR_ERR_FORMAT, "frame %lld's header no longer has a WCS", (long long)r->frame);
        s->wcs_frame = r->frame;
    }
    for (int i = 0; s->table && !s->linking && st == PYR_OK && i < r->ncandidates; i++) {
        const pyr_frames_candidate_t *c = &r->candidates[i];
        pyr_frames_table_row_t row = {r->frame, s->mjd ? s->mjd[r->frame] : NAN, c->x, c->y, NAN, NAN, c->flux, c->snr, -1};
        if (s->wcs) st = pyr_frames_wcs_sky(s->wcs, c->x, c->y, &row.ra, &row.dec);
        if (st == PYR_OK) st = pyr_frames_table_add(s->table, &row);
    }
    for (int i = 0; s->linking && st == PYR_OK && i < r->ncandidates; i++) {
        if (s->nrows == s->caprows) {
            int64_t cap = s->caprows ? 2 * s->caprows : 1024;
            pyr_frames_table_row_t *nr = realloc(s->rows, (size_t)cap * sizeof *nr);
            if (!nr) {
                s->failed = "frames.tracks: ";
                return pyr_fail(PYR_ERR_NOMEM, "out of host memory for %lld candidates to link", (long long)cap);
            }
            s->rows = nr;
            s->caprows = cap;
        }
        const pyr_frames_candidate_t *c = &r->candidates[i];
        pyr_frames_table_row_t row = {r->frame, s->mjd ? s->mjd[r->frame] : NAN, c->x, c->y, NAN, NAN, c->flux, c->snr, -1};
        if (s->table && s->wcs) st = pyr_frames_wcs_sky(s->wcs, c->x, c->y, &row.ra, &row.dec);
        s->rows[s->nrows++] = row;
    }
    if (st != PYR_OK) {
        s->failed = "frames.candidates: ";
        return st;
    }
    s->ncand += r->ncandidates;
    s->detecting_frames += r->detecting;
    if (!s->quiet && s->tty) {
        double t = pyr_seconds_now(), el = t - s->start;
        int64_t done = r->frame + 1;
        if (el >= s->after && (t - s->last_draw >= 0.1 || done == s->nframes)) {
            s->last_draw = t;
            double frac = (double)done / (double)s->nframes;
            int width = 30, full = (int)(frac * width);
            char bar[64];
            for (int i = 0; i < width; i++) bar[i] = i < full ? '#' : '.';
            bar[width] = 0;
            double eta = frac > 0 ? el * (1 - frac) / frac : 0;
            fprintf(stderr, "\r[%s] %5.1f%%  frame %lld/%lld  %.0fs elapsed, ETA %.0fs ", bar, 100 * frac, (long long)done,
                    (long long)s->nframes, el, eta);
            s->drawn = 1;
        }
    }
    return PYR_OK;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcasecmp(s + n - m, suffix);
}

/* Expand a word: a glob pattern becomes its sorted matches (none: an
 * error); a file of that very name ("x[1].fits") is taken as it is. */
static int add_input(char ***list, int *n, int *cap, const char *word)
{
    glob_t g;
    int has_glob = strpbrk(word, "*?[") != NULL && access(word, F_OK) != 0;
    if (has_glob) {
        int rc = glob(word, 0, NULL, &g);
        if (rc != 0) {
            fprintf(stderr, "pyrgrid: error: no file matches %s\n", word);
            if (rc == 0 || rc == GLOB_NOMATCH) globfree(&g);
            return 1;
        }
    }
    size_t k = has_glob ? g.gl_pathc : 1;
    for (size_t i = 0; i < k; i++) {
        if (*n == *cap) {
            *cap = *cap ? 2 * *cap : 16;
            char **nl = realloc(*list, (size_t)*cap * sizeof **list);
            if (!nl) return 1;
            *list = nl;
        }
        (*list)[(*n)++] = strdup(has_glob ? g.gl_pathv[i] : word);
    }
    if (has_glob) globfree(&g);
    return 0;
}

static int64_t linked_count(const int64_t *track_of, int64_t n)
{
    int64_t k = 0;
    for (int64_t i = 0; track_of && i < n; i++) k += track_of[i] >= 0;
    return k;
}

static int fail(const char *what)
{
    fprintf(stderr, "pyrgrid: error: %s%s\n", what ? what : "", pyr_last_error());
    return 1;
}

int pyr_cli_frames(int argc, char **argv)
{
    pyr_frames_config_t *cfg = NULL;
    int quiet = 0;
    const char *config = NULL, *report = NULL;
    char **inputs = NULL;
    int ninputs = 0, cap = 0, rc = 1;
    /* the config file first, then every override in order */
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--config") || !strcmp(argv[i], "-c")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "pyrgrid: error: --config needs a file\n");
                return 2;
            }
            config = argv[++i];
        }
    }
    if (pyr_frames_config_create(&cfg) != PYR_OK || (config && pyr_frames_config_load(cfg, config) != PYR_OK)) {
        pyr_frames_config_destroy(&cfg);
        return fail(NULL);
    }
    static const struct {
        const char *opt, *key;
        int arg;
    } map[] = {{"-o", "residual", 1},         {"--residual", "residual", 1}, {"--shifts", "shifts", 1},
               {"--candidates", "candidates", 1}, {"--snr-png", "snr_image", 1}, {"--max-snr", "max_snr", 1},
               {"--history", "history", 1},   {"--weights", "weights", 1},   {"--threshold", "threshold", 1},
               {"--mask-bits", "mask_bits", 1}, {"--tracks", "tracks", 1},
               {"--backend", "backend", 1},   {"--no-clean", "clean", 0}};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--config") || !strcmp(a, "-c")) {
            i++;
            continue;
        }
        if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            quiet = 1;
            continue;
        }
        if (!strcmp(a, "--report")) {
            if (i + 1 >= argc || !argv[i + 1][0]) {
                fprintf(stderr, "pyrgrid: error: --report needs a file name, e.g. --report frames.json\n");
                rc = 2;
                goto out;
            }
            report = argv[++i];
            continue;
        }
        const char *set = NULL;
        char buf[PYR_PATH_MAX + 64];
        if (!strcmp(a, "--set") || !strcmp(a, "-s")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "pyrgrid: error: --set needs frames.key=value\n");
                goto out;
            }
            set = argv[++i];
        } else if (!strncmp(a, "--set=", 6)) {
            set = a + 6;
        } else if (a[0] == '-' && a[1]) {
            size_t m = 0;
            for (; m < sizeof map / sizeof map[0]; m++)
                if (!strcmp(a, map[m].opt)) break;
            if (m == sizeof map / sizeof map[0]) {
                fprintf(stderr, "pyrgrid: error: unknown option '%s' for frames; see pyrgrid frames --help\n", a);
                rc = 2;
                goto out;
            }
            if (map[m].arg && i + 1 >= argc) {
                fprintf(stderr, "pyrgrid: error: %s needs a value\n", a);
                rc = 2;
                goto out;
            }
            snprintf(buf, sizeof buf, "%s=%s", map[m].key, map[m].arg ? argv[++i] : "no");
            set = buf;
        } else {
            if (add_input(&inputs, &ninputs, &cap, a)) goto out;
            continue;
        }
        if (pyr_frames_config_set(cfg, set) != PYR_OK) {
            rc = fail(NULL);
            goto out;
        }
    }
    /* the options and files as the file and the overrides left them */
    const pyr_frames_options_t *o = pyr_frames_config_options(cfg);
    const char *input = pyr_frames_config_text(cfg, "input"), *residual = pyr_frames_config_text(cfg, "residual"),
               *shifts = pyr_frames_config_text(cfg, "shifts"), *candidates = pyr_frames_config_text(cfg, "candidates"),
               *snr_image = pyr_frames_config_text(cfg, "snr_image"), *max_snr = pyr_frames_config_text(cfg, "max_snr"),
               *tracks = pyr_frames_config_text(cfg, "tracks");
    if (ninputs == 0 && input[0]) {
        char *copy = strdup(input), *save = NULL;
        for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
            if (add_input(&inputs, &ninputs, &cap, w)) {
                free(copy);
                goto out;
            }
        free(copy);
    }
    if (ninputs == 0) {
        fprintf(stderr, "pyrgrid: error: frames needs input frames: pyrgrid frames cube.fits (or frames.input in --config)\n");
        usage(stderr);
        rc = 2;
        goto out;
    }
    if (pyr_frames_options_validate(o) != PYR_OK || (tracks[0] && pyr_frames_link_options_validate(pyr_frames_config_link_options(cfg)) != PYR_OK)) {
        rc = fail(NULL);
        goto out;
    }
    if (residual[0] && !ends_with(residual, ".fits") && !ends_with(residual, ".fit") && !ends_with(residual, ".npy")) {
        fprintf(stderr, "pyrgrid: error: frames.residual = %s: the residual is written as .fits or .npy (an empty name writes none)\n",
                residual);
        goto out;
    }
    if (max_snr[0] && !ends_with(max_snr, ".fits") && !ends_with(max_snr, ".npy")) {
        fprintf(stderr, "pyrgrid: error: frames.max_snr = %s: the map is written as .fits or .npy (an empty name writes none)\n",
                max_snr);
        goto out;
    }
    /* fail before a long run, not after it: every output writable, none the
     * same file as another or as an input (each file a pattern matched, the
     * configuration) */
    const char *outs[] = {residual, shifts, candidates, snr_image, max_snr, tracks};
    {
        pyr_named_path_t named[7] = {{"frames.residual", residual},   {"frames.shifts", shifts},
                                     {"frames.candidates", candidates}, {"frames.snr_image", snr_image},
                                     {"frames.max_snr", max_snr},       {"--report", report},
                                     {"frames.tracks", tracks}};
        pyr_named_path_t *ins = calloc((size_t)ninputs + 1, sizeof *ins);
        if (!ins) {
            fprintf(stderr, "pyrgrid: error: out of memory\n");
            goto out;
        }
        for (int i = 0; i < ninputs; i++) ins[i] = (pyr_named_path_t){"frames.input", inputs[i]};
        ins[ninputs] = (pyr_named_path_t){"--config", config};
        pyr_status_t cs = pyr_check_outputs(named, 7, ins, ninputs + 1);
        free(ins);
        if (cs == PYR_OK && residual[0] && pyr_frames_cube_check_output(residual) != PYR_OK)
            cs = pyr_fail_context(PYR_ERR_IO, "frames.residual: ");
        if (cs == PYR_OK && max_snr[0] && pyr_frames_cube_check_output(max_snr) != PYR_OK)
            cs = pyr_fail_context(PYR_ERR_IO, "frames.max_snr: ");
        if (cs == PYR_OK && tracks[0] && (ends_with(tracks, ".fits") || ends_with(tracks, ".fit")) &&
            pyr_frames_cube_check_output(tracks) != PYR_OK)
            cs = pyr_fail_context(PYR_ERR_IO, "frames.tracks: ");
        if (cs != PYR_OK) {
            rc = fail(NULL);
            goto out;
        }
    }

    pyr_frames_source_t *src = NULL;
    pyr_frames_source_info_t info;
    if (pyr_frames_source_open((const char *const *)inputs, ninputs, &src) != PYR_OK) {
        rc = fail(NULL);
        goto out;
    }
    pyr_frames_source_get_info(src, &info);
    if (!quiet && info.notice[0]) fprintf(stderr, "pyrgrid: %s\n", info.notice);
    if (pyr_frames_source_set_mask_bits(src, pyr_frames_config_text(cfg, "mask_bits")) != PYR_OK) {
        rc = fail(NULL);
        pyr_frames_source_close(&src);
        goto out;
    }
    if (!quiet && (info.has_mask || info.has_variance))
        fprintf(stderr, "pyrgrid: %s: the %s%s%s plane%s read beside the science plane%s\n", info.kind, info.has_mask ? "MASK" : "",
                info.has_mask && info.has_variance ? " and " : "", info.has_variance ? "VARIANCE" : "",
                info.has_mask && info.has_variance ? "s are" : " is",
                !info.has_variance ? ""
                : o->noise == PYR_FRAMES_NOISE_MODEL ? "; the detection's noise is fitted (frames.noise = model), the VARIANCE planes unused"
                                                      : "; the VARIANCE planes are the detection's noise (frames.noise = model fits one instead)");
    if (!quiet && info.nframes <= o->history)
        fprintf(stderr, "pyrgrid: the sequence has %lld frames, not more than frames.history = %d: each frame is predicted from "
                        "the frames before it (frame t from t frames)\n",
                (long long)info.nframes, o->history);

    sink_t s;
    memset(&s, 0, sizeof s);
    s.nframes = info.nframes;
    s.nx = info.nx;
    s.ny = info.ny;
    s.quiet = quiet;
    s.tty = isatty(fileno(stderr));
    const char *after = getenv("PYRGRID_PROGRESS_AFTER");
    s.after = after && *after ? atof(after) : 1.0;
    if (!(s.after >= 0)) s.after = 1.0;
    void *buf = NULL;
    float *snr = NULL;
    uint8_t *mask = NULL;
    float *variance = NULL;
    double *mjd = NULL;
    s.src = src;
    s.wcs_frame = -1;
    pyr_frames_t *fr = NULL;
    /* the pipeline first: it refuses frame sizes it does not support before
     * anything of their size is allocated here */
    pyr_status_t st = pyr_frames_create(info.nx, info.ny, o, on_result, &s, &fr);
    if (st == PYR_OK && !quiet && pyr_frames_notice(fr)[0]) fprintf(stderr, "pyrgrid: %s\n", pyr_frames_notice(fr));
    if (st == PYR_OK) {
        const size_t npix = (size_t)info.nx * (size_t)info.ny;
        s.dx = calloc((size_t)info.nframes, sizeof *s.dx);
        s.dy = calloc((size_t)info.nframes, sizeof *s.dy);
        s.iters = calloc((size_t)info.nframes, sizeof *s.iters);
        buf = malloc(npix * pyr_frames_dtype_size(info.type));
        snr = malloc(npix * sizeof(float));
        if (info.has_mask && !(mask = malloc(npix))) st = pyr_fail(PYR_ERR_NOMEM, "out of host memory for a mask");
        if (st == PYR_OK && info.has_variance && o->noise != PYR_FRAMES_NOISE_MODEL && !(variance = malloc(npix * sizeof *variance)))
            st = pyr_fail(PYR_ERR_NOMEM, "out of host memory for a variance plane");
        if (!s.dx || !s.dy || !s.iters || !buf || !snr)
            st = pyr_fail(PYR_ERR_NOMEM, "out of host memory for %lld frames of %lld x %lld pixels (about %.0f MiB of buffers)",
                          (long long)info.nframes, (long long)info.nx, (long long)info.ny,
                          ((double)info.nframes * 12 + (double)npix * (double)(pyr_frames_dtype_size(info.type) + sizeof(float))) /
                              1048576.0);
    }
    const char *where = NULL;
    char hist[4][80];
    const char *hp[4] = {hist[0], hist[1], hist[2], hist[3]};
    snprintf(hist[0], 80, "pyrgrid %s frames: whitened residual f_t - sum_k a_k f_(t-k)", PYR_VERSION_STRING);
    snprintf(hist[1], 80, "history %d, weights %s, epsilon %g", o->history, pyr_frames_weights_name(o->weights),
             o->epsilon);
    snprintf(hist[2], 80, "%s coordinates; frame 0 (no history) is zero",
             o->weights == PYR_FRAMES_ALIGN ? "reference (frame 0)" : "each frame's own");
    snprintf(hist[3], 80, "input: %.70s", inputs[0]);
    if (st == PYR_OK && residual[0]) {
        st = pyr_frames_cube_open(residual, info.nx, info.ny, info.nframes, src, hp, 4, &s.residual);
        if (st != PYR_OK) where = "frames.residual: ";
    }
    if (st == PYR_OK && shifts[0]) {
        st = pyr_output_file_open(&s.shifts, shifts);
        if (st == PYR_OK) {
            fprintf(pyr_output_file_stream(s.shifts), "frame,dx,dy,iterations\n");
        } else {
            where = "frames.shifts: ";
        }
    }
    s.linking = tracks[0] != 0;
    pyr_frames_table_opts_t to = {0, 0, "", "", s.linking};
    if (st == PYR_OK && (candidates[0] || s.linking)) {
        if ((candidates[0] && pyr_frames_table_is_rich(candidates)) || (s.linking && pyr_frames_table_is_rich(tracks))) {
            /* times and sky positions from the headers, each checked now
             * rather than after the run */
            where = "frames.candidates: ";
            s.wcs_each = o->weights != PYR_FRAMES_ALIGN && info.nframes > 1 && info.has_header && strcmp(info.kind, "FITS cube") &&
                         strcmp(info.kind, "calexp cube");
            to.positions = o->weights == PYR_FRAMES_ALIGN ? "frame 0's (the reference's)" : "each frame's own";
            if (info.has_header && !(mjd = malloc((size_t)info.nframes * sizeof *mjd)))
                st = pyr_fail(PYR_ERR_NOMEM, "out of host memory for %lld frame times", (long long)info.nframes);
            for (int64_t i = 0; st == PYR_OK && mjd && i < info.nframes; i++) {
                st = pyr_frames_source_frame_mjd(src, i, &mjd[i]);
                if (st != PYR_OK) break;
                to.mjd |= !isnan(mjd[i]);
                if (i == 0 || s.wcs_each) {
                    pyr_frames_wcs_t *w = NULL;
                    st = pyr_frames_source_frame_wcs(src, i, &w);
                    if (st == PYR_OK && i == 0) {
                        s.wcs = w;
                        s.wcs_frame = 0;
                        w = NULL;
                    } else if (st == PYR_OK && !w && s.wcs) {
                        char name[PYR_PATH_MAX + 32];
                        pyr_frames_source_frame_name(src, i, name, sizeof name);
                        st = pyr_fail(PYR_ERR_FORMAT, "%s has no WCS where %s has one: the frames' sky positions need a WCS "
                                                      "in every frame",
                                      name, inputs[0]);
                    }
                    pyr_frames_wcs_destroy(&w);
                }
            }
            s.mjd = to.mjd ? mjd : NULL;
            to.sky = s.wcs != NULL;
            to.wcs = pyr_frames_wcs_describe(s.wcs);
            if (st == PYR_OK && !quiet && !s.wcs)
                fprintf(stderr, "pyrgrid: %s: the frames' header has no celestial WCS: the %s no ra, dec\n",
                        candidates[0] && pyr_frames_table_is_rich(candidates) ? candidates : tracks,
                        candidates[0] && pyr_frames_table_is_rich(candidates) ? "candidates have" : "tracks have");
        }
        if (st == PYR_OK && candidates[0]) st = pyr_frames_table_open(candidates, &to, &s.table);
        if (st != PYR_OK) where = "frames.candidates: ";
    }
    s.start = pyr_seconds_now();
    for (int64_t i = 0; st == PYR_OK && i < info.nframes; i++) {
        st = pyr_frames_source_read(src, i, buf);
        if (st == PYR_OK && mask) { /* this frame's bad pixels, for the frame pushed next */
            st = pyr_frames_source_read_mask(src, i, mask);
            if (st == PYR_OK) st = pyr_frames_set_mask(fr, mask);
        }
        if (st == PYR_OK && variance) { /* and its variance, the detection's noise */
            st = pyr_frames_source_read_variance(src, i, variance);
            if (st == PYR_OK) st = pyr_frames_set_variance(fr, variance);
        }
        if (st == PYR_OK) st = pyr_frames_push(fr, buf, info.type, NULL);
    }
    if (st == PYR_OK) st = pyr_frames_finish(fr);
    if (st != PYR_OK && !where) where = s.failed;
    double secs = pyr_seconds_now() - s.start;
    if (s.drawn) fputc('\n', stderr);
    if (st == PYR_OK && s.residual) {
        /* the shifts, and each frame's DATE-OBS and EXPTIME, beside a FITS cube */
        st = pyr_frames_cube_shifts(s.residual, info.nframes, s.dx, s.dy, s.iters, src);
        if (st != PYR_OK) where = "frames.residual: ";
    }
    if (st == PYR_OK && (snr_image[0] || max_snr[0])) st = pyr_frames_max_snr(fr, snr);
    /* the candidates linked into tracks: positions in frame 0's grid (a frame's own grid moved back by its
     * shift, frame_t(x) = reference(x - s_t)), its WCS for the sky */
    pyr_frames_track_t *trk = NULL;
    int64_t ntrk = 0, *track_of = NULL;
    pyr_frames_wcs_t *wcs0 = NULL;
    if (st == PYR_OK && s.linking) {
        where = "frames.tracks: ";
        pyr_frames_table_row_t *ref = malloc((size_t)(s.nrows > 0 ? s.nrows : 1) * sizeof *ref);
        track_of = malloc((size_t)(s.nrows > 0 ? s.nrows : 1) * sizeof *track_of);
        if (!ref || !track_of) st = pyr_fail(PYR_ERR_NOMEM, "out of host memory linking %lld candidates", (long long)s.nrows);
        for (int64_t i = 0; st == PYR_OK && i < s.nrows; i++) {
            ref[i] = s.rows[i];
            if (o->weights != PYR_FRAMES_ALIGN) {
                ref[i].x -= s.dx[ref[i].frame];
                ref[i].y -= s.dy[ref[i].frame];
            }
        }
        if (st == PYR_OK && to.sky) st = pyr_frames_source_frame_wcs(src, 0, &wcs0);
        if (st == PYR_OK) st = pyr_frames_link(ref, s.nrows, pyr_frames_config_link_options(cfg), wcs0, track_of, &trk, &ntrk);
        free(ref);
        for (int64_t i = 0; st == PYR_OK && i < s.nrows; i++) s.rows[i].track = track_of[i];
        where = "frames.candidates: ";
        for (int64_t i = 0; st == PYR_OK && s.table && i < s.nrows; i++) st = pyr_frames_table_add(s.table, &s.rows[i]);
    }
    /* Every output is committed together: the files are staged as they are
     * finished and renamed only when all are; a failure removes the new
     * temporaries and leaves every old output (and any device) as it was. */
    pyr_output_stage_t *stage = NULL;
    if (st == PYR_OK) st = pyr_output_stage_begin(&stage);
    if (st == PYR_OK && snr_image[0]) {
        char title[160];
        snprintf(title, sizeof title, "maximum matched-filter SNR over %lld frames (threshold %.3g)", (long long)info.nframes,
                 o->threshold);
        pyr_heatmap_opts_t ho = {.title = title};
        /* y up, as FITS viewers show an image (FITS's first row at the
         * bottom): the PNG's top row is the last row */
        float *up = malloc((size_t)(info.nx * info.ny) * sizeof *up);
        if (!up) st = pyr_fail(PYR_ERR_NOMEM, "out of host memory for the SNR image");
        for (int64_t y = 0; up && y < info.ny; y++)
            memcpy(up + (size_t)((info.ny - 1 - y) * info.nx), snr + (size_t)(y * info.nx), (size_t)info.nx * sizeof *up);
        if (up) st = pyr_png_write_heatmap(snr_image, up, PYR_FLOAT, info.nx, info.ny, &ho);
        free(up);
        where = "frames.snr_image: ";
    }
    if (st == PYR_OK && max_snr[0]) {
        where = "frames.max_snr: ";
        const char *h1[1] = {"pyrgrid frames: maximum matched-filter SNR per pixel"};
        st = pyr_frames_image_write(max_snr, info.nx, info.ny, snr, src, h1, 1);
    }
    if (st == PYR_OK && s.residual) {
        where = "frames.residual: ";
        st = pyr_frames_cube_commit(&s.residual);
    }
    if (st == PYR_OK && s.shifts) {
        where = "frames.shifts: ";
        st = pyr_output_file_commit(&s.shifts);
    }
    if (st == PYR_OK && s.table) {
        where = "frames.candidates: ";
        st = pyr_frames_table_commit(&s.table);
    }
    if (st == PYR_OK && s.linking) {
        where = "frames.tracks: ";
        pyr_frames_table_opts_t tt = to;
        tt.positions = "frame 0's (the reference's)";
        st = pyr_frames_tracks_write(tracks, trk, ntrk, &tt);
    }
    if (st == PYR_OK && report) {
        pyr_frames_stats_t fs;
        pyr_frames_get_stats(fr, &fs);
        where = "--report: ";
        st = pyr_frames_report_write(report, config, (const char *const *)inputs, ninputs, info.nx, info.ny, info.nframes, o, &fs, secs,
                                   outs, s.linking ? ntrk : -1);
    }
    if (st == PYR_OK) {
        where = "";
        st = pyr_output_stage_commit(&stage);
    }
    pyr_output_stage_abort(&stage); /* after a failure: the new temporaries go, no old file is touched */
    if (st != PYR_OK) {
        pyr_frames_cube_abort(&s.residual);
        pyr_output_file_abort(&s.shifts);
        pyr_frames_table_abort(&s.table);
        rc = fail(where);
    } else {
        pyr_frames_stats_t fs;
        pyr_frames_get_stats(fr, &fs);
        printf("pyrgrid: frames=%lld size=%lldx%lld history=%d weights=%s backend=%s (%s) seconds=%.3f ms/frame=%.3f "
               "candidates=%lld masked=%lld ill_conditioned=%lld regularised=%lld reduced=%lld not_converged=%lld\n",
               (long long)info.nframes, (long long)info.nx, (long long)info.ny, o->history,
               pyr_frames_weights_name(o->weights), fs.backend, fs.device, secs, 1e3 * secs / (double)info.nframes,
               (long long)fs.candidates, (long long)fs.masked_pixels, (long long)fs.ill_conditioned, (long long)fs.regularised,
               (long long)fs.reduced, (long long)fs.not_converged);
        if (s.linking) printf("pyrgrid: tracks=%lld linked=%lld of %lld candidates (%s)\n", (long long)ntrk,
                              (long long)linked_count(track_of, s.nrows), (long long)s.nrows, tracks);
        if (!quiet && fs.masked_pixels)
            fprintf(stderr, "pyrgrid: %lld pixels were masked (not finite, saturated, found bad%s) and left out of detection\n",
                    (long long)fs.masked_pixels, info.has_mask ? " or bad in the MASK planes" : "");
        if (!quiet && (fs.regularised || fs.reduced || fs.fallback))
            fprintf(stderr, "pyrgrid: R was singular in %lld frames: more regularisation in %lld, fewer history frames in %lld, "
                            "zero weights in %lld (duplicate or blank frames?)\n",
                    (long long)(fs.regularised + fs.reduced + fs.fallback), (long long)fs.regularised, (long long)fs.reduced,
                    (long long)fs.fallback);
        rc = 0;
    }
    pyr_frames_destroy(&fr);
    pyr_frames_source_close(&src);
    free(s.dx);
    free(s.dy);
    free(s.iters);
    free(buf);
    free(snr);
    free(mask);
    free(variance);
    free(mjd);
    free(s.rows);
    free(track_of);
    pyr_frames_tracks_free(&trk);
    pyr_frames_wcs_destroy(&wcs0);
    pyr_frames_wcs_destroy(&s.wcs);
out:
    pyr_frames_config_destroy(&cfg);
    for (int i = 0; i < ninputs; i++) free(inputs[i]);
    free(inputs);
    return rc;
}
