"""A per-node material map from Python: `keys={"material.map": path, "material.labelN": ...}`
gives the bits of `pyrgrid run` of the problem file with the same map, and of the dispersive
shapes the map is drawn from (boxes rasterised as the library does: node i at x = i h, inside
when lo <= x <= hi); an undefined label and a float map are refused."""
import numpy as np
import pytest

import pyrgrid
from test_maxwell import cli_probes, write_ini  # the program's problem file and probes' CSV, as test_maxwell makes and reads them


BASE = {"grid.dims": 2, "grid.nx": 41, "grid.ny": 31, "grid.lx": 2.0, "grid.ly": 1.5, "scheme.equation": "maxwell",
        "scheme.courant": 0.5, "scheme.steps": 60, "boundary.kind": "cpml", "boundary.cpml_cells": 6,
        "source.source1": "Ez point 10 15 ricker frequency=2 delay=0.6", "probe.probe1": "Ez 30 15", "probe.probe2": "Hy 20 7"}
# two boxes, their edges between nodes (h = 0.05): a Drude one and a Lorentz + Debye one
BOXES = [((0.82, 1.18, 0.52, 0.98), "eps_r=2 drude=1.5 0.1"), ((1.23, 1.47, 0.33, 1.12), "eps_r=1.5 sigma=0.2 lorentz=1.2 2 0.3 debye=2 0.5")]


def label_map():
    h = 0.05
    x, y = np.arange(41) * h, np.arange(31) * h
    m = np.zeros((31, 41), dtype=np.int16)
    for k, ((x0, x1, y0, y1), _) in enumerate(BOXES):
        m[np.ix_((y >= y0) & (y <= y1), (x >= x0) & (x <= x1))] = k + 1
    return m


def test_map_equals_cli_and_shapes(cli, tmp_path):
    np.save(tmp_path / "labels.npy", label_map())
    shapes = dict(BASE, **{f"material.shape{k + 1}": f"box {x0} {x1} {y0} {y1} {opts}" for k, ((x0, x1, y0, y1), opts) in enumerate(BOXES)})
    labels = dict(BASE, **{"material.map": "labels.npy"}, **{f"material.label{k + 1}": opts for k, (_, opts) in enumerate(BOXES)})
    write_ini(tmp_path / "shapes.ini", shapes)
    write_ini(tmp_path / "map.ini", labels)
    for name in ("shapes", "map"):
        cli("run", f"{name}.ini", "-q", "--set", "run.backend=cpu", "--set", f"output.field={name}.npy", "--set", f"output.probes={name}.csv",
            cwd=tmp_path)
    keys = dict(labels, **{"material.map": str(tmp_path / "labels.npy")})
    r = pyrgrid.maxwell((31, 41), lengths=(1.5, 2.0), steps=60, courant=0.5, keys=keys, backend="cpu", method="pyramid", memory="64K")
    assert tuple(r) == ("Ez", "Hx", "Hy") and r["Ez"].any()
    for c in r:
        assert np.array_equal(r[c], np.load(tmp_path / f"map_{c}.npy")), c
        assert np.array_equal(r[c], np.load(tmp_path / f"shapes_{c}.npy")), c
    assert np.array_equal(r.probes, cli_probes(tmp_path / "map.csv")[2])
    assert np.array_equal(r.probes, cli_probes(tmp_path / "shapes.csv")[2])


def test_map_refusals(tmp_path):
    m = label_map()
    np.save(tmp_path / "labels.npy", m)
    keys = dict(BASE, **{"material.map": str(tmp_path / "labels.npy"), "material.label1": BOXES[0][1]})
    with pytest.raises(pyrgrid.ConfigError, match=r"label 2 \(first at index \[\d+, \d+\]\) is not defined"):
        pyrgrid.maxwell((31, 41), lengths=(1.5, 2.0), steps=5, keys=keys, backend="cpu")
    np.save(tmp_path / "float.npy", m.astype(np.float64))
    keys = dict(keys, **{"material.map": str(tmp_path / "float.npy"), "material.label2": BOXES[1][1]})
    with pytest.raises(pyrgrid.FormatError, match="needs an integer per node"):
        pyrgrid.maxwell((31, 41), lengths=(1.5, 2.0), steps=5, keys=keys, backend="cpu")
