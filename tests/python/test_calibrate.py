"""pyrgrid.calibrate is the library's one calibration (the program's too):
it calibrates every registered scheme, Maxwell included (the architecture
issue: it knew only heat and Poisson), reports its progress, and stops."""
import pytest

import pyrgrid


def _records(path):
    return [line for line in open(path).read().splitlines() if line.startswith("constants\t")]


def test_calibrate_maxwell():
    pyrgrid.wisdom_forget()
    seen = []
    saved = pyrgrid.calibrate("cpu", schemes="maxwell", precisions="float", dims=[1, 2], effort=0.05,
                              progress=lambda done, total, text: seen.append((done, total, text)))
    records = _records(saved)
    # one set: Maxwell's 1D grids are left out
    assert len(records) == 1 and "scheme=maxwell" in records[0] and "\tfloat\t2\t" in records[0], records
    assert [(d, t) for d, t, _ in seen] == [(0, 1), (1, 1)], seen
    assert seen[0][2].startswith("calibrating the cpu backend on ")
    assert seen[1][2].startswith("maxwell float 2D (kernel ") and "ns/value" in seen[1][2], seen[1][2]
    # the plan of a Maxwell problem takes the calibrated constants
    p = pyrgrid.Problem("maxwell", shape=(65, 65), steps=5, courant=0.5, dtype="float32", initial="zero")
    model = pyrgrid.Plan(p, {"run.backend": "cpu"}).info["model"]
    assert "default constants" not in model, model
    pyrgrid.wisdom_forget()


def test_calibrate_refusals_and_stop():
    with pytest.raises(pyrgrid.ArgumentError, match="not one of heat, poisson, maxwell"):
        pyrgrid.calibrate("cpu", schemes="wave", save=False)
    with pytest.raises(pyrgrid.ArgumentError, match="2D or 3D"):
        pyrgrid.calibrate("cpu", schemes=["maxwell"], dims=[1], save=False)
    with pytest.raises(pyrgrid.ArgumentError, match="progress"):
        pyrgrid.calibrate("cpu", schemes="maxwell", progress="yes", save=False)
    # stopped before the first set: nothing measured, nothing saved
    pyrgrid.wisdom_forget()
    with pytest.raises(pyrgrid.CancelledError, match="before the first of 2 sets"):
        pyrgrid.calibrate("cpu", schemes="maxwell", precisions="float", dims="2,3", effort=0.05,
                          progress=lambda done, total, text: False)
    # an exception in progress stops the calibration and is raised
    with pytest.raises(ZeroDivisionError):
        pyrgrid.calibrate("cpu", schemes="heat", precisions="float", dims="2", effort=0.05, save=False,
                          progress=lambda done, total, text: 1 / 0)
    pyrgrid.wisdom_forget()


def test_calibrate_ctrl_c():
    import os
    import signal
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("SIGINT's handler is not Python's here")
    pyrgrid.wisdom_forget()
    done = []

    def progress(d, total, text):
        done.append(d)
        if d == 1:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C during the calibration, after its first set
    with pytest.raises(KeyboardInterrupt) as e:
        pyrgrid.calibrate("cpu", schemes="maxwell", precisions="float", dims="2,3", effort=0.05, progress=progress)
    assert done == [0, 1], done
    assert "stopped after 1 of 2 sets" in " ".join(getattr(e.value, "__notes__", ["stopped after 1 of 2 sets"]))
    assert not os.path.exists(pyrgrid.wisdom_path())  # nothing saved
    pyrgrid.wisdom_forget()
