"""poisson(iteration=...): Chebyshev-accelerated Jacobi reaches the tolerance
in far fewer sweeps than plain Jacobi, to the same field within it; jacobi is
the default; streamed plans (trivial, pyramid, auto out of core) carry the
layer two sweeps back and give the in-core bits; several devices refuse it
saying what works."""
import numpy as np
import pytest

import pyrgrid

CPU = {"backend": "cpu"}


def _guess(n=65):
    return np.zeros((n, n))


def test_chebyshev_far_fewer_sweeps_same_field():
    uj, ij = pyrgrid.poisson(_guess(), "sine", tolerance=1e-9, check_every=50, **CPU)
    uc, ic = pyrgrid.poisson(_guess(), "sine", tolerance=1e-9, check_every=50, iteration="chebyshev", **CPU)
    assert ij.converged and ic.converged
    assert ic.sweeps * 10 <= ij.sweeps, (ic.sweeps, ij.sweeps)
    assert np.max(np.abs(uc - uj)) < 1e-5


def test_jacobi_is_the_default():
    a, ia = pyrgrid.poisson(_guess(33), "sine", tolerance=1e-8, **CPU)
    b, ib = pyrgrid.poisson(_guess(33), "sine", tolerance=1e-8, iteration="jacobi", **CPU)
    assert ia.sweeps == ib.sweeps and np.array_equal(a, b)


def test_problem_key():
    p = pyrgrid.Problem("poisson", shape=(33, 33), iterations=10, iteration="chebyshev")
    assert p.get("scheme.iteration") == "chebyshev"
    assert pyrgrid.Problem("poisson", shape=(33, 33), iterations=10).get("scheme.iteration") == "jacobi"


@pytest.mark.parametrize("options", [{"method": "trivial"}, {"method": "pyramid", "decomposition": "strips", "memory": 65536},
                                     {"memory": 20000}])
def test_streamed_plans_equal_in_core(options):
    a, ia = pyrgrid.poisson(_guess(), "sine", tolerance=1e-9, check_every=50, iteration="chebyshev", **CPU)
    b, ib = pyrgrid.poisson(_guess(), "sine", tolerance=1e-9, check_every=50, iteration="chebyshev", **dict(CPU, **options))
    assert ia.converged and ib.converged and ia.sweeps == ib.sweeps and np.array_equal(a, b)


@pytest.mark.parametrize("options, text", [
    ({"devices": "0,0"}, "over several devices or MPI ranks"),
])
def test_refusals(options, text):
    with pytest.raises(pyrgrid.Error, match=text.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        pyrgrid.poisson(_guess(), "sine", tolerance=1e-9, iteration="chebyshev", **dict(CPU, **options))


def test_bad_values():
    with pytest.raises(pyrgrid.ConfigError, match="did you mean 'chebyshev'"):
        pyrgrid.poisson(_guess(), "sine", tolerance=1e-9, iteration="chebishev", **CPU)
    with pytest.raises(pyrgrid.ConfigError, match="leave omega = 1"):
        pyrgrid.poisson(_guess(), "sine", tolerance=1e-9, iteration="chebyshev", omega=0.9, **CPU)
