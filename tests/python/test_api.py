"""The module's surface: versions, discovery, keys, descriptions, wisdom,
calibration, the solver and the frames pipeline."""
import json
import os

import numpy as np
import pytest

import pyrgrid


def test_versions_and_discovery():
    assert pyrgrid.version() == pyrgrid.__version__
    assert set(pyrgrid.backends()) == {"cpu", "cuda"} and pyrgrid.backends()["cpu"]
    g = pyrgrid.gpus()
    assert isinstance(g, list) and len(g) == (1 if pyrgrid.backends()["cuda"] else 0) * len(g)
    assert pyrgrid.cpu_threads() >= 1


def test_problem_keys_round_trip(tmp_path):
    p = pyrgrid.Problem("poisson", shape=(9, 11), lengths=(2.0, 3.0), tolerance=1e-9, iterations=500, rhs="sine")
    assert p["grid.nx"] == 11 and p["grid.ly"] == 2.0 and p["scheme.tolerance"] == 1e-9 and p.equation == "poisson"
    p["scheme.omega"] = 0.8
    assert p.get("scheme.omega") == 0.8
    d = p.to_dict()
    assert d["scheme"]["iterations"] == 500 and d["rhs"]["kind"] == "sine" and "dt" not in d["scheme"]
    assert p.fields == {"u": True, "f": False}
    o = pyrgrid.Options(memory="1GiB", height=8)
    assert o["run.memory"] == 1 << 30 and o.to_dict()["height"] == 8
    # a problem file: inputs relative to it, the grid from initial.file, [run] keys as options
    (tmp_path / "case").mkdir()
    np.save(tmp_path / "case" / "u0.npy", np.zeros((6, 8)))
    (tmp_path / "case" / "p.ini").write_text("[scheme]\ndt = 1e-4\nsteps = 3\n[initial]\nkind = file\nfile = u0.npy\n"
                                             "[run]\nmemory = 64K\n")
    q = pyrgrid.Problem.from_file(tmp_path / "case" / "p.ini")
    assert q.shape == (6, 8) and q["initial.file"] == str(tmp_path / "case" / "u0.npy")
    assert q.options["run.memory"] == 65536
    assert pyrgrid.Plan(q).info["budget_bytes"] == 65536


def test_plan_info_is_a_dict():
    p = pyrgrid.Problem("heat", shape=(129, 129), dt=1e-6, steps=40)
    info = pyrgrid.Plan(p, {"run.backend": "cpu", "run.method": "pyramid", "run.memory": "64K"}).info
    assert info["method"] == "pyramid" and info["height"] >= 1 and info["device_bytes"] <= 65536
    assert set(info["counts"]) == {"uploaded", "downloaded", "computed", "redundant"}
    assert info["predicted_seconds"] > 0 and json.dumps(info)


def test_wisdom_and_calibration(tmp_path):
    path = tmp_path / "w"
    assert pyrgrid.wisdom_path() == os.environ["PYRGRID_WISDOM"]
    pyrgrid.wisdom_forget()
    pyrgrid.wisdom_import(str(path))  # missing: fine
    saved = pyrgrid.calibrate("cpu", schemes="heat", precisions=["double"], dims=[2], effort=0.05)
    assert saved == pyrgrid.wisdom_path() and "constants\tcpu" in open(saved).read()
    pyrgrid.wisdom_export(str(path))
    assert "constants\tcpu" in path.read_text()
    pyrgrid.wisdom_forget()
    pyrgrid.wisdom_import(str(path))
    model = pyrgrid.Plan(pyrgrid.Problem("heat", shape=(65, 65), dt=1e-5, steps=5), {"run.backend": "cpu"}).info["model"]
    assert "default constants" not in model, model
    path.write_text("garbage\n")
    with pytest.raises(pyrgrid.FormatError, match=str(path)):
        pyrgrid.wisdom_import(str(path))
    with pytest.raises(pyrgrid.ArgumentError, match="dims"):
        pyrgrid.calibrate("cpu", dims="4", save=False)
    pyrgrid.wisdom_forget()


def test_lgs_equals_cli(cli, tmp_path):
    (tmp_path / "s.ini").write_text("[system]\nkind = laplace\nN = 24\nM = 40\nordering = redblack\nomega = 1.5\n"
                                    "tolerance = 1e-10\n[run]\nbackend = cpu\n[output]\nsolution = y.npy\n")
    cli("solve", "s.ini", "-q", cwd=tmp_path)
    system = pyrgrid.lgs_system("laplace", 24, 40)
    y, info = pyrgrid.solve_lgs(**system, omega=1.5, tolerance=1e-10, backend="cpu")
    assert info.converged and info.rel_residual <= 1e-10 and info.history[-1, 0] == info.iterations
    assert np.array_equal(y, np.load(tmp_path / "y.npy"))
    assert np.abs(y - 1).max() < 1e-8
    with pytest.warns(pyrgrid.NotConvergedWarning):
        y, info = pyrgrid.solve_lgs(**system, max_iterations=5, backend="cpu")
    assert info.stop == "max_iterations"
    bad = dict(system, cB=system["cB"][:, :-1])
    with pytest.raises(pyrgrid.ArgumentError, match=r"cB has shape \(24, 39\)"):
        pyrgrid.solve_lgs(**bad)
    nan = dict(system, F=system["F"].copy())
    nan["F"][3, 4] = np.nan
    with pytest.raises(pyrgrid.ArgumentError, match="F"):
        pyrgrid.solve_lgs(**nan, backend="cpu")


def test_frames_equal_cli(cli, tmp_path):
    rng = np.random.default_rng(7)
    sky = rng.random((64, 64)).astype(np.float32) * 50 + 100
    stack = np.stack([np.roll(sky, (k % 3, k % 2), (0, 1)) + rng.normal(0, 1, (64, 64)).astype(np.float32)
                      for k in range(8)]).astype(np.float32)
    np.save(tmp_path / "stack.npy", stack)
    cli("frames", "stack.npy", "--quiet", "--backend", "cpu", "--history", "4", "-o", "res.npy", "--shifts", "s.csv",
        "--candidates", "c.csv", "--snr-png", "", "--set", "frames.border=8", cwd=tmp_path)
    r = pyrgrid.frames(stack, history=4, backend="cpu", border=8)
    assert r.residual.shape == stack.shape and r.residual.dtype == np.float32
    assert np.array_equal(r.residual, np.load(tmp_path / "res.npy"))
    cli_shifts = np.loadtxt(tmp_path / "s.csv", delimiter=",", skiprows=1)
    assert np.allclose(r.shifts, cli_shifts[:, 1:3], atol=1e-5)  # the CSV's digits
    assert r.stats["frames"] == 8 and r.stats["backend"] == "cpu"
    with pytest.raises(pyrgrid.ConfigError, match="history"):
        pyrgrid.frames(stack, history=0)
    with pytest.raises(pyrgrid.ConfigError, match="names a file"):
        pyrgrid.frames(stack, residual="x.npy")
    with pytest.raises(pyrgrid.ArgumentError, match=r"\(T, ny, nx\)"):
        pyrgrid.frames(stack[0])
