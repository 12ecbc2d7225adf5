"""pyr_problem_get answers Maxwell's keys (issue 49 leftovers: [boundary],
[material], [source], [probe]) as a problem file writes them, and the text it
gives, set back, makes the same problem."""
import ctypes

import pytest

import pyrgrid
from pyrgrid import _lib

SCATTERER = {
    "boundary.kind": "cpml", "boundary.cpml_cells": "12", "boundary.faces": "x-,x+,y+",
    "boundary.cpml_order": "3.5", "boundary.cpml_kappa_max": "2", "boundary.cpml_alpha_max": "0.125",
    "material.eps_r": "2.25", "material.sigma": "0.01", "material.mu_r": "1.5",
    "material.shape1": "sphere 6 6 1 eps_r=4",
    "material.shape2": "box 0 1.5 3.25 4.5 sigma=0.5",
    "material.shape3": "cylinder z 6 6 1 0 12 mu_r=2",
    "source.source1": "Hz line 40 21 40 219 ricker frequency=0.5 delay=3",
    "source.source2": "Hz point 30 31 sine frequency=0.15 width=20 amplitude=2",
    "probe.probe1": "Hz 80 120",
    "probe.probe2": "Hz 180 40",
}


def maxwell():
    p = pyrgrid.Problem("maxwell", shape=(241, 241), lengths=(12, 12))
    p.set("scheme.mode", "te")
    for k, v in SCATTERER.items():
        p.set(k, v)
    return p


def test_values():
    p = maxwell()
    assert p.get("boundary.kind") == "cpml"
    assert p.get("boundary.cpml_cells") == 12
    assert p.get("boundary.faces") == "x-,x+,y+"
    assert p.get("boundary.cpml_order") == 3.5 and p.get("boundary.cpml_alpha_max") == 0.125
    assert p.get("material.eps_r") == 2.25 and p.get("material.sigma") == 0.01 and p.get("material.mu_r") == 1.5
    assert p.get("material.shape1") == "sphere 6 6 1 eps_r=4 sigma=0 mu_r=1"
    assert p.get("material.shape2") == "box 0 1.5 3.25 4.5 eps_r=1 sigma=0.5 mu_r=1"
    assert p.get("material.shape3") == "cylinder z 6 6 1 0 12 eps_r=1 sigma=0 mu_r=2"
    assert p.get("source.source1") == "Hz line 40 21 40 219 ricker amplitude=1 frequency=0.5 width=0 delay=3"
    assert p.get("source.source2") == "Hz point 30 31 sine amplitude=2 frequency=0.14999999999999999 width=20 delay=0"
    assert p.get("probe.probe1") == "Hz 80 120" and p.get("probe.probe2") == "Hz 180 40"
    # numbered keys past those given are empty, as a file key not given is
    assert p.get("material.shape4") == "" and p.get("source.source16") == "" and p.get("probe.probe32") == ""
    assert p.get("material.eps_file") == ""
    q = pyrgrid.Problem("maxwell", shape=(33, 33))
    assert q.get("boundary.kind") == "pec" and q.get("boundary.faces") == ""
    q.set("boundary.kind", "cpml")
    assert q.get("boundary.faces") == "all" and q.get("boundary.cpml_cells") == 10


def test_round_trip_3d():
    p = pyrgrid.Problem("maxwell", shape=(21, 25, 29))
    for k, v in {"material.shape1": "box 0.1 0.2 0.3 0.4 0.5 0.6 eps_r=3", "material.shape2": "sphere 0.5 0.5 0.5 0.25",
                 "material.shape3": "cylinder y 0.5 0.5 0.1 0 1", "source.source1": "Ez point 5 6 7 gaussian width=3 delay=10",
                 "source.source2": "Ex line 3 4 5 3 4 20 ricker frequency=0.2", "probe.probe1": "Ey 10 11 12"}.items():
        p.set(k, v)
    keys = ["material.shape1", "material.shape2", "material.shape3", "source.source1", "source.source2", "probe.probe1"]
    assert p.get("material.shape1") == "box 0.10000000000000001 0.20000000000000001 0.29999999999999999 0.40000000000000002 0.5 0.59999999999999998 eps_r=3 sigma=0 mu_r=1"
    assert p.get("source.source2").startswith("Ex line 3 4 5 3 4 20 ricker")
    q = pyrgrid.Problem("maxwell", shape=(21, 25, 29))
    for k in keys:
        q.set(k, p.get(k))
    assert [q.get(k) for k in keys] == [p.get(k) for k in keys]


def test_round_trip_makes_the_same_problem():
    """Every Maxwell key read back and set into a new problem: the same struct, byte for byte."""
    p = maxwell()
    q = pyrgrid.Problem("maxwell", shape=(241, 241), lengths=(12, 12))
    q.set("scheme.mode", "te")
    for k in SCATTERER:
        q.set(k, p._text_of(k))
    size = _lib.lib.pyr_struct_size(b"pyr_problem_t")
    assert size > 0
    a = ctypes.string_at(p._h, size)
    b = ctypes.string_at(q._h, size)
    assert a == b


def test_unknown_keys_still_refused():
    p = maxwell()
    for key in ("material.shape0", "material.shape17", "material.shape01", "source.source17", "probe.probe33",
                "boundary.cells", "material.epsilon"):
        with pytest.raises(pyrgrid.Error, match="unknown key"):
            p.get(key)


def test_problem_file(examples):
    """The keys of a problem file as pyr_problem_file_load read them."""
    lib = _lib.lib
    pf = ctypes.c_void_p()
    assert lib.pyr_problem_file_load(str(examples / "maxwell_scatterer.ini").encode(), None, 0, ctypes.byref(pf)) == 0
    try:
        lib.pyr_problem_file_problem.restype = ctypes.c_void_p
        prob = ctypes.c_void_p(lib.pyr_problem_file_problem(pf))
        buf = ctypes.create_string_buffer(1024)

        def get(key):
            assert lib.pyr_problem_get(prob, key.encode(), buf, len(buf)) == 0, key
            return buf.value.decode()
        assert get("boundary.kind") == "cpml" and get("boundary.cpml_cells") == "20" and get("boundary.faces") == "all"
        assert get("material.shape1") == "sphere 6 6 1 eps_r=4 sigma=0 mu_r=1"
        assert get("source.source1").startswith("Hz line 40 21 40 219 ricker")
        assert [get(f"probe.probe{i}") for i in (1, 2, 3)] == ["Hz 80 120", "Hz 180 120", "Hz 180 40"]
        # a value longer than the buffer: PYR_ERR_ARG with the size needed
        small = ctypes.create_string_buffer(8)
        st = lib.pyr_problem_get(prob, b"source.source1", small, len(small))
        lib.pyr_status_name.restype = ctypes.c_char_p
        assert lib.pyr_status_name(st) == b"PYR_ERR_ARG"
    finally:
        lib.pyr_problem_file_destroy(ctypes.byref(pf))
