"""pyrgrid frames on astronomers' files: calibrated exposures in the layout of
survey pipelines (LSST/HSC "calexp": an empty primary HDU and the extensions
IMAGE, MASK, VARIANCE), built with astropy.io.fits from skimage's Hubble deep
field; the candidates as ECSV and FITS tables with units, MJD per frame and
RA/Dec from the WCS checked against astropy.wcs (TAN, TAN-SIP, TPV); the SNR
image with y up; bad input refused naming the file and HDU, with nothing
written.

usage: test_frames_fits.py PYRGRID WORKDIR [part]   part: calexp | wcs | bad | all
(exit 77 = skipped: numpy/skimage/astropy missing)
"""
import os
import subprocess
import sys
import warnings

try:
    import numpy as np
    from astropy.io import fits
    from astropy.table import Table
    from astropy.time import Time
    from astropy.wcs import WCS, FITSFixedWarning
    from skimage import color, io
except ImportError as e:  # the GPU machine may lack them: skip, do not fail
    print(f"skipped: {e} (apt-get install python3-numpy python3-skimage python3-astropy)")
    sys.exit(77)

warnings.simplefilter("ignore", FITSFixedWarning)
warnings.simplefilter("ignore", fits.verify.VerifyWarning)  # MP_DETECTED is written as a HIERARCH card, as LSST's are

PYRGRID, WORK = sys.argv[1], sys.argv[2]
PART = sys.argv[3] if len(sys.argv) > 3 else "all"
BACKEND = os.environ.get("PYR_FRAMES_BACKEND", "cpu")
os.makedirs(WORK, exist_ok=True)
os.chdir(WORK)
failures = []
SKIMAGE_DATA = "/usr/lib/python3/dist-packages/skimage/data"
T, N, FWHM = 14, 128, 2.5
BAD, SAT, CR, DETECTED = 0, 1, 3, 5  # mask planes as LSST numbers them
HIDDEN = (6, 7, 8)  # frames where the mover lies under CR-flagged pixels


def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg)
    if not cond:
        failures.append(msg)


def run(*args, expect=0):
    r = subprocess.run([PYRGRID, "frames", "--quiet", "--backend", BACKEND, *args], capture_output=True, text=True)
    if (r.returncode == 0) != (expect == 0):
        print(r.stdout, r.stderr)
    return r


def fourier_shift(img, dx, dy):
    F = np.fft.fft2(img)
    ky = np.fft.fftfreq(img.shape[0])[:, None]
    kx = np.fft.fftfreq(img.shape[1])[None, :]
    return np.real(np.fft.ifft2(F * np.exp(-2j * np.pi * (kx * dx + ky * dy))))


def gauss(shape, x, y, fwhm):
    s = fwhm / 2.3548200450309493
    yy, xx = np.mgrid[0:shape[0], 0:shape[1]]
    return np.exp(-0.5 * ((xx - x) ** 2 + (yy - y) ** 2) / s ** 2)


def wcs_cards(kind, crpix):
    """A celestial WCS: TAN, TAN with SIP distortion, or TPV; 0.2 arcsec pixels, rotated 30 degrees."""
    if kind == "none":
        return {}
    c, s, scale = np.cos(np.radians(30)), np.sin(np.radians(30)), 0.2 / 3600
    h = {"CRPIX1": crpix[0], "CRPIX2": crpix[1], "CRVAL1": 150.1191, "CRVAL2": 2.2058, "CUNIT1": "deg", "CUNIT2": "deg",
         "CD1_1": -scale * c, "CD1_2": scale * s, "CD2_1": scale * s, "CD2_2": scale * c, "RADESYS": "ICRS"}
    if kind == "tan":
        h.update(CTYPE1="RA---TAN", CTYPE2="DEC--TAN")
    elif kind == "sip":
        h.update(CTYPE1="RA---TAN-SIP", CTYPE2="DEC--TAN-SIP", A_ORDER=3, B_ORDER=3, A_0_2=2.1e-4, A_1_1=-1.3e-4, A_2_0=3.0e-4,
                 A_3_0=2.0e-6, B_0_2=-1.1e-4, B_1_1=2.5e-4, B_2_0=4.0e-5, B_0_3=-3.0e-6)
    elif kind == "tpv":
        h.update(CTYPE1="RA---TPV", CTYPE2="DEC--TPV", PV1_0=0.0, PV1_1=1.0, PV1_2=0.0, PV1_4=5.0, PV1_5=-3.0,
                 PV1_6=2.0, PV1_7=40.0, PV2_0=0.0, PV2_1=1.0, PV2_2=0.0, PV2_4=-2.0, PV2_5=4.0, PV2_6=1.0, PV2_8=-30.0)
    elif kind == "broken":  # a projection wcslib does not know
        h.update(CTYPE1="RA---XYZ", CTYPE2="DEC--XYZ")
    return h


