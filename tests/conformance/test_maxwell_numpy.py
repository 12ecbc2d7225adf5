#!/usr/bin/python3
"""Independent reference of the Maxwell (Yee) scheme (issue 21): a
straightforward NumPy implementation of the equations in include/pyrgrid.h
(README "Maxwell's equations"), written from them and not from the C code,
against `pyrgrid run` on small 2D (TM, TE) and 3D problems in double: random
initial E and H, PEC walls, vacuum or random per-node eps_r (with sigma and
mu_r), CPML layers, soft sources and probes.  Every component and every probe
value must agree to 1e-12 relative (to the largest magnitude).

    test_maxwell_numpy.py PYRGRID WORKDIR
"""
import math
import os
import subprocess
import sys

import numpy as np

TOL = 1e-12


def waveform(kind, t, amplitude=1.0, frequency=0.0, width=0.0, delay=0.0):
    tau = t - delay
    if kind == "gaussian":
        return amplitude * math.exp(-(tau / width) ** 2)
    if kind == "ricker":
        q = math.pi * frequency * tau
        return amplitude * (1 - 2 * q * q) * math.exp(-q * q)
    ramp = 0.5 * (1 - math.cos(math.pi * t / width)) if width > 0 and t < width else 1.0
    return amplitude * ramp * math.sin(2 * math.pi * frequency * t)


