"""The frames pipeline on a synthetic sequence: a jittering starry sky with
noise and one faint object moving across it; the whitened residual shows
the mover, and the candidates name its positions.

usage: PYTHONPATH=python /usr/bin/python3 examples/frames.py [FRAMES]
"""
import sys

import numpy as np

import pyrgrid

t, size = (int(sys.argv[1]) if len(sys.argv) > 1 else 40), 128
rng = np.random.default_rng(3)
yy, xx = np.mgrid[0:size, 0:size]
stars = rng.uniform(8, size - 8, (60, 2))
flux = rng.uniform(200, 2000, 60)


def sky(dx, dy):
    img = np.full((size, size), 100.0)
    for (sx, sy), f in zip(stars, flux):
        img += f * np.exp(-((xx - sx - dx) ** 2 + (yy - sy - dy) ** 2) / (2 * 1.2 ** 2))
    return img


frames = []
for k in range(t):
    img = sky(*rng.uniform(-1.5, 1.5, 2))
    mx, my = 20 + 2.0 * k, 64.0  # the mover: 2 pixels per frame
    img += 60 * np.exp(-((xx - mx) ** 2 + (yy - my) ** 2) / (2 * 1.2 ** 2))
    frames.append(rng.poisson(img).astype(np.float32))
result = pyrgrid.frames(np.stack(frames), history=10, threshold=5)
found = result.candidates[result.candidates["snr"] > 6]
print(f"{t} frames of {size}x{size}: residual rms {result.residual[12:].std():.1f}, "
      f"{len(found)} candidates above SNR 6, in {result.stats['seconds']:.2f} s on {result.stats['backend']}")
for c in found[:8]:
    print(f"  frame {c['frame']:3d}: x {c['x']:6.1f}  y {c['y']:6.1f}  snr {c['snr']:5.1f}")
