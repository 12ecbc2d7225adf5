"""pyrgrid frames on sequences built from a real sky image (tests/frames_make.py):
shift accuracy against the truth and against skimage's phase_cross_correlation,
whitened background RMS against the pure noise, detection of a faint slow mover
with and without history cleaning, FITS headers kept, bad input refused with
no partial output, the same results for the data at any scale.

usage: test_frames.py PYRGRID WORKDIR [part]   (exit 77 = skipped: numpy/skimage/astropy missing)
"""
import os
import subprocess
import sys
import time

try:
    import numpy as np
    from astropy.io import fits
    from skimage.registration import phase_cross_correlation
except ImportError as e:  # the GPU machine may lack them: skip, do not fail
    print(f"skipped: {e} (apt-get install python3-numpy python3-skimage python3-astropy)")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import frames_make as fm  # noqa: E402

PYRGRID, WORK = sys.argv[1], sys.argv[2]
PART = sys.argv[3] if len(sys.argv) > 3 else "all"
BACKEND = os.environ.get("PYR_FRAMES_BACKEND", "cpu")
# fewer frames under the sanitizers (the instrumented program is ~20x slower)
QUICK = os.environ.get("PYR_FRAMES_QUICK") == "1"
os.makedirs(WORK, exist_ok=True)
os.chdir(WORK)
failures = []


def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg)
    if not cond:
        failures.append(msg)


def run(*args, expect=0):
    r = subprocess.run([PYRGRID, "frames", "--quiet", "--backend", BACKEND, *args], capture_output=True, text=True)
    if r.returncode != expect:
        print(r.stdout, r.stderr)
    return r


def shifts_of(path="shifts.csv"):
    s = fm.read_csv(path)
    return np.stack([s["dx"], s["dy"]], 1), s["iterations"]


def part_shifts():
    # jitter up to 3 px (phase correlation start) and under a pixel
    for jitter in (3.0, 0.8):
        d = fm.make(T=25 if QUICK else 40, jitter=jitter, seed=11)
        np.save("seq.npy", d["frames"])
        t0 = time.time()
        r = run("seq.npy", "-o", "", "--snr-png", "")
        wall = time.time() - t0
        est, it = shifts_of()
        err = est[1:] - d["shifts"][1:]
        ours = float(np.sqrt((err ** 2).mean()))
        sk = []
        t0 = time.time()
        for t in range(1, len(d["frames"])):
            s = phase_cross_correlation(d["frames"][0], d["frames"][t], upsample_factor=100)[0]
            sk.append([-s[1], -s[0]])  # skimage: the shift that registers t onto 0, (y, x)
        skwall = time.time() - t0
        skerr = np.array(sk) - d["shifts"][1:]
        skrms = float(np.sqrt((skerr ** 2).mean()))
        print(f"jitter {jitter} px: pyrgrid RMS error {ours:.4f} px (iterations {it[1:].min():.0f}-{it[1:].max():.0f}, "
              f"{wall:.2f} s for the run), skimage phase_cross_correlation(upsample_factor=100) {skrms:.4f} px "
              f"({1e3 * skwall / (len(sk)):.1f} ms/frame)")
        check(r.returncode == 0, f"jitter {jitter}: run succeeded")
        check(ours < 0.02, f"jitter {jitter}: shift RMS {ours:.4f} < 0.02 px")
        check(ours <= skrms, f"jitter {jitter}: at least as accurate as skimage ({ours:.4f} <= {skrms:.4f})")
    # a rolling reference keeps the shifts in frame 0's coordinates; uint16 .npy input
    np.save("seq16.npy", np.clip(np.rint(d["frames"]), 0, 65535).astype(np.uint16))
    r = run("seq16.npy", "-o", "", "--snr-png", "", "--set", "frames.reference=rolling", "--set", "frames.reference_every=7")
    est, _ = shifts_of()
    rms = float(np.sqrt(((est[1:] - d["shifts"][1:]) ** 2).mean()))
    print(f"uint16 .npy, rolling reference every 7 frames: shift RMS error {rms:.4f} px")
    check(r.returncode == 0 and rms < 0.02, f"rolling reference on uint16 frames: RMS {rms:.4f} < 0.02 px")


def residual_rms(res, d, t0, b=16):
    noise = d["frames"] - d["clean"]
    r = [res[t, b:-b, b:-b].std() / noise[t, b:-b, b:-b].std() for t in range(t0, len(res))]
    return float(np.mean(r)), float(np.max(r))


