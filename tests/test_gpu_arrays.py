"""GPU arrays from Python computed on in place (Plan.execute, heat, poisson): CuPy arrays (the CUDA array
interface), PyTorch tensors, and a producer seen only through DLPack (as JAX's arrays are).  Checks that an
in-core CUDA plan updates the caller's array itself (same pointer, no CopyWarning) to the bits the same plan
gives a NumPy array; that the producer's stream is honoured (a non-default stream still writing the field when
the run is called); that copy=False raises BufferError where a copy is needed (an out-of-core budget, the CPU
backend, a strided array) and the default copies through the host with a CopyWarning and the same bits; and
prints the in-place run's time beside a host round trip's for a 4096^2 float heat run.

usage: python3 tests/test_gpu_arrays.py   (PYRGRID_LIBRARY, PYTHONPATH=python as tests/gpuarr.cmake sets them)
Exits 77 where NumPy is missing, no GPU is usable, or neither CuPy nor PyTorch is installed."""
import sys
import time
import warnings

try:
    import numpy as np
except ImportError:
    print("numpy missing for this interpreter: skipped")
    sys.exit(77)
import pyrgrid

if not pyrgrid.backends()["cuda"]:
    print("no usable GPU (or a library without CUDA): skipped")
    sys.exit(77)
try:
    import cupy
except Exception:  # not installed, or no driver it can use
    cupy = None
try:
    import torch
    if not torch.cuda.is_available():
        torch = None
except Exception:
    torch = None
if cupy is None and torch is None:
    print("neither CuPy nor PyTorch with CUDA: skipped")
    sys.exit(77)

failures = []


def check(cond, message):
    print(("ok   " if cond else "FAIL ") + message)
    if not cond:
        failures.append(message)


