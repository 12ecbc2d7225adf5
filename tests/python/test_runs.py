"""Results of the Python module equal the program's bit for bit, and arrays
are used in place."""
import numpy as np
import pytest

import pyrgrid

CPU = {"backend": "cpu"}


def test_heat_equals_cli_from_the_same_initial_field(cli, examples, tmp_path):
    rng = np.random.default_rng(5)
    u0 = rng.random((49, 65))
    np.save(tmp_path / "u0.npy", u0)
    cli("run", examples / "heat2d.ini", "-q", "--set", "initial.kind=file", "--set", "initial.file=u0.npy",
        "--set", "grid.nx=65", "--set", "grid.ny=49", "--set", "scheme.dt=1e-5", "--set", "scheme.steps=77",
        "--set", "run.backend=cpu", "--set", "output.field=cli.npy", "--set", "output.image=", cwd=tmp_path)
    u = pyrgrid.heat(u0, alpha=1.0, dt=1e-5, steps=77, backend="cpu")
    assert np.array_equal(u, np.load(tmp_path / "cli.npy"))
    assert np.array_equal(u0, np.load(tmp_path / "u0.npy")), "heat() changed its input"
    # another plan (pyramid in a small budget) gives the same bytes
    u2 = pyrgrid.heat(u0, dt=1e-5, steps=77, memory="24K", method="pyramid", backend="cpu")
    assert np.array_equal(u, u2)


def test_problem_file_equals_cli(cli, examples, tmp_path):
    sets = {"grid.nx": 33, "grid.ny": 41, "scheme.steps": 40, "scheme.dt": 1e-5, "scheme.precision": "float"}
    cli("run", examples / "heat2d.ini", "-q", *[a for k, v in sets.items() for a in ("--set", f"{k}={v}")],
        "--set", "run.backend=cpu", "--set", "output.field=cli.npy", "--set", "output.image=", cwd=tmp_path)
    p = pyrgrid.Problem.from_file(examples / "heat2d.ini", keys=sets)
    assert p.shape == (41, 33) and p.dtype == np.float32 and p["initial.kind"] == "gauss"
    with pyrgrid.Plan(p, {"run.backend": "cpu", "run.method": "trivial"}) as plan:
        u = p.initial()
        info = plan.execute(u)
        assert info.steps == 40 and plan.info["method"] == "trivial"
    assert np.array_equal(u, np.load(tmp_path / "cli.npy"))


def test_poisson_equals_cli(cli, examples, tmp_path):
    f = np.random.default_rng(2).random((33, 45))
    np.save(tmp_path / "f.npy", f)
    r = cli("run", examples / "poisson2d.ini", "-q", "--set", "grid.nx=45", "--set", "grid.ny=33", "--set", "rhs.kind=file",
            "--set", "rhs.file=f.npy", "--set", "scheme.tolerance=1e-7", "--set", "scheme.check_every=20", "--set",
            "run.backend=cpu", "--set", "output.field=cli.npy", "--set", "output.image=", cwd=tmp_path)
    sweeps = int(r.stdout.split("sweeps=")[1].split()[0])
    u, info = pyrgrid.poisson(np.zeros((33, 45)), f, tolerance=1e-7, check_every=20, backend="cpu")
    assert info.converged and info.checked and info.sweeps == sweeps and info.change < 1e-7
    assert np.array_equal(u, np.load(tmp_path / "cli.npy"))
    # the library's own right-hand side, through the file's problem and a pyramid plan
    r = cli("run", examples / "poisson2d.ini", "-q", "--set", "grid.nx=45", "--set", "grid.ny=33", "--set", "run.backend=cpu",
            "--set", "output.field=sine.npy", "--set", "output.image=", cwd=tmp_path)
    p = pyrgrid.Problem.from_file(examples / "poisson2d.ini", {"grid.nx": 45, "grid.ny": 33})
    u = p.initial()
    info = pyrgrid.Plan(p, pyrgrid.Options(backend="cpu", method="pyramid", memory="32K")).execute(u)
    assert info.converged and np.array_equal(u, np.load(tmp_path / "sine.npy"))
    assert np.array_equal(p.input("f"), pyrgrid.Problem.from_file(examples / "poisson2d.ini", {"grid.nx": 45, "grid.ny": 33}).input())


def test_not_converging_is_reported_not_raised():
    u, info = pyrgrid.poisson(np.zeros((33, 33)), "sine", tolerance=1e-12, iterations=40, backend="cpu")
    assert info.sweeps == 40 and not info.converged and info.change > 1e-12


