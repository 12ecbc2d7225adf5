/* The frames pipeline side by side in one run (issue 22):
 *   - pyrgrid GPU and pyrgrid CPU on 512^2 frames, history 20: shifts +
 *     weights + whitening (+ detection), ms per frame in steady state;
 *   - skimage's phase_cross_correlation(upsample_factor=100) per frame on the
 *     same size (the shift part only; bench/frames_skimage.py, when
 *     python3-skimage is installed);
 *   - 4096^2 frames, history 20, streamed from (pinned) host memory to host
 *     memory on the GPU: frames per second end to end, uint16 and float input;
 *   - beside pyrgrid GPU, a batched CuPy pipeline on the same frames
 *     (bench/frames_cupy.py, run by $PYR_PYTHON or python3 where cupy is
 *     installed; the frames go to it through a .npy file).
 * The GPU's stage times (events per stage) are printed after its line.
 *
 * usage: bench_frames [--size 512] [--frames 200] [--history 20] [--backends cpu,cuda]
 *                     [--stream 4096] [--stream-frames 300] [--no-skimage] [--no-cupy] [--threads N]
 * Frames are a synthetic star field (Gaussian stars, photon-like noise) moved by
 * random sub-pixel jitter of +-2 px; a few distinct frames are cycled. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pyrgrid.h"
#include "pyrgrid_frames.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* nd distinct frames of n x n: stars at random places moved by jitter. */
static void make_frames(int n, int nd, float *f, uint16_t *u)
{
    int nstars = n * n / 800;
    double *st = malloc((size_t)nstars * 3 * sizeof *st);
    for (int s = 0; s < nstars; s++) {
        st[3 * s] = urand() * n;
        st[3 * s + 1] = urand() * n;
        st[3 * s + 2] = 50 + 4000 * pow(urand(), 4);
    }
    for (int d = 0; d < nd; d++) {
        float *fr = f + (size_t)d * n * n;
        double jx = d ? (urand() - 0.5) * 4 : 0, jy = d ? (urand() - 0.5) * 4 : 0;
        for (size_t i = 0; i < (size_t)n * n; i++) fr[i] = 200;
        for (int s = 0; s < nstars; s++) {
            double cx = st[3 * s] + jx, cy = st[3 * s + 1] + jy;
            for (int y = (int)cy - 5; y <= (int)cy + 5; y++)
                for (int x = (int)cx - 5; x <= (int)cx + 5; x++) {
                    if (x < 0 || y < 0 || x >= n || y >= n) continue;
                    double r2 = (x - cx) * (x - cx) + (y - cy) * (y - cy);
                    fr[(size_t)y * n + x] += (float)(st[3 * s + 2] * exp(-r2 / (2 * 1.2 * 1.2)));
                }
        }
        for (size_t i = 0; i < (size_t)n * n; i++) {
            double g = (urand() + urand() + urand() - 1.5) * 2.0; /* ~N(0, 1) */
            fr[i] = (float)(fr[i] + sqrt(fr[i]) * g);
            if (u) u[(size_t)d * n * n + i] = (uint16_t)(fr[i] < 0 ? 0 : fr[i] > 65535 ? 65535 : fr[i] + 0.5f);
        }
    }
    free(st);
}

typedef struct {
    int64_t delivered;
} count_t;

static pyr_status_t counter(void *user, const pyr_frames_result_t *r)
{
    (void)r;
    ((count_t *)user)->delivered++;
    return PYR_OK;
}

/* ms per frame over the frames after a warm-up of history + 5; pin: the
 * frames given to pyr_frames_pin first (the GPU uploads them straight, no
 * copy into its staging on the host). */
static int run_small(pyr_backend_kind_t b, int n, int T, int history, int threads, const float *frames, int nd, int pin, double *ms,
                     pyr_frames_stats_t *stats)
{
    pyr_frames_options_t o;
    pyr_frames_options_default(&o);
    o.backend = b;
    o.history = history;
    o.threads = threads;
    pyr_frames_t *f = NULL;
    count_t c = {0};
    if (pyr_frames_create(n, n, &o, counter, &c, &f) != PYR_OK) {
        fprintf(stderr, "bench_frames: %s: %s\n", b == PYR_BACKEND_CUDA ? "cuda" : "cpu", pyr_last_error());
        return 1;
    }
    if (pin && pyr_frames_pin(f, (void *)frames, (size_t)nd * n * n * sizeof(float)) != PYR_OK) {
        fprintf(stderr, "bench_frames: pinning failed: %s\n", pyr_last_error());
        pyr_frames_destroy(&f);
        return 1;
    }
    int warm = history + 5;
    double t0 = 0;
    for (int t = 0; t < warm + T; t++) {
        if (t == warm) {
            if (pyr_frames_finish(f) != PYR_OK) break;
            t0 = now();
        }
        if (pyr_frames_push(f, frames + (size_t)(t % nd) * n * n, PYR_FRAMES_F32, NULL) != PYR_OK) {
            fprintf(stderr, "bench_frames: %s\n", pyr_last_error());
            pyr_frames_destroy(&f);
            return 1;
        }
    }
    pyr_status_t st = pyr_frames_finish(f);
    double el = now() - t0;
    pyr_frames_get_stats(f, stats);
    pyr_frames_destroy(&f);
    if (st != PYR_OK) {
        fprintf(stderr, "bench_frames: %s\n", pyr_last_error());
        return 1;
    }
    *ms = 1e3 * el / T;
    return 0;
}

