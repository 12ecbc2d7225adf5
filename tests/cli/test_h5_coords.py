#!/usr/bin/python3
"""HDF5 results that common readers understand (issue 49).

  scales PYRGRID SOURCE_DIR   a 2D heat run with unequal spacings (nx != ny,
      lx != ly) and snapshots, a 3D one and a Maxwell one: every field has
      dimension scales x/y/z (node positions i*h) in NumPy order, units and
      long_name; NAME_series stacks the snapshots and the final field along
      `time` (values t, equal to the snapshots' bits); Maxwell's staggered
      components sit on x_half/y_half; a restart from a snapshot still gives
      the straight run's bits.  Skipped (77) without h5py.
  xarray PYRGRID SOURCE_DIR   xarray.open_dataset(result, engine=h5netcdf and
      netcdf4, each where installed) gives u with coordinates x, y (and
      u_series with time).  Skipped (77) without xarray or either engine.
"""
import os
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(pyrgrid, src, *sets):
    args = [pyrgrid, "run", os.path.join(src, "examples", "heat2d.ini"), "-q", "--set", "output.image="]
    for s in sets:
        args += ["--set", s]
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, f"run {' '.join(sets)}: rc {r.returncode}: {r.stderr}")
    return r


def scale_names(ds):
    return [d[0].name.lstrip("/") if len(d) else None for d in ds.dims]


def scales(pyrgrid, src):
    try:
        import h5py
        import numpy as np
    except ImportError:
        print("h5py missing: skipped")
        return 77
    # 2D with unequal spacings (x: 33 nodes over 1, h = 1/32; y: 21 over 0.5, h = 1/40): a swapped axis shows
    run(pyrgrid, src, "grid.nx=33", "grid.ny=21", "grid.ly=0.5", "scheme.steps=40", "output.every=20", "output.field=a.h5")
    with h5py.File("a.h5") as f:
        u = f["u"]
        check(scale_names(u) == ["y", "x"], f"u's dimension scales: {scale_names(u)}, want ['y', 'x']")
        check(np.array_equal(f["x"][...], np.arange(33) * (1 / 32)), f"x: {f['x'][:4]} ...")
        check(np.array_equal(f["y"][...], np.arange(21) * (0.5 / 20)), f"y: {f['y'][:4]} ...")
        for name in ("x", "y", "u", "u_series", "time"):
            a = f[name].attrs
            check("units" in a and "long_name" in a, f"{name} lacks units or long_name: {dict(a)}")
        check(f["x"].attrs.get("CLASS") == b"DIMENSION_SCALE", f"x is not a dimension scale: {dict(f['x'].attrs)}")
        s = f["u_series"]
        check(s.shape == (2, 21, 33), f"u_series shape {s.shape}")
        check(scale_names(s) == ["time", "y", "x"], f"u_series's dimension scales: {scale_names(s)}")
        check(list(f["step"][...]) == [20, 40], f"step: {f['step'][...]}")
        t20, t40 = f["snapshots/000020"].attrs["t"], f["snapshots/000040"].attrs["t"]
        check(list(f["time"][...]) == [t20, t40], f"time: {f['time'][...]} want {[t20, t40]}")
        check(np.array_equal(s[0], f["snapshots/000020/u"][...]) and np.array_equal(s[1], f["u"][...]),
              "u_series does not hold the snapshots' values")
    # the old layout is still read: a restart from the snapshot at step 20 gives the straight run's bits
    run(pyrgrid, src, "grid.nx=33", "grid.ny=21", "grid.ly=0.5", "scheme.steps=40", "initial.kind=file",
        "initial.file=a.h5", "initial.step=20", "output.field=r.npy")
    run(pyrgrid, src, "grid.nx=33", "grid.ny=21", "grid.ly=0.5", "scheme.steps=40", "output.field=s.npy")
    if os.path.exists("r.npy") and os.path.exists("s.npy"):
        check(np.array_equal(np.load("r.npy"), np.load("s.npy")), "the restart from a.h5 differs from the straight run")
    # 3D without snapshots: the final field alone along time, z y x scales
    r = subprocess.run([pyrgrid, "run", os.path.join(src, "examples", "heat3d.ini"), "-q", "--set", "output.image=",
                        "--set", "grid.nx=9", "--set", "grid.ny=7", "--set", "grid.nz=5", "--set", "scheme.steps=4",
                        "--set", "output.field=c.h5"], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, f"3D run: {r.stderr}")
    if r.returncode == 0:
        with h5py.File("c.h5") as f:
            check(scale_names(f["u"]) == ["z", "y", "x"], f"3D u's scales {scale_names(f['u'])}")
            check(f["u_series"].shape == (1, 5, 7, 9) and f["time"][0] == f.attrs["t"], "3D u_series / time")
    # Maxwell (TE): Ex on (y, x_half), Hz on (y_half, x_half)
    r = subprocess.run([pyrgrid, "run", os.path.join(src, "examples", "maxwell_scatterer.ini"), "-q", "--set",
                        "output.image=/dev/null", "--set", "scheme.steps=4", "--set", "output.field=m.h5"],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, f"Maxwell run: {r.stderr}")
    if r.returncode == 0:
        with h5py.File("m.h5") as f:
            comps = f.attrs["fields"].split()
            for c in comps:
                if c[0] not in "EH" or len(c) != 2:
                    continue
                axis = "xyz".index(c[1])
                want = []
                for a in (1, 0):  # y, x
                    half = (a == axis) if c[0] == "E" else (a != axis)
                    want.append("yx"[1 - a] + ("_half" if half else ""))
                check(scale_names(f[c]) == want, f"Maxwell {c}'s scales {scale_names(f[c])}, want {want}")
            h = f.attrs["h"]
            check(np.allclose(f["x_half"][...], (np.arange(f["x_half"].shape[0]) + 0.5) * h[0]), "x_half")
    return 1 if failures else 0


