"""Inputs the module refuses rather than ignores or runs into garbage:
Maxwell coefficients the plan has no field for (reliability review M11),
non-finite data (L5), one buffer for several fields (L6).  Each refusal
names what is wrong and leaves the arrays as they were."""
import numpy as np
import pytest

import pyrgrid

CPU = {"backend": "cpu"}
SOURCE = {"source.source1": "Ez point 20 20 ricker frequency=0.5 delay=3"}


def uniform():
    return pyrgrid.Problem("maxwell", shape=(41, 41), steps=30, courant=0.5, keys=SOURCE)


def lossy_box():
    # sigma varies: the plan keeps ca and cb per node (mu_r is uniform: no dh)
    return pyrgrid.Problem("maxwell", shape=(41, 41), steps=30, courant=0.5,
                           keys=dict(SOURCE, **{"material.shape1": "box 0.1 0.4 0.1 0.4 eps_r=4 sigma=2"}))


@pytest.mark.parametrize("name", ["ca", "cb", "dh"])
def test_coefficients_of_a_uniform_material_are_refused_not_ignored(name):
    # reliability review M11: they were accepted and the result was the same as without them
    p = uniform()
    f = p.initial_fields()
    f[name] = np.zeros((41, 41))
    kept = {c: a.copy() for c, a in f.items()}
    with pytest.raises(pyrgrid.ArgumentError, match=rf"{name} is given, but this maxwell problem does not use it: .*uniform.*"
                                                    rf"material.shape.*leave {name} out"):
        pyrgrid.Plan(p, CPU).execute(f)
    assert all(np.array_equal(f[c], kept[c]) for c in f)


def test_coefficients_the_plan_keeps_are_the_callers():
    p = lossy_box()
    plan = pyrgrid.Plan(p, CPU)
    ref = p.initial_fields()
    plan.execute(ref)
    same = p.initial_fields()
    plan.execute(dict(same, ca=p.input("ca"), cb=p.input("cb")))
    assert all(np.array_equal(same[c], ref[c]) for c in ref)
    other = p.initial_fields()
    plan.execute(dict(other, cb=p.input("cb") * 0.5))
    assert not np.array_equal(other["Ez"], ref["Ez"]), "the caller's cb was not used"
    # mu_r is uniform here: dh is refused as above
    with pytest.raises(pyrgrid.ArgumentError, match="dh is given, but"):
        plan.execute(dict(p.initial_fields(), dh=np.ones((41, 41))))


def test_a_lossless_material_has_no_ca():
    p = pyrgrid.Problem("maxwell", shape=(41, 41), steps=5, courant=0.5,
                        keys={"material.shape1": "box 0.1 0.4 0.1 0.4 eps_r=4"})
    plan = pyrgrid.Plan(p, CPU)
    plan.execute(dict(p.initial_fields(), cb=p.input("cb")))
    with pytest.raises(pyrgrid.ArgumentError, match="ca is given, but .*sigma varies"):
        plan.execute(dict(p.initial_fields(), ca=np.ones((41, 41))))


@pytest.mark.parametrize("bad,word", [(np.nan, "NaN"), (np.inf, r"\+inf"), (-np.inf, "-inf")])
def test_non_finite_data_is_refused_with_its_first_index(bad, word):
    # reliability review L5: a NaN ran into an all-NaN result; the program refuses such a file
    u0 = np.zeros((5, 7))
    u0[3, 4] = bad
    u0[4, 1] = bad
    with pytest.raises(pyrgrid.ArgumentError, match=rf"u0 holds {word} at index \[3, 4\] .*initial data must be finite"):
        pyrgrid.heat(u0, dt=1e-5, steps=3, backend="cpu")
    with pytest.raises(pyrgrid.ArgumentError, match=rf"u0 holds {word} at index \[3, 4\]"):
        pyrgrid.poisson(u0, iterations=3, backend="cpu")
    p = pyrgrid.Problem("heat", shape=(5, 7), dt=1e-5, steps=3)
    u = u0.astype(np.float32)
    with pytest.raises(pyrgrid.ArgumentError, match=rf"u holds {word} at index \[3, 4\]"):
        pyrgrid.Plan(p, CPU).execute(u0.copy())
    with pytest.raises(pyrgrid.ArgumentError, match=rf"u holds {word} at index \[3, 4\]"):
        pyrgrid.Plan(pyrgrid.Problem("heat", shape=(5, 7), dtype=np.float32, dt=1e-5, steps=3), CPU).execute(u)
    assert np.isnan(u0[3, 4]) == np.isnan(bad)  # untouched
    with pytest.raises(pyrgrid.ArgumentError, match=rf"f holds {word} at index \[3, 4\] .*inputs must be finite"):
        pyrgrid.poisson(np.zeros((5, 7)), u0, iterations=3, backend="cpu")
    # 1D and 3D, and a strided view: the index is the caller's
    line = np.zeros(3000000)
    line[2999999] = bad
    with pytest.raises(pyrgrid.ArgumentError, match=rf"u0 holds {word} at index \[2999999\]"):
        pyrgrid.heat(line, dt=1e-14, steps=1, backend="cpu")
    cube = np.zeros((6, 5, 4))
    cube[5, 0, 3] = bad
    with pytest.raises(pyrgrid.ArgumentError, match=rf"u holds {word} at index \[5, 0, 3\]"):
        pyrgrid.Plan(pyrgrid.Problem("heat", shape=(6, 5, 4), dt=1e-5, steps=1), CPU).execute(cube)
    wide = np.zeros((5, 14))
    wide[2, 6] = bad
    with pytest.warns(pyrgrid.CopyWarning), pytest.raises(pyrgrid.ArgumentError, match=rf"u holds {word} at index \[2, 3\]"):
        pyrgrid.Plan(p, CPU).execute(wide[:, ::2])


