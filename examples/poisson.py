"""The Poisson equation -laplace(u) = f on the unit square by Jacobi sweeps,
against the exact solution u = sin(pi x) sin(pi y).

usage: PYTHONPATH=python /usr/bin/python3 examples/poisson.py [N]
"""
import sys

import numpy as np

import pyrgrid

n = int(sys.argv[1]) if len(sys.argv) > 1 else 129
y, x = np.mgrid[0:1:n * 1j, 0:1:n * 1j]
exact = np.sin(np.pi * x) * np.sin(np.pi * y)
f = 2 * np.pi ** 2 * exact  # -laplace(exact)
u0 = np.zeros((n, n))       # the initial guess; its boundary values (0) are the Dirichlet data

u, info = pyrgrid.poisson(u0, f, tolerance=1e-10, check_every=50)
print(f"poisson {n}x{n}: {info.sweeps} sweeps, last change {info.change:.2e}, converged: {info.converged}")
print(f"max error against sin(pi x) sin(pi y): {np.abs(u - exact).max():.3e} (O(h^2), h = {1 / (n - 1):.3g})")

# the library's own right-hand side for that solution gives the same sweeps
u2, info2 = pyrgrid.poisson(u0, "sine", tolerance=1e-10, check_every=50)
print(f"rhs = 'sine': {info2.sweeps} sweeps, max |u - u2| = {np.abs(u - u2).max():.1e}")