def scene(seed=3, jitter=1.5, mover=True):
    """T non-periodic frames cut from the Hubble deep field (counts), the true shifts and the mover's track."""
    rng = np.random.default_rng(seed)
    img = color.rgb2gray(io.imread(os.path.join(SKIMAGE_DATA, "hubble_deep_field.jpg"))).astype(np.float64)
    img = img[40:40 + N + 64, 80:80 + N + 64]
    img = np.clip(img - np.median(img), 0, None)
    img = img / img.max() * 3000.0 + 200.0
    shifts = rng.uniform(-jitter, jitter, size=(T, 2))
    shifts[0] = 0
    track = np.array([40.0, 50.0])[None, :] + np.arange(T)[:, None] * np.array([2.5, 1.2])[None, :]
    sigma = np.sqrt(200.0 + 25.0)
    frames, variances = [], []
    for t in range(T):
        big = fourier_shift(img, shifts[t, 0], shifts[t, 1])
        f = big[32:32 + N, 32:32 + N].copy()  # an interior crop: the frame's edges do not wrap
        if mover:
            f += 12 * sigma * gauss(f.shape, track[t, 0] + shifts[t, 0], track[t, 1] + shifts[t, 1], FWHM)
        f = np.clip(f, 0, None)
        variances.append((f + 25.0).astype(np.float32))
        frames.append((rng.poisson(f) + rng.normal(0, 5.0, f.shape)).astype(np.float32))
    return np.array(frames), np.array(variances), shifts, track


def calexp(path, image, mask, variance, header, primary=None, mask_dtype=np.int32, names=("IMAGE", "MASK", "VARIANCE")):
    """One calibrated exposure: an empty primary HDU (visit keywords) and the three planes as extensions."""
    ph = fits.PrimaryHDU()
    for k, v in (primary or {}).items():
        ph.header[k] = v
    hdus = [ph]
    if names[0]:
        im = fits.ImageHDU(image, name=names[0])
        for k, v in header.items():
            im.header[k] = v
        hdus.append(im)
    if names[1]:
        mk = fits.ImageHDU(mask.astype(mask_dtype), name=names[1])
        for k, b in (("MP_BAD", BAD), ("MP_SAT", SAT), ("MP_CR", CR), ("MP_DETECTED", DETECTED)):
            mk.header[k] = b
        hdus.append(mk)
    if names[2]:
        hdus.append(fits.ImageHDU(variance, name=names[2]))
    fits.HDUList(hdus).writeto(path, overwrite=True)


def make_sequence(prefix, kind="tan", defects=True, times="mjd"):
    """T calexp files; each frame's WCS follows its shift (the sky stays where it is).  Frame 0 is the reference."""
    frames, var, shifts, track = scene()
    mask = np.zeros((T, N, N), np.int32)
    hot = [(20, 90), (100, 30), (64, 100), (110, 110)]
    if defects:
        for t in range(T):
            frames[t, :, 77] = 0.0  # a dead column
            for (y, x) in hot:
                frames[t, y, x] += 20000.0
            mask[t, :, 77] |= 1 << BAD
            for (y, x) in hot:
                mask[t, y, x] |= 1 << SAT
    # pixels of detected sources, as survey pipelines flag them: not bad pixels
    mask[:, 10:14, 10:14] |= 1 << DETECTED
    # the mover under a flagged cosmic ray in a few frames (in the frame's own pixels)
    for t in HIDDEN:
        x, y = np.rint(track[t] + shifts[t]).astype(int)
        mask[t, y - 4:y + 5, x - 4:x + 5] |= 1 << CR
    paths, mjds = [], []
    for t in range(T):
        h = wcs_cards(kind, (1 + 63.5 + shifts[t, 0], 1 + 63.5 + shifts[t, 1]))
        mjd = 61000.25 + t * 30.0 / 86400
        mjds.append(mjd)
        prim = {"EXPTIME": 30.0}
        if times == "mjd":
            prim["MJD-OBS"] = mjd
        else:
            prim["DATE-OBS"] = Time(mjd, format="mjd", scale="utc").isot
        p = f"{prefix}{t:02d}.fits"
        calexp(p, frames[t], mask[t], var[t], h, prim)
        paths.append(p)
    return paths, np.array(mjds), shifts, track, hot


