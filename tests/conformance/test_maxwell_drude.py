"""Dispersive materials of the Maxwell scheme against analytic formulas and
MEEP (issue #46, item 2: "a Drude metal half-space's reflectance matches the
analytic Drude reflectance to 2% ...; a Lorentz medium's complex permittivity
recovered from a slab's spectrum matches the model").

The cases run on the parallel-plate line of test_maxwell_spectra.py: a 2D TE
grid (Ey, Hz uniform across y between PEC walls), a Gaussian Ey line source,
CPML on the x faces, flux planes for the power spectra and a DFT point for
the complex transmission, each normalised by the same run without the
material (docs/maxwell.md's two-run recipe).  Frequencies are those of the
monitors (omega = 2 pi f); the materials in the problems' syntax:

  drude    a half-space x >= 1.0 of eps_inf = 1, drude = FP GAMMA (into the CPML):
           R(f) = |(1 - n)/(1 + n)|^2, n = sqrt(1 - FP^2 / (f^2 + i f GAMMA)),
           within 2% of R (and 0.003 absolute) over f = 0.2 .. 1.0, across the plasma frequency; the power
           0.8 deep in the metal (1 - R) exp(-2 Im(k) z) within 0.005 + 3%
  lorentz  a slab of eps_inf = 1.5 with lorentz = DEPS F0 GAMMA, d = 0.2, its resonance F0 inside the band:
           T, R against the Fabry-Perot formulas with complex n (within 0.01 of the incident power) and
           the complex transmission t(f) (amplitude and phase, from the DFT point) within 0.02 of the
           analytic one; eps(f) recovered from t(f) (Newton on the slab formula, started from eps_inf)
           within 5% of |eps| of the model's
  debye    a slab of eps_inf = 2 with debye = DEPS TAU (relaxation at f = 1/(2 pi TAU) inside the band):
           as lorentz
  meep     the lorentz and drude cases in MEEP (python3-meep, 1D, the same resolution and materials):
           R and T agree within 0.01 (exit 77 when meep does not import)

  drude_map the drude case with the half-space given as a label map ([material] map, label1): the same
           bits as the box and the same checks

usage: test_maxwell_drude.py drude|drude_map|lorentz|debye|meep"""
import os
import sys
import tempfile

import numpy as np

import pyrgrid

H, NX, NY, HY = 0.01, 241, 4, 0.1
BAND = (0.2, 1.0, 41)
SRC, REFL, TRAN = 40, 60, 180
I0 = 100                              # the material's first node (x = 1.0)
SLAB = 20                             # a slab's nodes: I0 .. I0 + SLAB - 1, d = SLAB h
D = SLAB * H
STEPS = 3000
DRUDE = (0.6, 0.1)                    # FP, GAMMA
LORENTZ = (1.5, 1.5, 0.6, 0.05)       # eps_inf, DEPS, F0, GAMMA
DEBYE = (2.0, 3.0, 0.3)               # eps_inf, DEPS, TAU
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def run(shape, keys=None):
    band = "{}:{}:{}".format(*BAND)
    return pyrgrid.maxwell((NY, NX), steps=STEPS, mode="te", lengths=((NY - 1) * HY, (NX - 1) * H), courant=0.99,
                           keys={"boundary.kind": "cpml", "boundary.faces": "x-,x+", "boundary.cpml_cells": 20, **(keys or {})},
                           shapes=[shape] if shape else [], sources=[f"Ey line {SRC} 0 {SRC} {NY - 2} gaussian width=0.2 delay=1.0"],
                           monitors={"flux1": f"plane x {REFL} freqs={band}", "flux2": f"plane x {TRAN} freqs={band}",
                                     "dft1": f"Ey point {TRAN} 1 freqs={band}"})


def slab_box(props):
    # the box holds the nodes I0 .. I0 + SLAB - 1 (a node's material applies to the components stored there)
    return f"box {(I0 - 0.25) * H} {(I0 + SLAB - 0.75) * H} -1 1 {props}"


def spectra(shape):
    empty, full = run(None), run(shape)
    f = empty.monitors["flux1"].freqs
    p0r, p0t = empty.monitors["flux1"].flux, empty.monitors["flux2"].flux
    T = full.monitors["flux2"].flux / p0t
    R = (p0r - full.monitors["flux1"].flux) / p0r
    # the DFT's kernel exp(-i 2 pi f t) makes a delay tau a factor exp(-i 2 pi f tau): the conjugate of the
    # exp(-i omega t) convention of the formulas below
    t = np.conj(full.monitors["dft1"].fields["Ey"].reshape(-1) / empty.monitors["dft1"].fields["Ey"].reshape(-1))
    return f, R, T, t


