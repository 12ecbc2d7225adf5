"""A dielectric slab's transmission and reflection spectra from flux monitors
(issue #46: "a dielectric slab's transmission and reflection spectra match
the analytic Fabry-Perot formulas to 1% ... R + T = 1 to 1e-3 ... the same
case run in MEEP agrees to 1%").

The case: a 2D TE parallel-plate line - PEC walls at the y ends carry the TEM
wave (Ey, Hz) uniform across y - fed by a Gaussian Ey line source across y,
CPML on the x faces only; a lossless slab of eps_r = 4 (n = 2), 50 cells
thick (d = 0.5), between a reflection plane (flux1, between the source and
the slab) and a transmission plane (flux2, behind it).  Two runs, the
documented recipe (docs/maxwell.md): the empty line gives the incident power
P0(f) at both planes; with the slab, T = P2 / P0(flux2) and
R = (P0(flux1) - P1) / P0(flux1).  Compared with the analytic lossless slab
t = (1 - r^2) e^{i delta} / (1 - r^2 e^{2 i delta}), r = (1 - n) / (1 + n),
delta = 2 pi f n d, over f = 0.2 .. 1.0 (at least 50 cells per wavelength in
the slab): |T - T_a| <= 1% of T_a, |R - R_a| <= 0.01 (1% of the incident
power), |R + T - 1| <= 1e-3.

usage: test_maxwell_spectra.py [meep]   meep: the same case in MEEP (1D, the
same resolution, its own flux recipe with the incident fields subtracted);
exit 77 when the meep module (Debian's python3-meep) does not import."""
import sys

import numpy as np

import pyrgrid

H, NX, NY, HY = 0.01, 241, 4, 0.1   # x spacing 0.01 (L = 2.4); y: 3 cells of 0.1, so dt ~ h (little dispersion in vacuum)
N_SLAB, I0, I1 = 2.0, 100, 149      # the slab's nodes: x = 1.0 .. 1.49, d = 50 h
D = (I1 - I0 + 1) * H
BAND = (0.2, 1.0, 41)
SRC, REFL, TRAN = 40, 60, 180       # nodes: the source, the reflection and the transmission planes
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def run(slab):
    # the shape's box holds the nodes I0 .. I1 (a node's material applies to the components stored there)
    shapes = [f"box {(I0 - 0.25) * H} {(I1 + 0.25) * H} -1 1 eps_r={N_SLAB ** 2}"] if slab else []
    band = "{}:{}:{}".format(*BAND)
    return pyrgrid.maxwell((NY, NX), steps=1600, mode="te", lengths=((NY - 1) * HY, (NX - 1) * H), courant=0.99,
                           keys={"boundary.kind": "cpml", "boundary.faces": "x-,x+", "boundary.cpml_cells": 20},
                           shapes=shapes, sources=[f"Ey line {SRC} 0 {SRC} {NY - 2} gaussian width=0.2 delay=1.0"],
                           monitors={"flux1": f"plane x {REFL} freqs={band}", "flux2": f"plane x {TRAN} freqs={band}"})


def analytic(f):
    r = (1 - N_SLAB) / (1 + N_SLAB)
    delta = 2 * np.pi * f * N_SLAB * D
    t = (1 - r * r) * np.exp(1j * delta) / (1 - r * r * np.exp(2j * delta))
    return 1 - abs(t) ** 2, abs(t) ** 2


def pyrgrid_spectra():
    empty, slab = run(False), run(True)
    f = empty.monitors["flux1"].freqs
    check(np.allclose(f, np.linspace(*BAND)), f"the frequencies {f}")
    p0r, p0t = empty.monitors["flux1"].flux, empty.monitors["flux2"].flux
    check(np.all(p0r > 0) and np.allclose(p0r, p0t, rtol=1e-3), "the empty line's power differs between its two planes")
    T = slab.monitors["flux2"].flux / p0t
    R = (p0r - slab.monitors["flux1"].flux) / p0r
    return f, R, T


def meep_spectra():
    import meep as mp
    mp.verbosity(0)
    L, res = (NX - 1) * H, round(1 / H)
    z = lambda x: mp.Vector3(0, 0, x - L / 2)  # MEEP's 1D cells lie along z; its cell is centred
    fmin, fmax, nf = BAND

    def sim(slab):
        geom = [mp.Block(size=mp.Vector3(mp.inf, mp.inf, D), center=z((I0 - 0.5) * H + D / 2), material=mp.Medium(epsilon=N_SLAB ** 2))] if slab else []
        s = mp.Simulation(cell_size=mp.Vector3(0, 0, L), dimensions=1, resolution=res, boundary_layers=[mp.PML(20 * H)], geometry=geom,
                          sources=[mp.Source(mp.GaussianSource((fmin + fmax) / 2, fwidth=2 * (fmax - fmin)), component=mp.Ex, center=z(SRC * H))])
        return s, s.add_flux((fmin + fmax) / 2, fmax - fmin, nf, mp.FluxRegion(center=z(REFL * H))), \
            s.add_flux((fmin + fmax) / 2, fmax - fmin, nf, mp.FluxRegion(center=z(TRAN * H)))

    def until(s):
        s.run(until_after_sources=mp.stop_when_fields_decayed(20, mp.Ex, z(TRAN * H), 1e-9))

    s, refl, tran = sim(False)
    until(s)
    inc, empty_t, data = np.array(mp.get_fluxes(refl)), np.array(mp.get_fluxes(tran)), s.get_flux_data(refl)
    s2, refl2, tran2 = sim(True)
    s2.load_minus_flux_data(refl2, data)
    until(s2)
    return np.array(mp.get_flux_freqs(refl)), -np.array(mp.get_fluxes(refl2)) / inc, np.array(mp.get_fluxes(tran2)) / empty_t


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "meep":
        try:
            import meep  # noqa: F401
        except ImportError:
            print("the meep module (Debian: python3-meep) does not import: skipped")
            return 77
        f, R, T = pyrgrid_spectra()
        fm, Rm, Tm = meep_spectra()
        check(np.allclose(f, fm), "MEEP's frequencies differ")
        print(f"pyrgrid against MEEP: max |T - T_meep| = {abs(T - Tm).max():.2e}, max |R - R_meep| = {abs(R - Rm).max():.2e}")
        check(np.all(abs(T - Tm) <= 0.01 * Tm), "T differs from MEEP's by more than 1%")
        check(np.all(abs(R - Rm) <= 0.01), "R differs from MEEP's by more than 1% of the incident power")
    else:
        f, R, T = pyrgrid_spectra()
        Ra, Ta = analytic(f)
        print(f"against Fabry-Perot: max |T - Ta| / Ta = {(abs(T - Ta) / Ta).max():.2e}, max |R - Ra| = {abs(R - Ra).max():.2e}, "
              f"max |R + T - 1| = {abs(R + T - 1).max():.2e}; T from {T.min():.3f} to {T.max():.3f}")
        check(Ta.min() < 0.7 and Ta.max() > 0.99, "the band does not span the slab's fringes")
        check(np.all(abs(T - Ta) <= 0.01 * Ta), "T differs from the Fabry-Perot formula by more than 1%")
        check(np.all(abs(R - Ra) <= 0.01), "R differs from the Fabry-Perot formula by more than 1% of the incident power")
        check(np.all(abs(R + T - 1) <= 1e-3), "R + T differs from 1 by more than 1e-3")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
