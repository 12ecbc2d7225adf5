"""Habits of a scientist's Python (issue: fits a scientist's habits, items 2 and 4): problems and options that
pickle (deepcopy, multiprocessing sweeps), progress=True drawing a bar, type hints that mypy reads, and host
buffers (memmaps, array.array, bytearrays, __array_interface__, CPU DLPack) used in place, GPU arrays refused
with a BufferError."""
import array
import copy
import inspect
import io
import multiprocessing
import os
import pickle
import pty
import select
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import pyrgrid

CPU = {"run.backend": "cpu", "run.threads": 1}
HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parents[1] / "python"


def texts(handle):
    """Every key a handle reads back, as the library's text (every digit of a double)."""
    return {k: handle._text_of(k) for k in handle._keys()}


def copies(obj):
    yield "deepcopy", copy.deepcopy(obj)
    yield "copy", copy.copy(obj)
    for protocol in (2, pickle.HIGHEST_PROTOCOL):
        yield f"pickle {protocol}", pickle.loads(pickle.dumps(obj, protocol=protocol))


MAXWELL_KEYS = {"boundary.kind": "cpml", "boundary.cpml_cells": 6, "source.source1": "Ez point 20 15 ricker frequency=2 delay=0.6",
                "probe.probe1": "Ez 25 25", "material.shape1": "box 0.1 0.4 0.1 0.4 eps_r=4"}


def problems(tmp_path):
    yield pyrgrid.Problem("heat", shape=(9, 11), lengths=(2.0, 3.0 + 1e-15), dt=1.2345678901234567e-6, steps=7, alpha=0.3)
    yield pyrgrid.Problem("heat", shape=(5, 6, 7), dtype=np.float32, initial="random", seed=12345, dt=1e-7, steps=2)
    yield pyrgrid.Problem("poisson", shape=(17,), tolerance=1e-9, iterations=500, omega=0.8123456789012345, check_every=7)
    yield pyrgrid.Problem("poisson", shape=(9, 9), rhs="array", iterations=3)
    yield pyrgrid.Problem("maxwell", shape=(40, 50), steps=50, courant=0.45, keys=MAXWELL_KEYS)
    yield pyrgrid.Problem("maxwell", shape=(20, 30), mode="te", dt=0.01, steps=5)
    np.save(tmp_path / "u0.npy", np.zeros((6, 8)))
    (tmp_path / "p.ini").write_text("[scheme]\ndt = 1e-4\nsteps = 3\n[initial]\nkind = file\nfile = u0.npy\n"
                                    "[run]\nmemory = 64K\nrows = 3\n")
    yield pyrgrid.Problem.from_file(tmp_path / "p.ini")


def test_problems_and_options_copy_and_pickle_by_their_keys(tmp_path):
    for p in problems(tmp_path):
        want = texts(p)
        assert len(want) >= 10
        for how, q in copies(p):
            assert type(q) is pyrgrid.Problem and q._h.value != p._h.value, how  # a handle of its own
            assert texts(q) == want, (how, p)
            assert q.to_dict() == p.to_dict() and q.shape == p.shape and q.dtype == p.dtype and q.fields == p.fields, how
            assert q._unread == p._unread, how
            if p.options is not None:
                assert texts(q.options) == texts(p.options) and q.options["run.memory"] == 65536, how
            steps = p["scheme.steps"]
            q["scheme.steps"] = 99  # the copy is its own: the original keeps its value
            assert p["scheme.steps"] == steps != 99
    o = pyrgrid.Options(memory="1GiB", rows=5, threads=2, height=7, backend="cpu", devices="0,1", plan="measure")
    for how, c in copies(o):
        assert texts(c) == texts(o) and c.to_dict() == o.to_dict(), how
        # rows (not block) carries the piece: a copy keeps the decomposition automatic
        assert c["run.decomposition"] == "auto" and c["run.rows"] == 5, how
    assert texts(copy.deepcopy(pyrgrid.Options())) == texts(pyrgrid.Options())


