"""Bad arrays and settings give clear exceptions and write nothing."""
import warnings

import numpy as np
import pytest

import pyrgrid


@pytest.fixture
def plan():
    p = pyrgrid.Problem("heat", shape=(20, 30), dt=1e-5, steps=5)
    return pyrgrid.Plan(p, {"run.backend": "cpu"})


def test_wrong_dtype_is_refused_and_nothing_written(plan):
    u = np.ones((20, 30), dtype=np.float32)
    with pytest.raises(pyrgrid.ArgumentError, match=r"dtype float32; the plan computes in float64"):
        plan.execute(u)
    assert (u == 1).all()
    with pytest.raises(TypeError):  # also a TypeError (and a ValueError)
        plan.execute(np.ones((20, 30), dtype=np.int64))


def test_wrong_shape_is_refused(plan):
    u = np.ones((30, 20))
    with pytest.raises(pyrgrid.ArgumentError, match=r"needs shape \(20, 30\)"):
        plan.execute(u)
    assert (u == 1).all()
    with pytest.raises(pyrgrid.ArgumentError, match="NumPy array"):
        plan.execute([[1.0] * 30] * 20)


def test_read_only_is_refused(plan):
    u = np.ones((20, 30))
    u.flags.writeable = False
    with pytest.raises(pyrgrid.ArgumentError, match="read-only"):
        plan.execute(u)


def test_non_contiguous_is_copied_with_a_warning_and_written_back(plan):
    ref = np.random.default_rng(0).random((20, 30))
    expected = ref.copy()
    plan.execute(expected)
    fortran = np.asfortranarray(ref)
    with pytest.warns(pyrgrid.CopyWarning, match="not C-contiguous"):
        plan.execute(fortran)
    assert np.array_equal(fortran, expected)
    big = np.zeros((40, 60))
    big[::2, ::2] = ref
    with pytest.warns(pyrgrid.CopyWarning, match="strided view"):
        plan.execute(big[::2, ::2])
    assert np.array_equal(big[::2, ::2], expected) and not big[1::2].any()


def test_inputs_may_be_read_only_but_not_of_another_dtype():
    f = np.ones((17, 17))
    f.flags.writeable = False
    u, info = pyrgrid.poisson(np.zeros((17, 17)), f, iterations=50, backend="cpu")
    assert info.sweeps == 50 and u[8, 8] > 0
    with pytest.raises(pyrgrid.ArgumentError, match="f is an array of shape"):
        pyrgrid.poisson(np.zeros((17, 17)), np.ones((17, 17), np.float32), iterations=5)
    with pytest.raises(pyrgrid.ArgumentError, match="needs shape"):
        pyrgrid.poisson(np.zeros((17, 17)), np.ones((16, 17)), iterations=5)
    with pytest.raises(pyrgrid.ArgumentError, match="needs a way to stop"):
        pyrgrid.poisson(np.zeros((17, 17)))


def test_other_dtypes_become_float64_with_a_warning():
    with pytest.warns(pyrgrid.CopyWarning, match="int64"):
        u = pyrgrid.heat(np.zeros((9, 9), dtype=np.int64), dt=1e-4, steps=2, backend="cpu")
    assert u.dtype == np.float64
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        u = pyrgrid.heat([[0.0] * 9] * 9, dt=1e-4, steps=2, backend="cpu")  # a list: no warning
    assert u.shape == (9, 9)
    with pytest.raises(pyrgrid.ArgumentError, match="4 dimensions"):
        pyrgrid.heat(np.zeros((3, 3, 3, 3)), dt=1e-4, steps=1)


