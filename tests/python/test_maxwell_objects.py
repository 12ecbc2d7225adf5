"""Maxwell's sources, probes, plane waves and monitors as Python objects, and
the flux spectra as a PNG (issue #46 item 6):
- each object's text is the problem file's line (hand-written here), and
  Problem.set takes the object as that text;
- a run given the objects (physical coordinates) is the same bits as the
  problem file's run (node indices): fields, probes, spectra;
- refusals: ArgumentErrors that say what works, ConfigErrors off the grid;
- MaxwellResult.plot_spectra: the PNG has its title, axis labels and tick
  labels where they belong, and its line follows the spectrum (the slab's
  Fabry-Perot transmittance, read back from the pixels)."""
from pathlib import Path

import numpy as np
import pytest

import pyrgrid
from pyrgrid._extra import DftRegion, FluxRegion, PlaneWave, Probe, Source

SOURCE = Path(__file__).resolve().parents[2]
SLAB = SOURCE / "examples" / "maxwell_slab_spectrum.ini"
EMPTY = {"material.shape1": "box 0.9975 1.4925 -1 1 eps_r=1"}


def test_texts_are_the_problem_files():
    assert Source("Ey", at=((0.4, 0), (0.4, 0.3)), width=0.2, delay=1.0).text() == "Ey line at 0.4 0.0 0.4 0.3 gaussian width=0.2 delay=1.0"
    assert str(Source("Ez", node=(20, 15), waveform="ricker", frequency=2, amplitude=0.5)) == \
        "Ez point 20 15 ricker amplitude=0.5 frequency=2.0"
    assert Source("Ez", at=(1.0, 0.75, 0.5), waveform="sine", frequency=0.3).text() == "Ez point at 1.0 0.75 0.5 sine frequency=0.3"
    assert Probe("Hy", at=(1.275, 1.0)).text() == "Hy at 1.275 1.0"
    assert Probe("Ez", node=(30, 15)).text() == "Ez 30 15"
    assert PlaneWave("Ez", along="+x", at=((2, 2), (8, 8)), width=0.3, delay=1.2).text() == \
        "Ez along +x box at 2.0 2.0 8.0 8.0 gaussian width=0.3 delay=1.2"
    assert PlaneWave("Ey", along="-y", node=((10, 8), (30, 22)), tilt=(30, "x"), waveform="sine", frequency=0.5, width=4).text() == \
        "Ey along -y tilt 30.0 x box 10 8 30 22 sine frequency=0.5 width=4.0"
    assert DftRegion(("Ey", "Hz"), at=((0.5, 0), (1.5, 0.3)), freqs=[0.5, 0.7]).text() == "Ey,Hz box at 0.5 0.0 1.5 0.3 freqs=0.5,0.7"
    assert DftRegion("Ez", at=(1.2, 0.1), freq_range=(0.2, 1.0, 41)).text() == "Ez point at 1.2 0.1 freqs=0.2:1.0:41"
    assert DftRegion("Ez", plane="y", node=25, span=[(12, 60)], freqs=[0.5]).text() == "Ez plane y 25 12 60 freqs=0.5"
    assert FluxRegion("x", at=0.6, freq_range=(0.2, 1.0, 41)).text() == "plane x at 0.6 freqs=0.2:1.0:41"
    assert FluxRegion("z", node=9, span=[(6, 10), (6, 9)], freqs=np.array([0.9])).text() == "plane z 9 6 10 6 9 freqs=0.9"
    # Problem.set takes an object as its text: the keys read back as the index form does
    p = pyrgrid.Problem.from_file(SLAB)
    q = pyrgrid.Problem.from_file(SLAB)
    p.set("probe.probe1", Probe("Ey", at=(1.5, 0.15)))
    q.set("probe.probe1", "Ey 150 1")
    p.set("monitor.flux3", FluxRegion("x", at=2.0, freqs=[0.5]))
    q.set("monitor.flux3", "plane x 200 freqs=0.5")
    for k in ("probe.probe1", "monitor.flux3"):
        assert p.get(k) == q.get(k)


def _same(a, b):
    assert set(a) == set(b)
    for k in a:
        assert a[k].tobytes() == b[k].tobytes(), k
    assert a.probes.tobytes() == b.probes.tobytes()
    assert set(a.monitors) == set(b.monitors)
    for name, m in a.monitors.items():
        n = b.monitors[name]
        assert m.lo == n.lo and m.hi == n.hi and m.freqs.tobytes() == n.freqs.tobytes(), name
        assert (m.flux is None) == (n.flux is None) and (m.flux is None or m.flux.tobytes() == n.flux.tobytes()), name
        for c in m.fields:
            assert m.fields[c].tobytes() == n.fields[c].tobytes(), (name, c)