def test_a_copied_maxwell_problem_keeps_what_the_library_does_not_read_back(tmp_path):
    # boundary, materials, sources and probes are not in the library's list of keys (to_dict), though each reads
    # back: the copy carries them as they were set
    p = pyrgrid.Problem("maxwell", shape=(40, 50), steps=50, keys=MAXWELL_KEYS)
    assert list(p._unread) == list(MAXWELL_KEYS)
    want = pyrgrid.maxwell(p, backend="cpu")
    bare = pyrgrid.maxwell(pyrgrid.Problem("maxwell", shape=(40, 50), steps=50), backend="cpu")
    assert not np.array_equal(want["Ez"], bare["Ez"])  # the keys matter
    for how, q in copies(p):
        got = pyrgrid.maxwell(q, backend="cpu")
        assert np.array_equal(got["Ez"], want["Ez"]) and np.array_equal(got.probes, want.probes), how
    # a Maxwell problem read from a file: read from it again where it is unpickled, then the keys set after
    (tmp_path / "m.ini").write_text("[grid]\ndims = 2\nnx = 50\nny = 40\n[scheme]\nequation = maxwell\nsteps = 50\n"
                                    "[boundary]\nkind = cpml\ncpml_cells = 6\n[material]\nshape1 = box 0.1 0.4 0.1 0.4 eps_r=4\n"
                                    "[source]\nsource1 = Ez point 20 15 ricker frequency=2 delay=0.6\n[probe]\nprobe1 = Ez 25 25\n")
    f = pyrgrid.Problem.from_file(tmp_path / "m.ini", keys={"probe.probe2": "Ez 30 30"})
    want = pyrgrid.maxwell(f, backend="cpu")
    for how, q in copies(f):
        got = pyrgrid.maxwell(q, backend="cpu")
        assert got.probes.shape == (50, 2) and np.array_equal(got.probes, want.probes), how


def test_a_plan_is_not_pickled_but_says_what_is():
    plan = pyrgrid.Plan(pyrgrid.Problem("heat", shape=(9, 9), dt=1e-5, steps=1), CPU)
    with pytest.raises(TypeError, match=r"plan.problem, plan.options: both pickle"):
        pickle.dumps(plan)
    with pytest.raises(TypeError, match="not copied or pickled"):
        copy.deepcopy(plan)


def test_a_sweep_over_a_process_pool():
    # reliability: spawn starts fresh interpreters, so everything a worker has came through pickle
    problem = pyrgrid.Problem("heat", shape=(33, 41), lengths=(1.0, 1.5), dt=2e-6, steps=40, initial="gauss")
    options = pyrgrid.Options(CPU)
    alphas = [0.5, 1.0, 1.5, 2.0]
    sys.path.insert(0, str(HERE))
    try:
        import habits_worker
        with multiprocessing.get_context("spawn").Pool(2) as pool:
            results = pool.map(habits_worker.heat_case, [(problem, options, a) for a in alphas])
        maxwell = pyrgrid.Problem("maxwell", shape=(40, 50), steps=50, keys=MAXWELL_KEYS)
        with multiprocessing.get_context("spawn").Pool(2) as pool:
            (ez, series), = pool.map(habits_worker.maxwell_case, [maxwell])
    finally:
        sys.path.remove(str(HERE))
    for a, (u, v, problem_keys, option_keys) in zip(alphas, results):
        want = pyrgrid.heat(problem.initial(), dt=2e-6, steps=40, alpha=a, lengths=(1.0, 1.5), backend="cpu", threads=1)
        assert np.array_equal(u, want) and np.array_equal(v, want), a
        assert problem_keys == dict(problem.to_dict(), scheme=dict(problem.to_dict()["scheme"], alpha=a))
        assert option_keys == options.to_dict()
    r = pyrgrid.maxwell(maxwell, backend="cpu", threads=1)
    assert np.array_equal(ez, r["Ez"]) and np.array_equal(series, r.probes)


# ------------------------------------------------------------------ progress=True

def test_progress_bar_on_a_pipe_writes_a_line_every_tenth():
    out = io.StringIO()
    bar = pyrgrid.ProgressBar(stream=out)
    for done in range(3, 301, 3):
        bar(done, 300)
    lines = out.getvalue().split("\n")
    assert lines[-1] == "" and "\r" not in out.getvalue()
    lines = lines[:-1]
    assert len(lines) == 10, lines
    assert lines[0].startswith("[##") and " 30/300 steps  10%" in lines[0] and "steps/s" in lines[0] and "ETA" in lines[0]
    assert "300/300 steps 100%" in lines[-1] and "ETA" not in lines[-1]
    bar.close()  # ended already: nothing more
    assert out.getvalue().count("\n") == 10
    # a run that stops early: its last state and a newline
    out = io.StringIO()
    bar = pyrgrid.ProgressBar("sweeps", stream=out)
    bar(20, 1000)
    bar(35, 1000)
    bar.close()
    assert out.getvalue().endswith("\n") and "35/1000 sweeps" in out.getvalue().splitlines()[-1]
    # never called (a run refused before it began): nothing
    out = io.StringIO()
    pyrgrid.ProgressBar(stream=out).close()
    assert out.getvalue() == ""
    # a stream that cannot be written (closed): the bar stops drawing, it raises nothing
    out = io.StringIO()
    out.close()
    bar = pyrgrid.ProgressBar(stream=out)
    bar(5, 10)
    bar(10, 10)
    bar.close()


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_on_a_terminal_redraws_one_line():
    out = _Terminal()
    bar = pyrgrid.ProgressBar(stream=out)
    for done in range(1, 1001):
        bar(done, 1000)
    text = out.getvalue()
    assert text.startswith("\r[") and text.endswith("\n") and text.count("\n") == 1
    assert 2 <= text.count("\r") < 1000  # the first, the last, and at most ten a second between
    assert "1000/1000 steps 100%" in text.split("\r")[-1]