def slab_formulas(eps, f, d):
    """R, T and the complex transmission (relative to the same length of vacuum) of a slab of permittivity eps."""
    n = np.sqrt(eps + 0j)
    n = np.where(n.imag < 0, -n, n)
    r = (1 - n) / (1 + n)
    e = np.exp(2j * np.pi * f * n * d)
    t = (1 - r * r) * e / (1 - r * r * e * e)
    rt = r * (1 - e * e) / (1 - r * r * e * e)
    return abs(rt) ** 2, abs(t) ** 2, t * np.exp(-2j * np.pi * f * d)


def recover_eps(t, f, d, guess):
    """eps at each f from the slab's complex transmission, by Newton's method on slab_formulas."""
    out = []
    for tk, fk in zip(t, f):
        e = complex(guess)
        for _ in range(60):
            g = slab_formulas(np.array([e]), np.array([fk]), d)[2][0] - tk
            de = 1e-7 * max(1, abs(e))
            dg = (slab_formulas(np.array([e + de]), np.array([fk]), d)[2][0] - tk - g) / de
            step = g / dg
            e -= step if abs(step) < 0.5 * max(1, abs(e)) else 0.5 * max(1, abs(e)) * step / abs(step)
            if abs(step) < 1e-12:
                break
        out.append(e)
    return np.array(out)


def eps_drude(f):
    fp, g = DRUDE
    return 1 - fp ** 2 / (f ** 2 + 1j * f * g)


def eps_lorentz(f):
    einf, de, f0, g = LORENTZ
    return einf + de * f0 ** 2 / (f0 ** 2 - f ** 2 - 1j * f * g)


def eps_debye(f):
    einf, de, tau = DEBYE
    return einf + de / (1 - 2j * np.pi * f * tau)


def drude(by_map=False):
    fp, g = DRUDE
    empty, metal = run(None), run(f"box {(I0 - 0.25) * H} 10 -1 1 eps_r=1 drude={fp} {g}")
    if by_map:
        # the half-space as a per-node label map ([material] map): label 1 at the box's nodes x >= I0; the same bits as
        # the box, and the reflectance checked below is the map's
        with tempfile.TemporaryDirectory() as d:
            labels = np.zeros((NY, NX), dtype=np.uint8)
            labels[:, I0:] = 1
            np.save(os.path.join(d, "halfspace.npy"), labels)
            mapped = run(None, {"material.map": os.path.join(d, "halfspace.npy"), "material.label1": f"eps_r=1 drude={fp} {g}"})
        check(all(np.array_equal(mapped[c], metal[c]) for c in metal), "the map's half-space differs from the box's")
        metal = mapped
    f = empty.monitors["flux1"].freqs
    R = (empty.monitors["flux1"].flux - metal.monitors["flux1"].flux) / empty.monitors["flux1"].flux
    n = np.sqrt(eps_drude(f))
    Ra = abs((1 - n) / (1 + n)) ** 2
    err = abs(R - Ra)
    print(f"Drude half-space: max |R - Ra| = {err.max():.2e}, max |R - Ra| / Ra = {(err / Ra).max():.2e}; R from {R.min():.3f} to {R.max():.3f}")
    check(Ra.max() > 0.6 and Ra.min() < 0.02, "the band does not span the plasma edge")
    check(np.all(err <= np.maximum(0.02 * Ra, 0.003)), "R differs from the Drude reflectance by more than 2%")
    # the power into the metal decays as exp(-2 Im(k) z): at the far plane, z = 0.805 inside it, (1 - R) of it is left
    T = metal.monitors["flux2"].flux / empty.monitors["flux2"].flux
    Ta = (1 - Ra) * np.exp(-4 * np.pi * f * n.imag * (TRAN - I0 + 0.5) * H)
    print(f"Drude half-space: the power 0.8 deep in the metal within {abs(T - Ta).max():.2e} of (1 - R) exp(-2 Im(k) z), "
          f"from {Ta.min():.1e} to {Ta.max():.2f}")
    check(np.all(abs(T - Ta) <= 0.005 + 0.03 * Ta), "the power inside the metal does not decay as the Drude model's")