def found(cands, d, t0, radius=2.0):
    hits, false, flux = 0, 0, []
    for t in range(t0, len(d["frames"])):
        c = cands[cands["frame"] == t]
        if len(c) == 0:
            continue
        dist = np.hypot(c["x"] - d["mover"][t, 0], c["y"] - d["mover"][t, 1])
        if (dist < radius).any():
            hits += 1
            flux.append(float(c["flux"][dist < radius].max()))
        false += int((dist >= radius).sum())
    return hits, false, (np.mean(flux) if flux else 0.0)


def part_whiten():
    N, T = 20, (90 if QUICK else 140)
    d = fm.make(T=T, jitter=1.5, mover_snr=5.0, mover_velocity=(0.25, 0.1), seed=5)
    np.save("seq.npy", d["frames"])
    r = run("seq.npy", "-o", "res.npy", "--history", str(N), "--snr-png", "snr.png")
    check(r.returncode == 0, "whitening run succeeded")
    res = np.load("res.npy")
    mean, worst = residual_rms(res, d, N + 1)
    print(f"whitened background RMS / pure noise RMS: mean {mean:.3f}, worst frame {worst:.3f}")
    check(abs(mean - 1) < 0.15 and worst < 1.15, f"background removed, noise not amplified (ratio {mean:.3f}, worst {worst:.3f})")
    raw = float(np.mean([d["frames"][t, 16:-16, 16:-16].std() / (d["frames"] - d["clean"])[t, 16:-16, 16:-16].std()
                         for t in range(N + 1, T)]))
    print(f"  (raw frames: RMS / noise RMS = {raw:.1f})")
    cands = fm.read_csv("candidates.csv")
    t0 = N + 1  # the mover is in the first frames' history until they leave it
    hits, false, flux = found(cands, d, t0)
    frames = T - t0
    pixels = frames * (256 - 2 * 16) ** 2
    early_hits, _, _ = found(cands, d, 1 + 3)
    print(f"mover at peak SNR 5 (matched-filter SNR ~{5 * np.sqrt(np.pi) * d['fwhm'] / 2.3548:.1f}): found in {hits}/{frames} "
          f"frames with a full history ({early_hits}/{T - 4} of all reported frames), flux {flux:.0f}, "
          f"{false} false candidates in {pixels} pixels ({1e6 * false / pixels:.2f} per 10^6)")
    check(hits >= 0.9 * frames, f"mover found in >= 90% of frames ({hits}/{frames})")
    check(false < pixels / 1e6, f"fewer than 1 false candidate per 10^6 pixels ({false} in {pixels})")
    check(os.path.getsize("snr.png") > 1000, "max SNR PNG written")
    # the same without cleaning: the slow mover subtracts itself
    r = run("seq.npy", "-o", "", "--history", str(N), "--snr-png", "", "--no-clean", "--candidates", "cand_noclean.csv")
    hits2, false2, flux2 = found(fm.read_csv("cand_noclean.csv"), d, t0)
    print(f"without history cleaning: found in {hits2}/{frames} frames, flux {flux2:.0f} "
          f"(self-subtraction {100 * (1 - flux2 / flux):.0f}% of the flux)")
    check(flux2 < 0.9 * flux and hits2 < hits, "cleaning prevents the mover's self-subtraction")


def part_poly():
    # frames left where they are: the seed's shift-aware weights (a polynomial in the frames' relative
    # shifts, fitted over a window of frames) against weights constant over the same window
    d = fm.make(T=40 if QUICK else 60, jitter=0.4, seed=8)
    np.save("seq.npy", d["frames"])
    out = {}
    for name, args in (("plain", ["--weights", "plain"]), ("align", ["--weights", "align"])) + tuple(
            (f"poly{k}", ["--weights", "poly", "--set", f"frames.poly_degree={k}"]) for k in (0, 1, 2)):
        r = run("seq.npy", "-o", f"res_{name}.npy", "--snr-png", "", *args)
        check(r.returncode == 0, f"{name} ran")
        out[name] = residual_rms(np.load(f"res_{name}.npy"), d, 21)[0]
    print("background RMS / noise RMS: " + ", ".join(f"{k} {v:.3f}" for k, v in out.items()))
    check(out["poly2"] < out["poly1"] < out["poly0"], "shift-aware weights: degree 2 < degree 1 < constant over the window")
    check(out["align"] < min(out["plain"], out["poly2"]), "aligning the history beats both")


