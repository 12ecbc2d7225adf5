"""Maxwell runs from Python that start at zero take their components as the library's zero fields
(pyr_field_create_zero, seen by NumPy over the library's memory): such a run equals, bit for bit, the
run from plain numpy.zeros arrays; a value written into such an array before a run is used, never
replaced by zeros; the library's memory lives as long as an array over it.  On CUDA where a GPU is
usable (skipped otherwise)."""
import gc
import weakref

import numpy as np
import pytest

import pyrgrid
from pyrgrid import _core
from pyrgrid._lib import lib

CASES = [
    dict(shape=(41, 53), dtype=np.float64, sources=["Ez point 20 26 ricker frequency=0.2 delay=5"]),
    dict(shape=(37, 44), dtype=np.float32, mode="te", boundary="cpml", cpml_cells=6,
         sources=["Hz point 18 20 ricker frequency=0.15 delay=6"]),
    dict(shape=(19, 23, 21), dtype=np.float64, boundary="cpml", cpml_cells=4,
         sources=["Ez point 11 10 9 ricker frequency=0.2 delay=4"], probes=["Ez 12 12 10"]),
]
BACKENDS = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not lib.pyr_backend_available(2),
                                                                    reason="no usable GPU (or a library without CUDA)"))]


def problem(case, steps=23):
    keys = {k: v for k, v in case.items() if k not in ("shape", "dtype")}
    p = pyrgrid.Problem("maxwell", shape=case["shape"], dtype=case["dtype"])
    r = pyrgrid.maxwell(p, steps=steps, **keys)  # sets the keys on p (and runs once)
    return p, r


def from_numpy(p, given, backend):
    """The run from plain NumPy arrays holding `given` ({component: values}; the others zero)."""
    fields = {n: np.zeros(p.shape, p.dtype) for n in p.state_fields}
    for n, v in given.items():
        fields[n][...] = v
    with pyrgrid.Plan(p, pyrgrid.Options(backend=backend, method="naive")) as plan:
        info = plan.execute(fields)
    return fields, info


def same_bits(a, b, what):
    assert a.dtype == b.dtype and a.shape == b.shape, what
    assert a.tobytes() == b.tobytes(), f"{what}: differs at {np.argwhere(a.view(np.uint8) != b.view(np.uint8))[:3]}"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_zero_start_equals_numpy_zeros(case, backend):
    p, _ = problem(CASES[case], steps=1)
    r = pyrgrid.maxwell(p, steps=23, backend=backend, method="naive")
    for n in p.state_fields:
        assert isinstance(r[n].base, _core._ZeroField), "the components are the library's zero fields"
    ref, info = from_numpy(p, {}, backend)
    assert r.info.steps == info.steps == 23
    assert any(np.abs(ref[n]).max() > 0 for n in ref), "the source must make the run non-trivial"
    for n in p.state_fields:
        same_bits(r[n], ref[n], f"{n} from the library's zeros vs numpy.zeros ({backend})")
    if info.probes is not None and len(info.probes):
        same_bits(np.asarray(r.info.probes), np.asarray(info.probes), "probes")
    # explicit zeros given as initial: the same again
    r2 = pyrgrid.maxwell(p, steps=23, backend=backend, method="naive",
                         initial={n: np.zeros(p.shape, p.dtype) for n in p.state_fields})
    for n in p.state_fields:
        same_bits(r2[n], ref[n], f"{n} from initial=numpy.zeros ({backend})")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_values_written_into_zero_fields_are_used(case, backend):
    """Written before the run (the library's mark still on): the run must see every value written, at the
    first, a middle and the last node, and -0.0."""
    p, _ = problem(CASES[case], steps=1)
    fields = p.initial_fields()
    first = p.state_fields[0]
    assert isinstance(fields[first].base, _core._ZeroField)
    written = {}
    for k, n in enumerate(p.state_fields):
        v = np.zeros(p.shape, p.dtype)
        flat = v.reshape(-1)
        flat[[0, flat.size // 2 + k, flat.size - 1]] = [0.5, -0.25 * (k + 1), 0.125]
        if k == 1:
            v[...] = 0
            v.reshape(-1)[flat.size // 3] = -0.0
        fields[n][...] = v
        written[n] = v
    with pyrgrid.Plan(p, pyrgrid.Options(backend=backend, method="naive")) as plan:
        plan.execute(fields)
    ref, _ = from_numpy(p, written, backend)
    for n in p.state_fields:
        same_bits(fields[n], ref[n], f"{n} written into the library's zeros before the run ({backend})")


@pytest.mark.parametrize("backend", BACKENDS)
def test_result_written_then_run_again(backend):
    p, _ = problem(CASES[0], steps=1)
    r = pyrgrid.maxwell(p, steps=7, backend=backend, method="naive")
    r["Ez"][5, 7] = 3.0
    r["Hx"][...] = 0
    start = {n: r[n].copy() for n in p.state_fields}
    again = pyrgrid.maxwell(p, steps=9, backend=backend, method="naive", initial=dict(r))
    ref, _ = from_numpy(p, start, backend)
    with pyrgrid.Plan(p, pyrgrid.Options(backend=backend, method="naive")) as plan:
        plan.execute(dict(r))  # the result's own arrays, in place
    for n in p.state_fields:
        same_bits(again[n], ref[n], f"{n}: a run from a result written into ({backend})")
        same_bits(r[n], ref[n], f"{n}: the result's arrays run again in place ({backend})")


def test_non_finite_written_into_zero_field_refused():
    p, _ = problem(CASES[0], steps=1)
    fields = p.initial_fields()
    fields["Hy"][3, 4] = np.nan
    with pyrgrid.Plan(p, pyrgrid.Options(method="naive")) as plan, pytest.raises(pyrgrid.ArgumentError, match="Hy holds NaN"):
        plan.execute(fields)


def test_library_memory_lives_with_its_arrays():
    p, _ = problem(CASES[0], steps=1)
    r = pyrgrid.maxwell(p, steps=3)
    owner = weakref.ref(r["Ez"].base)
    view = r["Ez"][2:5]
    del r
    gc.collect()
    assert owner() is not None, "a view keeps the field"
    view[...] = 1.0  # the memory is still there
    del view
    gc.collect()
    assert owner() is None, "the field is freed with the last array over it"