def _child(code, stderr):
    env = dict(os.environ, PYTHONPATH=str(PACKAGE) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=stderr, env=env)


RUN = ("import numpy as np, pyrgrid\n"
       "u = pyrgrid.heat(np.zeros((65, 65)), dt=1e-5, steps=2000, backend='cpu', method='pyramid', memory='16K', progress={})\n"
       "print('done', u.shape)\n")


def test_progress_true_through_a_pipe_and_a_terminal():
    # a pipe: lines, no carriage returns
    r = subprocess.run([sys.executable, "-c", RUN.format("True")], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(PACKAGE) + os.pathsep + os.environ.get("PYTHONPATH", "")))
    assert r.returncode == 0 and r.stdout == "done (65, 65)\n", r.stderr
    lines = r.stderr.splitlines()
    assert "\r" not in r.stderr and r.stderr.endswith("\n") and 2 <= len(lines) <= 11, r.stderr
    assert all(" steps " in line and "steps/s" in line for line in lines)
    assert "2000/2000 steps 100%" in lines[-1]
    # a terminal (a pty): one line redrawn in place, a newline at the end
    master, slave = pty.openpty()
    try:
        child = _child(RUN.format("True"), slave)
        os.close(slave)
        slave = None
        data = b""
        while True:
            ready, _, _ = select.select([master], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed its end
                break
            if not chunk:
                break
            data += chunk
        stdout, _ = child.communicate(timeout=60)
    finally:
        os.close(master)
        if slave is not None:
            os.close(slave)
    assert child.returncode == 0 and stdout == b"done (65, 65)\n"
    text = data.decode()
    assert text.startswith("\r[") and text.count("\r") >= 2, repr(text[:200])
    # the pty turns "\n" into "\r\n": one line, ended once
    assert text.endswith("\r\n") and text.count("\n") == 1, repr(text[-200:])
    assert "2000/2000 steps 100%" in text.split("\r")[-2]


def test_progress_false_none_and_callables(capfd, monkeypatch):
    u0 = np.zeros((33, 33))
    seen = []
    for progress in (None, False):
        pyrgrid.heat(u0, dt=1e-5, steps=30, backend="cpu", progress=progress)
    pyrgrid.heat(u0, dt=1e-5, steps=30, backend="cpu", method="pyramid", memory="8K", progress=lambda d, t: seen.append((d, t)))
    assert capfd.readouterr().err == ""
    assert seen and seen[-1] == (30, 30)
    with pytest.raises(pyrgrid.ArgumentError, match=r"progress = 'yes'.*True \(a progress bar on stderr\)"):
        pyrgrid.heat(u0, dt=1e-5, steps=3, backend="cpu", progress="yes")
    u, info = pyrgrid.poisson(np.zeros((17, 17)), "sine", iterations=40, backend="cpu", progress=True)
    err = capfd.readouterr().err
    assert "40/40 sweeps 100%" in err and err.endswith("\n")
    # no stderr at all (pythonw, a daemon): the run goes on without its bar
    monkeypatch.setattr(sys, "stderr", None)
    assert pyrgrid.heat(u0, dt=1e-5, steps=30, backend="cpu", progress=True).shape == u0.shape


# ------------------------------------------------------------------ type hints

def test_progress_true_for_solve_lgs_and_frames(capfd):
    """progress=True draws the bar for the line solver (iterations of max_iterations) and the frames pipeline
    (frames), ended by a newline when the call ends, early or not; a callable and False still work."""
    s = pyrgrid.lgs_system("laplace", 6, 8)
    arrays = [s[k] for k in ("cC", "aC", "bC", "cA", "cB", "F")]
    capfd.readouterr()
    y, info = pyrgrid.solve_lgs(*arrays, tolerance=1e-8, max_iterations=5000, check_every=10, backend="cpu", progress=True)
    err = capfd.readouterr().err
    assert info.converged and info.iterations < 5000
    lines = err.splitlines()
    assert lines and err.endswith("\n") and all(line.startswith("[") for line in lines), err
    assert f"{info.iterations}/5000 iterations" in lines[-1], err
    seen = []
    pyrgrid.solve_lgs(*arrays, tolerance=1e-8, max_iterations=5000, backend="cpu", progress=lambda it, rel: seen.append(it))
    pyrgrid.solve_lgs(*arrays, tolerance=1e-8, max_iterations=5000, backend="cpu", progress=False)
    assert seen and capfd.readouterr().err == ""
    with pytest.raises(pyrgrid.ArgumentError, match=r"progress = 'yes'.*True \(a progress bar on stderr\)"):
        pyrgrid.solve_lgs(*arrays, progress="yes")
    if not pyrgrid.backends().get("cpu") or not hasattr(pyrgrid._lib.lib, "pyr_frames_create"):
        return
    stack = np.random.default_rng(1).normal(100, 3, (10, 64, 64)).astype(np.float32)
    r = pyrgrid.frames(stack, history=3, border=6, backend="cpu", threads=1, progress=True)
    err = capfd.readouterr().err
    assert r.residual.shape == stack.shape
    lines = err.splitlines()
    assert lines and err.endswith("\n") and "10/10 frames 100%" in lines[-1], err
    with pytest.raises(pyrgrid.CancelledError):
        pyrgrid.frames(stack, history=3, border=6, backend="cpu", threads=1, progress=lambda i, t: i < 5)
    with pytest.raises(pyrgrid.ArgumentError, match=r"progress = 3"):
        pyrgrid.frames(stack, progress=3)


def test_public_callables_are_annotated():
    missing = []
    for name in pyrgrid.__all__:
        obj = getattr(pyrgrid, name)
        if not callable(obj) or (inspect.isclass(obj) and issubclass(obj, BaseException)):
            continue
        fn = obj.__init__ if inspect.isclass(obj) else obj
        if fn is object.__init__:
            continue
        sig = inspect.signature(fn)
        params = [p for p in sig.parameters.values() if p.name != "self"]
        if sig.return_annotation is inspect.Signature.empty or any(p.annotation is inspect.Parameter.empty for p in params):
            missing.append(name)
    assert not missing, f"public callables without annotations: {missing}"
    assert (PACKAGE / "pyrgrid" / "py.typed").exists()


USER_CODE = '''
import numpy as np
import numpy.typing as npt
import pyrgrid

u: npt.NDArray[np.floating] = pyrgrid.heat(np.zeros((9, 9)), dt=1e-5, steps=3, progress=True)
v, info = pyrgrid.poisson(np.zeros((9, 9)), "sine", tolerance=1e-6)
sweeps: int = info.sweeps
p = pyrgrid.Problem("heat", shape=(9, 9), dt=1e-5, steps=3)
shape: tuple = p.shape
with pyrgrid.Plan(p, pyrgrid.Options(backend="cpu")) as plan:
    run: pyrgrid.RunInfo = plan.execute(p.initial(), progress=lambda done, total: None)
r = pyrgrid.maxwell((20, 20), steps=3, sources=["Ez point 10 10 ricker frequency=2 delay=0.6"])
ez: np.ndarray = r["Ez"]
sys_ = pyrgrid.lgs_system("laplace", 4, 5)
y, lgs = pyrgrid.solve_lgs(sys_["cC"], sys_["aC"], sys_["bC"], sys_["cA"], sys_["cB"], sys_["F"], progress=True)
iterations: int = lgs.iterations
hist: npt.NDArray[np.float64] = lgs.history
omega: float = pyrgrid.lgs_omega_laplace(4, 5)
home: str = pyrgrid.wisdom_path()
devices: list = pyrgrid.gpus()
wrong: str = pyrgrid.heat(np.zeros(9), dt=1e-5, steps=3)  # the one error mypy must find
'''


def test_mypy_checks_the_package_and_a_caller(tmp_path):
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.skip("mypy is not installed for this Python (apt-get install python3-mypy); "
                    "test_public_callables_are_annotated checks the annotations instead")
    config = tmp_path / "mypy.ini"
    # every module's own functions annotated, _extra.py's (lgs, frames, wisdom, calibrate) included
    config.write_text("[mypy]\ncache_dir = " + str(tmp_path / "cache") + "\n"
                      "[mypy-pyrgrid,pyrgrid._core,pyrgrid._errors,pyrgrid._interrupt,pyrgrid._extra]\n"
                      "disallow_untyped_defs = True\ndisallow_incomplete_defs = True\n")
    user = tmp_path / "user.py"
    user.write_text(USER_CODE)
    r = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(config), "pyrgrid", str(user)],
                       capture_output=True, text=True, cwd=PACKAGE, env=dict(os.environ, MYPYPATH=str(PACKAGE)))
    errors = [line for line in r.stdout.splitlines() if ": error:" in line]
    line = USER_CODE.splitlines().index(next(x for x in USER_CODE.splitlines() if x.startswith("wrong"))) + 1
    assert len(errors) == 1 and f"user.py:{line}: error: Incompatible types in assignment" in errors[0], r.stdout + r.stderr