def xarray_open(pyrgrid, src):
    try:
        import xarray as xr
    except ImportError:
        print("python3-xarray missing (apt-get install python3-xarray): skipped")
        return 77
    engines = []
    for mod, eng in (("h5netcdf", "h5netcdf"), ("netCDF4", "netcdf4")):
        try:
            __import__(mod)
            engines.append(eng)
        except ImportError:
            pass
    if not engines:
        print("neither h5netcdf nor netCDF4 for Python: skipped")
        return 77
    run(pyrgrid, src, "grid.nx=33", "grid.ny=21", "grid.ly=0.5", "scheme.steps=40", "output.every=20", "output.field=a.h5")
    for eng in engines:
        try:
            ds = xr.open_dataset("a.h5", engine=eng)
        except Exception as e:  # the point of the test: any failure to open is one
            check(False, f"xarray.open_dataset(engine={eng}): {e!r}")
            continue
        with ds:
            check(ds["u"].dims == ("y", "x"), f"{eng}: u dims {ds['u'].dims}")
            check("x" in ds.coords and "y" in ds.coords, f"{eng}: coordinates {list(ds.coords)}")
            check(abs(float(ds["x"][-1]) - 1.0) < 1e-12 and abs(float(ds["y"][-1]) - 0.5) < 1e-12,
                  f"{eng}: x, y end at {float(ds['x'][-1])}, {float(ds['y'][-1])}; want 1, 0.5")
            check(ds["u_series"].dims == ("time", "y", "x") and ds.sizes["time"] == 2, f"{eng}: u_series dims")
            last = ds["u_series"].sel(time=ds.attrs["t"])
            check(bool((last == ds["u"]).all()), f"{eng}: u_series at the final time is not u")
            check(ds["u"].attrs.get("units") == "1", f"{eng}: u's units {ds['u'].attrs.get('units')}")
    return 1 if failures else 0


def main():
    mode, pyrgrid, src = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    with tempfile.TemporaryDirectory(prefix="pyr-h5coords-") as d:
        os.chdir(d)
        rc = scales(pyrgrid, src) if mode == "scales" else xarray_open(pyrgrid, src)
    if rc == 0:
        print("ok")
    elif rc == 1:
        print(f"{len(failures)} failure(s)")
    return rc


if __name__ == "__main__":
    sys.exit(main())
