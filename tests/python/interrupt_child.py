"""One call of the module interrupted by a real SIGINT (what Ctrl-C sends),
in a process of its own: a timer thread signals the process 0.5 s into the
call.  Prints one JSON line: how long after the signal KeyboardInterrupt
reached the caller, whether the arrays were left as documented, whether
SIGINT's handler was given back.  Run by test_interrupt.py (reliability
review M6): `python3 interrupt_child.py SCENARIO`.
"""
import json
import os
import re
import signal
import sys
import threading
import time

import numpy as np

import pyrgrid

CPU = {"backend": "cpu"}
LONG = 10 ** 7  # steps no run here reaches: only the signal ends it


def heat_problem(steps, shape=(129, 129)):
    return pyrgrid.Problem("heat", shape=shape, dt=1e-5, steps=steps, initial="gauss")


def maxwell_problem(steps):
    return pyrgrid.Problem("maxwell", shape=(101, 121), steps=steps, courant=0.5,
                           keys={"boundary.kind": "cpml", "boundary.cpml_cells": 8, "probe.probe1": "Ez 80 50",
                                 "source.source1": "Ez point 60 50 ricker frequency=0.2 delay=8",
                                 "material.shape1": "box 0.2 0.5 0.2 0.6 eps_r=3"})


def interrupted(call):
    """Run call() with a SIGINT 0.5 s in: (seconds from the signal to the KeyboardInterrupt, its notes)."""
    sent = {}

    def send():
        sent["t"] = time.monotonic()
        os.kill(os.getpid(), signal.SIGINT)
    timer = threading.Timer(0.5, send)
    timer.start()
    try:
        call()
    except KeyboardInterrupt as e:
        return time.monotonic() - sent["t"], "\n".join(getattr(e, "__notes__", []))
    finally:
        timer.cancel()
    raise SystemExit("the call ended without a KeyboardInterrupt")


def steps_done(note):
    m = re.search(r"stopped after (\d+) of (\d+) steps; the arrays hold its time layer (\d+)", note)
    assert m and m.group(1) == m.group(3), f"no step count in the note {note!r}"
    return int(m.group(1))


def plan_state(options, progress=None):
    """Plan.execute of a long heat run: the array then holds the time layer the note states."""
    p = heat_problem(LONG)
    u = p.initial()
    u0 = u.copy()
    plan = pyrgrid.Plan(p, options)
    after, note = interrupted(lambda: plan.execute(u, progress=progress))
    k = steps_done(note)
    ref = u0.copy()
    pyrgrid.Plan(heat_problem(k), options).execute(ref)
    return after, {"steps_done": k, "state": bool(0 < k < LONG and np.array_equal(u, ref)), "method": plan.info["method"],
                   "height": plan.info["height"]}


def run(name):
    calls = []
    if name == "default":
        return plan_state(CPU)
    if name == "progress":
        after, r = plan_state(CPU, progress=lambda done, total: calls.append(done))
        r["progress_calls"] = len(calls)
        return after, r
    if name == "naive_one_pass":
        # one pass of the whole run: the library slices it to see the stop
        return plan_state(dict(CPU, method="naive", height=LONG))
    if name == "pyramid":
        return plan_state(dict(CPU, method="pyramid", memory="64K"))
    if name == "parts":
        # two parts on the CPU backend's device: they stop together where they meet (every 50 steps)
        return plan_state(dict(CPU, devices="0,0", exchange=50))
    if name == "maxwell_plan":
        p = maxwell_problem(LONG)
        fields = p.initial_fields()
        plan = pyrgrid.Plan(p, CPU)
        after, note = interrupted(lambda: plan.execute(fields))
        k = steps_done(note)
        ref = maxwell_problem(k)
        ref_fields = ref.initial_fields()
        pyrgrid.Plan(ref, CPU).execute(ref_fields)
        same = all(np.array_equal(fields[c], ref_fields[c]) for c in fields) and fields["Ez"].any()
        return after, {"steps_done": k, "state": bool(same)}
    if name == "maxwell":
        start = maxwell_problem(LONG).initial_fields()
        start["Ez"][50, 60] = 1.0
        kept = {c: a.copy() for c, a in start.items()}
        after, _ = interrupted(lambda: pyrgrid.maxwell(maxwell_problem(LONG), initial=start, backend="cpu"))
        return after, {"state": all(np.array_equal(start[c], kept[c]) for c in start)}
    if name == "heat":
        u0 = heat_problem(1).initial()
        kept = u0.copy()
        after, _ = interrupted(lambda: pyrgrid.heat(u0, dt=1e-5, steps=LONG, backend="cpu"))
        return after, {"state": bool(np.array_equal(u0, kept))}
    if name == "poisson":
        u0 = np.zeros((129, 129))
        f = np.ones((129, 129))
        after, _ = interrupted(lambda: pyrgrid.poisson(u0, f, iterations=LONG, backend="cpu"))
        return after, {"state": bool(not u0.any() and (f == 1).all())}
    if name == "frames":
        stack = np.random.default_rng(1).normal(100, 5, (20000, 48, 48)).astype(np.float32)
        kept = stack.copy()
        after, note = interrupted(lambda: pyrgrid.frames(stack, backend="cpu"))
        return after, {"state": bool(np.array_equal(stack, kept)), "note": note}
    if name == "lgs":
        system = pyrgrid.lgs_system("laplace", 120, 120)
        after, note = interrupted(lambda: pyrgrid.solve_lgs(**system, tolerance=0, max_iterations=LONG, backend="cpu"))
        return after, {"state": True, "note": note}
    raise SystemExit(f"unknown scenario {name}")


def main():
    name = sys.argv[1]
    if name == "custom_handler":
        # a handler of the caller's that does not raise: the run goes on to its end, the handler stays
        seen = []

        def mine(signum, frame):
            seen.append(time.monotonic())
        signal.signal(signal.SIGINT, mine)
        p = heat_problem(40000)
        u = p.initial()
        ref = u.copy()
        plan = pyrgrid.Plan(p, CPU)
        timer = threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT))
        t0 = time.monotonic()
        timer.start()
        info = plan.execute(u)
        t1 = time.monotonic()
        timer.join()
        pyrgrid.Plan(p, CPU).execute(ref)
        # the signal must have come while the run went on, or the case proves nothing
        print(json.dumps({"seen": len(seen), "steps": info.steps, "during": bool(seen) and t0 <= seen[0] <= t1,
                          "same": bool(np.array_equal(u, ref)), "restored": signal.getsignal(signal.SIGINT) is mine}))
        return
    if name == "thread":
        # a run on another thread leaves the caller's handler as it is (signals reach the main thread only)
        handlers = []
        out = {}

        def work():
            p = heat_problem(300)
            u = p.initial()
            out["steps"] = pyrgrid.Plan(p, CPU).execute(
                u, progress=lambda d, t: handlers.append(signal.getsignal(signal.SIGINT))).steps
        t = threading.Thread(target=work)
        t.start()
        t.join()
        untouched = bool(handlers) and all(h is signal.default_int_handler for h in handlers)
        print(json.dumps({"steps": out.get("steps"), "untouched": untouched}))
        return
    after, result = run(name)
    result["after"] = after
    result["restored"] = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    # and a second Ctrl-C, between runs, is Python's ordinary KeyboardInterrupt
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(2)
        result["second"] = False
    except KeyboardInterrupt:
        result["second"] = True
    print(json.dumps(result))


if __name__ == "__main__":
    main()