# ------------------------------------------------------------------ host buffers in place

def _plan(dtype=np.float64, shape=(9, 11), steps=3):
    p = pyrgrid.Problem("heat", shape=shape, dtype=dtype, dt=1e-3, steps=steps, initial="sine")
    return p, pyrgrid.Plan(p, CPU)


def _reference(p, plan):
    u = p.initial()
    plan.execute(u)
    return u


def test_numpy_memmaps_are_computed_in_place(tmp_path):
    p, plan = _plan()
    want = _reference(p, plan)
    path = tmp_path / "u.dat"
    m = np.memmap(path, dtype=np.float64, mode="w+", shape=p.shape)
    m[...] = p.initial()
    with warnings.catch_warnings():
        warnings.simplefilter("error", pyrgrid.CopyWarning)
        plan.execute(m)
    assert np.array_equal(m, want)
    m.flush()
    del m
    assert np.array_equal(np.fromfile(path).reshape(p.shape), want)  # in the file itself
    # read-only: refused as a state field, taken in place as an input
    ro = np.memmap(path, dtype=np.float64, mode="r", shape=p.shape)
    with pytest.raises(pyrgrid.ArgumentError, match=r"u is read-only.*mode='r\+'"):
        plan.execute(ro)
    q = pyrgrid.Problem("poisson", shape=p.shape, rhs="array", iterations=5)
    u = np.zeros(p.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pyrgrid.CopyWarning)
        pyrgrid.Plan(q, CPU).execute(u, ro)
    v = np.zeros(p.shape)
    pyrgrid.Plan(q, CPU).execute(v, np.array(ro))
    assert np.array_equal(u, v) and u.any()


