"""Maxwell's frequency-domain monitors from Python (issue #46 item 3):
result.monitors holds a Monitor per [monitor] key with its frequencies,
complex transforms in NumPy order and a flux monitor's power; a point's
transform equals the DFT of the probe series at that node; the monitors' keys
read back and survive copies and pickles; the spectra are the same under
another plan; refusals are ConfigErrors that say what works."""
import copy
import pickle

import numpy as np
import pytest

import pyrgrid

KEYS = {"boundary.kind": "cpml", "boundary.cpml_cells": 8, "boundary.faces": "x-,x+,y+"}
SOURCE = ["Ez point 30 20 ricker frequency=0.6 delay=1.8"]
MONITORS = {"dft1": "Ez,Hy box 20 10 45 35 freqs=0.3,0.55", "dft2": "Ez point 40 30 freqs=0.2:0.9:8",
            "flux1": "plane x 50 freqs=0.3:0.9:7"}


def run(**kw):
    return pyrgrid.maxwell((53, 71), steps=120, courant=0.6, lengths=(5.2, 7.0), keys=KEYS, sources=SOURCE,
                           monitors=MONITORS, **kw)


def test_monitors_shapes_and_dft():
    r = run(probes=["Ez 40 30"])
    assert set(r.monitors) == {"dft1", "dft2", "flux1"}
    d1 = r.monitors["dft1"]
    assert d1.flux is None and d1.lo == (20, 10) and d1.hi == (45, 35)
    assert set(d1.fields) == {"Ez", "Hy"} and d1.fields["Ez"].shape == (2, 26, 26) and d1.fields["Ez"].dtype == np.complex128
    f1 = r.monitors["flux1"]
    assert f1.axis == "x" and f1.flux.shape == (7,) and np.allclose(f1.freqs, np.linspace(0.3, 0.9, 7))
    assert set(f1.fields) == {"Ez", "Hy"}  # TM: the plane's tangential components
    assert f1.steps == 120
    # the point's transform against the probe series' DFT (Ez at (n + 1) dt)
    d2 = r.monitors["dft2"]
    t = (np.arange(120) + 1.0) * r.dt
    want = np.array([np.sum(r.probes[:, 0] * np.exp(-2j * np.pi * f * t)) * r.dt for f in d2.freqs])
    assert np.allclose(d2.fields["Ez"].reshape(-1), want, rtol=1e-12, atol=1e-12 * abs(want).max())
    # the box holds the point: the same values
    assert r.monitors["dft1"].fields["Ez"][0, 30 - 10, 40 - 20] != 0


def test_same_bits_under_another_plan():
    a = run()
    b = run(method="pyramid", memory="64K", height=4)
    for name, m in a.monitors.items():
        for c, v in m.fields.items():
            assert np.array_equal(v, b.monitors[name].fields[c]), (name, c)
    assert np.array_equal(a.monitors["flux1"].flux, b.monitors["flux1"].flux)


def test_keys_read_back_and_copy():
    p = pyrgrid.Problem("maxwell", shape=(53, 71), lengths=(5.2, 7.0), keys=dict(KEYS, **{f"monitor.{k}": v for k, v in MONITORS.items()}))
    assert p["monitor.dft2"] == "Ez point 40 30 freqs=0.20000000000000001:0.90000000000000002:8"
    assert p["monitor.flux1"].startswith("plane x 50 freqs=")
    for q in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        for k in MONITORS:
            assert q[f"monitor.{k}"] == p[f"monitor.{k}"]


@pytest.mark.parametrize("key,value,needle", [
    ("flux1", "plane x 3 freqs=0.5", "CPML"),
    ("dft1", "Ez point 80 30 freqs=0.5", "outside the grid"),
    ("dft1", "Hz point 30 30 freqs=0.5", "not one of this grid's"),
    ("dft1", "Ez point 30 30 freqs=50", "Nyquist"),
    ("dft1", "Ez point 30 30 freqs=0.01", "more steps"),
    ("dft2", "Ez point 30 30 freqs=0.5", "without gaps"),
])
def test_refusals(key, value, needle):
    with pytest.raises(pyrgrid.ConfigError, match=needle):
        pyrgrid.maxwell((53, 71), steps=120, courant=0.6, lengths=(5.2, 7.0), keys=KEYS, sources=SOURCE, monitors={key: value})
