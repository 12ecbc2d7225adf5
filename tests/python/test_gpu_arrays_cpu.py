"""GPU arrays (CUDA array interface, DLPack on a CUDA device) through Plan.execute, heat and poisson, on the
CPU: the library's three device entry points are stood in for by host memory (pyr_field_wrap_device wraps
the "device" pointer as a host field, pyr_plan_takes_field answers as a test says), so that every path of
the Python side runs here - in place, copied through the host (CopyWarning), refused with copy=False
(BufferError), strided arrays, the producer's stream, the DLPack capsule taken and its deleter called.  The
runs on a real GPU are tests/test_gpu_arrays.py's."""
import sys
import warnings

import numpy as np
import pytest

import pyrgrid
from pyrgrid import _core, _lib

CPU = pyrgrid.Options(backend="cpu")


class FakeCuda:
    """A CUDA array interface over host memory (what CuPy, Numba and PyTorch expose, pointer and all)."""

    def __init__(self, mem, version=3, stream=7, strides=None):
        self.mem = mem
        self.__cuda_array_interface__ = {"shape": mem.shape, "typestr": mem.dtype.str, "data": (mem.ctypes.data, False),
                                         "strides": strides, "version": version}
        if version >= 3:
            self.__cuda_array_interface__["stream"] = stream


class FakeDLPack:
    """A DLPack-only producer (as a JAX array is) that says it lives on CUDA device 0; its capsule is NumPy's."""

    def __init__(self, mem):
        self.mem = mem
        self.streams = []

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self.mem.__dlpack__()

    def __dlpack_device__(self):
        return (2, 0)


@pytest.fixture
def gpu(monkeypatch):
    """The library as one with a GPU would answer; .wraps records each wrap's (pointer, device, stream),
    .takes is what pyr_plan_takes_field answers (None: takes it; else the refusal's message)."""
    class State:
        wraps = []
        takes = None
    state = State()
    real_available = _lib.lib.pyr_backend_available

    def wrap_device(dims, n, precision, ptr, device, stream, out):
        state.wraps.append((ptr.value if hasattr(ptr, "value") else ptr, device, stream))
        return _lib.lib.pyr_field_wrap(dims, n, precision, ptr, out)

    def takes(plan, field):
        return 0 if state.takes is None else 20

    monkeypatch.setattr(_lib.lib, "pyr_backend_available", lambda k: 1 if k == 2 else real_available(k))
    monkeypatch.setattr(_lib.lib, "pyr_field_wrap_device", wrap_device)
    monkeypatch.setattr(_lib.lib, "pyr_plan_takes_field", takes)
    monkeypatch.setattr(_lib, "last_error", lambda: state.takes or "")
    return state


def _heat(shape=(9, 11), steps=3):
    return pyrgrid.Problem("heat", shape=shape, dt=1e-3, steps=steps, initial="random")


def _want(p):
    u = p.initial()
    with pyrgrid.Plan(p, CPU) as plan:
        plan.execute(u)
    return u


def test_in_place_on_the_producers_memory_with_its_stream(gpu):
    p = _heat()
    want = _want(p)
    for version, stream, expected in ((3, 7, 7), (3, None, 1), (2, None, 1)):
        mem = p.initial()
        with warnings.catch_warnings():
            warnings.simplefilter("error", pyrgrid.CopyWarning)
            with pyrgrid.Plan(p, CPU) as plan:
                plan.execute(FakeCuda(mem, version, stream), copy=False)
        assert np.array_equal(mem, want)
        assert gpu.wraps[-1] == (mem.ctypes.data, -1, expected)  # the library asks CUDA which GPU holds it


def test_a_plan_that_cannot_take_it_copies_through_the_host_or_raises_with_copy_false(gpu):
    gpu.takes = "an array in GPU memory: the plan runs on the cpu backend; run.backend = cuda computes on the array where it lies"
    p = _heat()
    want = _want(p)
    mem = p.initial()
    with pyrgrid.Plan(p, CPU) as plan:
        with pytest.raises(pyrgrid.DeviceArrayError, match=r"u lives on a CUDA GPU \(__cuda_array_interface__\), and an array "
                                                           r"in GPU memory: the plan runs on the cpu backend; .*; copy=None \(the "
                                                           r"default\) copies it through host memory instead") as e:
            plan.execute(FakeCuda(mem), copy=False)
        assert isinstance(e.value, BufferError)
        assert np.array_equal(mem, p.initial())  # untouched
        with pytest.warns(pyrgrid.CopyWarning, match=r"u lives on .* copied through host memory \(device -> host -> run -> back\)"):
            plan.execute(FakeCuda(mem))
    assert np.array_equal(mem, want)
    # the copies went through the library's copy, over device fields of the array's bytes
    assert gpu.wraps and all(w[0] == mem.ctypes.data for w in gpu.wraps)