def test_array_array_bytearray_views_and_array_interface_objects_in_place():
    p, plan = _plan()
    want = _reference(p, plan)
    # array.array: a flat buffer of the grid's nodes (C order)
    a = array.array("d", p.initial().ravel())
    with warnings.catch_warnings():
        warnings.simplefilter("error", pyrgrid.CopyWarning)
        info = plan.execute(a)
    assert info.steps == 3 and np.array_equal(np.frombuffer(a), want.ravel())
    with pytest.raises(pyrgrid.ArgumentError, match=r"dtype float32.*computes in float64"):
        plan.execute(array.array("f", [0.0] * want.size))
    with pytest.raises(pyrgrid.ArgumentError, match=r"needs shape \(9, 11\)"):
        plan.execute(array.array("d", [0.0] * (want.size - 1)))
    # a memoryview over a bytearray, in the grid's shape
    raw = bytearray(want.nbytes)
    view = memoryview(raw).cast("d", p.shape)
    np.asarray(view)[...] = p.initial()
    with warnings.catch_warnings():
        warnings.simplefilter("error", pyrgrid.CopyWarning)
        plan.execute(view)
    assert np.array_equal(np.frombuffer(raw).reshape(p.shape), want)
    # bytes: read-only
    with pytest.raises(pyrgrid.ArgumentError, match="u is read-only"):
        plan.execute(memoryview(bytes(want.nbytes)).cast("d", p.shape))

    # an object that has only __array_interface__ (a foreign library's array)
    class Foreign:
        def __init__(self, memory, readonly=False):
            self._memory = memory
            self.__array_interface__ = {"shape": memory.shape, "typestr": memory.dtype.str, "version": 3,
                                        "data": (memory.ctypes.data, readonly)}
    memory = p.initial()
    with warnings.catch_warnings():
        warnings.simplefilter("error", pyrgrid.CopyWarning)
        plan.execute(Foreign(memory))
    assert np.array_equal(memory, want)
    with pytest.raises(pyrgrid.ArgumentError, match="u is read-only"):
        plan.execute(Foreign(p.initial(), readonly=True))
    # not a buffer at all: refused for a state field (a converted copy would not hold the result)
    with pytest.raises(pyrgrid.ArgumentError, match=r"NumPy array \(or a host buffer"):
        plan.execute(want.tolist())


