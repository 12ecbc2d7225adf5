"""Maxwell's equations (FDTD on the Yee grid) from Python: a 2D metal box of
1.0 x 0.8 rung by a short pulse; the spectrum of a probe peaks at the box's
lowest resonance, TM11, where the Yee grid's dispersion relation puts it.

usage (from a checkout, after bash scripts/setup.sh):
    PYTHONPATH=python /usr/bin/python3 examples/maxwell.py [N] [STEPS]
"""
import sys
import time

import numpy as np

import pyrgrid

n = int(sys.argv[1]) if len(sys.argv) > 1 else 101        # nodes along x (1.0); y (0.8) gets the same spacing
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 4000
h = 1.0 / (n - 1)
ny = round(0.8 / h) + 1
ix, iy = (n - 1) // 3, (ny - 1) // 3                        # off the box's symmetry lines, so TM11 is excited and seen

# one call: PEC walls (the default), a Gaussian pulse on Ez, a probe; fields and probe series back as arrays
t0 = time.perf_counter()
r = pyrgrid.maxwell((ny, n), lengths=(0.8, 1.0), steps=steps, courant=0.9,
                    sources=[f"Ez point {ix} {iy} gaussian width=0.05 delay=0.2"], probes=[f"Ez {2 * ix} {2 * iy}"])
print(f"maxwell {n}x{ny} TM, {r.info.steps} steps of dt={r.dt:.4g}: fields {', '.join(r)}, max |Ez| {np.abs(r['Ez']).max():.3e} "
      f"({time.perf_counter() - t0:.2f} s)")

# the probe's spectrum near TM11 (continuous: f = 0.5 sqrt(1/1.0^2 + 1/0.8^2) = 0.8004)
ez = r.probes[:, 0]
pad = 16 * len(ez)                                           # zero padding: a finer grid of frequencies to find the peak on
spectrum = np.abs(np.fft.rfft(ez * np.hanning(len(ez)), pad))
freq = np.fft.rfftfreq(pad, r.dt)
band = (freq > 0.6) & (freq < 1.0)
peak = freq[band][np.argmax(spectrum[band])]
# the Yee grid's TM11: sin^2(w dt / 2) / dt^2 = sum over x, y of sin^2(k h / 2) / h^2, k = pi / L
s = sum(np.sin(np.pi * h / (2 * length)) ** 2 / h ** 2 for length in (1.0, 0.8))
yee = 2 * np.arcsin(r.dt * np.sqrt(s)) / r.dt / (2 * np.pi)
print(f"TM11: spectrum peak {peak:.4f}, Yee grid {yee:.4f}, continuous 0.8004 (the run's resolution {1 / (steps * r.dt):.4f})")

# the same problem as a plan in a small budget (the pyramid method), updating the arrays in place
problem = pyrgrid.Problem("maxwell", shape=(ny, n), lengths=(0.8, 1.0), steps=steps, courant=0.9,
                          keys={"source.source1": f"Ez point {ix} {iy} gaussian width=0.05 delay=0.2"})
fields = problem.initial_fields()                            # {"Ez": zeros, "Hx": zeros, "Hy": zeros}
with pyrgrid.Plan(problem, pyrgrid.Options(memory="64K", method="pyramid")) as plan:
    print(f"plan: {plan.info['method']} {plan.info['decomposition']}, height {plan.info['height']}, "
          f"{plan.info['passes']} passes")
    plan.execute(fields)
print("pyramid method == one call, bit for bit:", all(np.array_equal(fields[c], r[c]) for c in fields))