class Yee:
    """Fields as (nz, ny, nx) arrays (2D: nz = 1), axis a of the problem = array axis 2 - a."""

    def __init__(self, n, h, dt, dims, mode, eps, sigma, mu, cpml_cells=0, faces=(), order=3.0, kappa_max=1.0, alpha_max=0.05):
        self.n, self.h, self.dt, self.dims, self.mode = n, h, dt, dims, mode
        shape = (n[2], n[1], n[0])
        self.E = [np.zeros(shape) for _ in range(3)]
        self.H = [np.zeros(shape) for _ in range(3)]
        s = sigma * dt / (2 * eps)
        self.ca = (1 - s) / (1 + s)
        self.cb = (dt / eps) / (1 + s)
        self.dh = dt / mu
        # CPML profiles per axis, at integer (E) and half-integer (H) positions
        self.prof = {}
        for a in range(dims):
            for half in (0, 1):
                pos = np.arange(n[a]) + 0.5 * half
                last = n[a] - 1
                L = float(cpml_cells)
                depth = np.zeros(n[a])
                if cpml_cells > 0:
                    if (a, 0) in faces:
                        depth = np.where(pos < L, L - pos, depth)
                    if (a, 1) in faces:
                        depth = np.maximum(depth, np.where(pos > last - L, pos - (last - L), 0.0))
                x = depth / L if L > 0 else depth
                smax = 0.8 * (order + 1) / h[a]
                sig = smax * x ** order
                kap = 1 + (kappa_max - 1) * x ** order
                alp = alpha_max * (1 - x)
                b = np.exp(-(sig / kap + alp) * dt)
                with np.errstate(invalid="ignore", divide="ignore"):
                    acoef = np.where(sig > 0, sig / (sig * kap + kap * kap * alp) * (b - 1), 0.0)
                inside = depth > 0
                self.prof[(a, half)] = (np.where(inside, 1 / kap, 1.0), b, acoef, inside)
        self.psi = {}

    def used(self, c):
        if self.dims == 3:
            return True
        return c in (("Hz", "Ex", "Ey") if self.mode == "te" else ("Ez", "Hx", "Hy"))

    def sl(self, a, lo, hi):
        """A slice along problem axis a as an index tuple entry position."""
        return 2 - a, slice(lo, hi)

    def region(self, comp):
        """Index ranges per problem axis where `comp` is updated."""
        own = "xyz".index(comp[1])
        electric = comp[0] == "E"
        r = []
        for a in range(3):
            n = self.n[a]
            if a >= self.dims:
                r.append((0, 1))
            elif electric:
                r.append((0, n - 1) if a == own else (1, n - 1))
            else:
                r.append((0, n) if a == own else (0, n - 1))
        return r

    def deriv(self, comp, G, axis, reg):
        """The difference of G along `axis` at comp's updated nodes, through the CPML there."""
        electric = comp[0] == "E"
        idx = [slice(reg[2 - k][0], reg[2 - k][1]) for k in range(3)]  # array order z, y, x
        shifted = list(idx)
        ax = 2 - axis
        lo, hi = reg[axis]
        if electric:
            shifted[ax] = slice(lo - 1, hi - 1)
            d = (G[tuple(idx)] - G[tuple(shifted)]) * (1 / self.h[axis])
        else:
            shifted[ax] = slice(lo + 1, hi + 1)
            d = (G[tuple(shifted)] - G[tuple(idx)]) * (1 / self.h[axis])
        kinv, b, a, inside = self.prof[(axis, 0 if electric else 1)]
        if not inside.any():
            return d
        key = (comp, axis)
        if key not in self.psi:
            self.psi[key] = np.zeros_like(d)
        bshape = [1, 1, 1]
        bshape[ax] = hi - lo
        kin = inside[lo:hi].reshape(bshape)
        psi = self.psi[key]
        new = b[lo:hi].reshape(bshape) * psi + a[lo:hi].reshape(bshape) * d
        self.psi[key] = np.where(kin, new, psi)
        return np.where(kin, d * kinv[lo:hi].reshape(bshape) + self.psi[key], d)

    def curl(self, comp, F):
        """Terms of curl F for component comp: (c1, c2), None where the axis is missing."""
        ac = "xyz".index(comp[1])
        a1, a2 = (ac + 1) % 3, (ac + 2) % 3
        reg = self.region(comp)
        c1 = self.deriv(comp, F[a2], a1, reg) if a1 < self.dims else None
        c2 = self.deriv(comp, F[a1], a2, reg) if a2 < self.dims else None
        return reg, c1, c2

    def add_sources(self, sources, field, t):
        for comp, nodes, kw in sources:
            if comp[0] != field:
                continue
            F = self.E if field == "E" else self.H
            v = waveform(t=t, **kw)
            for (i, j, k) in nodes:
                F["xyz".index(comp[1])][k, j, i] += v

    def step(self, n, sources):
        """H(n+1/2) from H(n-1/2) and E(n), its sources at (n+1/2) dt; E(n+1), its sources at (n+1) dt."""
        for c in range(3):
            comp = "H" + "xyz"[c]
            if not self.used(comp):
                continue
            reg, c1, c2 = self.curl(comp, self.E)
            idx = tuple(slice(reg[2 - k][0], reg[2 - k][1]) for k in range(3))
            dh = self.dh[idx]
            if c1 is not None and c2 is not None:
                self.H[c][idx] = self.H[c][idx] - dh * (c1 - c2)
            elif c1 is not None:
                self.H[c][idx] = self.H[c][idx] - dh * c1
            else:
                self.H[c][idx] = self.H[c][idx] + dh * c2
        self.add_sources(sources, "H", (n + 0.5) * self.dt)
        for c in range(3):
            comp = "E" + "xyz"[c]
            if not self.used(comp):
                continue
            reg, c1, c2 = self.curl(comp, self.H)
            idx = tuple(slice(reg[2 - k][0], reg[2 - k][1]) for k in range(3))
            ca, cb = self.ca[idx], self.cb[idx]
            if c1 is not None and c2 is not None:
                self.E[c][idx] = ca * self.E[c][idx] + cb * (c1 - c2)
            elif c1 is not None:
                self.E[c][idx] = ca * self.E[c][idx] + cb * c1
            else:
                self.E[c][idx] = ca * self.E[c][idx] - cb * c2
        self.add_sources(sources, "E", (n + 1) * self.dt)

    def get(self, comp):
        return (self.E if comp[0] == "E" else self.H)["xyz".index(comp[1])]


