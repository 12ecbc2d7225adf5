"""pyrgrid frames --tracks on frames cut from a real sky image (tests/frames_real.py:
windows of the Hubble deep field with sub-pixel jitter, photon and read noise,
and a faint mover of (3, 2.5) pixels per frame):

  - the program finds exactly the mover's track, with its velocity and its
    start, and the candidates' track column names it;
  - from FITS files with a TAN WCS and MJD-OBS per frame: velocities per day,
    RA/Dec at the first detection and the rate (arcsec/h) and position angle
    as astropy computes them from the track's fitted line, and near the truth;
  - bad link_* keys and a tracks file that clashes with another output are
    refused before anything is written (an old tracks file is left as it was);
  - the Python module's tracks=True gives the program's track.

usage: test_frames_link.py PYRGRID LIBPYRGRID WORKDIR   (exit 77 = skipped:
numpy/skimage/scipy/astropy missing)
"""
import json
import os
import subprocess
import sys
import warnings

try:
    import numpy as np
    import scipy.ndimage  # noqa: F401  (frames_real's seeing)
    from astropy.io import fits
    from astropy.table import Table
    from astropy.wcs import WCS, FITSFixedWarning
    import skimage  # noqa: F401
except ImportError as e:  # the GPU machine may lack them: skip, do not fail
    print(f"skipped: {e} (apt-get install python3-numpy python3-skimage python3-scipy python3-astropy)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import frames_real as fr  # noqa: E402

PYRGRID, LIB, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
BACKEND = os.environ.get("PYR_FRAMES_BACKEND", "cpu")
T, N, DAY = 16, 192, 0.01  # frames, pixels, days between frames
os.makedirs(WORK, exist_ok=True)
os.chdir(WORK)
warnings.simplefilter("ignore", FITSFixedWarning)
failures = []


def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg)
    if not cond:
        failures.append(msg)


def run(*args):
    return subprocess.run([PYRGRID, "frames", "--quiet", "--backend", BACKEND, "-o", "", "--snr-png", "", "--shifts", "",
                           *args], capture_output=True, text=True)


d = fr.make(T=T, size=N, jitter=2.0, mover_start=(40.0, 50.0))
mover, v_true = d["mover"], np.array([3.0, 2.5])
np.save("seq.npy", d["frames"])

# --- the program on a .npy stack: the mover's track, and nothing else
r = run("seq.npy", "--candidates", "cand.ecsv", "--tracks", "tracks.ecsv", "--report", "report.json")
check(r.returncode == 0 and "tracks=1 " in r.stdout, f"npy: run, one track ({r.stdout.strip()[-120:]} {r.stderr.strip()[:300]})")
if r.returncode == 0:
    with open("report.json") as f:
        rep = json.load(f)
    check(rep["outputs"]["tracks"] == "tracks.ecsv" and rep["counts"]["tracks"] == 1,
          f"the report names the tracks file and counts the tracks ({rep['outputs']}, {rep['counts']})")