def same_bits(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def heat_problem(shape, dtype, steps):
    h2 = sum(1.0 / (1.0 / (n - 1)) ** 2 for n in shape)
    return pyrgrid.Problem("heat", shape=shape, dtype=dtype, dt=0.45 / h2, steps=steps)


IN_CORE = dict(backend="cuda", method="naive")


def host_run(problem, u0, **options):
    """The same plan on a NumPy array: the bits every GPU array must end in."""
    u = np.array(u0, copy=True)
    with pyrgrid.Plan(problem, pyrgrid.Options(**options)) as plan:
        plan.execute(u)
    return u


def no_copy_warning():
    w = warnings.catch_warnings()
    w.__enter__()
    warnings.simplefilter("error", pyrgrid.CopyWarning)
    return w


rng = np.random.default_rng(3)
cases = [((301, 203), np.float32, 57), ((203, 301), np.float64, 40), ((29, 38, 45), np.float32, 23), ((29, 38, 45), np.float64, 17)]

# ---------------------------------------------------------------- in place, no copy
for shape, dtype, steps in cases:
    p = heat_problem(shape, dtype, steps)
    u0 = rng.random(shape).astype(dtype)
    want = host_run(p, u0, **IN_CORE)
    with pyrgrid.Plan(p, pyrgrid.Options(**IN_CORE)) as plan:
        if cupy is not None:
            u = cupy.asarray(u0)
            ptr = u.data.ptr
            w = no_copy_warning()
            try:
                plan.execute(u)
            finally:
                w.__exit__(None, None, None)
            check(u.data.ptr == ptr and same_bits(cupy.asnumpy(u), want), f"cupy heat {shape} {np.dtype(dtype)}: in place, bits equal")
        if torch is not None:
            t = torch.from_numpy(u0).cuda()
            ptr = t.data_ptr()
            w = no_copy_warning()
            try:
                plan.execute(t)
            finally:
                w.__exit__(None, None, None)
            check(t.data_ptr() == ptr and same_bits(t.cpu().numpy(), want), f"torch heat {shape} {np.dtype(dtype)}: in place, bits equal")

            class DLPackOnly:  # what a JAX array offers: DLPack and nothing else
                def __init__(self, x):
                    self._x = x

                def __dlpack__(self, stream=None):
                    return self._x.__dlpack__(stream=stream)

                def __dlpack_device__(self):
                    return self._x.__dlpack_device__()
            t = torch.from_numpy(u0).cuda()
            w = no_copy_warning()
            try:
                plan.execute(DLPackOnly(t))
            finally:
                w.__exit__(None, None, None)
            check(same_bits(t.cpu().numpy(), want), f"DLPack-only producer heat {shape} {np.dtype(dtype)}: in place, bits equal")

# ---------------------------------------------------------------- the producer's stream
shape, dtype = (2049, 2049), np.float32
p = heat_problem(shape, dtype, 20)
u0 = rng.random(shape).astype(dtype)
want = host_run(p, u0, **IN_CORE)
with pyrgrid.Plan(p, pyrgrid.Options(**IN_CORE)) as plan:
    if cupy is not None:
        s = cupy.cuda.Stream(non_blocking=True)
        src = cupy.asarray(u0)
        a = cupy.ones((4096, 4096), dtype=cupy.float32)
        cupy.cuda.Device().synchronize()
        with s:
            u = cupy.zeros(shape, dtype=dtype)
            for _ in range(8):  # work that keeps the stream busy, so that the write below is still queued
                a = a @ a * cupy.float32(1e-4)
            u[...] = src  # the initial field, written on s just before the call
            plan.execute(u)  # the interface names s as the array's stream
            got = cupy.asnumpy(u)  # read on s after the call: the result is there
        check(same_bits(got, want), "cupy: the run waits for the producer's stream and returns with the result written")
    if torch is not None:
        s = torch.cuda.Stream()
        src = torch.from_numpy(u0).cuda()
        a = torch.ones((4096, 4096), device="cuda")
        torch.cuda.synchronize()
        with torch.cuda.stream(s):
            t = torch.zeros(shape, dtype=torch.float32, device="cuda")
            for _ in range(8):
                a = a @ a * 1e-4
            t.copy_(src)
            plan.execute(t)
            got = t.cpu().numpy()
        check(same_bits(got, want), "torch: the run waits for the producer's stream (DLPack: the consumer's stream made to wait)")

# ---------------------------------------------------------------- where a copy is needed
shape, dtype = (257, 193), np.float64
p = heat_problem(shape, dtype, 40)
u0 = rng.random(shape).astype(dtype)
make = (lambda a: cupy.asarray(a)) if cupy is not None else (lambda a: torch.from_numpy(a).cuda())
back = (lambda x: cupy.asnumpy(x)) if cupy is not None else (lambda x: x.cpu().numpy())
for label, options in (("an out-of-core budget", dict(backend="cuda", method="trivial", memory="128KiB")),
                       ("the CPU backend", dict(backend="cpu"))):
    want = host_run(p, u0, **options)
    with pyrgrid.Plan(p, pyrgrid.Options(**options)) as plan:
        u = make(u0)
        try:
            plan.execute(u, copy=False)
            check(False, f"copy=False with {label}: BufferError expected")
        except BufferError as e:
            check(isinstance(e, pyrgrid.DeviceArrayError) and "copy=None (the default) copies it" in str(e),
                  f"copy=False with {label}: BufferError ({e})")
        check(same_bits(back(u), u0), f"copy=False with {label}: the array left as it was")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", pyrgrid.CopyWarning)
            plan.execute(u)
        check(any(issubclass(c.category, pyrgrid.CopyWarning) and "copied through host memory" in str(c.message) for c in caught),
              f"copy=None with {label}: a CopyWarning")
        check(same_bits(back(u), want), f"copy=None with {label}: the result copied back into the array, bits equal")
if cupy is not None:
    want = host_run(p, u0, **IN_CORE)
    with pyrgrid.Plan(p, pyrgrid.Options(**IN_CORE)) as plan:
        wide = cupy.zeros((shape[0], 2 * shape[1]), dtype=dtype)
        u = wide[:, ::2]
        u[...] = cupy.asarray(u0)
        try:
            plan.execute(u, copy=False)
            check(False, "copy=False with a strided array: BufferError expected")
        except BufferError as e:
            check("not C-contiguous" in str(e), f"copy=False with a strided array: BufferError ({e})")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pyrgrid.CopyWarning)
            plan.execute(u)
        check(same_bits(cupy.asnumpy(u), want) and not cupy.asnumpy(wide[:, 1::2]).any(),
              "a strided array: the result written back into its elements only")
        try:
            plan.execute(cupy.asarray(u0.astype(np.float32)))
            check(False, "a float32 array for a float64 plan: refused")
        except pyrgrid.DeviceArrayError as e:
            check("astype(float64)" in str(e), f"a float32 array for a float64 plan: refused ({e})")