def test_library_errors_carry_the_library_message():
    with pytest.raises(pyrgrid.UnstableError, match=r"dt") as e:
        pyrgrid.heat(np.zeros((65, 65)), dt=1.0, steps=1, backend="cpu")
    assert e.value.status == "PYR_ERR_UNSTABLE" and isinstance(e.value, ValueError)
    with pytest.raises(pyrgrid.SizeError, match="at least 3 nodes"):
        pyrgrid.heat(np.zeros((2, 9)), dt=1e-6, steps=1)
    with pytest.raises(pyrgrid.BudgetError, match="budget"):
        pyrgrid.heat(np.zeros((257, 257)), dt=1e-6, steps=3, memory="100", method="pyramid", backend="cpu")
    with pytest.raises(pyrgrid.ConfigError, match=r"did you mean 'double'"):
        pyrgrid.Problem("heat", precision="doubel")
    with pytest.raises(pyrgrid.ConfigError, match="run.memory"):
        pyrgrid.Options(memory="lots")
    with pytest.raises(pyrgrid.FileError, match="nope.ini"):
        pyrgrid.Problem.from_file("nope.ini")
    with pytest.raises(pyrgrid.ArgumentError, match="did you mean 'memory'"):
        pyrgrid.heat(np.zeros((9, 9)), dt=1e-4, steps=1, memroy="1M")
    with pytest.raises(pyrgrid.ArgumentError, match="did you mean 'alpha'"):
        pyrgrid.Problem("heat", alpah=2)
    if not pyrgrid.backends()["cuda"]:
        with pytest.raises(pyrgrid.NoDeviceError):
            pyrgrid.heat(np.zeros((9, 9)), dt=1e-4, steps=1, backend="cuda")


def test_bad_initial_files(tmp_path):
    (tmp_path / "junk.npy").write_bytes(b"\x93NUMPY junk")
    p = pyrgrid.Problem("heat", shape=(5, 5), initial="file", initial_file=str(tmp_path / "junk.npy"))
    with pytest.raises(pyrgrid.FormatError, match="junk.npy"):
        p.initial()
    (tmp_path / "bad.h5").write_bytes(b"not hdf5 at all")
    p = pyrgrid.Problem("heat", shape=(5, 5), initial="file", initial_file=str(tmp_path / "bad.h5"))
    with pytest.raises(pyrgrid.Error, match="bad.h5"):
        p.initial()


def test_closed_plan(plan):
    plan.close()
    with pytest.raises(pyrgrid.ArgumentError, match="closed"):
        plan.execute(np.zeros((20, 30)))


def test_f_goes_only_where_the_problem_takes_it():
    u0, f = np.zeros((17, 17)), np.ones((17, 17))
    zero = pyrgrid.Plan(pyrgrid.Problem("poisson", shape=(17, 17), iterations=10, rhs="zero"), {"run.backend": "cpu"})
    with pytest.raises(pyrgrid.ArgumentError, match='rhs="array"'):
        zero.execute(u0.copy(), f)
    own = pyrgrid.Plan(pyrgrid.Problem("poisson", shape=(17, 17), iterations=10, rhs="array"), {"run.backend": "cpu"})
    with pytest.raises(pyrgrid.ArgumentError, match="plan.execute"):
        own.execute(u0.copy())
    u = u0.copy()
    own.execute(u, f)
    assert np.array_equal(u, pyrgrid.poisson(u0, f, iterations=10, backend="cpu")[0])


def test_longvector_is_refused_where_it_does_not_apply():
    """The long-vector method (CUDA, 2D heat, one GPU) reaches the module
    through the option keys, and so do its refusals, on every machine."""
    heat = pyrgrid.Problem("heat", shape=(20, 30), dt=1e-5, steps=5)
    with pytest.raises(pyrgrid.UnsupportedError, match="method = longvector runs on the CUDA backend"):
        pyrgrid.Plan(heat, {"run.backend": "cpu", "run.method": "longvector"})
    with pytest.raises(pyrgrid.UnsupportedError, match="method = longvector runs on one GPU"):
        pyrgrid.Plan(heat, {"run.method": "longvector", "run.devices": "0,0"})
    cube = pyrgrid.Problem("heat", shape=(9, 10, 11), dt=1e-5, steps=5)
    with pytest.raises(pyrgrid.UnsupportedError, match="steps 2D grids"):
        pyrgrid.Plan(cube, {"run.method": "longvector"})
