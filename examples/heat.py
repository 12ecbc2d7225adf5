"""The heat equation from Python: a hot spot spreading on the unit square.

usage (from a checkout, after bash scripts/setup.sh):
    PYTHONPATH=python /usr/bin/python3 examples/heat.py [N] [STEPS]
(installed with cmake --install: /usr/bin/python3 examples/heat.py)
"""
import sys
import time

import numpy as np

import pyrgrid

n = int(sys.argv[1]) if len(sys.argv) > 1 else 513
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
h = 1.0 / (n - 1)
dt = 0.2 * h * h  # stable: alpha^2 dt (1/hx^2 + 1/hy^2) <= 1/2
y, x = np.mgrid[0:1:n * 1j, 0:1:n * 1j]
u0 = np.exp(-((x - 0.5) ** 2 + (y - 0.5) ** 2) / 0.01)
u0[0, :] = u0[-1, :] = u0[:, 0] = u0[:, -1] = 0.0  # boundary values stay as they are

# one call: a new array, the library chooses how (naive in memory, or the pyramid method)
t0 = time.perf_counter()
u = pyrgrid.heat(u0, alpha=1.0, dt=dt, steps=steps)
print(f"heat {n}x{n}, {steps} steps of dt={dt:.3g}: max u {u0.max():.4f} -> {u.max():.4f} "
      f"({time.perf_counter() - t0:.2f} s)")

# the same problem as a plan, in a 1 MiB budget: the pyramid method, updating v in place
problem = pyrgrid.Problem("heat", shape=u0.shape, dt=dt, steps=steps)
with pyrgrid.Plan(problem, pyrgrid.Options(memory="1MiB")) as plan:
    info = plan.info
    print(f"plan: {info['method']} {info['decomposition']}, height {info['height']}, {info['passes']} passes, "
          f"{info['device_bytes']} bytes of the budget, redundancy {info['redundancy']:.3f}")
    v = u0.copy()
    plan.execute(v, progress=lambda done, total: print(f"\r{done}/{total} steps", end="", file=sys.stderr))
    print(file=sys.stderr)
print("pyramid method == one call, bit for bit:", np.array_equal(u, v))