def test_a_strided_array_is_copied_and_written_back_into_its_elements_only(gpu):
    p = _heat()
    want = _want(p)
    wide = np.zeros((9, 22))
    view = wide[:, ::2]
    view[...] = p.initial()
    strided = FakeCuda(wide, strides=view.strides)
    strided.__cuda_array_interface__["shape"] = view.shape
    with pyrgrid.Plan(p, CPU) as plan:
        with pytest.raises(BufferError, match=r"not C-contiguous \(strides \(176, 16\)\)"):
            plan.execute(strided, copy=False)
        with pytest.warns(pyrgrid.CopyWarning, match="not C-contiguous"):
            plan.execute(strided)
    assert np.array_equal(view, want) and not wide[:, 1::2].any()


def test_dlpack_producer_asked_with_the_legacy_stream_and_its_capsule_released(gpu):
    p = _heat()
    want = _want(p)
    mem = p.initial()
    producer = FakeDLPack(mem)
    before = sys.getrefcount(mem)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pyrgrid.CopyWarning)
        with pyrgrid.Plan(p, CPU) as plan:
            plan.execute(producer)
    assert np.array_equal(mem, want)
    assert producer.streams == [1]  # DLPack's stream contract: the consumer's stream, the legacy default one
    assert gpu.wraps[-1] == (mem.ctypes.data, 0, 1)  # DLPack names the device
    assert sys.getrefcount(mem) == before  # the capsule's deleter was called (NumPy's holds a reference)

    class NoneOnly(FakeDLPack):  # a producer that takes only stream=None (DLPack's legacy default stream as well)
        def __dlpack__(self, stream=None):
            self.streams.append(stream)
            if stream is not None:
                raise RuntimeError("only stream=None")
            return self.mem.__dlpack__()
    mem = p.initial()
    producer = NoneOnly(mem)
    with pyrgrid.Plan(p, CPU) as plan:
        plan.execute(producer)
    assert np.array_equal(mem, want) and producer.streams == [1, None]


def test_refused_dtype_shape_and_shared_memory(gpu):
    p = _heat()
    with pyrgrid.Plan(p, CPU) as plan:
        with pytest.raises(pyrgrid.DeviceArrayError, match=r"u lives on .* as float32; the plan computes in float64: pass "
                                                           r"u.astype\(float64\)"):
            plan.execute(FakeCuda(np.zeros((9, 11), np.float32)))
        with pytest.raises(pyrgrid.ArgumentError, match=r"u is a GPU array of shape \(11, 9\); the plan's grid needs shape \(9, 11\)"):
            plan.execute(FakeCuda(np.zeros((11, 9))))
    q = pyrgrid.Problem("poisson", shape=(9, 11), rhs="array", iterations=5)
    mem = np.zeros((9, 11))
    with pyrgrid.Plan(q, CPU) as plan:
        with pytest.raises(pyrgrid.ArgumentError, match="u and f share GPU memory, and the run writes u"):
            plan.execute(FakeCuda(mem), FakeCuda(mem))


def test_heat_and_poisson_take_gpu_arrays(gpu):
    p = _heat()
    want = _want(p)
    mem = p.initial()
    # no copy of the producer's own to hold the result on the device: computed on a host copy
    with pytest.raises(pyrgrid.DeviceArrayError, match="u0 lives on .* cannot make a new array there"):
        pyrgrid.heat(FakeCuda(mem), dt=1e-3, steps=3, backend="cpu", copy=False)
    with pytest.warns(pyrgrid.CopyWarning, match="u0 lives on .*: it is read into host memory"):
        u = pyrgrid.heat(FakeCuda(mem), dt=1e-3, steps=3, backend="cpu")
    assert np.array_equal(u, want) and np.array_equal(mem, p.initial())

    class Cloning(FakeCuda):  # a producer with a copy of its own on the device (CuPy's copy, PyTorch's clone)
        def copy(self):
            return Cloning(self.mem.copy())

        @property
        def dtype(self):
            return self.mem.dtype
    with warnings.catch_warnings():
        warnings.simplefilter("error", pyrgrid.CopyWarning)
        u = pyrgrid.heat(Cloning(mem), dt=1e-3, steps=3, backend="cpu")
    assert isinstance(u, Cloning) and np.array_equal(u.mem, want) and np.array_equal(mem, p.initial())
    # Poisson's f on the device, read where it lies
    f = np.random.default_rng(1).random((9, 11))
    ref, _ = pyrgrid.poisson(np.zeros((9, 11)), f, iterations=7, backend="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error", pyrgrid.CopyWarning)
        got, info = pyrgrid.poisson(np.zeros((9, 11)), FakeCuda(f), iterations=7, backend="cpu")
    assert np.array_equal(got, ref) and info.steps == 7
    assert gpu.wraps[-1][0] == f.ctypes.data
