"""A dielectric slab's transmission and reflection spectra from Python, by the
two-run recipe (docs/maxwell.md, "Transmission and reflection"): the case of
examples/maxwell_slab_spectrum.ini (a 2D TE parallel-plate line, a lossless
slab of eps_r = 4, 0.5 thick, between two flux planes), run with the slab and
without it; T = P2 / P0(flux2), R = 1 - P1 / P0(flux1), printed beside the
analytic Fabry-Perot formulas, and the transmittance drawn to a PNG by
MaxwellResult.plot_spectra (P / P0 against the empty run).

usage (from a checkout, after bash scripts/setup.sh):
    PYTHONPATH=python /usr/bin/python3 examples/maxwell_spectra.py [OUT.png] [STEPS]
(STEPS: the file's 1600 by default; fewer end the run before the pulse's
echoes have left, so the spectra are cut short.)
"""
import os
import sys

import numpy as np

import pyrgrid

here = os.path.dirname(os.path.abspath(__file__))
case = os.path.join(here, "maxwell_slab_spectrum.ini")
png = sys.argv[1] if len(sys.argv) > 1 else "slab_transmission.png"
steps = int(sys.argv[2]) if len(sys.argv) > 2 else None

# run 1: the slab; run 2: the same grid, source and monitors with the slab set to the background
slab = pyrgrid.maxwell(case, steps=steps)
empty = pyrgrid.maxwell(case, steps=steps, keys={"material.shape1": "box 0.9975 1.4925 -1 1 eps_r=1"})

f = slab.monitors["flux2"].freqs
T = slab.monitors["flux2"].flux / empty.monitors["flux2"].flux
R = 1 - slab.monitors["flux1"].flux / empty.monitors["flux1"].flux

# Fabry-Perot: a slab of index n and thickness d in vacuum, at normal incidence
n, d = 2.0, 0.5
r = (1 - n) / (1 + n)
delta = 2 * np.pi * f * n * d
t = (1 - r * r) * np.exp(1j * delta) / (1 - r * r * np.exp(2j * delta))
Ta = abs(t) ** 2

print(f"{'f':>6} {'T':>8} {'T (Fabry-Perot)':>16} {'R':>8} {'R + T':>8}")
for i in range(0, len(f), 4):
    print(f"{f[i]:6.3f} {T[i]:8.5f} {Ta[i]:16.5f} {R[i]:8.5f} {R[i] + T[i]:8.5f}")
print(f"max |T - T_FP| = {abs(T - Ta).max():.2e}, max |R + T - 1| = {abs(R + T - 1).max():.2e} ({slab.info.steps} steps)")

# the transmittance P2 / P0 as a line plot with labelled axes (pyr_plot_write_png)
slab.plot_spectra(png, ["flux2"], reference=empty, title="slab of eps_r = 4, 0.5 thick: transmittance P / P0")
print("wrote", png)