/* The nd frames as a .npy file (float32, C order) for the CuPy peer. */
static int write_npy(const char *path, const float *f, int nd, int n)
{
    FILE *fp = fopen(path, "wb");
    if (!fp) return 1;
    char hdr[128];
    int len = snprintf(hdr, sizeof hdr, "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d, %d), }", nd, n, n);
    int total = (10 + len + 1 + 63) / 64 * 64; /* magic, version, length, header, '\n': a multiple of 64 */
    int pad = total - 10 - len - 1;
    unsigned short hl = (unsigned short)(total - 10);
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hl & 255), (unsigned char)(hl >> 8)};
    int bad = fwrite(pre, 1, 10, fp) != 10 || fwrite(hdr, 1, (size_t)len, fp) != (size_t)len;
    for (int i = 0; i < pad && !bad; i++) bad = fputc(' ', fp) == EOF;
    if (!bad) bad = fputc('\n', fp) == EOF;
    if (!bad) bad = fwrite(f, sizeof(float), (size_t)nd * n * n, fp) != (size_t)nd * n * n;
    return fclose(fp) != 0 || bad;
}

/* The CuPy peer on the same frames in the same order: ms per frame, or < 0
 * (the line saying why is printed). */
static double run_cupy(const float *frames, int nd, int n, int T, int history)
{
    char path[] = "/tmp/bench_frames_XXXXXX"; /* np.load reads the format, whatever the name */
    int fd = mkstemp(path);
    if (fd < 0) {
        printf("CuPy batched: not measured (no temporary file)\n");
        return -1;
    }
    close(fd);
    double ms = -1;
    if (write_npy(path, frames, nd, n)) {
        printf("CuPy batched: not measured (could not write %s)\n", path);
    } else {
        const char *py = getenv("PYR_PYTHON");
        char cmd[4096], line[1024];
        snprintf(cmd, sizeof cmd, "%s %s/bench/frames_cupy.py %s %d %d 2>&1", py && *py ? py : "python3", PYR_SOURCE_DIR, path, T,
                 history);
        fflush(stdout);
        FILE *p = popen(cmd, "r");
        while (p && fgets(line, sizeof line, p)) {
            if (!strncmp(line, "cupy_ms_per_frame=", 18)) ms = atof(line + 18);
            else fputs(line, stdout); /* why not, or what went wrong */
        }
        int rc = p ? pclose(p) : -1;
        if (ms <= 0 && rc != 0) printf("CuPy batched: not measured (%s failed)\n", cmd);
    }
    remove(path);
    return ms;
}

static void run_stream(int n, int T, int history, int use_u16)
{
    int nd = 6;
    size_t np = (size_t)n * n;
    float *f = malloc(nd * np * sizeof(float));
    uint16_t *u = malloc(nd * np * sizeof(uint16_t));
    int nout = 4;
    float *out = malloc(nout * np * sizeof(float));
    if (!f || !u || !out) {
        printf("stream %d^2: out of host memory\n", n);
        free(f);
        free(u);
        free(out);
        return;
    }
    make_frames(n, nd, f, u);
    memset(out, 0, nout * np * sizeof(float));
    pyr_frames_options_t o;
    pyr_frames_options_default(&o);
    o.backend = PYR_BACKEND_CUDA;
    o.history = history;
    pyr_frames_t *fr = NULL;
    count_t c = {0};
    if (pyr_frames_create(n, n, &o, counter, &c, &fr) != PYR_OK) {
        printf("stream %d^2 history %d: %s\n", n, history, pyr_last_error());
        goto done;
    }
    const void *src = use_u16 ? (const void *)u : (const void *)f;
    size_t esz = use_u16 ? 2 : 4;
    if (pyr_frames_pin(fr, (void *)src, nd * np * esz) != PYR_OK || pyr_frames_pin(fr, out, nout * np * sizeof(float)) != PYR_OK) {
        printf("stream: pinning failed: %s\n", pyr_last_error());
        goto done;
    }
    int warm = history + 3;
    double t0 = 0;
    for (int t = 0; t < warm + T; t++) {
        if (t == warm) {
            if (pyr_frames_finish(fr) != PYR_OK) break;
            t0 = now();
        }
        if (pyr_frames_push(fr, (const char *)src + (size_t)(t % nd) * np * esz, use_u16 ? PYR_FRAMES_U16 : PYR_FRAMES_F32,
                            out + (size_t)(t % nout) * np) != PYR_OK) {
            printf("stream: %s\n", pyr_last_error());
            goto done;
        }
    }
    if (pyr_frames_finish(fr) != PYR_OK) {
        printf("stream: %s\n", pyr_last_error());
        goto done;
    }
    double el = now() - t0;
    double gbs = (double)T * np * (esz + 4) / el / 1e9;
    printf("pyrgrid GPU stream %dx%d %s in -> float residual out, history %d: %.1f frames/s end to end "
           "(%.3f ms/frame, %.1f GB/s over PCIe both ways; target >= 600)\n",
           n, n, use_u16 ? "uint16" : "float", history, T / el, 1e3 * el / T, gbs);
done:
    pyr_frames_destroy(&fr);
    free(f);
    free(u);
    free(out);
}

