"""Mie scattering (issue #46, tests "Mie scattering"): the scattering
cross-section of a dielectric sphere in 3D, lit by a total-field /
scattered-field plane-wave pulse and measured by a closed box of six flux
planes in the scattered-field region, against the analytic Mie series
(mie_series.py, from SciPy's spherical Bessel functions); and the far field
of the same box (the near-to-far-field transform) against Mie's differential
cross-section |S1|^2 / k^2, |S2|^2 / k^2.

The case (examples/maxwell_mie.ini is the same): a sphere of eps_r = 4
(m = 2) and radius 0.5 on a grid of h = 0.04 (12.5 cells per radius), its
centre on node C; the plane wave "Ez along +x", a Gaussian pulse, in the
total-field box of nodes C - TF .. C + TF; the six flux planes at C -+ FB
(outside the box: they see the scattered field alone), so the power out of
them is the scattered power P_s(f) = sum of the faces' fluxes with their
outward signs (flux2 + flux4 + flux6 - flux1 - flux3 - flux5; pyrgrid's flux
monitors are planes, six of them make the box).  The incident intensity I(f)
is the power through a flux plane inside the total-field box of an empty
grid, divided by the plane's area: a normalisation run on a narrow grid of
the same spacing and dt, whose 1D incident-field grid is the main run's, so
its plane wave is the same.  sigma_s(f) = P_s / I.

What is compared: the grid holds a staircase sphere (every node within the
radius takes eps_r = 4; each E component takes its node's value), so the Mie
series is evaluated for the sphere of the same volume, a_eff = (3 N h^3 /
(4 pi))^(1/3) with N the nodes inside (8217 of them: a_eff = 0.50073), at
x = 2 pi f a_eff from 0.5 to 3.0: across the first resonances of the m = 2
sphere (b1 near x = 1.5, a1 and b2 near 2.1, a2 and b3 near 2.7).  Checked:
|sigma_s / sigma_Mie - 1| <= 5% at every frequency of the band (measured: at
most 4.1%, at small x, where the staircase's polarisability is a few percent
above the sphere's; 2.7% or less from x = 1.2 on); the far field of the six
faces at directions in the E plane and the H plane (every 30 degrees) against
Mie's differential cross-section, to 8% of its largest value at each
frequency (measured: 6.1%, forward near x = 2.9, on the flanks of the a2 and
b3 resonances), and its integral over the sphere against P_s to 1% (0.4%).
The Mie code itself is checked against Bohren & Huffman's BHMIE example
(m = 1.55, x = 5.213: Q_sca = 3.10543), the Rayleigh limit, and its S1, S2
integrated over the angles against its Q_sca.

usage: test_maxwell_mie.py"""
import os
import sys
import time

import numpy as np

try:
    import scipy.special  # noqa: F401  (mie_series.py's spherical Bessel functions)
except ImportError:
    print("SciPy is not installed: skipped")
    sys.exit(77)

import pyrgrid
from mie_series import mie_coefficients, mie_qsca, mie_s12
from pyrgrid import FluxRegion, PlaneWave

H, A, EPS = 0.04, 0.5, 4.0          # the spacing, the sphere's radius and permittivity
CPML = 8
TF, FB = 14, 16                     # the total-field box and the flux box, half-widths in cells
C = FB + 2 + CPML                   # the centre node; two nodes between the flux box and the CPML
N = 2 * C + 1
COURANT = 0.99
STEPS = 1800
FREQS = (0.159, 0.954, 26)          # x = 2 pi f a_eff from 0.5 to 3.0
WIDTH = 0.27                        # the pulse: a Gaussian of this width, delayed 6 widths
FF_TOL = 0.08                       # the far field's differential cross-section, of its largest value
EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "examples", "maxwell_mie.ini")
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


