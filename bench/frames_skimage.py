"""skimage's phase_cross_correlation(upsample_factor=100) per frame: the shift
part of the frames benchmark, for bench_frames.  usage: frames_skimage.py SIZE FRAMES"""
import sys
import time

try:
    import numpy as np
    from skimage.registration import phase_cross_correlation
except ImportError as e:
    print(f"skimage phase_cross_correlation: not measured ({e})")
    sys.exit(0)

n, T = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(1)
ref = rng.poisson(200 + 4000 * (rng.random((n, n)) > 0.999)).astype(np.float32)
F = np.fft.fft2(ref)
ky, kx = np.fft.fftfreq(n)[:, None], np.fft.fftfreq(n)[None, :]
frames = [np.real(np.fft.ifft2(F * np.exp(-2j * np.pi * (kx * dx + ky * dy)))).astype(np.float32)
          for dx, dy in rng.uniform(-2, 2, (8, 2))]
phase_cross_correlation(ref, frames[0], upsample_factor=100)
t0 = time.time()
for t in range(T):
    phase_cross_correlation(ref, frames[t % 8], upsample_factor=100)
el = time.time() - t0
print(f"skimage phase_cross_correlation(upsample_factor=100) {n}x{n}: {1e3 * el / T:.2f} ms/frame (shift only, one core)")