int main(int argc, char **argv)
{
    int n = 512, T = 200, history = 20, stream = 4096, sT = 300, skimage = 1, cupy = 1, threads = 0;
    const char *backends = "cpu,cuda";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--size") && i + 1 < argc) n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--frames") && i + 1 < argc) T = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--history") && i + 1 < argc) history = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--backends") && i + 1 < argc) backends = argv[++i];
        else if (!strcmp(argv[i], "--stream") && i + 1 < argc) stream = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--stream-frames") && i + 1 < argc) sT = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-skimage")) skimage = 0;
        else if (!strcmp(argv[i], "--no-cupy")) cupy = 0;
        else {
            fprintf(stderr, "usage: bench_frames [--size N] [--frames T] [--history H] [--backends cpu,cuda] [--stream N (0: none)] "
                            "[--stream-frames T] [--threads N] [--no-skimage] [--no-cupy]\n");
            return 2;
        }
    }
    int nd = 24;
    float *frames = malloc((size_t)nd * n * n * sizeof(float));
    make_frames(n, nd, frames, NULL);
    printf("frames %dx%d, history %d, jitter +-2 px, %d frames timed after a warm-up (shifts + weights + whitening + detection)\n",
           n, n, history, T);
    int gpus = pyr_gpu_count();
    if (strstr(backends, "cuda")) {
        double ms;
        pyr_frames_stats_t st;
        if (gpus == 0) printf("pyrgrid GPU: no usable GPU\n");
        else if (!run_small(PYR_BACKEND_CUDA, n, T, history, 0, frames, nd, 0, &ms, &st)) {
            printf("pyrgrid GPU (%s): %.4f ms/frame (%.0f frames/s; target <= 0.035 ms; the article: 1.43 ms on a GTX Titan)\n",
                   st.device, ms, 1e3 / ms);
            double tot = st.shift_s + st.weights_s + st.whiten_s + st.detect_s;
            if (tot > 0)
                printf("pyrgrid GPU stages (device time per frame, from events): shifts %.4f ms, weights %.4f ms, whitening %.4f ms, "
                       "detection + cleaning %.4f ms; the rest of the %.4f ms is the host's (launches, copies, waits)\n",
                       1e3 * st.shift_s / st.frames, 1e3 * st.weights_s / st.frames, 1e3 * st.whiten_s / st.frames,
                       1e3 * st.detect_s / st.frames, ms);
            double pms;
            pyr_frames_stats_t pst;
            if (!run_small(PYR_BACKEND_CUDA, n, T, history, 0, frames, nd, 1, &pms, &pst))
                printf("pyrgrid GPU, the frames in pinned host memory (uploaded straight, no copy on the host): %.4f ms/frame\n", pms);
            if (cupy) {
                double cms = run_cupy(frames, nd, n, T, history);
                if (cms > 0)
                    printf("pyrgrid GPU %.4f ms/frame | CuPy batched %.4f ms/frame | ratio (CuPy / pyrgrid) %.2f\n", ms, cms,
                           cms / ms);
            }
        }
    }
    if (strstr(backends, "cpu")) {
        double ms;
        pyr_frames_stats_t st;
        if (!run_small(PYR_BACKEND_CPU, n, T, history, threads, frames, nd, 0, &ms, &st)) {
            double tot = st.shift_s + st.weights_s + st.whiten_s + st.detect_s;
            printf("pyrgrid CPU (%s): %.3f ms/frame (target <= 5 ms on 2 cores; the article: 70 ms); of the time: shifts %.0f%%, "
                   "weights %.0f%%, whitening fused with the next frame's dot products %.0f%%, detection + cleaning %.0f%%\n",
                   st.device, ms, 100 * st.shift_s / tot, 100 * st.weights_s / tot, 100 * st.whiten_s / tot,
                   100 * st.detect_s / tot);
        }
    }
    free(frames);
    if (skimage) {
        char cmd[4096];
        snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s/bench/frames_skimage.py %d 40", PYR_SOURCE_DIR, n);
        fflush(stdout);
        int rc = system(cmd);
        if (rc != 0) printf("skimage phase_cross_correlation: not measured (python3-skimage missing?)\n");
    }
    if (stream > 0 && gpus > 0 && strstr(backends, "cuda")) {
        run_stream(stream, sT, history, 1);
        run_stream(stream, sT, history, 0);
    } else if (stream > 0) {
        printf("pyrgrid GPU stream %dx%d: no usable GPU\n", stream, stream);
    }
    return 0;
}