# ---- the Mie series (mie_series.py), checked here ----
def check_mie_code():
    q = mie_qsca(1.55, 2 * np.pi * 0.525 / 0.6328)[0]
    check(abs(q - 3.10543) <= 1e-5, f"the Mie series gives Q_sca = {q:.6f} for BHMIE's example, not 3.10543")
    x = 0.02
    rayleigh = 8 / 3 * x ** 4 * ((EPS - 1) / (EPS + 2)) ** 2
    q = mie_qsca(np.sqrt(EPS), x)[0]
    check(abs(q / rayleigh - 1) <= 1e-3, f"the Mie series gives Q_sca = {q:.6g} at x = 0.02, Rayleigh's {rayleigh:.6g}")
    s1, s2 = mie_s12(1.5, [1.0], [1.0])
    n, a, b = mie_coefficients(1.5, [1.0])
    forward = np.sum((2 * n + 1) * (a[:, 0] + b[:, 0])) / 2  # S1(0) = S2(0) = sum (2n + 1)(a_n + b_n) / 2
    check(abs(s1[0, 0] - forward) <= 1e-12 and abs(s2[0, 0] - forward) <= 1e-12, "S1, S2 forward differ from sum (2n+1)(a_n+b_n)/2")
    # sigma_s = pi / k^2 integral of (|S1|^2 + |S2|^2) sin(theta) dtheta: the amplitudes against the coefficients' sum
    mu, w = np.polynomial.legendre.leggauss(64)
    s1, s2 = mie_s12(2.0, [2.5], mu)
    q = np.pi / 2.5 ** 2 * np.sum(w * (abs(s1[0]) ** 2 + abs(s2[0]) ** 2)) / np.pi  # in units of pi a^2 (k a = 2.5)
    series = mie_qsca(2.0, 2.5)[0]
    check(abs(q / series - 1) <= 1e-9, f"the integral of |S1|^2 + |S2|^2 gives Q_sca = {q:.8f}, the series {series:.8f}")


# ---- the runs ----
def a_eff():
    """The radius of the sphere of the staircase's volume: the nodes within A of the centre node."""
    r = np.arange(-C, C + 1)
    d2 = r[:, None, None] ** 2 + r[None, :, None] ** 2 + r[None, None, :] ** 2
    count = np.count_nonzero(d2 * H * H <= A * A * (1 + 1e-12))  # (A / H)^2 = 156.25: no node lies on the surface
    return (3 * count * H ** 3 / (4 * np.pi)) ** (1 / 3)


def faces(freqs):
    """The flux box: a pair of planes per axis at C -+ FB, each spanning the box along the other two."""
    span = ((C - FB, C + FB), (C - FB, C + FB))
    return [FluxRegion(axis, node=C + side * FB, span=span, freq_range=freqs) for axis in "xyz" for side in (-1, 1)]


def problem(freqs):
    """The sphere's run: examples/maxwell_mie.ini, built here from the Python objects."""
    p = pyrgrid.Problem("maxwell", shape=(N, N, N), dtype=np.float64, lengths=((N - 1) * H,) * 3,
                        keys={"scheme.steps": STEPS, "scheme.courant": COURANT, "boundary.kind": "cpml", "boundary.cpml_cells": CPML,
                              "material.shape1": f"sphere {C * H} {C * H} {C * H} {A} eps_r={EPS}"})
    p.set("source.planewave1", PlaneWave("Ez", along="+x", node=((C - TF,) * 3, (C + TF,) * 3), width=WIDTH, delay=6 * WIDTH))
    for i, face in enumerate(faces(freqs)):
        p.set(f"monitor.flux{i + 1}", face)
    return p


def check_example(freqs):
    """examples/maxwell_mie.ini is this test's case, key for key."""
    mine, example = problem(freqs), pyrgrid.Problem.from_file(EXAMPLE)
    keys = ["grid.dims"] + [f"grid.{k}{a}" for k in "nl" for a in "xyz"] + ["scheme.steps", "scheme.courant", "scheme.precision",
            "boundary.kind", "boundary.cpml_cells", "material.eps_r", "material.shape1", "source.planewave1"]
    keys += [f"monitor.flux{i + 1}" for i in range(6)]
    for key in keys:
        check(mine.get(key) == example.get(key), f"{EXAMPLE}: {key} = {example.get(key)!r}, the test's {mine.get(key)!r}")


def incident_intensity(freqs):
    """An empty grid narrow across y and z, the same x nodes, spacing and dt (the same spacing along every axis and
    Courant number): the incident power through a plane in its total-field box, per unit area."""
    cpml, half = 4, 4
    m = 2 * (cpml + half) + 1
    c = m // 2
    box = ((C - TF, c - half + 1, c - half + 1), (C + TF, c + half - 1, c + half - 1))
    span = ((c - half + 2, c + half - 2), (c - half + 2, c + half - 2))
    r = pyrgrid.maxwell((m, m, N), steps=STEPS, lengths=((m - 1) * H, (m - 1) * H, (N - 1) * H), courant=COURANT, dtype=np.float64,
                        keys={"boundary.kind": "cpml", "boundary.cpml_cells": cpml},
                        sources=[PlaneWave("Ez", along="+x", node=box, width=WIDTH, delay=6 * WIDTH)],
                        monitors=[FluxRegion("x", node=C, span=span, freq_range=freqs)], backend="cpu")
    area = ((span[0][1] - span[0][0]) * H) * ((span[1][1] - span[1][0]) * H)
    return r.monitors["flux1"].flux / area


