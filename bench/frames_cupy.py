"""The peer of the frames benchmark: the pipeline as a user writes it with CuPy
in an afternoon, batched over all frames already on the GPU.  For bench_frames.

  shifts:    phase correlation (integer start), then the article's gradient
             least squares dx = (qw - pv)/(uw - v^2), dy = (pu - qv)/(uw - v^2)
             over the spectrum, a fixed number of steps, all frames at once;
  registration: every frame moved into frame 0's coordinates (Fourier shift);
  whitening: one Gram matrix GEMM over the registered frames, one batched
             solve of (R + eps mean(diag R) I) a = rho per frame over its
             `history` predecessors, one GEMM for all residuals.
It does less than pyrgrid (no detection, no cleaning, no masks, no background
term, no shift-aware weights): its time is a floor for such a pipeline.

usage: frames_cupy.py FRAMES.npy T HISTORY   time T frames (the file's cycled) on the GPU
       frames_cupy.py --selftest [--numpy]   check the maths on a small case
Prints `cupy_ms_per_frame=X` (bench_frames reads it), or a line saying why not."""
import sys
import time

NUMPY = "--numpy" in sys.argv
try:
    import numpy as np
    if NUMPY:
        xp = np
    else:
        import cupy as xp
except ImportError as e:
    print(f"CuPy batched: not measured ({e})")
    sys.exit(0)


def shifts(F, iters=3):
    """Shift s of every frame against frame 0, f_t(x) = f_0(x - s): spectra F (T, ny, nh)."""
    T, ny, nh = F.shape
    nx = 2 * (nh - 1)
    G = F[0]
    C = F * G.conj()
    C /= xp.maximum(xp.abs(C), 1e-30)
    i = xp.argmax(xp.fft.irfft2(C, s=(ny, nx)).reshape(T, -1), axis=1)
    iy, ix = i // nx, i % nx
    sx = xp.where(ix > nx // 2, ix - nx, ix).astype(xp.float64)
    sy = xp.where(iy > ny // 2, iy - ny, iy).astype(xp.float64)
    wx = (2 * xp.pi * xp.fft.rfftfreq(nx))[None, :]
    wy = (2 * xp.pi * xp.fft.fftfreq(ny))[:, None]
    hw = xp.full(nh, 2.0)  # the half spectrum stands for both halves
    hw[0] = hw[-1] = 1.0
    GX, GY = (1j * wx * G).astype(G.dtype), (1j * wy * G).astype(G.dtype)  # the reference's gradient
    u = float((hw * xp.abs(GX) ** 2).sum())
    v = float((hw * (GX * GY.conj()).real).sum())
    w = float((hw * xp.abs(GY) ** 2).sum())
    det = u * w - v * v
    for _ in range(iters):
        # d = f_t(x + s) - f_0(x) ~ -(s_true - s) . grad f_0
        D = F * xp.exp(1j * (wx * sx[:, None, None] + wy * sy[:, None, None])).astype(F.dtype) - G
        q = (hw * (GX.conj() * D).real).sum(axis=(1, 2)).astype(xp.float64)
        p = (hw * (GY.conj() * D).real).sum(axis=(1, 2)).astype(xp.float64)
        sx -= (q * w - p * v) / det
        sy -= (p * u - q * v) / det
    return sx, sy, wx, wy


def pipeline(X, history, eps=1e-6):
    """Residuals of frames history.. of the stack X (T, ny, nx) and every frame's shift."""
    T, ny, nx = X.shape
    F = xp.fft.rfft2(X)
    sx, sy, wx, wy = shifts(F)
    ph = xp.exp(1j * (wx * sx[:, None, None] + wy * sy[:, None, None])).astype(F.dtype)
    H = xp.fft.irfft2(F * ph, s=(ny, nx)).astype(xp.float32).reshape(T, -1)  # registered
    R = H @ H.T  # every dot product at once
    t = xp.arange(history, T)
    I = t[:, None] - 1 - xp.arange(history)[None, :]  # predecessors t-1 .. t-history
    A = R[I[:, :, None], I[:, None, :]]
    rho = R[I, t[:, None]]
    A += (eps * xp.trace(A, axis1=1, axis2=2) / history)[:, None, None] * xp.eye(history, dtype=A.dtype)
    a = xp.linalg.solve(A, rho[:, :, None])[:, :, 0]
    W = xp.zeros((T - history, T), dtype=H.dtype)
    rows = xp.arange(T - history)
    W[rows, t] = 1
    W[rows[:, None], I] = -a
    return (W @ H).reshape(-1, ny, nx), sx, sy


def selftest():
    """Known sub-pixel shifts of a band-limited periodic scene: found to 0.01 px,
    and the residual of frames that only move is at the noise level."""
    rng = np.random.default_rng(3)
    n, T, hist = 64, 24, 4
    k = np.hypot(np.fft.fftfreq(n)[:, None], np.fft.rfftfreq(n)[None, :])
    S = (rng.normal(size=(n, n // 2 + 1)) + 1j * rng.normal(size=(n, n // 2 + 1))) * np.exp(-(k / 0.08) ** 2)
    true = rng.uniform(-3, 3, (T, 2))
    true[0] = 0
    wx = 2 * np.pi * np.fft.rfftfreq(n)[None, :]
    wy = 2 * np.pi * np.fft.fftfreq(n)[:, None]
    X = np.stack([np.fft.irfft2(S * np.exp(-1j * (wx * dx + wy * dy)), s=(n, n)) for dx, dy in true])
    X = (X / X.std() * 100).astype(np.float32)
    noise = 1.0
    X += rng.normal(scale=noise, size=X.shape).astype(np.float32)
    E, sx, sy = pipeline(xp.asarray(X), hist)
    sx, sy, E = (np.asarray(v.get() if hasattr(v, "get") else v) for v in (sx, sy, E))
    err = max(np.abs(sx - true[:, 0]).max(), np.abs(sy - true[:, 1]).max())
    rms = float(np.sqrt((E ** 2).mean()))
    ok = err < 0.01 and rms < 1.5 * noise  # the frame's noise and a quarter of each predecessor's
    print(f"frames_cupy selftest ({xp.__name__}): max shift error {err:.4f} px, residual RMS {rms:.3f} "
          f"(noise {noise}): {'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


def main():
    if "--selftest" in sys.argv:
        return selftest()
    path, T, history = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    base = xp.asarray(np.load(path).astype(np.float32))
    X = base[xp.arange(T) % base.shape[0]]  # the frames bench_frames pushes, in its order
    if NUMPY:
        t0 = time.perf_counter()
        pipeline(X, history)
        ms = 1e3 * (time.perf_counter() - t0)
    else:
        pipeline(X, history)  # warm-up: plans, kernels compiled
        start, stop = xp.cuda.Event(), xp.cuda.Event()
        best = None
        for _ in range(3):
            start.record()
            pipeline(X, history)
            stop.record()
            stop.synchronize()
            el = xp.cuda.get_elapsed_time(start, stop)
            best = el if best is None else min(best, el)
        ms = best
    print(f"cupy_ms_per_frame={ms / T:.5f} ({T} frames {X.shape[2]}x{X.shape[1]}, history {history}, "
          f"{'numpy on the CPU' if NUMPY else 'best of 3 after a warm-up'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