def test_objects_run_as_the_file():
    # the file's lines in node indices, and the same places in physical coordinates (h_x = 0.01, h_y = 0.1;
    # Ey sits half a cell along y: y = 0.15 is its node 1)
    by_file = pyrgrid.maxwell(SLAB, steps=600, probes=["Ey 150 1"])
    objects = pyrgrid.maxwell(SLAB, steps=600, sources=[Source("Ey", at=((0.4, 0), (0.4, 0.3)), width=0.2, delay=1.0)],
                              probes=[Probe("Ey", at=(1.5, 0.15))],
                              monitors=[FluxRegion("x", at=0.6, freq_range=(0.2, 1.0, 41)),
                                        FluxRegion("x", at=1.8, freq_range=(0.2, 1.0, 41)),
                                        DftRegion("Ey", at=(1.2, 0.1), freqs=[0.5])])
    assert np.abs(by_file.probes).max() > 0.1 and by_file.monitors["flux2"].flux.max() > 0
    _same(by_file, objects)
    # a dict of objects by name, and the strings beside objects
    named = pyrgrid.maxwell(SLAB, steps=600, sources=["Ey line 40 0 40 2 gaussian width=0.2 delay=1.0"], probes=[Probe("Ey", node=(150, 1))],
                            monitors={"flux1": FluxRegion("x", node=60, freq_range=(0.2, 1.0, 41)), "flux2": "plane x 180 freqs=0.2:1.0:41",
                                      "dft1": DftRegion("Ey", node=(120, 1), freqs=[0.5])})
    _same(by_file, named)


def test_plane_wave_object_runs_as_the_line():
    keys = {"boundary.kind": "cpml", "boundary.cpml_cells": 10, "material.shape1": "sphere 2.5 2.5 0.5 eps_r=4"}
    a = pyrgrid.maxwell((101, 101), lengths=(5, 5), steps=150, courant=0.5,
                        keys=dict(keys, **{"source.planewave1": "Ez along +x box 30 30 70 70 gaussian width=0.3 delay=1.2"}),
                        probes=["Ez 20 50", "Ez 50 50"])
    b = pyrgrid.maxwell((101, 101), lengths=(5, 5), steps=150, courant=0.5, keys=keys,
                        sources=[PlaneWave("Ez", along="+x", at=((1.5, 1.5), (3.5, 3.5)), width=0.3, delay=1.2)],
                        probes=[Probe("Ez", at=(1.0, 2.5)), Probe("Ez", at=(2.5, 2.5))])
    assert np.abs(a.probes[:, 1]).max() > 0.1
    _same(a, b)


def test_refusals():
    with pytest.raises(pyrgrid.ArgumentError, match="at= .* or node="):
        Source("Ez", at=(1, 1), node=(1, 1))
    with pytest.raises(pyrgrid.ArgumentError, match="at= .* or node="):
        Probe("Ez")
    with pytest.raises(pyrgrid.ArgumentError, match="use 'Ex'"):
        Probe("Ew", at=(1, 1))
    with pytest.raises(pyrgrid.ArgumentError, match="integers >= 0"):
        Probe("Ez", node=(1.5, 2))
    with pytest.raises(pyrgrid.ArgumentError, match="finite"):
        Probe("Ez", at=(np.nan, 2))
    with pytest.raises(pyrgrid.ArgumentError, match="two corners"):
        PlaneWave("Ez", along="+x", at=(1, 2), width=1)
    with pytest.raises(pyrgrid.ArgumentError, match="along="):
        PlaneWave("Ez", along="+w", at=((1, 1), (2, 2)), width=1)
    with pytest.raises(pyrgrid.ArgumentError, match="freq_range"):
        FluxRegion("x", at=0.5)
    with pytest.raises(pyrgrid.ArgumentError, match="waveform"):
        Source("Ez", at=(1, 1), waveform="square")
    with pytest.raises(pyrgrid.ArgumentError, match="give it to probes="):
        pyrgrid.maxwell(SLAB, steps=10, sources=[Probe("Ey", at=(1, 0.1))])
    with pytest.raises(pyrgrid.ArgumentError, match="DftRegion and FluxRegion"):
        pyrgrid.maxwell(SLAB, steps=10, monitors=["plane x 60 freqs=0.5"])
    with pytest.raises(pyrgrid.ArgumentError, match="named flux1"):
        pyrgrid.maxwell(SLAB, steps=10, monitors={"dft3": FluxRegion("x", at=0.6, freqs=[0.5])})
    # off the grid: the library's refusal, with the grid's extent
    with pytest.raises(pyrgrid.ConfigError, match=r"off the grid, which spans x = 0 \.\. 2\.4"):
        pyrgrid.maxwell(SLAB, steps=10, probes=[Probe("Ey", at=(2.5, 0.1))])


