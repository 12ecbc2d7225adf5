"""Line Gauss-Seidel (Thomas algorithm per block row) on the Dirichlet
Laplacian, whose exact solution is all ones: plain and over-relaxed.

usage: PYTHONPATH=python /usr/bin/python3 examples/lgs.py [N] [M]
"""
import sys

import numpy as np

import pyrgrid

n = int(sys.argv[1]) if len(sys.argv) > 1 else 64
m = int(sys.argv[2]) if len(sys.argv) > 2 else 96
system = pyrgrid.lgs_system("laplace", n, m)  # cC, aC, bC, cA, cB, F as N x M arrays
for omega in (1.0, pyrgrid.lgs_omega_laplace(n, m)):
    y, info = pyrgrid.solve_lgs(**system, omega=omega, tolerance=1e-10, max_iterations=200000)
    print(f"omega {omega:.4f}: {info.stop} after {info.iterations} iterations, relative residual "
          f"{info.rel_residual:.2e}, max |y - 1| = {np.abs(y - 1).max():.2e} ({info.backend}, {info.seconds:.3f} s)")
