"""A lossless dielectric grating under a normally incident plane wave, periodic
boundaries across it (issue #46 item 5: "a normally incident plane wave on a
periodic grating conserves power (R + T = 1 for lossless) and matches MEEP's
diffraction efficiencies where MEEP is available").

The case (MEEP's units, c = 1): a 2D TM cell (Ez, Hx, Hy) periodic along y
with period a = 1 (40 nodes, h = 0.025: the node past the last is the first,
so the period is n h), CPML on the x faces; per period a bar of eps_r = 4
(n = 2), 0.5 thick along x and half the period wide along y.  A TF/SF plane
wave (Ez along +x, a Gaussian pulse) whose box spans y whole and encloses the
bar; the reflection plane (flux1) lies before the box, in the scattered field,
so it sees the reflected wave alone; the transmission plane (flux2) lies
inside the box behind the bar.  The band f = 0.2 .. 0.45 lies below the first
diffraction order in the bar (f a n < 1): only the zeroth order carries power,
so R = -P1 / P0 and T = P2 / P0 are its efficiencies, with P0 the incident
power (flux2 of the same run without the bar).

Checked: |R + T - 1| <= 1e-3 over the band, the grating's R not negligible
(it scatters), and the run without the bar reflects nothing; with `meep`,
MEEP's transmission of the same grating (a line source across the periodic
cell, its own two-run flux recipe, no subpixel smoothing, the same
resolution) agrees to 1% of the incident power.

usage: test_maxwell_grating.py [meep]   meep: exit 77 when Debian's
python3-meep does not import."""
import sys

import numpy as np

import pyrgrid

H, NY, NX = 0.025, 40, 321            # period NY * H = 1; x from 0 to 8
CPML = 30
BAR = (150, 169, 10, 29)              # the bar's nodes: x 150 .. 169 (0.5 thick), y 10 .. 29 (half the period)
BOX = (110, 280)                      # the TF/SF box along x (it spans y whole)
REFL, TRAN = 90, 240                  # the flux planes' nodes along x
BAND = (0.2, 0.45, 26)
EPS = 4.0
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def run(bar):
    x0, x1, y0, y1 = BAR
    shapes = [f"box {(x0 - 0.5) * H} {(x1 + 0.5) * H} {(y0 - 0.5) * H} {(y1 + 0.5) * H} eps_r={EPS}"] if bar else []
    band = "{}:{}:{}".format(*BAND)
    return pyrgrid.maxwell((NY, NX), steps=2500, mode="tm", lengths=((NY - 1) * H, (NX - 1) * H), courant=0.7, boundary="cpml",
                           cpml_cells=CPML, periodic="y", shapes=shapes,
                           keys={"source.planewave1": f"Ez along +x box {BOX[0]} 0 {BOX[1]} {NY - 1} gaussian width=0.6 delay=2.5"},
                           monitors={"flux1": f"plane x {REFL} freqs={band}", "flux2": f"plane x {TRAN} freqs={band}"})


def pyrgrid_spectra():
    empty, grating = run(False), run(True)
    f = empty.monitors["flux2"].freqs
    p0 = empty.monitors["flux2"].flux
    check(np.all(p0 > 0), "the incident power is not positive over the band")
    leak = np.abs(empty.monitors["flux1"].flux).max() / p0.max()
    print(f"without the bar, the reflection plane sees {leak:.2e} of the incident power")
    check(leak <= 1e-6, f"without the bar, {leak:.2e} of the incident power comes back (the TF/SF box across the wrap leaks)")
    R = -grating.monitors["flux1"].flux / p0
    T = grating.monitors["flux2"].flux / p0
    return f, R, T


def meep_spectra():
    import meep as mp
    mp.verbosity(0)
    sx, sy = (NX - 1) * H, NY * H
    X = lambda i: i * H - sx / 2            # node i along x in MEEP's centred cell
    fmin, fmax, nf = BAND
    x0, x1, y0, y1 = BAR

    def sim(bar):
        geom = [mp.Block(size=mp.Vector3((x1 - x0 + 1) * H, (y1 - y0 + 1) * H, mp.inf),
                         center=mp.Vector3(X((x0 + x1) / 2), (y0 + y1) / 2 * H - sy / 2 + H / 2), material=mp.Medium(epsilon=EPS))] if bar else []
        s = mp.Simulation(cell_size=mp.Vector3(sx, sy), resolution=round(1 / H), boundary_layers=[mp.PML(CPML * H, direction=mp.X)],
                          geometry=geom, k_point=mp.Vector3(), eps_averaging=False,
                          sources=[mp.Source(mp.GaussianSource((fmin + fmax) / 2, fwidth=2 * (fmax - fmin)), component=mp.Ez,
                                             center=mp.Vector3(X(BOX[0])), size=mp.Vector3(0, sy))])
        fr = lambda i: mp.FluxRegion(center=mp.Vector3(X(i)), size=mp.Vector3(0, sy))
        return s, s.add_flux((fmin + fmax) / 2, fmax - fmin, nf, fr(REFL + 5)), s.add_flux((fmin + fmax) / 2, fmax - fmin, nf, fr(TRAN))

    def until(s):
        s.run(until_after_sources=mp.stop_when_fields_decayed(20, mp.Ez, mp.Vector3(X(TRAN)), 1e-9))

    s, refl, tran = sim(False)
    until(s)
    inc = np.array(mp.get_fluxes(tran))
    s2, refl2, tran2 = sim(True)
    until(s2)
    return np.array(mp.get_flux_freqs(tran)), np.array(mp.get_fluxes(tran2)) / inc


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "meep":
        try:
            import meep  # noqa: F401
        except ImportError:
            print("the meep module (Debian: python3-meep) does not import: skipped")
            return 77
        f, R, T = pyrgrid_spectra()
        fm, Tm = meep_spectra()
        check(np.allclose(f, fm), "MEEP's frequencies differ")
        print(f"pyrgrid against MEEP: max |T - T_meep| = {abs(T - Tm).max():.2e} (T from {T.min():.3f} to {T.max():.3f})")
        check(np.all(abs(T - Tm) <= 0.01), "T differs from MEEP's zeroth-order transmission by more than 1% of the incident power")
    else:
        f, R, T = pyrgrid_spectra()
        print(f"grating: R from {R.min():.3f} to {R.max():.3f}, T from {T.min():.3f} to {T.max():.3f}, max |R + T - 1| = {abs(R + T - 1).max():.2e}")
        check(R.max() > 0.05, "the grating reflects almost nothing: not a test of the periodic cell")
        check(np.all(abs(R + T - 1) <= 1e-3), "R + T differs from 1 by more than 1e-3")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
