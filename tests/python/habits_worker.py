"""Work for test_habits.py's process pools: a module of its own, so that a worker started by "spawn" (a fresh
interpreter that shares nothing with the test) imports it by name and unpickles the problem and options it is
given."""
import numpy as np

import pyrgrid


def heat_case(args):
    """One point of a parameter sweep: the problem and options came pickled from the parent."""
    problem, options, alpha = args
    assert isinstance(problem, pyrgrid.Problem) and isinstance(options, pyrgrid.Options)
    u0 = problem.initial()
    u = pyrgrid.heat(u0, dt=problem["scheme.dt"], steps=problem["scheme.steps"], alpha=alpha, lengths=(problem["grid.ly"],
                     problem["grid.lx"]), backend=options["run.backend"], threads=options["run.threads"])
    # the same problem through a plan, with the options as given
    v = problem.initial()
    problem["scheme.alpha"] = alpha
    pyrgrid.Plan(problem, options).execute(v)
    return u, v, problem.to_dict(), options.to_dict()


def maxwell_case(problem):
    r = pyrgrid.maxwell(problem, backend="cpu", threads=1)
    return np.asarray(r["Ez"]), r.probes
