"""poisson(boundary={face: kind}): Neumann and mixed faces from Python give
the problem-file run's field bit for bit and its sweep count (the CLI with a
[boundary] section, the same f and initial guess); a face left out stays
Dirichlet; bad faces, kinds and types are refused saying what works."""
import re

import numpy as np
import pytest

import pyrgrid

CPU = {"backend": "cpu"}


def _data(shape, seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)


def _cli_run(cli, tmp_path, u0, f, faces, keys):
    np.save(tmp_path / "u0.npy", u0)
    np.save(tmp_path / "f.npy", f)
    dims = u0.ndim
    grid = "".join(f"{a} = {n}\n" for a, n in zip(("nx", "ny", "nz"), u0.shape[::-1]))
    text = (f"[grid]\ndims = {dims}\n{grid}"
            f"[scheme]\nequation = poisson\nprecision = {'double' if u0.dtype == np.float64 else 'float'}\n"
            + "".join(f"{k} = {v}\n" for k, v in keys.items())
            + f"[rhs]\nkind = file\nfile = {tmp_path / 'f.npy'}\n"
            f"[initial]\nkind = file\nfile = {tmp_path / 'u0.npy'}\n"
            "[boundary]\n" + "".join(f"{k} = {v}\n" for k, v in faces.items())
            + f"[run]\nbackend = cpu\n[output]\nfield = {tmp_path / 'u.npy'}\n")
    (tmp_path / "p.ini").write_text(text)
    r = cli("run", tmp_path / "p.ini")
    sweeps = int(re.search(r"sweeps=(\d+)", r.stdout).group(1))
    return np.load(tmp_path / "u.npy"), sweeps


@pytest.mark.parametrize("shape, faces, keys, dtype", [
    ((33, 47), {"x-": "neumann", "x+": "neumann 0.5"}, {"iterations": 300}, np.float64),
    ((33, 47), {"y+": "neumann -1.25", "x-": "dirichlet"}, {"tolerance": 1e-6, "check_every": 7, "iterations": 20000}, np.float64),
    ((17, 13, 21), {"x-": "neumann", "z+": "neumann 2", "y-": "neumann"}, {"iterations": 200, "iteration": "chebyshev"}, np.float64),
    ((17, 13, 21), {"z-": "neumann 0.25"}, {"iterations": 150, "omega": 0.8}, np.float32),
])
def test_equals_problem_file(cli, tmp_path, shape, faces, keys, dtype):
    u0, f = _data(shape, 3, dtype)
    want, sweeps = _cli_run(cli, tmp_path, u0, f, faces, keys)
    got, info = pyrgrid.poisson(u0, f, boundary=faces, **keys, **CPU)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert info.sweeps == sweeps
    assert np.array_equal(got, want)
    # a Neumann face's nodes are unknowns: they moved; a Dirichlet face's stayed
    if "x-" in faces and faces["x-"].startswith("neumann"):
        assert not np.array_equal(got[..., 0], u0[..., 0])
    if "x+" not in faces:
        assert np.array_equal(got[..., -1], u0[..., -1])


def test_faces_left_out_are_dirichlet():
    u0, f = _data((25, 31), 5)
    a, ia = pyrgrid.poisson(u0, f, iterations=100, **CPU)
    b, ib = pyrgrid.poisson(u0, f, iterations=100, boundary={}, **CPU)
    c, ic = pyrgrid.poisson(u0, f, iterations=100, boundary={"x-": "dirichlet", "y+": "dirichlet"}, **CPU)
    assert np.array_equal(a, b) and np.array_equal(a, c)
    d, _ = pyrgrid.poisson(u0, f, iterations=100, boundary={"x-": "neumann"}, **CPU)
    assert not np.array_equal(a, d)


def test_flux_is_the_outward_derivative():
    # -u'' = 0 on [0, 1] with u(0) = 0 and du/dn = G at x = 1: u = G x
    n, g = 33, 0.75
    u, info = pyrgrid.poisson(np.zeros(n), None, boundary={"x+": "neumann 0.75"}, tolerance=1e-13, iteration="chebyshev",
                              iterations=200000, **CPU)
    assert info.converged
    assert np.max(np.abs(u - g * np.linspace(0, 1, n))) < 1e-10


