"""Multigrid for Poisson (scheme.iteration = multigrid) against an independent reference (issue 48).

The discrete operator is assembled here from its definition, not from pyrgrid's code: node-centred, the
(1D/2D/3D) 3/5/7-point Laplacian with spacings h_a = L_a / (N_a - 1), -laplace(u) = f at the interior nodes, the
boundary nodes keeping the initial field's values (Dirichlet).  scipy.sparse.linalg.spsolve solves it, and
pyrgrid (the program, through problem files) must converge to the same field:

  1. random awkward grids (2D and 3D, anisotropic spacings, sizes m * 2^k + 1 that are not 2^k + 1, random f,
     initial guess and Dirichlet values), V- and F-cycles, Chebyshev and weighted-Jacobi smoothing, to 1e-10
     relative in double; the report's cycles, relative residual and sweep equivalents;
  2. OMP_NUM_THREADS = 1 and 2: the same cycles and the same bits;
  3. the result through HDF5 (output.field = u.h5) and through the Python module (pyrgrid.poisson);
  4. refusals, with their messages: sizes that cannot be coarsened (naming sizes that work), a memory budget
     below the levels' (no out-of-core multigrid), snapshots.  Neumann and mixed faces:
     test_poisson_multigrid_neumann.py.

  test_poisson_multigrid.py PYRGRID WORKDIR
"""
import json
import os
import subprocess
import sys

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def laplacian(shape, lengths):
    """-laplace on the interior nodes, x fastest (shape is (nx, ny, nz) of the used axes), and the boundary's
    couplings as a matrix from all nodes to the interior ones."""
    dims = len(shape)
    inner = [n - 2 for n in shape]
    A = None
    for a in range(dims):
        h = lengths[a] / (shape[a] - 1)
        m = inner[a]
        T = sp.diags([-np.ones(m - 1), 2 * np.ones(m), -np.ones(m - 1)], [-1, 0, 1]) / (h * h)
        term = None
        for b in range(dims):  # kron with the slowest axis first: x fastest
            f = T if b == a else sp.identity(inner[b])
            term = f if term is None else sp.kron(f, term)
        A = term if A is None else A + term
    return A.tocsc()


def reference(shape, lengths, f, u0):
    """The exact discrete solution: interior from spsolve with the boundary's values moved to the right side."""
    dims = len(shape)
    arr_f = f.reshape(shape[::-1])
    u = u0.reshape(shape[::-1]).copy()
    interior = tuple(slice(1, -1) for _ in range(dims))
    b = arr_f[interior].copy()
    for a in range(dims):  # numpy axis of x is the last
        ax = dims - 1 - a
        h = lengths[a] / (shape[a] - 1)
        for side, nb in ((0, 0), (-1, -1)):
            sl = [slice(1, -1)] * dims
            sl[ax] = nb
            bnd = u[tuple(sl)]
            tgt = [slice(None)] * dims
            tgt[ax] = 0 if side == 0 else -1
            b[tuple(tgt)] += bnd / (h * h)
    A = laplacian(shape, lengths)
    u[interior] = spla.spsolve(A, b.reshape(-1)).reshape(b.shape)
    return u


def ini(path, shape, lengths, extra):
    dims = len(shape)
    lines = ["[grid]", f"dims = {dims}"]
    for a, name in enumerate("xyz"[:dims]):
        lines += [f"n{name} = {shape[a]}", f"l{name} = {lengths[a]!r}"]
    lines += ["[scheme]", "equation = poisson", "iteration = multigrid", "precision = double"]
    for k, v in extra.items():
        lines.append(f"{k} = {v}")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


def run(pyrgrid, work, name, shape, lengths, f, u0, keys, env=None, out="u.npy"):
    fpath, upath, cfg = os.path.join(work, name + "_f.npy"), os.path.join(work, name + "_u0.npy"), os.path.join(work, name + ".ini")
    np.save(fpath, f.reshape(shape[::-1]))
    np.save(upath, u0.reshape(shape[::-1]))
    ini(cfg, shape, lengths, {})
    report = os.path.join(work, name + ".json")
    result = os.path.join(work, name + "_" + out)
    sets = {"rhs.kind": "file", "rhs.file": fpath, "initial.kind": "file", "initial.file": upath, "output.field": result}
    sets.update(keys)
    argv = [pyrgrid, "run", cfg, "-q", "--report", report]
    for k, v in sets.items():
        argv += ["--set", f"{k}={v}"]
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.run(argv, capture_output=True, text=True, env=e)
    if p.returncode != 0:
        return None, None, p.stderr.strip()
    with open(report) as fh:
        rep = json.load(fh)
    return result, rep["run"], p.stdout.strip()


def field_of(path):
    if path.endswith(".npy"):
        return np.load(path)
    import h5py
    with h5py.File(path, "r") as fh:
        return fh["u"][...]


