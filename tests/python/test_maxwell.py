"""The Yee scheme from Python: results equal `pyrgrid run` of the same
problem file bit for bit (fields and probe series), whatever the plan;
Plan.execute works on the caller's arrays in place; errors are exceptions."""
import numpy as np
import pytest

import pyrgrid

SIX = ("Ex", "Ey", "Ez", "Hx", "Hy", "Hz")
# examples/maxwell_cavity.ini scaled down: a 17 x 15 x 11 box, 30 steps, the source and probes moved inside
CAVITY = {"grid.nx": 17, "grid.ny": 15, "grid.nz": 11, "scheme.steps": 30,
          "source.source1": "Ez point 5 5 5 gaussian width=0.05 delay=0.2", "probe.probe1": "Ez 9 9 5", "probe.probe2": "Hx 4 10 5"}
TM = {"grid.dims": 2, "grid.nx": 41, "grid.ny": 31, "grid.lx": 2.0, "grid.ly": 1.5, "scheme.equation": "maxwell",
      "scheme.courant": 0.7, "scheme.steps": 40, "scheme.precision": "float", "boundary.kind": "cpml", "boundary.cpml_cells": 6,
      "material.shape1": "box 0.8 1.2 0.5 1.0 eps_r=4 sigma=0.5", "source.source1": "Ez point 10 15 ricker frequency=2 delay=0.6",
      "probe.probe1": "Ez 30 15", "probe.probe2": "Hy 20 7"}


def sets(keys):
    return [a for k, v in keys.items() for a in ("--set", f"{k}={v}")]


def write_ini(path, keys):
    sections = {}
    for k, v in keys.items():
        sec, key = k.split(".", 1)
        sections.setdefault(sec, []).append(f"{key} = {v}")
    path.write_text("".join(f"[{s}]\n" + "\n".join(lines) + "\n" for s, lines in sections.items()))


def cli_probes(path):
    a = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    return a[:, 0], a[:, 1], a[:, 2:]


def test_cavity_equals_cli(cli, examples, tmp_path):
    cli("run", examples / "maxwell_cavity.ini", "-q", *sets(CAVITY), "--set", "run.backend=cpu", "--set", "output.field=cli.npy",
        "--set", "output.image=", "--set", "output.every=0", "--set", "output.probes=cli.csv", cwd=tmp_path)
    r = pyrgrid.maxwell(examples / "maxwell_cavity.ini", keys=CAVITY, backend="cpu")
    assert isinstance(r, pyrgrid.MaxwellResult) and tuple(r) == SIX
    for c in SIX:
        a = np.load(tmp_path / f"cli_{c}.npy")
        assert r[c].dtype == np.float64 and np.array_equal(r[c], a), c
    assert r["Ez"].any() and r["Hx"].any()
    steps, t, values = cli_probes(tmp_path / "cli.csv")
    assert r.probes.shape == (30, 2) and np.array_equal(r.probes, values)
    assert np.array_equal(steps, np.arange(1, 31)) and np.array_equal(r.t, t)
    assert r.info.steps == 30 and r.dt == pyrgrid.Problem.from_file(examples / "maxwell_cavity.ini", keys=CAVITY).dt


def test_tm_with_cpml_and_materials_any_plan_equals_cli(cli, tmp_path):
    write_ini(tmp_path / "tm.ini", TM)
    cli("run", "tm.ini", "-q", "--set", "run.backend=cpu", "--set", "output.field=cli.npy", "--set", "output.probes=cli.csv",
        cwd=tmp_path)
    # a pyramid plan of several pieces in a small budget: the same bits as the program's naive one
    r = pyrgrid.maxwell(tmp_path / "tm.ini", backend="cpu", method="pyramid", memory="24K")
    assert tuple(r) == ("Ez", "Hx", "Hy") and r["Ez"].dtype == np.float32 and r.info.counts["redundant"] > 0
    for c in r:
        assert np.array_equal(r[c], np.load(tmp_path / f"cli_{c}.npy")), c
    assert np.array_equal(r.probes, cli_probes(tmp_path / "cli.csv")[2])
    # the same problem from keywords (lengths and shape in NumPy order)
    k = pyrgrid.maxwell((31, 41), lengths=(1.5, 2.0), dtype=np.float32, steps=40, courant=0.7, boundary="cpml", cpml_cells=6,
                        shapes=[TM["material.shape1"]], sources=[TM["source.source1"]], probes=["Ez 30 15", "Hy 20 7"], backend="cpu")
    assert all(np.array_equal(k[c], r[c]) for c in r) and np.array_equal(k.probes, r.probes)


