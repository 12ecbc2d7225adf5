"""Frames: a variance plane per frame as the detection's noise model
(pyr_frames_set_variance, pyrgrid.frames(variance=...), frames.noise).

usage: test_frames_noise.py LIBPYRGRID OUTDIR [fp|snr|all]

The scene: windows of the Hubble deep field (tests/frames_real.py: not
periodic, a 2-pixel PSF, Poisson noise), whose right half is read by a noisy
amplifier (read noise 30 e- against 3 e- on the left), so that the true
variance of a pixel changes fivefold across the frame without following the
image's level, which is all that the fitted noise model (photon + read noise
of the predicted level) can follow.  The variance plane is the expectation
of each pixel's variance, as a calibrated exposure's VARIANCE plane is.

  fp  - false positives (no source moves): with the variance planes the rate
        of candidates above 4 sigma is the Gaussian rate in both halves (that
        of the same filter and peak finder on white Gaussian noise of known
        variance, 0.5-2x); with the single model it is over 5 times that in
        the noisy half (the defect the planes fix).
  snr - a transient of known flux injected into one frame in each half: the
        SNR reported equals the expected matched-filter SNR (flux through the
        filter over the filter's noise from the true variance and the
        history's share, 1 + 1/history) within 10%; the single model is off
        by more in the noisy half.

Exit 77 where numpy, scipy or skimage are missing.
"""
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import numpy as np
    import scipy.ndimage  # noqa: F401 (frames_real's PSF)
    import skimage.data  # noqa: F401
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

import frames_real  # noqa: E402

LIB, OUT = sys.argv[1], sys.argv[2]
WHAT = sys.argv[3] if len(sys.argv) > 3 else "all"
os.environ["PYRGRID_LIBRARY"] = LIB
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import pyrgrid  # noqa: E402

BACKEND = os.environ.get("PYR_FRAMES_BACKEND", "cpu")
QUICK = os.environ.get("PYR_FRAMES_QUICK") == "1"
T = 24 if QUICK else 44
SIZE = 256
HISTORY = 20
FWHM = 2.5
READ_LO, READ_HI = 3.0, 30.0
fails = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        fails.append(what)


def scene(read_right, seed=11, inject=None, read_left=READ_LO):
    """Frames (T, SIZE, SIZE) float32 and their variance planes: the noiseless
    windows plus Poisson noise, Gaussian read noise read_left on the left half
    and read_right on the right.  inject: [(frame, x, y, flux)] Gaussian
    point sources of FWHM in one frame each, in that frame's pixels."""
    rng = np.random.default_rng(seed)
    big = frames_real.big_image(sky=150.0)
    shifts = rng.uniform(-2.5, 2.5, size=(T, 2))
    shifts[0] = 0
    read = np.full((SIZE, SIZE), read_left)
    read[:, SIZE // 2:] = read_right
    s = FWHM / 2.3548200450309493
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float64)
    frames = np.empty((T, SIZE, SIZE), np.float32)
    var = np.empty((T, SIZE, SIZE), np.float32)
    for t in range(T):
        img = np.clip(frames_real.cut(big, 300, 380, SIZE, shifts[t, 0], shifts[t, 1]), 0, None)
        for (ft, x, y, flux) in inject or []:
            if ft == t:
                img = img + flux / (2 * math.pi * s * s) * np.exp(-0.5 * ((xx - x) ** 2 + (yy - y) ** 2) / s ** 2)
        frames[t] = rng.poisson(img) + rng.normal(0.0, 1.0, img.shape) * read
        var[t] = img + read ** 2
    return frames, var, shifts


