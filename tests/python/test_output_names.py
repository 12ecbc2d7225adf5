"""Output names whose suffix the program does not write (issue 49, item 8; its
item 5 in the helpers' list): `output.field = out.xyz`, `output.image = a.jpg`
are refused before the run with what works, and nothing is written, instead of
a .npy or PNG under the wrong name."""
import os

import pytest

HEAT = """[grid]
dims = 2
nx = 33
ny = 17
[scheme]
equation = heat
dt = 1e-5
steps = 20
[output]
field = out.npy
"""


@pytest.fixture
def problem(tmp_path):
    p = tmp_path / "heat.ini"
    p.write_text(HEAT)
    return p


@pytest.mark.parametrize("key,name,works", [
    ("output.field", "out.xyz", ".npy"),
    ("output.field", "out.txt", ".h5"),
    ("output.field", "result", ".npy"),
    ("output.image", "a.jpg", ".png"),
])
def test_refused_with_what_works(cli, problem, tmp_path, key, name, works):
    r = cli("run", problem, "-q", "--set", f"{key}={name}", cwd=tmp_path, expect=1)
    assert f"{key} = {name}" in r.stderr and works in r.stderr, r.stderr
    assert "does not write" in r.stderr or "no suffix" in r.stderr, r.stderr
    assert not (tmp_path / name).exists()
    assert not [f for f in os.listdir(tmp_path) if ".tmp." in f]


@pytest.mark.parametrize("field", ["out.npy", "out.h5", "out.HDF5", "out.he5"])
def test_written_names_still_work(cli, problem, tmp_path, field):
    r = cli("run", problem, "-q", "--set", f"output.field={field}", "--set", "output.image=map.png", cwd=tmp_path)
    if "built without HDF5" in r.stderr:
        pytest.skip("built without HDF5")
    assert (tmp_path / field).stat().st_size > 0 and (tmp_path / "map.png").stat().st_size > 0


def test_library_check(problem):
    """pyr_result_check_names, the call a program makes before planning."""
    import ctypes

    from pyrgrid import _lib
    lib = _lib.lib
    if not hasattr(lib, "pyr_result_check_names"):
        pytest.fail("the library lacks pyr_result_check_names")
    pf = ctypes.c_void_p()
    for name, status in (("out.npy", 0), ("out.xyz", "PYR_ERR_CONFIG")):
        sets = (ctypes.c_char_p * 1)(f"output.field={name}".encode())
        assert lib.pyr_problem_file_load(str(problem).encode(), sets, 1, ctypes.byref(pf)) == 0
        try:
            outputs = ctypes.create_string_buffer(4096)  # larger than pyr_problem_outputs_t
            lib.pyr_problem_file_problem.restype = ctypes.c_void_p
            prob = lib.pyr_problem_file_problem(pf)
            assert lib.pyr_problem_file_outputs(pf, outputs) == 0
            st = lib.pyr_result_check_names(ctypes.c_void_p(prob), outputs)
            if status == 0:
                assert st == 0
            else:
                lib.pyr_status_name.restype = ctypes.c_char_p
                assert lib.pyr_status_name(st).decode() == status
        finally:
            lib.pyr_problem_file_destroy(ctypes.byref(pf))