def nearest(tab, t, x, y):
    rows = tab[tab["frame"] == t]
    if len(rows) == 0:
        return np.inf, None
    d = np.hypot(rows["x"] - x, rows["y"] - y)
    i = int(np.argmin(d))
    return float(d[i]), rows[i]


def png_map(path, nx, ny):
    """The heat map's pixels (grey) cut from the PNG (each pixel drawn 2 x 2, in a 1-pixel frame from x = 15)."""
    rgb = io.imread(path)[..., :3].astype(float)
    coloured = np.abs(rgb - 255).sum(2) > 0
    rows = np.nonzero(coloured[:, 16:16 + 2 * nx].all(1))[0]
    top = rows.min() + 1  # inside the map's 1-pixel frame
    grey = rgb[top:top + 2 * ny, 16:16 + 2 * nx].mean(2)
    return grey[::2, ::2]


def part_calexp():
    paths, mjds, shifts, track, hot = make_sequence("cx")
    r = run(*paths, "--history", "6", "--set", "frames.warmup=1", "--set", "frames.border=8", "--candidates", "cand.ecsv",
            "-o", "res.fits", "--shifts", "shifts.csv", "--max-snr", "maxsnr.fits", "--snr-png", "maxsnr.png",
            "--mask-bits", "BAD,SAT")
    check(r.returncode == 0, f"calexp files run (exit {r.returncode}: {r.stderr.strip()[:300]})")
    if r.returncode:
        return
    tab = Table.read("cand.ecsv", format="ascii.ecsv")
    check(list(tab.colnames) == ["frame", "mjd", "x", "y", "ra", "dec", "flux", "snr"], f"ECSV columns {tab.colnames}")
    check(str(tab["ra"].unit) == "deg" and str(tab["dec"].unit) == "deg" and str(tab["x"].unit) == "pix"
          and str(tab["mjd"].unit) == "d", "ECSV units deg, pix, d")
    check("0-based" in tab["x"].description, f"x's description states the convention: {tab['x'].description!r}")
    check(tab.meta.get("pixel_origin") == 0, "ECSV meta pixel_origin = 0")
    # MJD per frame from each file's header
    ok = all(abs(row["mjd"] - mjds[row["frame"]]) < 1e-8 for row in tab)
    check(ok and len(tab) > 0, "mjd of every candidate is its frame's MJD-OBS")
    # RA/Dec: positions are in frame 0's grid (weights = align): frame 0's WCS, as astropy computes it
    w0 = WCS(fits.getheader(paths[0], "IMAGE"))
    sky = w0.pixel_to_world(np.asarray(tab["x"]), np.asarray(tab["y"]))
    dra = np.abs(((sky.ra.deg - np.asarray(tab["ra"])) + 180) % 360 - 180) * np.cos(np.radians(2.2))
    ddec = np.abs(sky.dec.deg - np.asarray(tab["dec"]))
    check(max(dra.max(), ddec.max()) < 1e-9, f"RA/Dec = astropy's pixel_to_world within 1e-9 deg (max {max(dra.max(), ddec.max()):.2e})")
    # the mover found (0-based positions of frame 0's grid)
    found = sum(nearest(tab, t, *track[t])[0] < 1.5 for t in range(2, T))
    check(found >= T - 4, f"mover found in {found} of {T - 2} frames at its 0-based position")
    # masked pixels give no candidates: the dead column and the hot pixels
    near_bad = [row for row in tab if abs(row["x"] - 77) < 2.5 or any(np.hypot(row["x"] - x, row["y"] - y) < 2.5 for (y, x) in hot)]
    check(len(near_bad) == 0, f"no candidate at a masked pixel (found {len(near_bad)})")
    # the residual keeps the exposure's cards (the science plane's WCS, the visit's MJD-OBS), not the plane's EXTNAME
    rh = fits.getheader("res.fits")
    check("CTYPE1" in rh and "MJD-OBS" in rh and "EXTNAME" not in rh,
          "residual header: the WCS and MJD-OBS kept, the science plane's EXTNAME not")
    # the same table as FITS, with units
    r = run(*paths, "--history", "6", "--set", "frames.warmup=1", "--set", "frames.border=8", "--candidates", "cand.fits",
            "-o", "", "--shifts", "", "--snr-png", "", "--mask-bits", "BAD,SAT")
    check(r.returncode == 0, "candidates as a FITS table")
    if r.returncode == 0:
        ft = Table.read("cand.fits")
        check(len(ft) == len(tab) and np.allclose(ft["ra"], tab["ra"], rtol=0, atol=1e-12)
              and np.allclose(ft["x"], tab["x"], rtol=0, atol=1e-4), "FITS table = ECSV table")
        check(str(ft["ra"].unit) == "deg" and str(ft["x"].unit) == "pix" and str(ft["mjd"].unit) == "d", "FITS table units")
        check(fits.getheader("cand.fits", 1)["EXTNAME"] == "CANDIDATES", "FITS table extension CANDIDATES")
    # the mask reaches detection: with CR chosen too, the mover is not reported where CR pixels cover it
    r = run(*paths, "--history", "6", "--set", "frames.warmup=1", "--set", "frames.border=8", "--candidates", "cr.ecsv",
            "-o", "", "--shifts", "", "--snr-png", "", "--mask-bits", f"BAD,SAT,{1 << CR:#x}")
    check(r.returncode == 0, "--mask-bits with a number")
    if r.returncode == 0:
        ct = Table.read("cr.ecsv", format="ascii.ecsv")
        hidden = [t for t in HIDDEN if nearest(ct, t, *track[t])[0] < 3]
        seen = sum(nearest(ct, t, *track[t])[0] < 1.5 for t in range(2, T) if t not in HIDDEN)
        check(not hidden and seen >= T - 2 - len(HIDDEN) - 2,
              f"masked pixels hide the mover in frames {HIDDEN} (found in {hidden}) and only there (found in {seen} others)")
    # a plane named by a HIERARCH card (MP_DETECTED, as LSST writes it) is found: it masks more pixels
    counts = []
    for bits in ("BAD,SAT", "BAD,SAT,DETECTED"):
        r = run(*paths, "--history", "6", "--candidates", "", "-o", "", "--shifts", "", "--snr-png", "", "--mask-bits", bits)
        counts.append(int(r.stdout.split("masked=")[1].split()[0]) if r.returncode == 0 else -1)
    check(counts[0] > 0 and counts[1] > counts[0], f"--mask-bits DETECTED (a HIERARCH card) masks more pixels: {counts}")
    # an unknown plane name is refused with the names the header defines
    r = run(*paths, "--candidates", "x.ecsv", "-o", "", "--shifts", "", "--snr-png", "", "--mask-bits", "BAD,COSMIC", expect=1)
    check(r.returncode == 1 and "COSMIC" in r.stderr and "DETECTED" in r.stderr and not os.path.exists("x.ecsv"),
          f"an unknown mask plane is refused, naming those defined: {r.stderr.strip()[:200]}")
    # the max-SNR FITS keeps the frame's WCS, and the PNG has y up (FITS's first row at the bottom)
    m = fits.getdata("maxsnr.fits")
    check(WCS(fits.getheader("maxsnr.fits")).has_celestial, "max-SNR FITS keeps the WCS")
    g = png_map("maxsnr.png", N, N)
    up = np.corrcoef(g.ravel(), np.flipud(m).ravel())[0, 1]
    down = np.corrcoef(g.ravel(), m.ravel())[0, 1]
    check(up > 0.5 and up > down + 0.2, f"SNR PNG is y up: correlation {up:.2f} with the flipped map, {down:.2f} unflipped")
    # weights = plain: positions in each frame's own grid, each frame's own WCS (a threshold of 3 and the
    # fitted noise model: the frames are not registered, so the noise takes in each star's misprediction
    # and few peaks pass 5; scaled from the VARIANCE planes, it takes in all of it and none pass 3)
    r = run(*paths, "--history", "6", "--weights", "plain", "--set", "frames.warmup=1", "--set", "frames.border=8",
            "--set", "frames.threshold=3", "--set", "frames.noise=model",
            "--candidates", "plain.ecsv", "-o", "", "--shifts", "", "--snr-png", "", "--mask-bits", "BAD,SAT")
    check(r.returncode == 0, "weights = plain run")
    if r.returncode == 0:
        pt = Table.read("plain.ecsv", format="ascii.ecsv")
        err = 0.0
        for row in pt:
            w = WCS(fits.getheader(paths[row["frame"]], "IMAGE"))
            s = w.pixel_to_world(row["x"], row["y"])
            err = max(err, abs(s.ra.deg - row["ra"]), abs(s.dec.deg - row["dec"]))
        check(len(pt) > 0 and err < 1e-9, f"weights = plain: RA/Dec by each frame's own WCS within 1e-9 deg (max {err:.2e})")
    # DATE-OBS instead of MJD-OBS; a cube of the three planes
    paths2, mjds2, _, _, _ = make_sequence("cd", times="date")
    r = run(*paths2, "--history", "6", "--set", "frames.warmup=1", "--candidates", "date.ecsv", "-o", "", "--shifts", "",
            "--snr-png", "", "--mask-bits", "BAD,SAT")
    if r.returncode == 0:
        dt = Table.read("date.ecsv", format="ascii.ecsv")
        err = max(abs(row["mjd"] - mjds2[row["frame"]]) for row in dt) if len(dt) else 1
        check(err < 1e-8, f"mjd from DATE-OBS = astropy Time's within 1e-8 d (max {err:.1e})")
    else:
        check(False, f"DATE-OBS run: {r.stderr.strip()[:200]}")
    cube_planes = [fits.getdata(p, name) for name in ("IMAGE", "MASK", "VARIANCE") for p in paths]
    img = np.array(cube_planes[:T])
    msk = np.array(cube_planes[T:2 * T])
    var = np.array(cube_planes[2 * T:])
    calexp("cube.fits", img, msk, var, wcs_cards("tan", (64.5, 64.5)), {"MJD-OBS": 61000.25})
    r = run("cube.fits", "--history", "6", "--set", "frames.warmup=1", "--set", "frames.border=8", "--candidates", "cube.ecsv",
            "-o", "", "--shifts", "", "--snr-png", "", "--mask-bits", "BAD,SAT")
    check(r.returncode == 0, f"a cube of the three planes runs: {r.stderr.strip()[:200]}")
    if r.returncode == 0:
        ct = Table.read("cube.ecsv", format="ascii.ecsv")
        check(len(ct) == len(tab) and np.allclose(ct["x"], tab["x"]) and np.allclose(ct["snr"], tab["snr"], rtol=1e-5),
              f"the cube gives the files' candidates ({len(ct)} and {len(tab)})")


