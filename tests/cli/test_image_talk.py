#!/usr/bin/env python3
"""Images fit for a talk from pyrgrid run (issue 49): output.image_width sets
the width of the heat map (and of the 1D plot), a signed field gets the
diverging colour map centred at 0 by default (its zeros in the neutral
colour), the colour bar varies along it, axes are drawn below and left of
the map, output.colormap chooses another map, and output.probes_png plots the
probes' series with a legend; wrong names and sizes are refused before the
run, writing nothing.  PNGs decoded with PIL.   usage: test_image_talk.py PYRGRID SOURCE_DIR"""
import os
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

BIN, SRC = sys.argv[1], sys.argv[2]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def read_png(path):
    """(height, width, 3) uint8 array."""
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))


def map_box(img):
    """The map's pixels inside its frame (90, 90, 90), the leftmost framed
    box: its columns and rows."""
    frame = (img == np.array([90, 90, 90], dtype=np.uint8)).all(axis=2)
    cols = np.nonzero(frame.sum(axis=0) > 50)[0]
    left = cols[0]
    right = next(c for c in cols if c > left + 50)
    rows = np.nonzero(frame[:, left + 1:right].sum(axis=1) > (right - left) // 2)[0]
    return left + 1, right - 1, rows[0] + 1, rows[-1] - 1


def coloured(img):
    i = img.astype(int)
    return (abs(i[..., 0] - i[..., 2]) > 40) | (abs(i[..., 0] - i[..., 1]) > 40)


def dark(img):
    return (img < 80).all(axis=2)


def run(*sets, expect=0):
    args = [BIN, "run", os.path.join(SRC, "examples", "maxwell_scatterer.ini"), "--set", "run.backend=cpu", "--set", "run.threads=2",
            "--set", "grid.nx=121", "--set", "grid.ny=81", "--set", "grid.lx=6", "--set", "grid.ly=4", "--set", "scheme.steps=60",
            "--set", "boundary.cpml_cells=8", "--set", "material.shape1=sphere 3 2 0.5 eps_r=4",
            "--set", "source.source1=Hz line 20 12 20 68 ricker frequency=0.5 delay=1",
            "--set", "probe.probe1=Hz 40 40", "--set", "probe.probe2=Hz 90 40", "--set", "probe.probe3=Hz 90 20", "--set", "output.field="]
    for s in sets:
        args += ["--set", s]
    r = subprocess.run(args, capture_output=True, text=True)
    check(r.returncode == expect, "run %s: rc %d, want %d: %s" % (" ".join(sets), r.returncode, expect, r.stderr.strip()))
    return r


with tempfile.TemporaryDirectory() as work:
    os.chdir(work)
    NEUTRAL = np.array([247, 247, 247], dtype=np.uint8)

    # a signed field (Hz of a pulse) 1920 wide: the diverging map by default
    run("output.image=a.png", "output.image_width=1920", "output.probes_png=p.png", "output.probes=p.csv")
    img = read_png("a.png")
    h, w, _ = img.shape
    check(w == 1920, "a.png is %d pixels wide, want output.image_width 1920" % w)
    col = coloured(img)
    mx0, mx1, my0, my1 = map_box(img)
    check(mx1 - mx0 > w // 2, "the map spans columns %d..%d of %d" % (mx0, mx1, w))
    # 6 x 4 in the grid's units: 3:2 (Hz's nodes are half a cell on: 120 x 80 cells)
    check(abs((mx1 - mx0 + 1) / (my1 - my0 + 1) - 1.5) < 0.05, "the map is %d x %d, want 3:2" % (mx1 - mx0 + 1, my1 - my0 + 1))
    # the far right of the map has seen no wave: exactly 0, the neutral colour
    far = img[(my0 + my1) // 2, mx1 - 5]
    check((far == NEUTRAL).all(), "the field's zeros are %s, want the diverging map's neutral %s" % (far, NEUTRAL))
    # the colour bar right of the map: many colours along one column
    bar = max(range(mx1 + 2, w), key=lambda x: len(np.unique(img[:, x][col[:, x]], axis=0)) if col[:, x].any() else 0)
    nbar = len(np.unique(img[:, bar][col[:, bar]], axis=0))
    check(nbar > 100, "the colour bar (column %d) takes %d colours, want > 100" % (bar, nbar))
    # axes: ticks' labels and names below and left of the map
    check(dark(img[my1 + 4:, mx0:mx1 + 1]).sum() > 400, "no x axis labels below the map")
    check(dark(img[my0:my1 + 1, :max(mx0 - 4, 0)]).sum() > 400, "no y axis labels left of the map")

    # the probes' plot: 1920 wide, a line per probe in the palette's colours, a legend
    p = read_png("p.png")
    check(p.shape[1] == 1920, "p.png is %d pixels wide, want 1920" % p.shape[1])
    for rgb in ((31, 100, 190), (230, 120, 20), (40, 150, 60)):
        check((p == np.array(rgb, dtype=np.uint8)).all(axis=2).sum() > 30, "p.png lacks the series in %s" % (rgb,))
    check(dark(p).sum() > 2000, "p.png has no text")

    # output.colormap chooses: viridis has no neutral white, gray no colour
    run("output.image=v.png", "output.colormap=viridis")
    v = read_png("v.png")
    check(not (v == NEUTRAL).all(axis=2).any(), "colormap = viridis: the diverging neutral appears")
    check(v.shape[1] < 1920, "without image_width the image keeps its default size (%d wide)" % v.shape[1])
    run("output.image=g.png", "output.colormap=gray")
    check(not coloured(read_png("g.png")).any(), "colormap = gray: coloured pixels")

    # refusals before the run, nothing written
    sc, heat = os.path.join(SRC, "examples", "maxwell_scatterer.ini"), os.path.join(SRC, "examples", "heat2d.ini")
    for ini, sets, needle in ((sc, ("output.probes_png=p.jpg",), "output.probes_png = p.jpg"),
                              (sc, ("output.image_width=100", "output.image=x.png"), "300..8192"),
                              (sc, ("output.colormap=jet", "output.image=x.png"), "viridis | auto | gray | diverging"),
                              (heat, ("output.probes_png=q.png",), "output.probes_png")):
        r = subprocess.run([BIN, "run", ini, "--set", "scheme.steps=2", "--set", "output.field=", "--set", "output.image="]
                           + (["--set", "output.probes="] if ini == sc else []) + [a for s in sets for a in ("--set", s)],
                           capture_output=True, text=True)
        check(r.returncode != 0 and needle in r.stderr, "%s: rc %d, '%s' lacks '%s'" % (sets, r.returncode, r.stderr.strip(), needle))
    check(not os.path.exists("p.jpg") and not os.path.exists("x.png") and not os.path.exists("q.png"), "a refused run wrote a file")

    # 1D: the plot of u(x) takes the width too
    r = subprocess.run([BIN, "run", os.path.join(SRC, "examples", "heat1d.ini"), "--set", "scheme.steps=5", "--set", "output.field=",
                        "--set", "output.image=u.png", "--set", "output.image_width=1280"], capture_output=True, text=True)
    check(r.returncode == 0 and read_png("u.png").shape[1] == 1280, "1D plot: rc %d, %s" % (r.returncode, r.stderr.strip()))

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