def main():
    pyrgrid, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(48005)

    # the program hands multigrid plans to their level loop (src/api/execute.c): else nothing below can pass
    shape, lengths = (17, 17), (1.0, 1.0)
    z = np.zeros(17 * 17)
    _, info, msg = run(pyrgrid, work, "probe", shape, lengths, z + 1, z, {"scheme.tolerance": 1e-8})
    if info is None or "cycles" not in info:
        check(False, f"a multigrid run reports its cycles (src/api/execute.c must hand method = multigrid plans to "
                     f"pyr_method_multigrid_execute, src/outputs/report.c write cycles): {msg}")
        return

    # 1. random awkward grids against spsolve
    cases = [
        ((65, 33), (1.0, 0.37), {}),
        ((97, 49), (1.3, 1.0), {"scheme.cycle": "f"}),
        ((129, 17), (1.0, 1.0), {"scheme.smoother": "jacobi"}),           # hx = hy / 8: semi-coarsening along x first
        ((49, 41, 25), (1.0, 0.8, 0.5), {}),
        ((17, 33, 65), (0.3, 1.0, 1.7), {"scheme.cycle": "f", "scheme.pre_smooth": 2, "scheme.post_smooth": 1}),
        ((33, 25, 13), (1.0, 1.0, 1.0), {"scheme.smoother": "jacobi"}),
        ((769,), (2.0,), {}),                                               # 3 * 2^8 + 1
    ]
    for shape, lengths, keys in cases:
        n = int(np.prod(shape))
        f = rng.uniform(-1, 1, n)
        u0 = rng.uniform(-1, 1, n)
        ref = reference(shape, lengths, f, u0)
        keys = dict(keys, **{"scheme.tolerance": 1e-10})
        path, info, msg = run(pyrgrid, work, "case", shape, lengths, f, u0, keys)
        label = f"{'x'.join(map(str, shape))} L={lengths} {keys}"
        if path is None:
            check(False, f"{label}: {msg}")
            continue
        u = field_of(path)
        err = np.abs(u - ref).max() / np.abs(ref).max()
        check(err < 1e-10, f"{label}: {info['cycles']} cycles, residual {info['change']:.3g}, "
                           f"{info['sweep_equivalents']:.1f} sweep equivalents, max error {err:.2e} relative to spsolve")
        check(info["converged"] and info["change"] < 1e-10 and info["steps"] == info["cycles"] and 1 <= info["cycles"] <= 20,
              f"{label}: the report's cycles and residual")

    # 2. thread counts: the same bits and cycles
    shape, lengths = (65, 33, 49), (1.0, 0.5, 0.75)
    n = int(np.prod(shape))
    f, u0 = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    got = []
    for threads in ("1", "2"):
        path, info, msg = run(pyrgrid, work, "threads" + threads, shape, lengths, f, u0, {"scheme.tolerance": 1e-10},
                              env={"OMP_NUM_THREADS": threads})
        got.append((np.load(path).tobytes() if path else None, info and info["cycles"], msg))
    check(got[0][0] is not None and got[0][0] == got[1][0] and got[0][1] == got[1][1],
          f"OMP_NUM_THREADS 1 and 2: the same bits and cycles ({got[0][1]}, {got[1][1]})")

    # 3. HDF5 and the Python module give the same field
    shape, lengths = (33, 65), (1.0, 2.0)
    n = int(np.prod(shape))
    f, u0 = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    p_npy, i_npy, _ = run(pyrgrid, work, "fmt", shape, lengths, f, u0, {"scheme.tolerance": 1e-10})
    try:
        import h5py  # noqa: F401
        p_h5, i_h5, msg = run(pyrgrid, work, "fmt", shape, lengths, f, u0, {"scheme.tolerance": 1e-10}, out="u.h5")
        check(p_h5 is not None and p_npy is not None and np.array_equal(field_of(p_h5), np.load(p_npy)),
              f"output.field = u.h5 holds the .npy's field ({msg if p_h5 is None else 'same bits'})")
    except ImportError:
        print("skip HDF5: no h5py")
    try:
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
        import pyrgrid as pg
        u, info = pg.poisson(u0.reshape(shape[::-1]), f.reshape(shape[::-1]), tolerance=1e-10, iteration="multigrid",
                             lengths=list(lengths[::-1]), backend="cpu", method="multigrid")  # numpy's axis order
        check(p_npy is not None and np.array_equal(u, np.load(p_npy)) and info.steps == i_npy["cycles"] and info.converged,
              f"pyrgrid.poisson(iteration='multigrid'): the program's bits, {info.steps} cycles")
    except ImportError as e:
        print(f"skip the Python module: {e}")

    # out of core: a budget below the levels' streams the finest ones in slabs, with the in-core run's bits and cycles
    for memory in (48000, 56000):  # the levels need about 58 KB: 3 and 2 levels streamed, slabs of 2 planes
        p_ooc, i_ooc, msg = run(pyrgrid, work, "ooc", shape, lengths, f, u0, {"scheme.tolerance": 1e-10, "run.memory": memory})
        check(p_ooc is not None and p_npy is not None and np.array_equal(np.load(p_ooc), np.load(p_npy)) and i_ooc["cycles"] == i_npy["cycles"],
              f"run.memory = {memory}: streamed, the in-core bits and cycles ({msg})")

    # 4. refusals
    def refused(shape, lengths, keys, needle, what):
        n = int(np.prod(shape))
        path, _, msg = run(pyrgrid, work, "refuse", shape, lengths, np.ones(n), np.zeros(n), keys)
        check(path is None and needle in msg, f"{what} refused: {msg}")

    refused((100, 100), (1.0, 1.0), {"scheme.tolerance": 1e-8}, "use ny = 97 or 101", "100 x 100")
    refused((65, 65, 70), (1.0, 1.0, 1.0), {"scheme.tolerance": 1e-8}, "use nz = 69 or 73", "65 x 65 x 70")
    refused((257, 257), (1.0, 1.0), {"scheme.tolerance": 1e-8, "run.memory": "16KiB"}, "use memory >=", "a budget of 16 KiB")
    refused((65, 65), (1.0, 1.0), {"scheme.tolerance": 1e-8, "output.every": 2}, "output.every", "snapshots")
    refused((65, 65), (1.0, 1.0), {"scheme.tolerance": 1e-8, "run.method": "pyramid"}, "run.method = multigrid", "method = pyramid")


main()
if failures:
    print(f"{len(failures)} failed")
    sys.exit(1)
print("all passed")