def run_case(pyrgrid, work, name, dims, n, lengths, mode, courant, steps, materials, cpml, sources, probes, seed):
    rng = np.random.default_rng(seed)
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    nn = (n[0], n[1], n[2] if dims == 3 else 1)
    shape = (nn[2], nn[1], nn[0])
    h = [lengths[a] / (nn[a] - 1) if a < dims else 1.0 for a in range(3)]
    dt = courant / math.sqrt(sum(1 / h[a] ** 2 for a in range(dims)))
    eps = np.ones(shape)
    sigma = np.zeros(shape)
    mu = np.ones(shape)
    lines = ["[grid]", f"dims = {dims}", f"nx = {n[0]}", f"ny = {n[1]}", f"lx = {lengths[0]!r}", f"ly = {lengths[1]!r}"]
    if dims == 3:
        lines += [f"nz = {n[2]}", f"lz = {lengths[2]!r}"]
    lines += ["[scheme]", "equation = maxwell", f"courant = {courant!r}", f"steps = {steps}", "precision = double"]
    if dims == 2:
        lines.append(f"mode = {mode}")
    lines += ["[material]"]
    for key, arr, lo, hi in (("eps", eps, 1.0, 6.0), ("sigma", sigma, 0.0, 3.0), ("mu", mu, 1.0, 2.0)):
        if key in materials:
            arr[...] = rng.uniform(lo, hi, shape)
            path = os.path.join(d, key + ".npy")
            np.save(path, arr.reshape(shape[3 - dims:]))
            lines.append(f"{key}_file = {path}")
    sim = Yee(nn, h, dt, dims, mode, eps, sigma, mu, **cpml)
    if cpml:
        names = {(0, 0): "x-", (0, 1): "x+", (1, 0): "y-", (1, 1): "y+", (2, 0): "z-", (2, 1): "z+"}
        lines += ["[boundary]", "kind = cpml", f"cpml_cells = {cpml['cpml_cells']}",
                  "faces = " + ",".join(names[f] for f in sorted(cpml["faces"]))]
        for key in ("order", "kappa_max", "alpha_max"):
            if key in cpml:
                lines.append(f"cpml_{key} = {cpml[key]!r}")
    # random initial E and H, zero where a component is not updated (PEC, the unused last half-cell)
    prefix = os.path.join(d, "init")
    for c in ("Ex", "Ey", "Ez", "Hx", "Hy", "Hz"):
        if not sim.used(c):
            continue
        v = rng.uniform(-1, 1, shape)
        reg = sim.region(c)
        mask = np.zeros(shape, bool)
        mask[tuple(slice(reg[2 - k][0], reg[2 - k][1]) for k in range(3))] = True
        v = np.where(mask, v, 0.0)
        sim.get(c)[...] = v
        np.save(f"{prefix}_{c}.npy", v.reshape(shape[3 - dims:]))
    lines += ["[initial]", "kind = file", f"file = {prefix}"]
    src_list = []
    if sources:
        lines.append("[source]")
        for k, (comp, a, b, kind, kw) in enumerate(sources):
            nodes = []
            for z in range(a[2], b[2] + 1):
                for y in range(a[1], b[1] + 1):
                    for x in range(a[0], b[0] + 1):
                        nodes.append((x, y, z))
            src_list.append((comp, nodes, dict(kind=kind, **kw)))
            idx = lambda p: " ".join(str(p[i]) for i in range(dims))
            opts = " ".join(f"{key}={val!r}" for key, val in kw.items())
            where = f"point {idx(a)}" if a == b else f"line {idx(a)} {idx(b)}"
            lines.append(f"source{k + 1} = {comp} {where} {kind} {opts}")
    if probes:
        lines.append("[probe]")
        for k, (comp, p) in enumerate(probes):
            lines.append(f"probe{k + 1} = {comp} " + " ".join(str(p[i]) for i in range(dims)))
    backend = os.environ.get("PYR_MAXWELL_BACKEND", "cpu")
    lines += ["[run]", f"backend = {backend}", "method = pyramid", "memory = 256K" if backend == "cpu" else "1M", "threads = 2",
              "[output]", "field = out.npy", "probes = probes.csv"]
    ini = os.path.join(d, "problem.ini")
    with open(ini, "w") as f:
        f.write("\n".join(lines) + "\n")
    r = subprocess.run([pyrgrid, "run", ini, "-q"], cwd=d, capture_output=True, text=True)
    if r.returncode != 0:
        print(f"{name}: pyrgrid failed ({r.returncode}): {r.stderr}")
        return False
    series = []
    for s in range(steps):
        sim.step(s, src_list)
        series.append([sim.get(comp)[p[2] if dims == 3 else 0, p[1], p[0]] for comp, p in probes])
    ok = True
    worst = 0.0
    for c in ("Ex", "Ey", "Ez", "Hx", "Hy", "Hz"):
        if not sim.used(c):
            continue
        got = np.load(os.path.join(d, f"out_{c}.npy")).reshape(shape)
        ref = sim.get(c)
        scale = np.abs(ref).max()
        err = np.abs(got - ref).max() / scale if scale > 0 else np.abs(got).max()
        worst = max(worst, err)
        if not err <= TOL:
            print(f"{name}: {c} differs from the NumPy reference by {err:.3e} relative")
            ok = False
    if probes:
        got = np.loadtxt(os.path.join(d, "probes.csv"), delimiter=",", skiprows=1)
        got = got.reshape(steps, -1)
        steps_col, t_col, vals = got[:, 0], got[:, 1], got[:, 2:]
        ref = np.array(series)
        if not (np.array_equal(steps_col, np.arange(1, steps + 1)) and np.allclose(t_col, np.arange(1, steps + 1) * dt, rtol=1e-14)):
            print(f"{name}: probes.csv step/t columns are not 1..{steps} and step * dt")
            ok = False
        scale = np.abs(ref).max()
        err = np.abs(vals - ref).max() / scale
        worst = max(worst, err)
        if not err <= TOL:
            print(f"{name}: probe series differ from the reference by {err:.3e} relative")
            ok = False
    print(f"{name}: {dims}D {mode if dims == 2 else ''} {nn[0]}x{nn[1]}x{nn[2]}, {steps} steps, materials {sorted(materials) or 'vacuum'}, "
          f"cpml {cpml.get('cpml_cells', 0)}, {len(sources)} sources, {len(probes)} probes: max relative difference {worst:.2e}"
          f" {'ok' if ok else 'FAILED'}")
    return ok