def part_fits():
    d = fm.make(T=25, jitter=1.0, seed=3)
    # a uint16 cube with observation keywords (BZERO 32768), and the same as separate files
    fm.write_fits_cube("cube.fits", d["frames"], {"EXPTIME": 30.0, "DATE-OBS": "2026-11-23T01:02:03", "OBJECT": "test field"},
                       dtype=np.uint16)
    check(fits.getheader("cube.fits")["BITPIX"] == 16, "test cube is 16-bit")
    r = run("cube.fits", "-o", "res.fits", "--max-snr", "snr.fits")
    check(r.returncode == 0, "16-bit FITS cube processed")
    with fits.open("res.fits") as h:
        hd = h[0].header
        check(h[0].data.shape == (25, 256, 256) and h[0].data.dtype.kind == "f", f"residual cube shape {h[0].data.shape}")
        check(hd.get("EXPTIME") == 30.0 and hd.get("DATE-OBS") == "2026-11-23T01:02:03" and hd.get("OBJECT") == "test field",
              "EXPTIME, DATE-OBS, OBJECT kept in the residual's header")
        tab = h["FRAMES"].data
        est, _ = shifts_of()
        check(np.allclose(tab["DX"], est[:, 0], atol=1e-4) and np.allclose(tab["DY"], est[:, 1], atol=1e-4),
              "FRAMES table holds the shifts")
    os.makedirs("list", exist_ok=True)
    for t in range(12):
        hdu = fits.PrimaryHDU(d["frames"][t].astype(np.float32))
        hdu.header["EXPTIME"] = 10.0 + t
        hdu.header["DATE-OBS"] = f"2026-11-23T01:00:{t:02d}"
        hdu.writeto(f"list/f{t:02d}.fits", overwrite=True)
    r = run("list/f*.fits", "-o", "res_list.fits")
    check(r.returncode == 0, "a glob of 2D FITS files processed")
    with fits.open("res_list.fits") as h:
        tab = h["FRAMES"].data
        check(list(tab["EXPTIME"]) == [10.0 + t for t in range(12)] and tab["DATE-OBS"][5] == "2026-11-23T01:00:05",
              "per-frame EXPTIME and DATE-OBS in the FRAMES table")
    # a float image among 16-bit ones: all read as float, with a notice
    fits.PrimaryHDU(np.clip(np.rint(d["frames"][12]), 0, 65535).astype(np.uint16)).writeto("list/f12.fits", overwrite=True)
    r = subprocess.run([PYRGRID, "frames", "--backend", BACKEND, "list/f12.fits", "list/f00.fits", "list/f01.fits", "-o", "",
                        "--snr-png", ""], capture_output=True, text=True)
    check(r.returncode == 0 and "all are read as float" in r.stderr, "mixed pixel types read as float: " + r.stderr.strip())
    os.remove("list/f12.fits")
    # bad input: different sizes, a truncated file, not FITS, too few frames
    fits.PrimaryHDU(np.zeros((128, 128), np.float32)).writeto("list/small.fits", overwrite=True)
    for f in ("res_bad.fits", "shifts_bad.csv"):
        if os.path.exists(f):
            os.remove(f)
    r = run("list/f00.fits", "list/small.fits", "-o", "res_bad.fits", "--shifts", "shifts_bad.csv", expect=1)
    check(r.returncode == 1 and "different sizes" in r.stderr, "frames of different sizes refused: " + r.stderr.strip())
    raw = open("cube.fits", "rb").read()
    open("trunc.fits", "wb").write(raw[:len(raw) // 2])
    r = run("trunc.fits", "-o", "res_bad.fits", "--shifts", "shifts_bad.csv", expect=1)
    check(r.returncode == 1 and "trunc.fits" in r.stderr, "truncated FITS refused: " + r.stderr.strip())
    check(not os.path.exists("res_bad.fits") and not os.path.exists("shifts_bad.csv") and
          not any(n.startswith(".res_bad") for n in os.listdir(".")), "no partial output after a failure")
    open("junk.fits", "wb").write(b"this is not a FITS file" * 200)
    r = run("junk.fits", expect=1)
    check(r.returncode == 1 and "not a FITS file" in r.stderr, "non-FITS refused: " + r.stderr.strip())
    r = run("list/f0[0-4].fits", "-o", "res_short.fits", "--history", "20")
    check(r.returncode == 0, "5 frames with history 20: runs with the frames available")
    with fits.open("res_short.fits") as h:
        check(np.isfinite(h[0].data).all(), "short sequence: finite residual")
    # NaN pixels masked and reported; a duplicated and a blank frame: R singular, no NaN out
    f = d["frames"].copy()
    f[7, 50:53, 60:70] = np.nan
    f[9, 100, 100] = np.inf
    f[12] = f[11]
    f[14] = 0
    np.save("bad.npy", f)
    r = subprocess.run([PYRGRID, "frames", "--backend", BACKEND, "bad.npy", "-o", "res_bad.npy", "--snr-png", ""],
                       capture_output=True, text=True)
    check(r.returncode == 0 and "masked=31" in r.stdout, "31 non-finite pixels masked and reported: " + r.stdout.strip())
    res = np.load("res_bad.npy")
    check(np.isfinite(res).all(), "no NaN in the residual of frames with NaN, duplicate and blank frames")


def part_scale():
    # reliability review M7: the review's cube of noise at 1e16 gave an all-NaN residual with exit status 0
    rng = np.random.default_rng(2)
    fits.PrimaryHDU((rng.normal(100, 5, (6, 64, 64)) * 1e14).astype("f4")).writeto("s.fits", overwrite=True)
    r = run("s.fits", "-o", "r_s.fits", "--shifts", "", "--candidates", "", "--snr-png", "")
    check(r.returncode == 0, "values of about 1e16: run succeeded " + r.stderr.strip())
    if r.returncode == 0:
        res = fits.getdata("r_s.fits")
        check(np.isfinite(res).all() and np.abs(res[1:]).max() > 1e15,
              f"values of about 1e16: finite residual of their scale (max |r| {np.abs(res[1:]).max():.3g})")
    # a sequence with a slow mover at scales from 1e-20 to 1e20: the same shifts and candidates, the residual scaled
    d = fm.make(T=30, size=96, jitter=1.5, mover_snr=6.0, mover_start=(30.0, 40.0), mover_velocity=(0.3, 0.2), seed=4)
    out = {}
    for c in (1.0, 1e-20, 1e-13, 1e14, 1e16, 1e20):
        np.save("seq_scale.npy", (d["frames"].astype(np.float64) * c).astype(np.float32))
        r = run("seq_scale.npy", "-o", "res_scale.npy", "--snr-png", "", "--shifts", "sh_scale.csv",
                "--candidates", "cand_scale.csv", "--history", "8")
        check(r.returncode == 0, f"scale {c:g}: run succeeded " + r.stderr.strip())
        if r.returncode != 0:
            continue
        res = np.load("res_scale.npy").astype(np.float64) / c
        out[c] = (shifts_of("sh_scale.csv")[0], fm.read_csv("cand_scale.csv"), res)
        check(np.isfinite(res).all(), f"scale {c:g}: finite residual")
    if 1.0 not in out:
        return
    sh1, cand1, res1 = out[1.0]
    check(len(cand1) >= 5, f"scale 1: the mover gives candidates ({len(cand1)})")
    for c, (sh, cand, res) in out.items():
        if c == 1.0:
            continue
        dsh = float(np.abs(sh - sh1).max())
        dres = float(np.abs(res - res1).max())
        same = len(cand) == len(cand1) and (len(cand) == 0 or (
            (cand["frame"] == cand1["frame"]).all() and np.abs(cand["x"] - cand1["x"]).max() < 2e-3 and
            np.abs(cand["y"] - cand1["y"]).max() < 2e-3 and np.allclose(cand["flux"] / c, cand1["flux"], rtol=1e-3)))
        print(f"scale {c:g}: max |shift - shift(1)| {dsh:.2e} px, max |res / c - res(1)| {dres:.3g} of "
              f"{np.abs(res1).max():.3g}, {len(cand)} candidates ({len(cand1)} at scale 1)")
        check(dsh < 1e-4, f"scale {c:g}: shifts as at scale 1 ({dsh:.2e} px)")
        check(dres <= 1e-4 * np.abs(res1).max(), f"scale {c:g}: residual / c as at scale 1 ({dres:.3g})")
        check(same, f"scale {c:g}: the candidates of scale 1, flux scaled")


parts = {"shifts": part_shifts, "whiten": part_whiten, "poly": part_poly, "fits": part_fits, "scale": part_scale}
for name, fn in parts.items():
    if PART in ("all", name):
        print(f"== {name}")
        fn()
print(f"{'FAILED' if failures else 'passed'}: {len(failures)} failures")
sys.exit(1 if failures else 0)
