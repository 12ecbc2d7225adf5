"""The Mie series of a homogeneous sphere (Bohren & Huffman, ch. 4) from
SciPy's spherical Bessel functions: the coefficients a_n, b_n, the scattering
efficiency Q_sca and the amplitudes S1, S2.  One copy for the conformance
test (test_maxwell_mie.py, which also checks this code against BHMIE's
example, the Rayleigh limit and the angular integral) and the checker of
the large Mie run (bench/mie_check.py)."""
import numpy as np
from scipy.special import spherical_jn, spherical_yn


def mie_coefficients(m, x):
    """a_n, b_n (n = 1 .. nmax along axis 0) for a sphere of relative index m at size parameters x."""
    x = np.atleast_1d(np.asarray(x, dtype=np.float64))
    nmax = int(np.ceil(x.max() + 4 * x.max() ** (1 / 3) + 2))  # Wiscombe's criterion
    n = np.arange(1, nmax + 1)[:, None]
    mx = m * x

    def psi(z):  # Riccati-Bessel psi_n(z) = z j_n(z) and its derivative
        return z * spherical_jn(n, z), spherical_jn(n, z) + z * spherical_jn(n, z, derivative=True)

    def xi(z):  # xi_n(z) = z h_n^(1)(z) and its derivative
        h = spherical_jn(n, z) + 1j * spherical_yn(n, z)
        dh = spherical_jn(n, z, derivative=True) + 1j * spherical_yn(n, z, derivative=True)
        return z * h, h + z * dh

    (p_x, dp_x), (p_mx, dp_mx), (x_x, dx_x) = psi(x), psi(mx), xi(x)
    a = (m * p_mx * dp_x - p_x * dp_mx) / (m * p_mx * dx_x - x_x * dp_mx)
    b = (p_mx * dp_x - m * p_x * dp_mx) / (p_mx * dx_x - m * x_x * dp_mx)
    return n[:, 0], a, b


def mie_qsca(m, x):
    """The scattering efficiency Q_sca = sigma_s / (pi a^2) = 2 / x^2 sum (2n + 1) (|a_n|^2 + |b_n|^2)."""
    n, a, b = mie_coefficients(m, x)
    return 2 / np.atleast_1d(x) ** 2 * np.sum((2 * n[:, None] + 1) * (abs(a) ** 2 + abs(b) ** 2), axis=0)


def mie_s12(m, x, mu):
    """The amplitudes S1, S2 at the cosines mu of the scattering angle, shape (len(x), len(mu))."""
    n, a, b = mie_coefficients(m, x)
    mu = np.asarray(mu, dtype=np.float64)
    pi = np.zeros((len(n), len(mu)))  # the angular functions pi_n, tau_n by their recurrences
    tau = np.zeros_like(pi)
    p0, p1 = np.zeros_like(mu), np.ones_like(mu)
    for i, k in enumerate(n):
        pi[i] = p1
        tau[i] = k * mu * p1 - (k + 1) * p0
        p0, p1 = p1, ((2 * k + 1) * mu * p1 - (k + 1) * p0) / k
    w = ((2 * n + 1) / (n * (n + 1)))[:, None]
    s1 = np.einsum("nx,nd->xd", w * a, pi) + np.einsum("nx,nd->xd", w * b, tau)
    s2 = np.einsum("nx,nd->xd", w * a, tau) + np.einsum("nx,nd->xd", w * b, pi)
    return s1, s2
