/* The star-field scenes of the frames tests: one random sequence (xorshift
 * from a fixed seed, so a test's frames are the same on every run and
 * machine; a test may save and set `rng` for a scene of its own), stars drawn
 * from it, the sky they make moved by a sub-pixel shift, a mover, noise.
 * The draws come in a fixed order (a star's x, y, flux; a frame's jitter;
 * then each pixel's noise row by row), which the tests' scenes depend on. */
#ifndef PYR_TESTS_FRAMES_SCENE_H
#define PYR_TESTS_FRAMES_SCENE_H

#include <math.h>
#include <stdint.h>

static uint64_t rng = 88172645463325252ull;

static inline double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* A normal draw (Box-Muller: the first uniform draw gives the radius). */
static inline double gauss(void)
{
    const double r = sqrt(-2 * log(urand() + 1e-300));
    return r * cos(6.283185307179586 * urand());
}

/* n stars: x in [x0, x0 + w), y in [y0, y0 + h), flux f0 + f1 times the
 * product of k draws (k = 3: mostly faint, a few bright). */
static inline void fs_stars(double (*st)[3], int n, double x0, double w, double y0, double h, double f0, double f1, int k)
{
    for (int s = 0; s < n; s++) {
        st[s][0] = x0 + urand() * w;
        st[s][1] = y0 + urand() * h;
        double f = f1;
        for (int i = 0; i < k; i++) f *= urand();
        st[s][2] = f0 + f;
    }
}

/* The jitter of frame t: two draws in [-amp / 2, amp / 2); none for frame 0. */
static inline void fs_jitter(int t, double amp, double *sx, double *sy)
{
    *sx = t ? (urand() - 0.5) * amp : 0;
    *sy = t ? (urand() - 0.5) * amp : 0;
}

/* A Gaussian of the given flux and width centred on (cx, cy), at pixel (x, y). */
static inline double fs_blob(int x, int y, double cx, double cy, double flux, double sigma)
{
    return flux * exp(-((x - cx) * (x - cx) + (y - cy) * (y - cy)) / (2 * sigma * sigma));
}

/* v (nx x ny, row by row) = a sky of `base` plus the stars moved by (sx, sy),
 * Gaussians of width sigma over the pixels closer than r to their centres
 * (r = 0: every pixel), each pixel's added in the stars' order.  No draws. */
static inline void fs_sky(double *v, int nx, int ny, double base, const double (*st)[3], int n, double sx, double sy, double sigma,
                          double r)
{
    for (size_t i = 0; i < (size_t)nx * ny; i++) v[i] = base;
    for (int s = 0; s < n; s++) {
        int x0 = 0, x1 = nx - 1, y0 = 0, y1 = ny - 1;
        if (r > 0) { /* a window a pixel wider than r: d2 < r^2 decides, the window only saves the others */
            x0 = (int)fmax(0, floor(st[s][0] + sx - r - 1));
            x1 = (int)fmin(nx - 1, ceil(st[s][0] + sx + r + 1));
            y0 = (int)fmax(0, floor(st[s][1] + sy - r - 1));
            y1 = (int)fmin(ny - 1, ceil(st[s][1] + sy + r + 1));
        }
        for (int y = y0; y <= y1; y++)
            for (int x = x0; x <= x1; x++) {
                const double dx = x - st[s][0] - sx, dy = y - st[s][1] - sy, d2 = dx * dx + dy * dy;
                if (r <= 0 || d2 < r * r) v[(size_t)y * nx + x] += st[s][2] * exp(-d2 / (2 * sigma * sigma));
            }
    }
}

/* Frame t of the GPU tests' scene (nx x ny, into val before rounding): the
 * jitter drawn (+-2 px, into *sx, *sy), a sky of 300, the stars moved by it
 * (width 1.2, out to 10 px), a mover of 90 (width 1.1) at (mx0 + 0.3 t,
 * my0 + 0.2 t) moved by it, and photon-like noise of sqrt(value). */
static inline void fs_mover_frame(double *val, int nx, int ny, const double (*st)[3], int n, int t, double mx0, double my0, double *sx,
                                  double *sy)
{
    fs_jitter(t, 4, sx, sy);
    fs_sky(val, nx, ny, 300, st, n, *sx, *sy, 1.2, 10);
    const double mx = mx0 + 0.3 * t + *sx, my = my0 + 0.2 * t + *sy;
    for (int y = 0; y < ny; y++)
        for (int x = 0; x < nx; x++) {
            const double v = val[(size_t)y * nx + x] + fs_blob(x, y, mx, my, 90, 1.1);
            val[(size_t)y * nx + x] = v + sqrt(v) * gauss();
        }
}

/* Counts of a 16-bit camera: rounded, clipped to 0 .. 65535. */
static inline uint16_t fs_u16(double v) { return (uint16_t)(v < 0 ? 0 : v > 65535 ? 65535 : v + 0.5); }

#endif