def part_wcs():
    for kind in ("sip", "tpv"):
        paths, _, _, track, _ = make_sequence("w" + kind, kind=kind)
        r = run(*paths, "--history", "6", "--set", "frames.warmup=1", "--set", "frames.border=8", "--candidates", kind + ".ecsv",
                "-o", "", "--shifts", "", "--snr-png", "")
        check(r.returncode == 0, f"{kind}: run ({r.stderr.strip()[:200]})")
        if r.returncode:
            continue
        tab = Table.read(kind + ".ecsv", format="ascii.ecsv")
        w0 = WCS(fits.getheader(paths[0], "IMAGE"))
        sky = w0.pixel_to_world(np.asarray(tab["x"]), np.asarray(tab["y"]))
        err = max(np.abs(sky.ra.deg - np.asarray(tab["ra"])).max(), np.abs(sky.dec.deg - np.asarray(tab["dec"])).max())
        # the distortion is there: the plain TAN of the same cards differs
        tan = fits.getheader(paths[0], "IMAGE").copy()
        tan["CTYPE1"], tan["CTYPE2"] = "RA---TAN", "DEC--TAN"
        for k in [k for k in tan if k[:2] in ("A_", "B_", "PV")]:
            del tan[k]
        plain = WCS(tan).pixel_to_world(np.asarray(tab["x"]), np.asarray(tab["y"]))
        differ = np.abs(plain.ra.deg - np.asarray(tab["ra"])).max()
        check(len(tab) > 0 and err < 1e-9 and differ > 1e-7,
              f"{kind}: RA/Dec = astropy's within 1e-9 deg (max {err:.2e}; {differ:.1e} deg from the undistorted TAN)")
    # no WCS at all: a table without ra, dec (a notice), not an error
    paths, _, _, _, _ = make_sequence("nw", kind="none")
    r = subprocess.run([PYRGRID, "frames", "--backend", BACKEND, *paths, "--history", "6", "--candidates", "nowcs.ecsv", "-o", "",
                        "--shifts", "", "--snr-png", ""], capture_output=True, text=True)
    ok = r.returncode == 0 and "no celestial WCS" in r.stderr
    if ok:
        t = Table.read("nowcs.ecsv", format="ascii.ecsv")
        ok = "ra" not in t.colnames and "mjd" in t.colnames
    check(ok, f"no WCS: candidates without ra, dec and a notice ({r.stderr.strip()[:200]})")