def per_half(cands):
    left = int(np.sum(cands["x"] < SIZE // 2))
    return left, len(cands) - left


def run(frames, **kw):
    return pyrgrid.frames(frames, backend=BACKEND, history=HISTORY, psf_fwhm=FWHM, **kw)


def filter_taps():
    """pyrgrid's matched filter, one axis (frames_math.h fr_psf_taps)."""
    s = FWHM / 2.3548200450309493
    r = max(1, int(math.ceil(2.5 * s)))
    taps = np.exp(-0.5 * np.arange(-r, r + 1) ** 2 / (s * s))
    return taps / taps.sum(), r


def gaussian_rate(u, pixels=4_000_000):
    """Peaks above u per 10^6 pixels that the detector (a strict local maximum
    of its 8 neighbours) finds in pure white Gaussian noise of known variance
    through the same filter: the rate that correct noise gives."""
    from scipy.ndimage import convolve1d, maximum_filter
    k, r = filter_taps()
    rng = np.random.default_rng(1)
    n = px = 0
    while px < pixels:
        m = convolve1d(convolve1d(rng.normal(size=(400, 400)), k, axis=0), k, axis=1) / float(np.sum(k * k))
        z = m[r + 1:-r - 1, r + 1:-r - 1]
        peak = (z == maximum_filter(z, size=3)) & (z > u)
        n += int(peak[1:-1, 1:-1].sum())
        px += (z.shape[0] - 2) * (z.shape[1] - 2)
    return n / px * 1e6


def test_fp():
    # threshold 4: enough false peaks of a Gaussian field to count (~ 2e-5 per pixel)
    opts = dict(threshold=4, clean=False)
    frames, var, _ = scene(READ_HI)
    r_var = run(frames, variance=var, **opts)
    r_model = run(frames, noise="model", **opts)
    frames_used = T - 1 - 3  # frame 0 has no history; warmup 3
    half = frames_used * (SIZE - 32) * (SIZE // 2 - 16)
    rate = lambda n: n / half * 1e6  # per 10^6 pixels  # noqa: E731
    vl, vr = per_half(r_var.candidates)
    ml, mr = per_half(r_model.candidates)
    gauss = gaussian_rate(4.0)
    print(f"false candidates above 4 sigma per 10^6 pixels (left, right halves): Gaussian noise {gauss:.1f}; "
          f"variance planes {rate(vl):.1f}, {rate(vr):.1f}; single model {rate(ml):.1f}, {rate(mr):.1f}")
    for name, n in (("left", vl), ("right", vr)):
        check(0.5 * gauss < rate(n) < 2.0 * gauss,
              f"variance planes, {name} half: {rate(n):.1f} false candidates per 10^6 pixels, Gaussian noise's {gauss:.1f} "
              f"(0.5-2x)")
    check(rate(mr) > 5 * gauss, f"single model, noisy half: {rate(mr):.1f} per 10^6 pixels, over 5x Gaussian noise's "
                                f"{gauss:.1f} (the scene does show the defect)")


def expected_snr(var_t, shift, x, y, flux):
    """The matched filter's SNR of a point source of `flux` at (x, y) of a
    frame shifted by `shift`: at its peak on the reference's grid (align
    registers the frame there, so the source lands at (x, y) - shift),
    through pyrgrid's separable filter (frames_math.h fr_psf_taps), over the
    filter's noise from the true variance and the history's share."""
    s = FWHM / 2.3548200450309493
    k, r = filter_taps()
    K = np.outer(k, k)
    cx, cy = x - shift[0], y - shift[1]
    best = None
    for py in range(int(cy) - 1, int(cy) + 3):
        for px in range(int(cx) - 1, int(cx) + 3):
            yy, xx = np.mgrid[py - r:py + r + 1, px - r:px + r + 1]
            src = flux / (2 * math.pi * s * s) * np.exp(-0.5 * ((xx - cx) ** 2 + (yy - cy) ** 2) / s ** 2)
            m = float(np.sum(K * src))
            # the variance at the pixels the frame's came from (the plane moves with the frame)
            ox, oy = int(round(shift[0])), int(round(shift[1]))
            v = var_t[py - r + oy:py + r + 1 + oy, px - r + ox:px + r + 1 + ox]
            snr = m / math.sqrt(float(np.sum(K * K * v)) * (1 + 1 / HISTORY))
            if best is None or snr > best[0]:
                best = (snr, px, py)
    return best


def test_snr():
    ft = T - 6
    sources = [(ft, 64.3, 120.6, 2500.0), (ft, 190.7, 130.2, 9000.0)]
    frames, var, shifts = scene(READ_HI, seed=21, inject=sources)
    results = {"variance": run(frames, variance=var), "model": run(frames, noise="model")}
    worst = {}
    for name, res in results.items():
        c = res.candidates
        worst[name] = 0.0
        for (t, x, y, flux) in sources:
            exp_snr, px, py = expected_snr(var[t], shifts[t], x, y, flux)
            sel = c[(c["frame"] == t) & (np.hypot(c["x"] - px, c["y"] - py) < 2.0)]
            got = float(sel["snr"].max()) if len(sel) else 0.0
            dev = got / exp_snr - 1
            worst[name] = max(worst[name], abs(dev)) if x > SIZE // 2 else worst[name]
            print(f"{name}: source at ({x}, {y}) of frame {t}: SNR {got:.1f}, expected {exp_snr:.1f} ({100 * dev:+.1f}%)")
            if name == "variance":
                check(abs(dev) < 0.10, f"variance planes: the SNR of the source at ({x}, {y}) is {got:.1f}, within 10% of "
                                       f"the expected {exp_snr:.1f}")
    check(worst["model"] > 0.15, f"single model: the noisy half's source is off by {100 * worst['model']:.0f}% (over 15%: "
                                 f"the scene does show the defect)")


def test_refused():
    frames, var, _ = scene(READ_HI)
    f = frames[:6]
    try:
        run(f, variance=var[:6, :100])
        check(False, "a variance of the wrong shape is refused")
    except pyrgrid.ArgumentError as e:
        check("variance has shape" in str(e), f"a variance of the wrong shape is refused: {e}")
    try:
        run(f, noise="variance")
        check(False, "noise = variance without planes is refused")
    except pyrgrid.Error as e:
        check("no variance plane" in str(e), f"noise = variance without planes is refused: {e}")
    # a plane of the stack's frames (ny, nx) for every frame, with pixels of no variance: masked
    v = var[0].copy()
    v[100:104, 100:104] = 0
    v[40, 40] = np.nan
    r = run(f, variance=v)
    check(r.stats["masked_pixels"] == 17 * 6, f"pixels of variance 0 or NaN are masked: {r.stats['masked_pixels']} = 17 x 6")


os.makedirs(OUT, exist_ok=True)
if WHAT in ("fp", "all"):
    test_fp()
if WHAT in ("snr", "all"):
    test_snr()
if WHAT in ("refused", "all"):
    test_refused()
if fails:
    print(f"{len(fails)} check(s) failed")
    sys.exit(1)
print("all checks passed")
