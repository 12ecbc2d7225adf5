"""bench/mie_check.py, the checker of Mie runs larger than the GPU, on the
small case in FLOAT precision (examples/maxwell_mie.ini with
scheme.precision = float, run by the program as a user runs the big file):

  - the float run's cross-section agrees with Mie's series within 5% (the
    conformance test's bound, there in double), the checker exits 0, counts
    the staircase sphere's 8217 nodes (test_maxwell_mie.py's own count) and
    prints every frequency of the monitors (26);
  - its arithmetic: the six fluxes of one frequency scaled by 1.08 in the
    CSV give that frequency's ratio 1.08 times the first one's (1e-4), and
    the checker exits 1 (above 5%); scaled by 0.92, likewise;
  - what it cannot check it refuses, exit 2, saying what: a CSV without
    flux6; a flux box that does not close (flux2 made narrower by --set).

usage: test_mie_check.py PYRGRID_PROGRAM"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir)
EXAMPLE = os.path.join(ROOT, "examples", "maxwell_mie.ini")
CHECKER = os.path.join(ROOT, "bench", "mie_check.py")
ROW = re.compile(r"^\s*([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s*$")
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def checker(csv_path, *extra):
    r = subprocess.run([sys.executable, CHECKER, csv_path, "--problem", EXAMPLE, "--precision", "float", *extra],
                       capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def ratios(out):
    """{frequency: ratio} of the checker's table."""
    return {float(m.group(1)): float(m.group(5)) for m in map(ROW.match, out.splitlines()) if m}


def scaled(src, dst, freq, factor):
    """The CSV with the six fluxes at one frequency multiplied by factor."""
    with open(src) as f, open(dst, "w") as g:
        for line in f:
            cells = line.rstrip("\n").split(",")
            if cells[0].startswith("flux") and cells[2] and abs(float(cells[1]) - freq) < 1e-9:
                cells[2] = repr(float(cells[2]) * factor)
            g.write(",".join(cells) + "\n")


def main():
    if len(sys.argv) != 2:
        print(__doc__.rsplit("usage: ", 1)[1])
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        csv_path = os.path.join(tmp, "mie_float.csv")
        run = subprocess.run([sys.argv[1], "run", EXAMPLE, "-q", "--set", "scheme.precision=float", "--set", f"output.spectra={csv_path}",
                              "--set", "output.spectra_png=", "--set", "output.probes="], capture_output=True, text=True)
        check(run.returncode == 0, f"pyrgrid run {EXAMPLE} (float) failed: {run.stderr.strip()}")
        if run.returncode:
            return 1
        rc, out, err = checker(csv_path)
        print(out, end="")
        check(rc == 0, f"the checker exits {rc} on the float run ({err.strip()})")
        check("8217 nodes inside" in out, "the checker does not count 8217 nodes in the staircase sphere")
        base = ratios(out)
        check(len(base) == 26, f"the checker's table has {len(base)} frequencies, not 26")
        worst = re.search(r"max \|sigma_s / sigma_Mie - 1\| = ([0-9.]+)", out)
        check(worst is not None and float(worst.group(1)) <= 0.05, "the float run's cross-section is not within 5% of Mie's")
        if worst:
            print(f"float: max |sigma_s / sigma_Mie - 1| = {float(worst.group(1)):.4f}")

        # the arithmetic: one frequency's fluxes scaled scale its ratio alone, and a 8% error fails the check
        freq = sorted(base)[12] if len(base) == 26 else 0.4134
        for factor in (1.08, 0.92):
            bad = os.path.join(tmp, "scaled.csv")
            scaled(csv_path, bad, freq, factor)
            rc, out, err = checker(bad)
            r = ratios(out)
            check(rc == 1, f"the checker exits {rc}, not 1, with one frequency's fluxes scaled by {factor}")
            if freq in r and freq in base:
                check(abs(r[freq] - factor * base[freq]) <= 1e-4 + 5e-5 * factor,
                      f"scaled by {factor}, f = {freq}'s ratio is {r[freq]}, not {factor} x {base[freq]}")
                others = [f for f in base if f != freq and f in r and r[f] != base[f]]
                check(not others, f"scaled at f = {freq}, the ratios at {others} changed too")
            else:
                check(False, f"the checker's table lacks f = {freq}")

        # refusals, exit 2 with the reason
        short = os.path.join(tmp, "short.csv")
        with open(csv_path) as f, open(short, "w") as g:
            g.writelines(line for line in f if not line.startswith("flux6,"))
        rc, out, err = checker(short)
        check(rc == 2 and "flux6" in err, f"a CSV without flux6: exit {rc}, '{err.strip()}' (expected 2, naming flux6)")
        rc, out, err = checker(csv_path, "--set", "monitor.flux2=plane x 42 10 41 10 42 freqs=0.159:0.954:26")
        check(rc == 2 and "flux2" in err, f"a flux box that does not close: exit {rc}, '{err.strip()}' (expected 2, naming flux2)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
