"""Maxwell's near-to-far-field transform from Python (issue #46 item 4):
MaxwellResult.farfield over a box of flux monitors equals the library's
pyr_spectra_farfield (the C transform, called here on the plan's spectra) to
rounding; a 2D TM line source's far-field pattern is isotropic to 2% and its
integral is the power out of the box (the faces' own fluxes) to 2%; refusals."""
import ctypes

import numpy as np
import pytest

import pyrgrid
from pyrgrid import _core

BOX = {"flux1": "plane x 25 25 55 freqs=0.4,0.5,0.6", "flux2": "plane x 55 25 55 freqs=0.4,0.5,0.6",
       "flux3": "plane y 25 25 55 freqs=0.4,0.5,0.6", "flux4": "plane y 55 25 55 freqs=0.4,0.5,0.6"}
KEYS = {"boundary.kind": "cpml", "boundary.cpml_cells": 12, "scheme.steps": 250, "scheme.courant": 0.9}
SOURCE = "Ez point 40 40 ricker frequency=0.8 delay=2"


def problem():
    p = pyrgrid.Problem("maxwell", shape=(81, 81), lengths=(4.0, 4.0))
    for k, v in KEYS.items():
        p.set(k, v)
    p.set("source.source1", SOURCE)
    for k, v in BOX.items():
        p.set("monitor." + k, v)
    return p


def test_farfield_equals_the_library_and_is_isotropic():
    r = pyrgrid.maxwell(problem())
    phi = np.linspace(0, 2 * np.pi, 72, endpoint=False)
    ff = r.farfield(["flux1", "flux2", "flux3", "flux4"], phi, r=7.5)
    assert ff.power.shape == (3, 72) and ff.E.shape == (3, 72, 3) and ff.theta is None
    # the same run through a Plan, its spectra given to the C transform
    p = problem()
    with pyrgrid.Plan(p, pyrgrid.Options()) as plan:
        plan.execute(p.initial_fields())
        power, re, im = np.zeros(3 * 72), np.zeros(3 * 72 * 6), np.zeros(3 * 72 * 6)
        surface = (ctypes.c_int * 4)(0, 1, 2, 3)
        d = _core._DOUBLES
        _core.check(_core.lib.pyr_spectra_farfield(p._h, plan._spectra, 4, surface, 72, None, phi.ctypes.data_as(d), 7.5,
                                                   power.ctypes.data_as(d), re.ctypes.data_as(d), im.ctypes.data_as(d)))
    power = power.reshape(3, 72)
    fields = (re + 1j * im).reshape(3, 72, 6)
    assert np.allclose(ff.power, power, rtol=1e-11, atol=0)
    scale = np.abs(fields).max()
    assert np.allclose(ff.E, fields[..., :3], rtol=0, atol=1e-11 * scale)
    assert np.allclose(ff.H, fields[..., 3:], rtol=0, atol=1e-11 * scale)
    # an independent reference: a line source radiates the same in every direction, and what it radiates crosses the box
    assert np.all(ff.power.max(axis=1) / ff.power.min(axis=1) - 1 <= 0.02)
    out = -r.monitors["flux1"].flux + r.monitors["flux2"].flux - r.monitors["flux3"].flux + r.monitors["flux4"].flux
    total = ff.power.sum(axis=1) * 2 * np.pi / 72
    assert np.all(np.abs(total / out - 1) <= 0.02), (total, out)


def test_farfield_refusals():
    r = pyrgrid.maxwell(problem())
    phi = [0.0, 1.0]
    with pytest.raises(pyrgrid.ArgumentError, match="a pair of planes per axis"):
        r.farfield(["flux1", "flux2", "flux3"], phi)
    with pytest.raises(pyrgrid.ArgumentError, match="not monitors of this run"):
        r.farfield(["flux1", "flux2", "flux3", "flux9"], phi)
    with pytest.raises(pyrgrid.ArgumentError, match="none for a 2D one"):
        r.farfield(["flux1", "flux2", "flux3", "flux4"], phi, theta=[1.0, 1.0])
    with pytest.raises(pyrgrid.ArgumentError, match="r > 0"):
        r.farfield(["flux1", "flux2", "flux3", "flux4"], phi, r=-1)
    p = problem()
    p.set("monitor.flux4", "plane y 55 25 54 freqs=0.4,0.5,0.6")
    with pytest.raises(pyrgrid.ArgumentError, match="closed"):
        pyrgrid.maxwell(p).farfield(["flux1", "flux2", "flux3", "flux4"], phi)