def test_execute_works_in_place_without_a_copy():
    p = pyrgrid.Problem("heat", shape=(31, 47), dt=1e-5, steps=25, initial="random", seed=3)
    plan = pyrgrid.Plan(p, CPU)
    u = p.initial()
    ref = pyrgrid.heat(u, dt=1e-5, steps=25, backend="cpu")
    pointer, before = u.ctypes.data, u.copy()
    info = plan.execute(u)
    assert u.ctypes.data == pointer and info.steps == 25
    assert not np.array_equal(u, before), "the caller's array was not updated"
    assert np.array_equal(u, ref)
    # a view into a larger buffer that is C-contiguous is also used in place
    big = np.zeros((3, 31, 47))
    big[1] = before
    view = big[1]
    plan.execute(view)
    assert np.array_equal(big[1], ref) and not big[0].any() and not big[2].any()


@pytest.mark.parametrize("shape,dtype", [((101,), np.float64), ((17, 19, 23), np.float32), ((40, 30), np.float32)])
def test_shapes_and_dtypes(shape, dtype):
    u0 = np.random.default_rng(1).random(shape).astype(dtype)
    dt = 1e-5 if len(shape) < 3 else 1e-4
    u = pyrgrid.heat(u0, dt=dt, steps=12, backend="cpu")
    assert u.dtype == dtype and u.shape == shape
    u2 = pyrgrid.heat(u0, dt=dt, steps=12, backend="cpu", method="pyramid", memory="8K")
    assert np.array_equal(u, u2)
    # boundary values stay
    assert np.array_equal(u[0], u0[0]) and np.array_equal(u[-1], u0[-1])


def test_lengths_change_the_spacing(cli, examples, tmp_path):
    u0 = np.zeros((21, 41))
    u0[10, 20] = 1
    np.save(tmp_path / "u0.npy", u0)
    cli("run", examples / "heat2d.ini", "-q", "--set", "initial.kind=file", "--set", "initial.file=u0.npy", "--set", "grid.lx=2",
        "--set", "grid.ly=0.5", "--set", "grid.nx=41", "--set", "grid.ny=21", "--set", "scheme.dt=1e-5", "--set",
        "scheme.steps=9", "--set", "run.backend=cpu", "--set", "output.field=cli.npy", "--set", "output.image=", cwd=tmp_path)
    u = pyrgrid.heat(u0, dt=1e-5, steps=9, lengths=(0.5, 2.0), backend="cpu")
    assert np.array_equal(u, np.load(tmp_path / "cli.npy"))


def test_progress_callback_and_cancel():
    seen = []
    p = pyrgrid.Problem("heat", shape=(33, 33), dt=1e-5, steps=60)
    plan = pyrgrid.Plan(p, {"run.backend": "cpu", "run.method": "pyramid", "run.memory": "8K", "run.height": 10})
    u = p.initial()
    plan.execute(u, progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1] == (60, 60) and all(t == 60 for _, t in seen)
    with pytest.raises(pyrgrid.CancelledError):
        plan.execute(p.initial(), progress=lambda done, total: done < 20)

    class Stop(Exception):
        pass

    def boom(done, total):
        raise Stop()
    with pytest.raises(Stop):
        plan.execute(p.initial(), progress=boom)


def test_several_devices_equal_one_and_report_their_parts():
    # two parts on the CPU backend's device 0 (issue 25): the same bytes as one device
    u0 = np.random.default_rng(7).random((37, 29))
    one = pyrgrid.heat(u0, dt=1e-5, steps=21, backend="cpu")
    p = pyrgrid.Problem("heat", shape=u0.shape, dt=1e-5, steps=21, initial="zero")
    with pyrgrid.Plan(p, pyrgrid.Options(backend="cpu", devices="0,0", exchange=4)) as plan:
        assert plan.options["run.devices"] == "0,0" and plan.options["run.exchange"] == 4
        assert plan.info["parts"].startswith("2 parts")
        # the plan describes the whole run; each part's plan (its local grid) apart
        parts = plan.info["part_plans"]
        assert len(parts) == 2 and plan.info["device_bytes"] == sum(q["device_bytes"] for q in parts)
        assert plan.info["counts"]["computed"] == sum(q["counts"]["computed"] for q in parts)
        u = u0.copy()
        info = plan.execute(u)
    assert np.array_equal(u, one)
    assert info.parts == 2 and info.exchange_height == 4 and info.exchanges > 0 and info.halo_sent > 0
    # the CPU backend makes no device copies: no host memory pinned or staged (issue 20)
    assert info.host_memory == "none" and info.pin_seconds == 0 and info.host_note == ""
    with pyrgrid.Plan(p, pyrgrid.Options(backend="cpu", host_memory="stage")) as plan:
        assert plan.options["run.host_memory"] == "stage" and plan.info["host_memory"] == "none"
    assert pyrgrid.Plan(p, CPU).info["parts"] is None