def main():
    check_mie_code()
    radius = a_eff()
    freqs = FREQS
    print(f"grid {N}^3, h = {H}, {STEPS} steps of dt = {COURANT * H / np.sqrt(3):.5f}; sphere radius {A} ({A / H} cells), equal-volume radius "
          f"a_eff = {radius:.5f}")
    t0 = time.perf_counter()
    check_example(freqs)
    run = pyrgrid.maxwell(problem(freqs), backend="cpu")
    t1 = time.perf_counter()
    inc = incident_intensity(freqs)
    print(f"runs: {t1 - t0:.1f} s with the sphere, {time.perf_counter() - t1:.1f} s the normalisation")
    names = [f"flux{i + 1}" for i in range(6)]
    f = run.monitors["flux1"].freqs
    p_s = sum((1 if i % 2 else -1) * run.monitors[name].flux for i, name in enumerate(names))
    check(np.all(inc > 0), "the incident intensity is not positive")
    sigma = p_s / inc
    k = 2 * np.pi * f
    x = k * radius
    mie = mie_qsca(np.sqrt(EPS), x) * np.pi * radius ** 2
    err = sigma / mie - 1
    print(f"{'x':>6} {'sigma_s':>9} {'Mie':>9} {'error':>8}")
    for i in range(len(f)):
        print(f"{x[i]:6.3f} {sigma[i]:9.5f} {mie[i]:9.5f} {err[i]:+8.4f}")
    print(f"scattering cross-section: max |sigma_s / sigma_Mie - 1| = {abs(err).max():.4f} over x = {x[0]:.2f} .. {x[-1]:.2f}")
    q = mie / (np.pi * radius ** 2)
    peaks = np.count_nonzero((q[1:-1] > q[:-2]) & (q[1:-1] > q[2:]))
    check(peaks >= 2, f"the band holds {peaks} resonance peaks of Q_sca; it should span the first resonances")
    check(np.all(abs(err) <= 0.05), "the scattering cross-section differs from Mie's by more than 5%")

    # the far field of the same box: the differential cross-section U / I against |S|^2 / k^2
    angles = np.radians([0, 30, 60, 90, 120, 150, 180])
    # the E plane (x-z, E in it: S2) at phi = 0 with theta from +z, the scattering angle from +x; the H plane (x-y: S1)
    th_e, ph_e = np.pi / 2 - angles, np.zeros_like(angles)
    th_h, ph_h = np.full_like(angles, np.pi / 2), angles
    ff = run.farfield(names, phi=np.concatenate([ph_e, ph_h]), theta=np.concatenate([th_e, th_h]))
    dsdo = ff.power / inc[:, None]
    s1, s2 = mie_s12(np.sqrt(EPS), x, np.cos(angles))
    ref = np.concatenate([abs(s2) ** 2, abs(s1) ** 2], axis=1) / (k[:, None] ** 2)
    ff_err = abs(dsdo - ref).max(axis=1) / ref.max(axis=1)
    print(f"differential cross-section (E and H planes, 0 .. 180 degrees): max |U / I - |S|^2 / k^2| = {ff_err.max():.4f} of "
          "its largest value")
    check(np.all(ff_err <= FF_TOL), f"the far field's differential cross-section differs from Mie's by more than {FF_TOL:.0%}")
    # its integral over the sphere is the scattered power (Gauss-Legendre in cos theta, even in phi)
    nc, nphi = 16, 8  # the patterns hold cos(theta) to a low degree and phi to its second harmonic
    cz, w = np.polynomial.legendre.leggauss(nc)
    th = np.repeat(np.arccos(cz), nphi)
    ph = np.tile(2 * np.pi * np.arange(nphi) / nphi, nc)
    total = run.farfield(names, phi=ph, theta=th).power @ (np.repeat(w, nphi) * 2 * np.pi / nphi)
    print(f"the far field over the sphere / the box's flux - 1: max {abs(total / p_s - 1).max():.2e}")
    check(np.all(abs(total / p_s - 1) <= 0.01), "the far field's power over the sphere differs from the box's flux by more than 1%")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
