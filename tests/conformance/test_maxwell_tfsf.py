"""A dielectric slab lit by a total-field / scattered-field plane wave
(source.planewaveN), its transmission and reflection spectra read by flux
monitors, against the analytic Fabry-Perot formulas (issue #46 item 1 with
item 3's monitors; reliability of the TF/SF source: the scattered-field
region sees only the reflected wave).

The case: a 2D TE parallel-plate line (PEC walls at the y ends carry the TEM
wave Ey, Hz uniform across y), CPML on the x faces; the plane wave
"Ey along +x", its total-field box from x node BOX0 to BOX1 and across the
whole line in y (its y faces on the walls, across which E points); a lossless
slab of eps_r = 4 (n = 2), 50 cells thick, inside the box.  The reflection
plane (flux1) lies in the scattered-field region before the box, so it sees
the reflected wave alone and R = -P1 / P_inc directly (no subtraction of an
empty run's fields); the transmission plane (flux2) lies in the box behind
the slab, T = P2 / P_inc.  P_inc is the empty line's power through flux2,
and the empty line's flux1 sees nothing (the TF/SF box leaks nothing: its
power is <= 1e-6 of P_inc, -60 dB).  Checked: |T - T_a| <= 1% of T_a,
|R - R_a| <= 0.01, |R + T - 1| <= 1e-3 over f = 0.2 .. 1.0.

usage: test_maxwell_tfsf.py"""
import sys

import numpy as np

import pyrgrid

H, NX, NY, HY = 0.01, 241, 4, 0.1
N_SLAB, I0, I1 = 2.0, 100, 149      # the slab's nodes, d = 50 h
D = (I1 - I0 + 1) * H
BAND = (0.2, 1.0, 41)
BOX0, BOX1 = 50, 200                # the total-field box along x
REFL, TRAN = 40, 180                # the reflection plane (scattered field), the transmission plane (total field)
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def run(slab):
    shapes = [f"box {(I0 - 0.25) * H} {(I1 + 0.25) * H} -1 1 eps_r={N_SLAB ** 2}"] if slab else []
    band = "{}:{}:{}".format(*BAND)
    return pyrgrid.maxwell((NY, NX), steps=1600, mode="te", lengths=((NY - 1) * HY, (NX - 1) * H), courant=0.99,
                           keys={"boundary.kind": "cpml", "boundary.faces": "x-,x+", "boundary.cpml_cells": 20,
                                 "source.planewave1": f"Ey along +x box {BOX0} 0 {BOX1} {NY - 1} gaussian width=0.2 delay=1.0"},
                           shapes=shapes, monitors={"flux1": f"plane x {REFL} freqs={band}", "flux2": f"plane x {TRAN} freqs={band}"})


def analytic(f):
    r = (1 - N_SLAB) / (1 + N_SLAB)
    delta = 2 * np.pi * f * N_SLAB * D
    t = (1 - r * r) * np.exp(1j * delta) / (1 - r * r * np.exp(2j * delta))
    return 1 - abs(t) ** 2, abs(t) ** 2


def main():
    empty, slab = run(False), run(True)
    f = empty.monitors["flux1"].freqs
    check(np.allclose(f, np.linspace(*BAND)), f"the frequencies {f}")
    p_inc = empty.monitors["flux2"].flux
    leak = abs(empty.monitors["flux1"].flux)
    check(np.all(p_inc > 0), "the incident power is not positive")
    print(f"empty line: power in the scattered-field region <= {(leak / p_inc).max():.2e} of the incident")
    check(np.all(leak <= 1e-6 * p_inc), "the TF/SF box leaks more than -60 dB of the incident power")
    T = slab.monitors["flux2"].flux / p_inc
    R = -slab.monitors["flux1"].flux / p_inc
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