# ---------------------------------------------------------------- heat, poisson, Maxwell
if cupy is not None:
    shape = (257, 193)
    u0 = rng.random(shape)
    want = pyrgrid.heat(u0, dt=1e-6, steps=30, **IN_CORE)
    g0 = cupy.asarray(u0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pyrgrid.CopyWarning)
        got = pyrgrid.heat(g0, dt=1e-6, steps=30, **IN_CORE)
    check(isinstance(got, cupy.ndarray) and same_bits(cupy.asnumpy(got), want) and same_bits(cupy.asnumpy(g0), u0),
          "heat(cupy u0): a new CuPy array, bits equal, u0 unchanged")
    f = rng.random(shape)
    want, info = pyrgrid.poisson(u0, f, iterations=300, tolerance=1e-12, **IN_CORE)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pyrgrid.CopyWarning)
        got, ginfo = pyrgrid.poisson(cupy.asarray(u0), cupy.asarray(f), iterations=300, tolerance=1e-12, **IN_CORE)
    check(isinstance(got, cupy.ndarray) and same_bits(cupy.asnumpy(got), want) and ginfo.steps == info.steps,
          "poisson(cupy u0, cupy f): bits and sweeps equal")
    mp = pyrgrid.Problem("maxwell", shape=(121, 97), dtype=np.float64)
    for k, v in {"scheme.steps": 80, "scheme.courant": 0.5, "boundary.kind": "cpml", "material.shape1": "box 0.3 0.6 0.2 0.5 eps_r=4",
                 "source.source1": "Ez point 40 60 ricker frequency=2 delay=0.6"}.items():
        mp.set(k, v)
    host = mp.initial_fields()
    dev = {k: cupy.asarray(v) for k, v in host.items()}
    with pyrgrid.Plan(mp, pyrgrid.Options(**IN_CORE)) as plan:
        plan.execute(host)
        with warnings.catch_warnings():
            warnings.simplefilter("error", pyrgrid.CopyWarning)
            plan.execute(dev)
    check(all(same_bits(cupy.asnumpy(dev[k]), host[k]) for k in host), "maxwell (CPML, materials, a source) on CuPy fields: bits equal")

# ---------------------------------------------------------------- time: in place vs a host round trip
shape, dtype, steps = (4096, 4096), np.float32, 200
p = heat_problem(shape, dtype, steps)
u0 = rng.random(shape).astype(dtype)
make = (lambda a: cupy.asarray(a)) if cupy is not None else (lambda a: torch.from_numpy(a).cuda())
back = (lambda x: cupy.asnumpy(x)) if cupy is not None else (lambda x: x.cpu().numpy())
sync = (lambda: cupy.cuda.Device().synchronize()) if cupy is not None else torch.cuda.synchronize
with pyrgrid.Plan(p, pyrgrid.Options(**IN_CORE)) as plan:
    u = make(u0)
    plan.execute(u)  # warm-up: the device's context and kernels
    u = make(u0)
    sync()
    t0 = time.perf_counter()
    plan.execute(u)
    in_place = time.perf_counter() - t0
    v = make(u0)
    sync()
    t0 = time.perf_counter()
    h = back(v)
    plan.execute(h)
    v2 = make(h)
    sync()
    round_trip = time.perf_counter() - t0
    check(same_bits(back(u), back(v2)), "4096^2 float heat: the in-place run and the host round trip agree")
print(f"time 4096^2 float heat, {steps} steps ({'cupy' if cupy is not None else 'torch'}): in place {in_place * 1e3:.1f} ms, "
      f"host round trip (device -> host, run, host -> device) {round_trip * 1e3:.1f} ms")

print(f"{len(failures)} failure(s)" if failures else "all GPU array checks passed")
sys.exit(1 if failures else 0)
