"""Frame sequences cut out of a larger real sky image, for the frames tests.

Unlike frames_make.py (the whole scene moved by a periodic Fourier shift, so
that frames wrap at their edges), each frame here is a window of the Hubble
deep field of python3-skimage (872 x 1000, the three channels added): the big
image is moved by the frame's sub-pixel shift and the window cut from its
middle, so a frame's edges show what lies beyond them, as a camera's do.
Then per case: Poisson photon noise and Gaussian read noise, a faint mover
(a Gaussian PSF moving a few pixels per frame), a bias (pedestal) added to
16-bit frames, a dead column and hot pixels, a sky that varies smoothly in
space and time.

    make(...) -> dict with frames (T, ny, nx) float32 (or uint16 with bias),
                 shifts (T, 2) as (dx, dy), mover positions (T, 2) in the
                 reference's coordinates, sigma, fwhm, bad (a bool image of
                 the bad pixels, or None)
"""
import numpy as np

_BIG = None


def big_image(sky=150.0, peak=4000.0, seeing=2.0):
    """The Hubble deep field as photo-electrons over a flat sky, seen through
    a Gaussian PSF of FWHM `seeing` pixels (0: the image as it is, whose
    sources are often a pixel wide)."""
    global _BIG
    if _BIG is None or _BIG[0] != seeing:
        from skimage import data
        from scipy.ndimage import gaussian_filter
        img = data.hubble_deep_field().astype(np.float64).sum(axis=2)
        # seen through an atmosphere (and a telescope), as a camera samples stars
        if seeing > 0:
            img = gaussian_filter(img, seeing / 2.3548200450309493)
        img = img - np.median(img)
        img = np.clip(img, 0, None)
        _BIG = (seeing, img / img.max() * peak)
    return _BIG[1] + sky


def cut(big, y0, x0, size, dx, dy):
    """The window [y0, y0+size) x [x0, x0+size) of big moved by (dx, dy):
    out(x) = big(x - s).  The shift is a Fourier shift of a larger
    padded cut-out, of which only the middle is kept: no edge wraps."""
    pad = 48
    sub = big[y0 - pad:y0 + size + pad, x0 - pad:x0 + size + pad]
    F = np.fft.fft2(sub)
    ky = np.fft.fftfreq(sub.shape[0])[:, None]
    kx = np.fft.fftfreq(sub.shape[1])[None, :]
    out = np.real(np.fft.ifft2(F * np.exp(-2j * np.pi * (kx * dx + ky * dy))))
    return out[pad:pad + size, pad:pad + size]


def make(T=44, size=256, jitter=3.0, read_noise=5.0, sky=150.0, mover_snr=6.0, mover_start=(60.0, 70.0),
         mover_velocity=(3.0, 2.5), fwhm=2.5, seed=3, bias=None, badpix=False, sky_var=0.0, origin=(300, 380),
         seeing=2.0):
    rng = np.random.default_rng(seed)
    big = big_image(sky, seeing=seeing)
    shifts = rng.uniform(-jitter, jitter, size=(T, 2))
    shifts[0] = 0.0
    sigma = float(np.sqrt(sky + read_noise ** 2))
    pos = np.array(mover_start)[None, :] + np.arange(T)[:, None] * np.array(mover_velocity)[None, :]
    yy, xx = np.mgrid[0:size, 0:size] / float(size)
    s = fwhm / 2.3548200450309493
    bad = None
    if badpix:
        bad = np.zeros((size, size), bool)
        bad[:, size // 2 + 7] = True  # a dead column
        hot = rng.integers(20, size - 20, size=(12, 2))
        bad[hot[:, 0], hot[:, 1]] = True
    frames = np.empty((T, size, size), np.float32)
    for t in range(T):
        img = cut(big, origin[0], origin[1], size, shifts[t, 0], shifts[t, 1])
        if mover_snr > 0:
            mx, my = pos[t, 0] + shifts[t, 0], pos[t, 1] + shifts[t, 1]
            img = img + mover_snr * sigma * np.exp(-0.5 * ((xx * size - mx) ** 2 + (yy * size - my) ** 2) / s ** 2)
        if sky_var:
            # a sky that changes slowly: a gradient turning over the sequence and a curvature that grows
            # with a mean of zero over the frame, so that the photon noise is that of the flat sky
            ph = 2 * np.pi * t / T
            img = img + sky_var * (0.5 * np.cos(ph) * (xx - 0.5) + 0.5 * np.sin(ph) * (yy - 0.5)
                                   + (t / T - 0.5) * ((xx - 0.5) ** 2 - 1.0 / 12))
        img = np.clip(img, 0, None)
        f = rng.poisson(img) + rng.normal(0.0, read_noise, img.shape)
        if badpix:
            f[:, size // 2 + 7] = -(bias or 0.0)  # reads 0 (less the bias: 0 once it is added)
            f[hot[:, 0], hot[:, 1]] = 20000.0 + 3000.0 * rng.random(len(hot))
        frames[t] = f
    if bias is not None:
        frames = np.clip(np.rint(frames + bias), 0, 65535).astype(np.uint16)
    return dict(frames=frames, shifts=shifts, mover=pos, sigma=sigma, fwhm=fwhm, bad=bad)
