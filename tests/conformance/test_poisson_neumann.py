"""Neumann and mixed faces of the Poisson scheme against an independent reference (issue 48).

The discrete operator is assembled here from its definition, not from pyrgrid's code: node-centred, the
(2D/3D) 5/7-point Laplacian with spacings h_a = L_a / (N_a - 1); a node on a Dirichlet face keeps the
initial field's value (the Dirichlet face wins on an edge it shares with a Neumann face); a node on a Neumann
face with du/dn = G (outward) reads the ghost u_ghost = u_inner + 2 h G in place of the neighbour outside
the grid.  scipy.sparse.linalg.spsolve solves it, and pyrgrid (the program, through problem files) must
converge to the same field:

  1. random awkward grids (2D and 3D, anisotropic spacings, random face kinds and fluxes, random f and
     Dirichlet values), Chebyshev and plain Jacobi, to 1e-10 relative in double;
  2. second order: a manufactured solution with Neumann faces, error ratio about 4 on halving h;
  3. pure Neumann: incompatible data refused with the message checked; compatible data converges to the
     reference shifted to the initial field's trapezoid-weighted mean (the sweeps keep it), which
     initial.kind = zero makes 0.

  test_poisson_neumann.py PYRGRID WORKDIR
"""
import os
import subprocess
import sys

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

FACES = ["x-", "x+", "y-", "y+", "z-", "z+"]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def assemble(shape, lengths, kinds, flux, f, u0):
    """A (n x n) and b for the nodes in x-fastest order; shape is (nx, ny, nz) of the used axes."""
    dims = len(shape)
    h = [lengths[a] / (shape[a] - 1) for a in range(dims)]
    c = [1.0 / (x * x) for x in h]
    idx = np.arange(int(np.prod(shape))).reshape(shape[::-1])  # [z][y][x]
    rows, cols, vals = [], [], []
    b = np.zeros(idx.size)
    ff = f.reshape(-1)
    uu = u0.reshape(-1)
    for flat in range(idx.size):
        at = []
        r = flat
        for a in range(dims):
            at.append(r % shape[a])
            r //= shape[a]
        dirichlet = any((at[a] == 0 and kinds[2 * a] == "dirichlet") or (at[a] == shape[a] - 1 and kinds[2 * a + 1] == "dirichlet")
                        for a in range(dims))
        if dirichlet:
            rows.append(flat), cols.append(flat), vals.append(1.0)
            b[flat] = uu[flat]
            continue
        diag = 0.0
        rhs = ff[flat]
        stride = 1
        for a in range(dims):
            diag += 2 * c[a]
            lo, hi = at[a] == 0, at[a] == shape[a] - 1
            if lo:  # ghost below = the node above + 2 h G
                rows.append(flat), cols.append(flat + stride), vals.append(-2 * c[a])
                rhs += c[a] * 2 * h[a] * flux[2 * a]
            elif hi:
                rows.append(flat), cols.append(flat - stride), vals.append(-2 * c[a])
                rhs += c[a] * 2 * h[a] * flux[2 * a + 1]
            else:
                rows.append(flat), cols.append(flat - stride), vals.append(-c[a])
                rows.append(flat), cols.append(flat + stride), vals.append(-c[a])
            stride *= shape[a]
        rows.append(flat), cols.append(flat), vals.append(diag)
        b[flat] = rhs
    A = sp.csr_matrix((vals, (rows, cols)), shape=(idx.size, idx.size))
    return A, b