def test_unaligned_buffers_are_copied_and_written_back():
    p, plan = _plan()
    want = _reference(p, plan)
    raw = bytearray(want.nbytes + 1)
    odd = np.frombuffer(raw, dtype=np.float64, offset=1).reshape(p.shape)
    assert not odd.flags.aligned
    odd[...] = p.initial()
    with pytest.warns(pyrgrid.CopyWarning, match="not aligned"):
        plan.execute(odd)
    assert np.array_equal(odd, want)


def test_cpu_dlpack_objects_in_place():
    assert hasattr(np.ndarray, "__dlpack__")  # NumPy >= 1.22

    class Producer:  # a CPU tensor of another library, seen only through DLPack
        def __init__(self, memory):
            self._memory = memory

        def __dlpack__(self, stream=None):
            return self._memory.__dlpack__()

        def __dlpack_device__(self):
            return self._memory.__dlpack_device__()
    p, plan = _plan()
    want = _reference(p, plan)
    memory = p.initial()
    with warnings.catch_warnings():
        warnings.simplefilter("error", pyrgrid.CopyWarning)
        plan.execute(Producer(memory))
    assert np.array_equal(memory, want)
    # as an input, and as heat's u0 (copied there: the result is new)
    q = pyrgrid.Problem("poisson", shape=p.shape, rhs="array", iterations=5)
    u, v = np.zeros(p.shape), np.zeros(p.shape)
    pyrgrid.Plan(q, CPU).execute(u, Producer(np.ones(p.shape)))
    pyrgrid.Plan(q, CPU).execute(v, np.ones(p.shape))
    assert np.array_equal(u, v) and u.any()
    memory = p.initial()
    assert np.array_equal(pyrgrid.heat(Producer(memory), dt=1e-3, steps=3, backend="cpu"), want)
    assert np.array_equal(memory, p.initial())


class CudaArray:  # what CuPy and Numba expose
    __cuda_array_interface__ = {"shape": (9, 11), "typestr": "<f8", "data": (0x7f0000000000, False), "version": 3}


class DLPackGPU:  # what a PyTorch or JAX GPU tensor exposes
    def __dlpack__(self, stream=None):
        raise AssertionError("a GPU buffer must not be taken")

    def __dlpack_device__(self):
        return (2, 1)


@pytest.mark.skipif(pyrgrid.backends()["cuda"], reason="a library that reaches GPU memory takes GPU arrays (test_gpu_arrays.py)")
def test_gpu_arrays_without_a_gpu_give_a_buffer_error_saying_how_to_copy():
    # a library that cannot reach GPU memory (no CUDA backend, no GPU) has no way to compute on a GPU array,
    # nor to copy it: copy=False and the default copy=None both end in a BufferError naming the host copies
    p, plan = _plan()
    for gpu, where in ((CudaArray(), r"a CUDA GPU \(__cuda_array_interface__\)"), (DLPackGPU(), "a CUDA GPU 1")):
        for copy in (None, False):
            with pytest.raises(pyrgrid.DeviceArrayError, match=rf"u lives on {where}, and this pyrgrid library cannot reach GPU "
                                                                rf"memory \(built without CUDA, or no GPU usable here\): pass a "
                                                                rf"host copy \(cupy.asnumpy\(x\)") as e:
                plan.execute(gpu, copy=copy)
            assert isinstance(e.value, BufferError) and isinstance(e.value, pyrgrid.UnsupportedError)
        with pytest.raises(BufferError, match="u0 lives on"):
            pyrgrid.heat(gpu, dt=1e-3, steps=3, backend="cpu")
        with pytest.raises(BufferError, match="f lives on"):
            pyrgrid.poisson(np.zeros((9, 11)), gpu, iterations=3, backend="cpu")
        with pytest.raises(BufferError, match=r"initial\['Ez'\] lives on"):
            pyrgrid.maxwell((9, 11), steps=2, initial={"Ez": gpu}, backend="cpu")
    with pytest.raises(pyrgrid.ArgumentError, match="copy = 'yes': use None"):
        plan.execute(p.initial(), copy="yes")