def slab(kind):
    if kind == "lorentz":
        einf, de, f0, g = LORENTZ
        props, model = f"eps_r={einf} lorentz={de} {f0} {g}", eps_lorentz
    else:
        einf, de, tau = DEBYE
        props, model = f"eps_r={einf} debye={de} {tau}", eps_debye
    f, R, T, t = spectra(slab_box(props))
    Ra, Ta, ta = slab_formulas(model(f), f, D)
    print(f"{kind} slab: max |T - Ta| = {abs(T - Ta).max():.2e}, max |R - Ra| = {abs(R - Ra).max():.2e}, "
          f"max |t - ta| = {abs(t - ta).max():.2e}; T from {T.min():.3f} to {T.max():.3f}, absorbed up to {(1 - R - T).max():.3f}")
    check((1 - Ra - Ta).max() > 0.1, "the band holds no absorption: the test would not see the terms' loss")
    check(np.all(abs(T - Ta) <= 0.01), "T differs from the Fabry-Perot formula by more than 1% of the incident power")
    check(np.all(abs(R - Ra) <= 0.01), "R differs from the Fabry-Perot formula by more than 1% of the incident power")
    check(np.all(abs(t - ta) <= 0.02), "the complex transmission differs from the formula's by more than 0.02")
    eps = recover_eps(t, f, D, model(f)[0].real if kind == "debye" else einf)
    rel = abs(eps - model(f)) / abs(model(f))
    print(f"{kind}: eps recovered from t(f) within {rel.max():.2e} of the model (|eps| from {abs(model(f)).min():.2f} to {abs(model(f)).max():.2f})")
    check(np.all(rel <= 0.05), "the permittivity recovered from the spectrum differs from the model's by more than 5%")


def meep_case(material, thick):
    import meep as mp
    mp.verbosity(0)
    L, res = (NX - 1) * H, round(1 / H)
    z = lambda x: mp.Vector3(0, 0, x - L / 2)
    fmin, fmax, nf = BAND

    def sim(full):
        size = D if not thick else L - (I0 - 0.5) * H
        geom = [mp.Block(size=mp.Vector3(mp.inf, mp.inf, size), center=z((I0 - 0.5) * H + size / 2), material=material)] if full else []
        s = mp.Simulation(cell_size=mp.Vector3(0, 0, L), dimensions=1, resolution=res, boundary_layers=[mp.PML(20 * H)], geometry=geom,
                          sources=[mp.Source(mp.GaussianSource((fmin + fmax) / 2, fwidth=2 * (fmax - fmin)), component=mp.Ex,
                                             center=z(SRC * H))])
        return s, s.add_flux((fmin + fmax) / 2, fmax - fmin, nf, mp.FluxRegion(center=z(REFL * H))), \
            s.add_flux((fmin + fmax) / 2, fmax - fmin, nf, mp.FluxRegion(center=z(TRAN * H)))

    def until(s):
        s.run(until_after_sources=mp.stop_when_fields_decayed(20, mp.Ex, z(REFL * H), 1e-9))

    s, refl, tran = sim(False)
    until(s)
    inc, empty_t, data = np.array(mp.get_fluxes(refl)), np.array(mp.get_fluxes(tran)), s.get_flux_data(refl)
    s2, refl2, tran2 = sim(True)
    s2.load_minus_flux_data(refl2, data)
    until(s2)
    return np.array(mp.get_flux_freqs(refl)), -np.array(mp.get_fluxes(refl2)) / inc, np.array(mp.get_fluxes(tran2)) / empty_t


def meep():
    try:
        import meep as mp
    except ImportError:
        print("the meep module (Debian: python3-meep) does not import: skipped")
        return 77
    einf, de, f0, g = LORENTZ
    f, R, T, _ = spectra(slab_box(f"eps_r={einf} lorentz={de} {f0} {g}"))
    fm, Rm, Tm = meep_case(mp.Medium(epsilon=einf, E_susceptibilities=[mp.LorentzianSusceptibility(frequency=f0, gamma=g, sigma=de)]), False)
    check(np.allclose(f, fm), "MEEP's frequencies differ")
    print(f"Lorentz slab against MEEP: max |T - T_meep| = {abs(T - Tm).max():.2e}, max |R - R_meep| = {abs(R - Rm).max():.2e}")
    check(np.all(abs(T - Tm) <= 0.01) and np.all(abs(R - Rm) <= 0.01), "the Lorentz slab's R or T differs from MEEP's by more than 0.01")
    fp, gd = DRUDE
    empty, metal = run(None), run(f"box {(I0 - 0.25) * H} 10 -1 1 eps_r=1 drude={fp} {gd}")
    Rd = (empty.monitors["flux1"].flux - metal.monitors["flux1"].flux) / empty.monitors["flux1"].flux
    _, Rdm, _ = meep_case(mp.Medium(epsilon=1, E_susceptibilities=[mp.DrudeSusceptibility(frequency=fp, gamma=gd, sigma=1)]), True)
    print(f"Drude half-space against MEEP: max |R - R_meep| = {abs(Rd - Rdm).max():.2e}")
    check(np.all(abs(Rd - Rdm) <= 0.01), "the Drude half-space's R differs from MEEP's by more than 0.01")
    return 1 if failures else 0


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else "drude"
    if what == "meep":
        return meep()
    if what in ("drude", "drude_map"):
        drude(what == "drude_map")
    elif what in ("lorentz", "debye"):
        slab(what)
    else:
        print(__doc__)
        return 2
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