def test_non_finite_maxwell_fields_and_coefficients_are_refused():
    p = lossy_box()
    plan = pyrgrid.Plan(p, CPU)
    f = p.initial_fields()
    f["Hy"][7, 8] = np.nan
    with pytest.raises(pyrgrid.ArgumentError, match=r"Hy holds NaN at index \[7, 8\]"):
        plan.execute(f)
    cb = p.input("cb")
    cb[0, 40] = np.inf
    with pytest.raises(pyrgrid.ArgumentError, match=r"cb holds \+inf at index \[0, 40\] .*inputs must be finite"):
        plan.execute(dict(p.initial_fields(), cb=cb))
    with pytest.raises(pyrgrid.ArgumentError, match="Ez holds NaN"):
        pyrgrid.maxwell(uniform(), initial={"Ez": np.full((41, 41), np.nan)}, backend="cpu")


def test_one_buffer_for_several_fields_is_refused():
    # reliability review L6: one array for Ez, Hx and Hy ran, each field overwriting the others
    p = uniform()
    plan = pyrgrid.Plan(p, CPU)
    one = np.zeros((41, 41))
    with pytest.raises(pyrgrid.ArgumentError, match="Ez and Hx share memory, and the run writes Ez and Hx"):
        plan.execute({k: one for k in p.state_fields})
    # overlapping views of one buffer
    buf = np.zeros((82, 41))
    with pytest.raises(pyrgrid.ArgumentError, match="Hx and Hy share memory"):
        plan.execute({"Ez": np.zeros((41, 41)), "Hx": buf[:41], "Hy": buf[40:81]})
    # a state field and an input in one buffer (the run writes one of them)
    q = lossy_box()
    g = q.initial_fields()
    with pytest.raises(pyrgrid.ArgumentError, match="Ez and cb share memory, and the run writes Ez"):
        pyrgrid.Plan(q, CPU).execute(dict(g, cb=g["Ez"]))
    u = np.zeros((9, 9))
    with pytest.raises(pyrgrid.ArgumentError, match="u and f share memory"):
        pyrgrid.Plan(pyrgrid.Problem("poisson", shape=(9, 9), iterations=5, rhs="array"), CPU).execute(u, u)
    # views of one buffer that do not overlap are separate fields (interleaved columns too)
    ref = p.initial_fields()
    plan.execute(ref)
    stack = np.zeros((3, 41, 41))
    plan.execute({"Ez": stack[0], "Hx": stack[1], "Hy": stack[2]})
    assert all(np.array_equal(stack[i], ref[c]) for i, c in enumerate(("Ez", "Hx", "Hy")))
    wide = np.zeros((41, 82))
    with pytest.warns(pyrgrid.CopyWarning):
        plan.execute({"Ez": wide[:, ::2], "Hx": wide[:, 1::2], "Hy": np.zeros((41, 41))})
    assert np.array_equal(wide[:, ::2], ref["Ez"]) and np.array_equal(wide[:, 1::2], ref["Hx"])


def test_a_result_that_overflows_raises_diverged():
    # finite data whose run overflows: the program stops such a run (exit 1); the module raises, and the
    # arrays keep what was computed
    u = np.full((9, 9), 3e38, dtype=np.float32)
    u[::2, 1::2] = -3e38
    u[1::2, ::2] = -3e38
    p = pyrgrid.Problem("heat", shape=(9, 9), dtype=np.float32, dt=1e-3, steps=2)
    with pytest.raises(pyrgrid.DivergedError, match=r"diverged \(non-finite\) by step 2: u is (NaN|[-+]inf) at index \[1, 1\].*float64"):
        pyrgrid.Plan(p, CPU).execute(u)
    assert not np.isfinite(u).all()
    mp = pyrgrid.Problem("maxwell", shape=(41, 41), steps=30, courant=0.5, dtype=np.float32,
                         keys={"source.source1": "Ez point 20 30 gaussian width=0.5 delay=1 amplitude=1e38"})
    with pytest.raises(pyrgrid.DivergedError, match=r"diverged \(non-finite\) by step 30"):
        pyrgrid.Plan(mp, CPU).execute(mp.initial_fields())
    # a run that stays finite is not touched by the check
    ok = pyrgrid.Problem("heat", shape=(9, 9), dtype=np.float32, dt=1e-3, steps=2)
    v = np.ones((9, 9), dtype=np.float32)
    assert pyrgrid.Plan(ok, CPU).execute(v).steps == 2