def test_te_mode_from_random_fields_equals_cli(cli, tmp_path):
    keys = dict(TM, **{"scheme.mode": "te", "initial.kind": "random", "initial.seed": 11, "scheme.precision": "double",
                       "source.source1": "Hz point 10 15 gaussian width=0.1 delay=0.3", "probe.probe1": "Hz 30 15",
                       "probe.probe2": "Ex 20 7"})
    write_ini(tmp_path / "te.ini", keys)
    cli("run", "te.ini", "-q", "--set", "run.backend=cpu", "--set", "output.field=cli.npy", cwd=tmp_path)
    p = pyrgrid.Problem.from_file(tmp_path / "te.ini")
    assert p.state_fields == ("Ex", "Ey", "Hz")
    start = p.initial_fields()
    assert set(start) == {"Ex", "Ey", "Hz"} and all(np.abs(a).max() <= 1 and a.any() for a in start.values())
    r = pyrgrid.maxwell(p, backend="cpu", initial=start)
    for c in ("Ex", "Ey", "Hz"):
        assert np.array_equal(r[c], np.load(tmp_path / f"cli_{c}.npy")), c


def test_execute_updates_the_callers_arrays_in_place():
    p = pyrgrid.Problem("maxwell", shape=(21, 25), steps=15, courant=0.5, keys={"source.source1": "Ez point 12 10 gaussian "
                                                                                "width=0.1 delay=0.3"})
    fields = p.initial_fields()
    pointers = {c: a.ctypes.data for c, a in fields.items()}
    with pyrgrid.Plan(p, {"run.backend": "cpu"}) as plan:
        info = plan.execute(fields)
    assert info.steps == 15 and info.probes is None
    assert all(fields[c].ctypes.data == pointers[c] for c in fields) and fields["Ez"].any() and fields["Hy"].any()
    ref = pyrgrid.maxwell(p, backend="cpu")
    assert all(np.array_equal(fields[c], ref[c]) for c in fields)
    # a Fortran-ordered component is copied (with a warning) and written back
    again = p.initial_fields()
    again["Hx"] = np.asfortranarray(again["Hx"])
    with pytest.warns(pyrgrid.CopyWarning):
        pyrgrid.Plan(p, {"run.backend": "cpu"}).execute(again)
    assert all(np.array_equal(again[c], ref[c]) for c in fields)


def test_errors():
    p = pyrgrid.Problem("maxwell", shape=(21, 25), steps=5)
    plan = pyrgrid.Plan(p, {"run.backend": "cpu"})
    with pytest.raises(pyrgrid.ArgumentError, match=r"updates 3 fields \('Ez', 'Hx', 'Hy'\)"):
        plan.execute(np.zeros((21, 25)))
    with pytest.raises(pyrgrid.ArgumentError, match=r"\['Hy'\] missing"):
        plan.execute({"Ez": np.zeros((21, 25)), "Hx": np.zeros((21, 25))})
    f = p.initial_fields()
    with pytest.raises(pyrgrid.ArgumentError, match="'Hz' is not a field of this maxwell problem"):
        plan.execute(dict(f, Hz=np.zeros((21, 25))))
    with pytest.raises(pyrgrid.ArgumentError, match="'psi_Ezx' is not a field"):
        plan.execute(dict(f, psi_Ezx=np.zeros((21, 25))))
    with pytest.raises(pyrgrid.ArgumentError, match="dtype float32"):
        plan.execute(dict(f, Ez=np.zeros((21, 25), np.float32)))
    with pytest.raises(pyrgrid.ArgumentError, match="read-only"):
        ro = np.zeros((21, 25))
        ro.flags.writeable = False
        plan.execute(dict(f, Hx=ro))
    with pytest.raises(pyrgrid.ArgumentError, match="initial_fields"):
        p.initial()
    with pytest.raises(pyrgrid.ArgumentError, match="equation is heat"):
        pyrgrid.maxwell(pyrgrid.Problem("heat", shape=(9, 9)))
    with pytest.raises(pyrgrid.ArgumentError, match="2D .* or 3D"):
        pyrgrid.maxwell((50,), steps=3)
    with pytest.raises(pyrgrid.ArgumentError, match="not one string"):
        pyrgrid.maxwell((9, 9), steps=3, sources="Ez point 4 4 gaussian width=1 delay=1")
    with pytest.raises(pyrgrid.ConfigError, match="source1"):
        pyrgrid.maxwell((9, 9), steps=3, sources=["Qz point 4 4 gaussian width=1 delay=1"])
    with pytest.raises(pyrgrid.UnstableError):
        pyrgrid.maxwell((9, 9), steps=3, courant=1.5, backend="cpu")
    with pytest.raises(pyrgrid.ArgumentError, match="not components"):
        pyrgrid.maxwell((9, 9), steps=3, initial={"Ex": np.zeros((9, 9))})