def run(work, name, shape, lengths, kinds, flux, f, u0, iteration="chebyshev", tolerance=1e-13, iterations=400000, omega=None,
        extra=()):
    """Run pyrgrid on the problem; returns (returncode, field or None, stderr)."""
    dims = len(shape)
    fpath, upath, out = (os.path.join(work, name + s) for s in ("_f.npy", "_u0.npy", "_u.npy"))
    np.save(fpath, np.ascontiguousarray(f.reshape(shape[::-1])))
    np.save(upath, np.ascontiguousarray(u0.reshape(shape[::-1])))
    lines = ["[grid]", "dims = %d" % dims]
    for a in range(dims):
        lines += ["n%s = %d" % ("xyz"[a], shape[a]), "l%s = %.17g" % ("xyz"[a], lengths[a])]
    lines += ["[scheme]", "equation = poisson", "precision = double", "tolerance = %g" % tolerance, "iterations = %d" % iterations,
              "check_every = 50", "iteration = %s" % iteration]
    if omega is not None:
        lines.append("omega = %.17g" % omega)
    lines += ["[rhs]", "kind = file", "file = %s" % fpath, "[initial]", "kind = file", "file = %s" % upath, "[boundary]"]
    for k in range(2 * dims):
        lines.append("%s = %s" % (FACES[k], kinds[k] if kinds[k] == "dirichlet" else "neumann %.17g" % flux[k]))
    lines += ["[output]", "field = %s" % out]
    ini = os.path.join(work, name + ".ini")
    with open(ini, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    p = subprocess.run([PYRGRID, "run", ini] + list(extra), capture_output=True, text=True)
    if p.returncode != 0:
        return p.returncode, None, p.stderr
    return 0, np.load(out).reshape(-1), p.stderr + p.stdout


def weights(shape, lengths):
    w = np.ones(1)
    for a in range(len(shape)):  # x fastest: the outer product in reverse axis order
        h = lengths[a] / (shape[a] - 1)
        wa = np.full(shape[a], h)
        wa[0] = wa[-1] = h / 2
        w = np.outer(wa, w).reshape(-1) if a else wa
    return w


def random_cases(work, rng):
    for case in range(8):
        dims = 2 if case < 5 else 3
        shape = [int(rng.integers(5, 40 if dims == 2 else 13)) for _ in range(dims)]
        lengths = [float(rng.uniform(0.3, 3.0)) for _ in range(dims)]
        kinds = [("neumann" if rng.random() < 0.6 else "dirichlet") for _ in range(2 * dims)]
        if all(k == "neumann" for k in kinds):
            kinds[int(rng.integers(0, 2 * dims))] = "dirichlet"
        flux = [float(rng.uniform(-2, 2)) if k == "neumann" and rng.random() < 0.7 else 0.0 for k in kinds]
        n = int(np.prod(shape))
        f = rng.uniform(-5, 5, n)
        u0 = rng.uniform(-1, 1, n)
        A, b = assemble(shape, lengths, kinds, flux, f, u0)
        ref = spla.spsolve(A.tocsc(), b)
        label = "case %d: %dD %s lengths %s faces %s" % (case, dims, "x".join(map(str, shape)), ["%.2f" % x for x in lengths],
                                                         ",".join("%s=%s%s" % (FACES[k], kinds[k][0].upper(), "%.2f" % flux[k] if flux[k] else "")
                                                                  for k in range(2 * dims)))
        iteration = "jacobi" if case in (1, 6) else "chebyshev"
        rc, u, err = run(work, "rand%d" % case, shape, lengths, kinds, flux, f, u0, iteration=iteration,
                         tolerance=1e-14 if iteration == "chebyshev" else 1e-15, iterations=2000000)
        if rc != 0:
            check(False, "%s: pyrgrid failed: %s" % (label, err.strip()))
            continue
        rel = np.abs(u - ref).max() / np.abs(ref).max()
        check(rel < 1e-10, "%s, %s: max |u - spsolve| / max |spsolve| = %.2e (< 1e-10)" % (label, iteration, rel))


def manufactured(work):
    """u = cos(pi x / Lx) sin(pi y / Ly) + 0.3 x + 0.2 x^2: du/dx is 0.3 at x = 0 and 0.3 + 0.4 Lx at x = Lx
    (constant along each x face), Dirichlet in y."""
    Lx, Ly = 1.3, 0.9
    errs = []
    for N in (17, 33, 65):
        shape = [N, (N - 1) * 3 // 4 + 1]
        x = np.linspace(0, Lx, shape[0])[None, :]
        y = np.linspace(0, Ly, shape[1])[:, None]
        exact = np.cos(np.pi * x / Lx) * np.sin(np.pi * y / Ly) + 0.3 * x + 0.2 * x * x
        f = (np.pi ** 2 / Lx ** 2 + np.pi ** 2 / Ly ** 2) * np.cos(np.pi * x / Lx) * np.sin(np.pi * y / Ly) - 0.4
        f = np.broadcast_to(f, exact.shape)
        u0 = exact.copy()
        u0[1:-1, :] = 0  # interior and the Neumann faces start at 0, the Dirichlet rows hold the exact values
        kinds = ["neumann", "neumann", "dirichlet", "dirichlet"]
        flux = [-0.3, 0.3 + 0.4 * Lx, 0.0, 0.0]  # outward derivatives
        rc, u, err = run(work, "mms%d" % N, shape, [Lx, Ly], kinds, flux, f.reshape(-1), u0.reshape(-1), tolerance=1e-13)
        if rc != 0:
            check(False, "manufactured N=%d: pyrgrid failed: %s" % (N, err.strip()))
            return
        errs.append(np.abs(u - exact.reshape(-1)).max())
    ratios = [errs[i] / errs[i + 1] for i in range(len(errs) - 1)]
    check(all(3.6 < r < 4.4 for r in ratios), "manufactured solution, Neumann faces x-, x+ with fluxes: max errors %s, ratios %s (about 4)"
          % (["%.3e" % e for e in errs], ["%.3f" % r for r in ratios]))


def pure_neumann(work, rng):
    for dims in (2, 3):
        shape = [int(rng.integers(6, 30 if dims == 2 else 11)) for _ in range(dims)]
        lengths = [float(rng.uniform(0.5, 2.0)) for _ in range(dims)]
        kinds = ["neumann"] * (2 * dims)
        flux = [float(rng.uniform(-1, 1)) for _ in range(2 * dims)]
        n = int(np.prod(shape))
        w = weights(shape, lengths)
        f = rng.uniform(-3, 3, n)
        area = [np.prod([lengths[b] for b in range(dims) if b != a]) for a in range(dims)]
        gsum = sum((flux[2 * a] + flux[2 * a + 1]) * area[a] for a in range(dims))
        f_ok = f - (w @ f + gsum) / w.sum()
        label = "pure Neumann %dD %s" % (dims, "x".join(map(str, shape)))
        # incompatible: refused, naming the mismatch and the fix
        rc, u, err = run(work, "pn_bad%d" % dims, shape, lengths, kinds, flux, f_ok + 0.5, np.zeros(n))
        check(rc != 0 and "balance the fluxes" in err and "Subtract" in err and "make a face dirichlet" in err,
              "%s, f + 0.5: refused (%s)" % (label, err.strip().splitlines()[-1] if err.strip() else "no message"))
        # compatible: converges; the constant is the initial field's weighted mean
        A, b = assemble(shape, lengths, kinds, flux, f_ok, np.zeros(n))
        # the singular system: pin node 0, then shift
        A = A.tolil()
        A[0, :] = 0
        A[0, 0] = 1
        b[0] = 0
        ref = spla.spsolve(A.tocsc(), b)
        for init, iteration, omega in (("zero", "chebyshev", None), ("random", "chebyshev", None), ("random", "jacobi", 0.9)):
            u0 = np.zeros(n) if init == "zero" else rng.uniform(-1, 1, n)
            mean0 = (w @ u0) / w.sum()
            want = ref - (w @ ref) / w.sum() + mean0
            rc, u, err = run(work, "pn%d%s%s" % (dims, init, iteration), shape, lengths, kinds, flux, f_ok, u0, iteration=iteration,
                             omega=omega, tolerance=1e-14 if iteration == "chebyshev" else 1e-15, iterations=3000000)
            if rc != 0:
                check(False, "%s %s from %s: pyrgrid failed: %s" % (label, iteration, init, err.strip()))
                continue
            rel = np.abs(u - want).max() / np.abs(want).max()
            mean = (w @ u) / w.sum()
            check(rel < 1e-10 and abs(mean - mean0) < 1e-12 * max(1.0, np.abs(u).max()),
                  "%s, %s from u0 = %s: |u - reference| = %.2e relative; weighted mean %.3e, the initial field's %.3e" %
                  (label, iteration + ("" if omega is None else " omega=%g" % omega), init, rel, mean, mean0))
        # plain Jacobi (omega = 1) is refused: the checkerboard mode never decays
        rc, u, err = run(work, "pn_plain%d" % dims, shape, lengths, kinds, flux, f_ok, np.zeros(n), iteration="jacobi", iterations=10)
        check(rc != 0 and "checkerboard" in err and "omega < 1" in err, "%s, plain Jacobi: refused (%s)" %
              (label, err.strip().splitlines()[-1] if err.strip() else "no message"))


if __name__ == "__main__":
    PYRGRID, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(48)
    random_cases(work, rng)
    manufactured(work)
    pure_neumann(work, rng)
    print("%d failures" % len(failures))
    sys.exit(1 if failures else 0)
