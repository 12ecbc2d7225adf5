#!/usr/bin/python3
"""Check a Mie run's scattering cross-section against Mie's series: the
spectra CSV that `pyrgrid run` wrote for a problem file laid out as
examples/maxwell_mie.ini (one sphere, a TF/SF plane wave "Ez along +x", six
flux planes flux1 .. flux6 making a closed box in the scattered-field region,
low face then high face along x, y, z), by default
bench/problems/mie_larger_than_gpu.ini:

  pyrgrid run bench/problems/mie_larger_than_gpu.ini -v
  python3 bench/mie_check.py mie_big_spectra.csv

What it does, as tests/conformance/test_maxwell_mie.py does for the small case:
  - reads the geometry from the problem file (--problem, with the run's own
    --set overrides): the spacing h, dt, the sphere, the plane wave's box and
    pulse, the flux box and its frequencies;
  - runs the normalisation on the CPU: an empty grid narrow across y and z,
    of the same spacing, dt, precision and plane wave (the same box length
    along x, so the same 1D incident-field grid, which depends on the box
    alone), whose flux plane inside the total-field box gives the incident
    intensity I(f) = flux / area;
  - sigma_s(f) = P_s(f) / I(f), P_s = flux2 + flux4 + flux6 - flux1 - flux3
    - flux5 (each flux is along +AXIS; a low face's outward normal is -AXIS);
  - Mie's series (tests/conformance/mie_series.py) for the sphere of the
    staircase's volume, a_eff = (3 N h^3 / (4 pi))^(1/3), N the nodes the grid
    puts inside the sphere (each node at i h, inside where the squared
    distance to the centre is at most r^2, as the library tests it);
  - prints each frequency's sigma_s, Mie's and their ratio, the largest
    |ratio - 1|, and exits 1 when it is above 5% (0 at or below; 2 for a
    file or a problem it cannot check).

usage: mie_check.py SPECTRA_CSV [--problem FILE] [--set section.key=value]... [--precision float|double]
  --problem FILE    the problem file the run solved (default bench/problems/mie_larger_than_gpu.ini)
  --set KEY=VALUE   an override the run was given (repeatable, applied in order, as pyrgrid run's --set)
  --precision P     the run's precision (default: the problem's scheme.precision); the normalisation runs in it
Needs NumPy, SciPy and the pyrgrid module (this repository's python/ and a built library, or an installed one)."""
import argparse
import csv
import math
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TOLERANCE = 0.05   # the conformance test's bound on |sigma_s / sigma_Mie - 1|
NORM_X0 = 12       # the normalisation grid's box starts at this node along x, as the small case's (its CPML 4 cells before)

sys.path.insert(0, os.path.join(ROOT, "tests", "conformance"))
try:
    from mie_series import mie_qsca
except ImportError as e:
    print(f"mie_check.py: {e}: the Mie series needs NumPy and SciPy (Debian: apt install python3-numpy python3-scipy)", file=sys.stderr)
    sys.exit(2)
try:
    import pyrgrid
except ImportError:
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import pyrgrid


class Unfit(Exception):
    """The problem or the CSV is not a Mie run this checker understands."""


def number_of(word, what):
    try:
        return float(word)
    except ValueError:
        raise Unfit(f"{what}: '{word}' is not a number") from None


def options_of(words):
    """key=value words of a problem-file value, as a dict of strings."""
    return dict(w.split("=", 1) for w in words if "=" in w)


