#!/usr/bin/python3
"""The CPU figure beside MEEP (issue 21): the same 3D problem in both, an
N^3 cell of vacuum with a dielectric sphere (eps 4), PEC walls, a point
source, single precision where pyrgrid runs float (MEEP: its build's
precision, double in Debian), the same number of steps at Courant 0.5.
Prints MEEP's stepping rate (cells x steps / s, initialisation excluded).

    meep_compare.py N STEPS
"""
import sys
import time

import meep as mp


def main():
    n, steps = int(sys.argv[1]), int(sys.argv[2])
    res = 1  # one cell per unit: an n^3 grid
    cell = mp.Vector3(n, n, n)
    geometry = [mp.Sphere(radius=0.2 * n, center=mp.Vector3(0.1 * n, 0.1 * n, 0.1 * n), material=mp.Medium(epsilon=4))]
    sources = [mp.Source(mp.GaussianSource(frequency=0.1, fwidth=0.05), component=mp.Ez, center=mp.Vector3(-n / 6, -n / 6, -n / 6))]
    sim = mp.Simulation(cell_size=cell, resolution=res, geometry=geometry, sources=sources, Courant=0.5, eps_averaging=False)
    sim.init_sim()
    dt = sim.fields.dt
    t0 = time.time()
    sim.run(until=steps * dt * 0.999)
    t1 = time.time()
    done = sim.fields.t
    print(f"MEEP {mp.__version__}: {n}^3 cells, {done} steps in {t1 - t0:.3f} s: {n ** 3 * done / (t1 - t0) / 1e9:.4f} Gcell/s")


if __name__ == "__main__":
    main()