def outputs_untouched(stamp):
    return all(open(p).read() == stamp for p in ("old.ecsv", "old_shifts.csv"))


def part_bad():
    frames, var, _, _ = scene(mover=False)
    h = wcs_cards("tan", (64.5, 64.5))
    good = np.zeros((N, N), np.int32)
    cases = []
    # planes whose shapes disagree
    calexp("b_shape0.fits", frames[0], good, var[0], h)
    calexp("b_shape1.fits", frames[1], good[:, :-1], var[1], h)
    cases.append(("MASK plane of another shape", ["b_shape0.fits", "b_shape1.fits"], ["b_shape1.fits", "MASK", "HDU 3"]))
    calexp("b_var.fits", frames[1], good, var[1][:-3], h)
    cases.append(("VARIANCE plane of another shape", ["b_shape0.fits", "b_var.fits"], ["b_var.fits", "VARIANCE", "HDU 4"]))
    # a mask of the wrong type
    calexp("b_fmask.fits", frames[1], good, var[1], h, mask_dtype=np.float32)
    cases.append(("a float MASK", ["b_shape0.fits", "b_fmask.fits"], ["b_fmask.fits", "MASK", "HDU 3", "BITPIX -32"]))
    # no science plane
    calexp("b_noimg.fits", frames[1], good, var[1], h, names=(None, "MASK", "VARIANCE"))
    cases.append(("no IMAGE plane", ["b_noimg.fits"], ["b_noimg.fits", "IMAGE", "science"]))
    # a list mixing layouts
    fits.PrimaryHDU(frames[1]).writeto("b_plain.fits", overwrite=True)
    cases.append(("calexp and plain FITS mixed", ["b_shape0.fits", "b_plain.fits"], ["b_plain.fits", "layout"]))
    # a WCS wcslib cannot read, when sky positions are asked for
    for t in range(3):
        calexp(f"b_wcs{t}.fits", frames[t], good, var[t], wcs_cards("broken", (64.5, 64.5)))
    cases.append(("a WCS that does not parse", [f"b_wcs{t}.fits" for t in range(3)], ["b_wcs0.fits", "HDU 2", "WCS"]))
    stamp = "old output\n"
    for name, inputs, words in cases:
        for p in ("old.ecsv", "old_shifts.csv"):
            with open(p, "w") as f:
                f.write(stamp)
        r = run(*inputs, "--history", "2", "--candidates", "old.ecsv", "--shifts", "old_shifts.csv", "-o", "bad_res.fits",
                "--snr-png", "bad.png", expect=1)
        msg = r.stderr.strip()
        ok = r.returncode == 1 and all(w in msg for w in words)
        ok = ok and outputs_untouched(stamp) and not os.path.exists("bad_res.fits") and not os.path.exists("bad.png")
        check(ok, f"{name}: refused naming {words}, nothing written ({msg[:240]})")
    # the broken WCS is no error when no sky positions are asked for (plain CSV)
    r = run(*[f"b_wcs{t}.fits" for t in range(3)], "--history", "2", "--candidates", "plain.csv", "-o", "", "--shifts", "",
            "--snr-png", "")
    check(r.returncode == 0 and open("plain.csv").readline().strip() == "frame,x,y,flux,snr",
          "a broken WCS with CSV candidates: runs, today's CSV columns")
    # mask_bits is a key of the program, not of the library
    r = subprocess.run([PYRGRID, "frames", "--set", "frames.mask_bits=", "b_shape0.fits"], capture_output=True, text=True)
    check(r.returncode != 0 and "mask_bits" in r.stderr, "an empty frames.mask_bits is refused")


parts = {"calexp": part_calexp, "wcs": part_wcs, "bad": part_bad}
for name, fn in parts.items():
    if PART in (name, "all"):
        fn()
if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