if r.returncode == 0:
    tt = Table.read("tracks.ecsv", format="ascii.ecsv")
    cand = Table.read("cand.ecsv", format="ascii.ecsv")
    print(tt)
    check(len(tt) == 1, f"one track ({len(tt)})")
    if len(tt) == 1:
        t0 = tt[0]
        f0 = int(t0["first_frame"])
        check(t0["n"] >= T // 2, f"the track has {t0['n']} detections of {T} frames")
        check(abs(t0["vx"] - v_true[0]) < 0.05 and abs(t0["vy"] - v_true[1]) < 0.05,
              f"velocity ({t0['vx']:.4f}, {t0['vy']:.4f}) px/frame, true (3, 2.5)")
        check(np.hypot(t0["x0"] - mover[f0, 0], t0["y0"] - mover[f0, 1]) < 0.5,
              f"start ({t0['x0']:.2f}, {t0['y0']:.2f}) at frame {f0}, true ({mover[f0, 0]:.2f}, {mover[f0, 1]:.2f})")
        check(t0["rms"] < 0.5, f"fit rms {t0['rms']:.3f} px")
        check(str(tt["x0"].unit) == "pix" and str(tt["rms"].unit) == "pix" and "vx_day" not in tt.colnames,
              "units; no velocities per day without MJD")
        # the candidates' track column: the mover's detections, and only they, are in track 0
        near = np.hypot(cand["x"] - mover[cand["frame"], 0], cand["y"] - mover[cand["frame"], 1]) < 2.0
        check("track" in cand.colnames and np.all((cand["track"] == 0) == near) and np.sum(near) == t0["n"],
              f"candidates' track column: {np.sum(cand['track'] == 0)} in the track, {np.sum(near)} at the mover")
        # mean SNR is the candidates'
        check(abs(t0["snr_mean"] - np.mean(cand["snr"][cand["track"] == 0])) < 1e-5, "snr_mean is the detections' mean SNR")

# --- FITS files with a WCS (TAN, 0.2 arcsec pixels, rotated 30 degrees) and MJD-OBS: rates on the sky
scale, rot = 0.2 / 3600.0, np.radians(30.0)
cd = scale * np.array([[-np.cos(rot), np.sin(rot)], [np.sin(rot), np.cos(rot)]])
paths = []
for t in range(T):
    h = fits.Header()
    h["CTYPE1"], h["CTYPE2"] = "RA---TAN", "DEC--TAN"
    # the sky stays where it is: frame t is the reference moved by its shift
    h["CRPIX1"], h["CRPIX2"] = 1 + 95.5 + d["shifts"][t, 0], 1 + 95.5 + d["shifts"][t, 1]
    h["CRVAL1"], h["CRVAL2"] = 150.1, 2.2
    h["CD1_1"], h["CD1_2"], h["CD2_1"], h["CD2_2"] = cd[0, 0], cd[0, 1], cd[1, 0], cd[1, 1]
    h["RADESYS"] = "ICRS"
    h["MJD-OBS"] = 60000.0 + DAY * t
    paths.append(f"f{t:02d}.fits")
    fits.PrimaryHDU(d["frames"][t], h).writeto(paths[-1], overwrite=True)
r = run(*paths, "--candidates", "", "--tracks", "tracks.fits")
check(r.returncode == 0, f"fits: run ({r.stderr.strip()[:300]})")
if r.returncode == 0:
    tt = Table.read("tracks.fits", hdu="TRACKS")
    check(len(tt) == 1 and all(c in tt.colnames for c in ("ra", "dec", "rate", "pa", "vx_day", "first_mjd")),
          f"fits: one track with sky columns ({len(tt)}, {tt.colnames})")
    if len(tt) == 1:
        t0 = tt[0]
        check(abs(t0["vx_day"] - t0["vx"] / DAY) < 1e-6 * abs(t0["vx"] / DAY) and abs(t0["vy_day"] - t0["vy"] / DAY) < 1e-6 * abs(t0["vy"] / DAY),
              f"velocity per day ({t0['vx_day']:.3f}, {t0['vy_day']:.3f}) = per frame / {DAY}")
        check(abs(t0["first_mjd"] - (60000.0 + DAY * t0["first_frame"])) < 1e-9, "first_mjd is the first frame's MJD-OBS")
        w0 = WCS(fits.getheader(paths[0]))
        k = t0["last_frame"] - t0["first_frame"]
        p0 = w0.pixel_to_world(t0["x0"], t0["y0"])
        p1 = w0.pixel_to_world(t0["x0"] + t0["vx"] * k, t0["y0"] + t0["vy"] * k)
        hours = (t0["last_mjd"] - t0["first_mjd"]) * 24.0
        rate, pa = p0.separation(p1).arcsec / hours, p0.position_angle(p1).deg
        check(abs(t0["ra"] - p0.ra.deg) < 1e-9 and abs(t0["dec"] - p0.dec.deg) < 1e-9, "RA/Dec at the first detection = astropy's")
        check(abs(t0["rate"] - rate) < 1e-6 * rate and abs((t0["pa"] - pa + 180) % 360 - 180) < 1e-5,
              f"rate {t0['rate']:.6f} arcsec/h, pa {t0['pa']:.5f} deg; astropy {rate:.6f}, {pa:.5f}")
        truth = np.hypot(*v_true) * 0.2 / (DAY * 24.0)
        check(abs(t0["rate"] - truth) < 0.02 * truth, f"rate {t0['rate']:.4f} arcsec/h, true {truth:.4f}")
        check(str(tt["rate"].unit) in ("arcsec / h",) and str(tt["pa"].unit) == "deg", "rate and pa units")

# --- refusals: nothing written, an old tracks file left as it was
with open("old_tracks.ecsv", "w") as f:
    f.write("old\n")
for args, needle in [(["--set", "frames.link_min_detections=2"], "3 detections or more"),
                     (["--set", "frames.link_max_speed=0"], "link_max_speed"),
                     (["--set", "frames.link_max_gap=many"], "not an integer"),
                     (["--set", "frames.link_max_residul=1"], "did you mean \"link_max_residual\""),
                     (["--set", "frames.link_min_speed=20"], "below frames.link_max_speed")]:
    r = run("seq.npy", "--candidates", "", "--tracks", "old_tracks.ecsv", *args)
    check(r.returncode != 0 and needle in r.stderr and open("old_tracks.ecsv").read() == "old\n",
          f"{' '.join(args)}: refused ({r.stderr.strip()[:200]}), old tracks file kept")
r = run("seq.npy", "--candidates", "same.ecsv", "--tracks", "same.ecsv")
check(r.returncode != 0 and "frames.tracks" in r.stderr and "frames.candidates" in r.stderr and not os.path.exists("same.ecsv"),
      f"tracks = candidates: refused ({r.stderr.strip()[:200]})")
r = run("seq.npy", "--candidates", "", "--tracks", "seq.npy")
check(r.returncode != 0 and "frames.tracks" in r.stderr and np.load("seq.npy").shape == d["frames"].shape,
      f"tracks = the input: refused ({r.stderr.strip()[:200]})")

# --- the Python module
if os.environ.get("PYR_FRAMES_NO_MODULE") == "1":
    print("the Python part left out (PYR_FRAMES_NO_MODULE: a sanitizer build)")
else:
    os.environ["PYRGRID_LIBRARY"] = LIB
    sys.path.insert(0, os.path.join(HERE, "..", "python"))
    import pyrgrid
    res = pyrgrid.frames(d["frames"], backend=BACKEND, tracks=True, mjd=60000.0 + DAY * np.arange(T))
    ref = Table.read("tracks.ecsv", format="ascii.ecsv")
    ok = res.tracks is not None and len(res.tracks) == 1 and len(ref) == 1
    check(ok, f"python: one track ({None if res.tracks is None else len(res.tracks)})")
    if ok:
        p, c = res.tracks[0], ref[0]
        check(p["n"] == c["n"] and abs(p["vx"] - c["vx"]) < 1e-6 and abs(p["vy"] - c["vy"]) < 1e-6 and abs(p["x0"] - c["x0"]) < 1e-6,
              f"python: the program's track (vx {p['vx']:.6f} / {c['vx']:.6f})")
        check(abs(p["vx_day"] - p["vx"] / DAY) < 1e-6 * abs(p["vx"] / DAY) and np.isnan(p["rate"]),
              "python: velocities per day from mjd=, no sky without a WCS")
        check("track" in res.candidates.dtype.names and np.sum(res.candidates["track"] == 0) == p["n"],
              "python: candidates' track column")
    plain = pyrgrid.frames(d["frames"][:4], backend=BACKEND)
    check(plain.tracks is None and "track" not in plain.candidates.dtype.names, "python: no tracks unless asked")
    for kw, err in [({"tracks": True, "link_min_detections": 2}, "3 detections or more"),
                    ({"link_max_gap": 3}, "tracks=True"),
                    ({"tracks": True, "mjd": np.arange(3.0)}, "one time per frame")]:
        try:
            pyrgrid.frames(d["frames"][:4], backend=BACKEND, **kw)
            check(False, f"python: {kw} refused")
        except pyrgrid.Error as e:
            check(err in str(e), f"python: {kw} refused ({e})")

if failures:
    print(f"{len(failures)} failed")
    sys.exit(1)
print("all passed")