def main():
    pyrgrid, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    ok = True
    ok &= run_case(pyrgrid, work, "tm_vacuum", 2, (31, 23), (1.5, 1.1), "tm", 0.9, 60, set(), {}, [], [("Ez", (10, 7)), ("Hy", (20, 3))], 1)
    ok &= run_case(pyrgrid, work, "tm_eps", 2, (29, 26), (1.0, 0.9), "tm", 0.5, 50, {"eps"}, {}, [], [("Hx", (5, 7))], 2)
    ok &= run_case(pyrgrid, work, "te_lossy_cpml", 2, (40, 33), (2.0, 1.6), "te", 0.7, 80, {"eps", "sigma", "mu"},
                   dict(cpml_cells=6, faces={(0, 0), (0, 1), (1, 1)}, kappa_max=3.0),
                   [("Ey", (20, 10, 0), (20, 20, 0), "ricker", dict(amplitude=2.0, frequency=1.5, delay=0.3)),
                    ("Hz", (12, 9, 0), (12, 9, 0), "sine", dict(amplitude=0.5, frequency=2.0, width=0.4))],
                   [("Ey", (20, 15)), ("Hz", (30, 12)), ("Ex", (9, 20))], 3)
    ok &= run_case(pyrgrid, work, "3d_vacuum", 3, (14, 12, 11), (1.0, 0.9, 0.8), None, 0.95, 40, set(), {}, [], [("Ex", (3, 4, 5))], 4)
    ok &= run_case(pyrgrid, work, "3d_eps", 3, (13, 15, 12), (1.2, 1.0, 0.9), None, 0.6, 30, {"eps"}, {}, [], [("Hz", (6, 6, 6))], 5)
    ok &= run_case(pyrgrid, work, "3d_lossy_cpml", 3, (22, 20, 18), (1.0, 1.0, 0.9), None, 0.6, 45, {"eps", "sigma", "mu"},
                   dict(cpml_cells=4, faces={(0, 0), (1, 1), (2, 0), (2, 1)}, order=2.5, kappa_max=2.0),
                   [("Ez", (10, 9, 8), (10, 9, 8), "gaussian", dict(width=0.1, delay=0.2)),
                    ("Hx", (8, 6, 7), (14, 6, 7), "ricker", dict(frequency=2.0, delay=0.1, amplitude=-1.0))],
                   [("Ez", (11, 10, 9)), ("Hy", (7, 12, 6))], 6)
    print("all agree with the NumPy reference" if ok else "DIFFERENCES from the NumPy reference")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