@pytest.mark.parametrize("boundary, error, text", [
    ({"q+": "neumann"}, pyrgrid.ConfigError, "q+"),
    ({"x-": "robin"}, pyrgrid.ConfigError, "unknown kind 'robin'"),
    ({"x-": "neumann abc"}, pyrgrid.ConfigError, "not a finite number"),
    ({"z-": "neumann"}, pyrgrid.ConfigError, "no z faces"),
    ("x- = neumann", pyrgrid.ArgumentError, "boundary must be a dict"),
    ([("x-", "neumann")], pyrgrid.ArgumentError, "boundary must be a dict"),
])
def test_refusals(boundary, error, text):
    with pytest.raises(error, match=re.escape(text)):
        pyrgrid.poisson(np.zeros((9, 9)), None, iterations=10, boundary=boundary, **CPU)


def test_pure_neumann_caller_f_checked():
    # the caller's own f is checked for compatibility as a file's is (the scheme's check_inputs hook)
    n = 17
    faces = {k: "neumann" for k in ("x-", "x+", "y-", "y+")}
    with pytest.raises(pyrgrid.ConfigError, match=r"f \(the caller's array\): every face is neumann.*sources balance the fluxes"):
        pyrgrid.poisson(np.zeros((n, n)), np.ones((n, n)), iterations=10, iteration="chebyshev", boundary=faces, **CPU)
    # made compatible (zero trapezoid-weighted sum), it runs
    w = np.ones(n)
    w[0] = w[-1] = 0.5
    f = np.outer(np.cos(np.pi * np.arange(n) / (n - 1)), np.ones(n))
    f -= np.sum(np.outer(w, w) * f) / np.sum(np.outer(w, w))
    u, info = pyrgrid.poisson(np.zeros((n, n)), f, iterations=50, iteration="chebyshev", boundary=faces, **CPU)
    assert info.sweeps == 50 and np.all(np.isfinite(u))


def test_faces_recorded(cli, tmp_path, examples):
    # the HDF5 result's attributes and the plan's problem line say which faces are Neumann and their fluxes
    h5py = pytest.importorskip("h5py")
    out = tmp_path / "r.h5"
    cli("run", examples / "poisson_neumann.ini", "--set", f"output.field={out}", "--set", "scheme.iterations=20", "-q", expect=3)
    with h5py.File(out, "r") as f:
        a = f.attrs
        assert a["boundary"] == "mixed"
        assert a["faces"] == "x- = neumann, x+ = neumann 0.5, y- = dirichlet, y+ = dirichlet"
        assert list(a["neumann_x"]) == [1, 1] and list(a["neumann_y"]) == [0, 0]
        assert list(a["flux_x"]) == [0.0, 0.5] and list(a["flux_y"]) == [0.0, 0.0]
        assert "neumann_z" not in a
    d = tmp_path / "d.h5"
    cli("run", examples / "poisson_neumann.ini", "--set", f"output.field={d}", "--set", "scheme.iterations=20", "--set",
        "boundary.x-=dirichlet", "--set", "boundary.x+=dirichlet", "-q", expect=3)
    with h5py.File(d, "r") as f:
        assert f.attrs["boundary"] == "dirichlet" and list(f.attrs["flux_x"]) == [0.0, 0.0]
    r = cli("plan", examples / "poisson_neumann.ini")
    line = next(s for s in r.stdout.splitlines() if s.startswith("problem"))
    assert line.endswith("; faces x- = neumann, x+ = neumann 0.5, y- = dirichlet, y+ = dirichlet"), line
    r = cli("plan", examples / "poisson_neumann.ini", "--set", "boundary.x-=dirichlet", "--set", "boundary.x+=dirichlet")
    assert "faces" not in next(s for s in r.stdout.splitlines() if s.startswith("problem"))