def _read_png(path):
    image = pytest.importorskip("matplotlib.image")
    a = image.imread(str(path))
    if a.dtype != np.uint8:
        a = np.round(a * 255).astype(np.int32)
    return a[..., :3].astype(np.int32)


def test_plot_spectra_png(tmp_path):
    slab = pyrgrid.maxwell(SLAB)
    empty = pyrgrid.maxwell(SLAB, keys=EMPTY)
    out = tmp_path / "T.png"
    slab.plot_spectra(out, ["flux2"], reference=empty, width=900)
    rgb = _read_png(out)
    h, w, _ = rgb.shape
    assert (w, h) == (900, 600)
    dark = (rgb.max(axis=2) < 110)
    # text where the labels are: the title above the frame, the x label and ticks below, the y label at the left
    assert dark[:35, w // 4: 3 * w // 4].sum() > 100, "no title"
    assert dark[h - 45:, w // 4: 3 * w // 4].sum() > 100, "no x label"
    assert dark[h // 4: 3 * h // 4, :30].sum() > 100, "no y label"
    assert dark[h - 80: h - 45, 60:].sum() > 200, "no tick labels on x"
    # the line: the first series' colour (blue, saturated), one run of pixels per column away from the legend
    blue = (rgb[..., 2] - rgb[..., 0] > 60) & (rgb[..., 2] > 120)
    cols, rows = [], []
    for c in range(w):
        r = np.nonzero(blue[:, c])[0]
        if r.size == 0 or r.max() - r.min() > r.size + 2:  # none, or two runs (the legend's sample above the line)
            continue
        cols.append(c)
        rows.append(r.mean())
    cols, rows = np.array(cols), np.array(rows)
    assert cols.size > 500, f"the line covers {cols.size} columns"
    f = slab.monitors["flux2"].freqs
    T = slab.monitors["flux2"].flux / empty.monitors["flux2"].flux
    fc = f[0] + (cols - cols.min()) / (cols.max() - cols.min()) * (f[-1] - f[0])
    tc = np.interp(fc, f, T)
    # the pixel row is a falling linear function of T (y grows downwards): fit and check the residuals
    A = np.stack([np.ones_like(tc), tc], axis=1)
    coef, *_ = np.linalg.lstsq(A, rows, rcond=None)
    resid = rows - A @ coef
    assert coef[1] < 0 and np.corrcoef(tc, rows)[0, 1] < -0.995
    assert np.abs(resid).max() < 4, f"the line strays {np.abs(resid).max():.1f} px from the spectrum"
    # the plotted range is the spectrum's: ~T's span over the frame's height (a 0.36 swing spans most of it)
    assert -coef[1] * (T.max() - T.min()) > 0.6 * h
    # power spectra (no reference), several monitors: a line per monitor
    out2 = tmp_path / "P.png"
    slab.plot_spectra(out2)
    assert out2.stat().st_size > 1000
    with pytest.raises(pyrgrid.ArgumentError, match="not a flux monitor"):
        slab.plot_spectra(tmp_path / "x.png", ["dft1"])
    with pytest.raises(pyrgrid.ArgumentError, match="frequencies differ"):
        slab.plot_spectra(tmp_path / "x.png", ["flux2"], reference=pyrgrid.maxwell(SLAB, steps=600, keys={"monitor.flux2": "plane x 170 freqs=0.5"}))


def test_positions_example_is_the_index_file():
    """examples/maxwell_slab_positions.ini (physical coordinates) runs as examples/maxwell_slab_spectrum.ini."""
    a = pyrgrid.maxwell(SOURCE / "examples" / "maxwell_slab_positions.ini", steps=600)
    b = pyrgrid.maxwell(SLAB, steps=600, probes=["Ey 180 1"])
    _same(a, b)
