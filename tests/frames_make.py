"""Frame sequences with known truth for the frames tests and benchmark.

The scene is a real sky image from a Debian package: the Hubble deep field
of python3-skimage (skimage/data/hubble_deep_field.jpg, grey levels scaled
to photo-electrons over a sky background), or M51 (skimage/data/simple.fits,
a 256x256 CCD frame).  Each frame is the scene moved by a known sub-pixel
shift (Fourier shift: frame_t(x) = scene(x - s_t)), plus a faint moving point
source (Gaussian PSF) at a known position, with Poisson photon noise and
Gaussian read noise.

    make(...) -> dict with frames (T, ny, nx) float32, clean (noise-free)
                 frames, shifts (T, 2) as (dx, dy), mover positions (T, 2) in
                 the reference's coordinates, sigma (per-pixel noise of the sky)
"""
import os

import numpy as np

SKIMAGE_DATA = "/usr/lib/python3/dist-packages/skimage/data"


def scene(name="hubble", size=256, sky=200.0, peak=3000.0, offset=(60, 100)):
    if name == "hubble":
        from skimage import color, io
        img = color.rgb2gray(io.imread(os.path.join(SKIMAGE_DATA, "hubble_deep_field.jpg")))
        y0, x0 = offset
        img = img[y0:y0 + size, x0:x0 + size].astype(np.float64)
        img = img - np.median(img)
        img = np.clip(img, 0, None)
        img = img / img.max() * peak
    elif name == "m51":
        from astropy.io import fits
        img = fits.getdata(os.path.join(SKIMAGE_DATA, "simple.fits")).astype(np.float64)
        img = img[:size, :size]
        img = img - np.median(img)
        img = np.clip(img, 0, None) / img.max() * peak
    else:
        raise ValueError(name)
    return img + sky


def fourier_shift(img, dx, dy):
    """img moved by (dx, dy): out(x) = img(x - s), periodic."""
    F = np.fft.fft2(img)
    ky = np.fft.fftfreq(img.shape[0])[:, None]
    kx = np.fft.fftfreq(img.shape[1])[None, :]
    return np.real(np.fft.ifft2(F * np.exp(-2j * np.pi * (kx * dx + ky * dy))))


def psf(shape, x, y, fwhm):
    s = fwhm / 2.3548200450309493
    yy, xx = np.mgrid[0:shape[0], 0:shape[1]]
    return np.exp(-0.5 * ((xx - x) ** 2 + (yy - y) ** 2) / s ** 2)


def make(T=60, size=256, jitter=1.0, name="hubble", sky=200.0, read_noise=5.0, mover_snr=0.0,
         mover_start=(80.0, 120.0), mover_velocity=(0.35, 0.15), fwhm=2.5, seed=1, drift=0.0):
    rng = np.random.default_rng(seed)
    base = scene(name, size, sky)
    shifts = rng.uniform(-jitter, jitter, size=(T, 2))
    shifts[0] = 0.0
    if drift:
        shifts += np.linspace(0, drift, T)[:, None]
        shifts -= shifts[0]
    sigma = float(np.sqrt(sky + read_noise ** 2))
    pos = np.array(mover_start)[None, :] + np.arange(T)[:, None] * np.array(mover_velocity)[None, :]
    frames = np.empty((T, size, size), np.float32)
    clean = np.empty((T, size, size), np.float32)
    for t in range(T):
        img = fourier_shift(base, shifts[t, 0], shifts[t, 1])
        if mover_snr > 0:
            # peak amplitude mover_snr times the per-pixel noise of the sky
            img = img + mover_snr * sigma * psf(img.shape, pos[t, 0] + shifts[t, 0], pos[t, 1] + shifts[t, 1], fwhm)
        img = np.clip(img, 0, None)
        clean[t] = img
        frames[t] = rng.poisson(img) + rng.normal(0.0, read_noise, img.shape)
    return dict(frames=frames, clean=clean, shifts=shifts, mover=pos, sigma=sigma, fwhm=fwhm)


def write_fits_cube(path, frames, header=None, dtype=np.float32):
    from astropy.io import fits
    data = frames
    if dtype == np.uint16:
        data = np.clip(np.rint(frames) + 1000, 0, 65535).astype(np.uint16)
    hdu = fits.PrimaryHDU(data)
    for k, v in (header or {}).items():
        hdu.header[k] = v
    hdu.writeto(path, overwrite=True)


def read_csv(path):
    rows = np.genfromtxt(path, delimiter=",", names=True)
    return np.atleast_1d(rows)