def geometry(p):
    """The run's facts from its problem: spacing, the sphere, the plane wave, the flux box."""
    g = {"n": [int(p.get(f"grid.n{a}")) for a in "xyz"], "l": [float(p.get(f"grid.l{a}")) for a in "xyz"]}
    if int(p.get("grid.dims")) != 3 or p.get("scheme.equation") != "maxwell":
        raise Unfit("the problem is not a 3D Maxwell problem (grid.dims = 3, scheme.equation = maxwell)")
    g["h"] = [l / (n - 1) for l, n in zip(g["l"], g["n"])]
    if max(g["h"]) - min(g["h"]) > 1e-12 * max(g["h"]):
        raise Unfit(f"the spacing differs between axes (h = {g['h']}); the normalisation grid needs one spacing")
    if p.get("boundary.kind") != "cpml":
        raise Unfit(f"boundary.kind = {p.get('boundary.kind')}: the scattered field must leave through a CPML")
    if float(p.get("material.eps_r")) != 1 or float(p.get("material.mu_r")) != 1 or float(p.get("material.sigma")) != 0:
        raise Unfit("the background is not vacuum (material.eps_r = 1, mu_r = 1, sigma = 0)")
    if p.get("material.shape2") not in (None, ""):
        raise Unfit("the problem has more than one shape; Mie's series is for one sphere")
    sphere = str(p.get("material.shape1") or "").split()
    if len(sphere) < 5 or sphere[0] != "sphere":
        raise Unfit(f"material.shape1 = '{' '.join(sphere)}': write one sphere (sphere CX CY CZ R eps_r=E)")
    opts = options_of(sphere[5:])
    if float(opts.get("sigma", 0)) != 0 or float(opts.get("mu_r", 1)) != 1:
        raise Unfit("the sphere has sigma or mu_r; Mie's series here is for a lossless dielectric (eps_r only)")
    g["centre"] = [number_of(w, "material.shape1") for w in sphere[1:4]]
    g["radius"] = number_of(sphere[4], "material.shape1")
    g["eps"] = float(opts.get("eps_r", 1))
    if p.get("source.planewave2") not in (None, "") or p.get("source.source1") not in (None, ""):
        raise Unfit("the problem has more sources than one plane wave")
    pw = str(p.get("source.planewave1") or "").split()
    if len(pw) < 10 or pw[0] != "Ez" or pw[1:3] != ["along", "+x"] or pw[3] != "box":
        raise Unfit(f"source.planewave1 = '{' '.join(pw)}': write Ez along +x box X0 Y0 Z0 X1 Y1 Z1 and its pulse")
    g["box"] = [int(number_of(w, "source.planewave1")) for w in pw[4:10]]
    g["pulse"] = pw[10:]
    flux = []
    for i in range(6):
        f = str(p.get(f"monitor.flux{i + 1}") or "").split()
        axis = "xyz"[i // 2]
        if len(f) < 8 or f[0] != "plane" or f[1] != axis or not f[7].startswith("freqs="):
            raise Unfit(f"monitor.flux{i + 1} = '{' '.join(f)}': the six faces are flux1 .. flux6, low then high face "
                        f"along x, y, z (plane {axis} NODE LO HI LO HI freqs=F0:F1:N)")
        flux.append([int(number_of(w, f"monitor.flux{i + 1}")) for w in f[2:7]] + [f[7]])
    if p.get("monitor.flux7") not in (None, ""):
        raise Unfit("the problem has more than six flux monitors")
    lo, hi = [flux[2 * a][0] for a in range(3)], [flux[2 * a + 1][0] for a in range(3)]
    for i, f in enumerate(flux):
        others = [a for a in range(3) if a != i // 2]
        if f[1:5] != [lo[others[0]], hi[others[0]], lo[others[1]], hi[others[1]]] or f[5] != flux[0][5]:
            raise Unfit(f"monitor.flux{i + 1} does not close the box of nodes {lo} .. {hi} (or its freqs differ from flux1's)")
    box = g["box"]
    for a in range(3):
        if not lo[a] < box[a] <= box[a + 3] < hi[a]:
            raise Unfit(f"the flux box {lo} .. {hi} does not enclose the plane wave's box {box[:3]} .. {box[3:]} along "
                        f"{'xyz'[a]}: its faces must see the scattered field alone")
        c = g["centre"][a] / g["h"][a]
        if not box[a] <= c - g["radius"] / g["h"][a] or not c + g["radius"] / g["h"][a] <= box[a + 3]:
            raise Unfit("the sphere is not inside the plane wave's box")
    g["flux_lo"], g["flux_hi"], g["freqs"] = lo, hi, flux[0][5]
    return g


def a_eff(g):
    """The radius of the sphere of the staircase's volume: the nodes i h within the radius of the centre."""
    h, c, r = g["h"], g["centre"], g["radius"]
    axes = []
    for a in range(3):
        first = max(0, math.floor((c[a] - r) / h[a]) - 1)
        last = min(g["n"][a] - 1, math.ceil((c[a] + r) / h[a]) + 1)
        axes.append(np.arange(first, last + 1, dtype=np.float64) * h[a] - c[a])
    dx, dy, dz = axes
    d2 = (dx[:, None, None] * dx[:, None, None] + dy[None, :, None] * dy[None, :, None]) + dz[None, None, :] * dz[None, None, :]
    count = int(np.count_nonzero(d2 <= r * r))
    return (3 * count * h[0] * h[1] * h[2] / (4 * np.pi)) ** (1 / 3), count


def incident_intensity(g, p, precision):
    """An empty grid narrow across y and z: the same spacing, dt and pulse, the plane wave's box as long along x
    (its 1D grid then the run's); the power through a plane at the box's middle, per unit area."""
    cpml, half = 4, 4
    m = 2 * (cpml + half) + 1
    c = m // 2
    length, x0 = g["box"][3] - g["box"][0], NORM_X0
    nx = length + 2 * x0 + 1
    h = g["h"][0]
    box = f"{x0} {c - half + 1} {c - half + 1} {x0 + length} {c + half - 1} {c + half - 1}"
    span = (c - half + 2, c + half - 2)
    plane = f"plane x {x0 + length // 2} {span[0]} {span[1]} {span[0]} {span[1]} {g['freqs']}"
    # test_maxwell_mie.py's normalisation grid, with the run's box length along x (the small case's: the same grid)
    r = pyrgrid.maxwell((m, m, nx), steps=int(p.get("scheme.steps")), lengths=((m - 1) * h, (m - 1) * h, (nx - 1) * h),
                        courant=float(p.get("scheme.courant")), dtype=np.float32 if precision == "float" else np.float64,
                        keys={"boundary.kind": "cpml", "boundary.cpml_cells": cpml,
                              "source.planewave1": f"Ez along +x box {box} " + " ".join(g["pulse"])},
                        monitors={"flux1": plane}, backend="cpu")
    area = ((span[1] - span[0]) * h) ** 2
    mon = r.monitors["flux1"]
    return np.asarray(mon.freqs), np.asarray(mon.flux) / area, r.dt, (m, m, nx)


def read_spectra(path):
    """{monitor: (freqs, flux)} of the flux rows of an output.spectra CSV."""
    rows = {}
    with open(path, newline="") as f:
        reader = csv.reader(f)
        head = next(reader, None)
        if head is None or head[:3] != ["monitor", "frequency", "flux"]:
            raise Unfit(f"{path}: not an output.spectra CSV (its first line is monitor,frequency,flux,re,im)")
        for line in reader:
            if len(line) >= 3 and line[2] != "":
                rows.setdefault(line[0], []).append((float(line[1]), float(line[2])))
    return {k: (np.array([v[0] for v in vs]), np.array([v[1] for v in vs])) for k, vs in rows.items()}


def main(argv):
    ap = argparse.ArgumentParser(prog="mie_check.py", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("spectra", metavar="SPECTRA_CSV")
    ap.add_argument("--problem", default=os.path.join(HERE, "problems", "mie_larger_than_gpu.ini"))
    ap.add_argument("--set", "-s", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--precision", choices=("float", "double"))
    args = ap.parse_args(argv)
    try:
        p = pyrgrid.Problem.from_file(args.problem)
        for kv in args.set:
            if "=" not in kv:
                raise Unfit(f"--set {kv}: write section.key=value")
            p.set(*kv.split("=", 1))
        g = geometry(p)
        spectra = read_spectra(args.spectra)
        missing = [f"flux{i + 1}" for i in range(6) if f"flux{i + 1}" not in spectra]
        if missing:
            raise Unfit(f"{args.spectra}: no rows of {', '.join(missing)}; it holds {', '.join(sorted(spectra)) or 'no fluxes'}")
    except (Unfit, OSError, pyrgrid.Error) as e:
        print(f"mie_check.py: {e}", file=sys.stderr)
        return 2
    precision = args.precision or str(p.get("scheme.precision"))
    radius, count = a_eff(g)
    n = g["n"]
    print(f"{args.problem}: {n[0]} x {n[1]} x {n[2]} {precision}, h = {g['h'][0]:.6g}, {p.get('scheme.steps')} steps of dt = {p.dt:.6g}; "
          f"sphere eps_r = {g['eps']:g}, radius {g['radius']:g} ({g['radius'] / g['h'][0]:g} cells), {count} nodes inside: "
          f"a_eff = {radius:.5f}")
    t0 = time.perf_counter()
    f, inc, dt, shape = incident_intensity(g, p, precision)
    print(f"normalisation: an empty {shape[2]} x {shape[1]} x {shape[0]} grid on the CPU, {time.perf_counter() - t0:.1f} s")
    if abs(dt - p.dt) > 1e-12 * p.dt:
        print(f"mie_check.py: the normalisation's dt {dt!r} differs from the run's {p.dt!r}", file=sys.stderr)
        return 2
    for name, (freqs, _) in spectra.items():
        if name in [f"flux{i + 1}" for i in range(6)] and (len(freqs) != len(f) or np.any(abs(freqs - f) > 1e-12 * f.max())):
            print(f"mie_check.py: {args.spectra}: {name}'s frequencies differ from the problem's ({g['freqs']})", file=sys.stderr)
            return 2
    if not np.all(inc > 0):
        print("mie_check.py: the normalisation's incident intensity is not positive at every frequency", file=sys.stderr)
        return 2
    p_s = sum((1 if i % 2 else -1) * spectra[f"flux{i + 1}"][1] for i in range(6))
    sigma = p_s / inc
    x = 2 * np.pi * f * radius
    mie = mie_qsca(np.sqrt(g["eps"]), x) * np.pi * radius ** 2
    ratio = sigma / mie
    print(f"{'f':>8} {'x':>6} {'sigma_s':>9} {'Mie':>9} {'ratio':>8}")
    for i in range(len(f)):
        print(f"{f[i]:8.4f} {x[i]:6.3f} {sigma[i]:9.5f} {mie[i]:9.5f} {ratio[i]:8.4f}")
    worst = float(np.max(abs(ratio - 1)))
    ok = worst <= TOLERANCE and np.all(np.isfinite(ratio))
    print(f"scattering cross-section: max |sigma_s / sigma_Mie - 1| = {worst:.4f} over x = {x[0]:.2f} .. {x[-1]:.2f} "
          f"({'within' if ok else 'ABOVE'} {TOLERANCE:.0%})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
