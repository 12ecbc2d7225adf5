"""The monitors' groups of an HDF5 result (src/outputs/h5_monitors.h), read
with h5py, against the spectra's CSV that the same run wrote
(test_maxwell_monitors h5 DIR makes both): per monitor the frequencies, a
flux monitor's power spectrum, a point's transforms, the fields' shapes and
the group's attributes.  usage: test_maxwell_monitors_h5.py DIR"""
import csv
import sys
from collections import defaultdict

import h5py
import numpy as np

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def main(folder):
    for dims in (2, 3):
        rows = defaultdict(list)
        with open(f"{folder}/r{dims}.csv") as f:
            for row in csv.DictReader(f):
                rows[row["monitor"]].append(row)
        with h5py.File(f"{folder}/r{dims}.h5", "r") as h5:
            mons = h5["monitors"]
            want = {"dft1", "dft2", "dft3", "flux1", "flux2", "flux3"} if dims == 2 else {"dft1", "flux1", "flux2"}
            check(set(mons) == want, f"{dims}D: the monitors are {sorted(mons)}")
            for name, g in mons.items():
                freqs = g["freqs"][()]
                lo, hi = g.attrs["lo"], g.attrs["hi"]
                comps = g.attrs["components"]
                comps = (comps.decode() if isinstance(comps, bytes) else comps).split()
                check(g.attrs["steps"] > 0, f"{name}: steps {g.attrs['steps']}")
                box = [int(hi[a] - lo[a] + 1) for a in reversed(range(dims))]
                for c in comps:
                    re = g[c + "_re"][()]
                    if dims == 3:
                        nf = int(g[c + "_re"].attrs["nfreq"])
                        check(nf == len(freqs) and re.shape == (nf * box[0], *box[1:]), f"{name}/{c}_re: shape {re.shape}, nfreq {nf}")
                        re = re.reshape((nf, *box))
                    check(re.shape == (len(freqs), *box), f"{dims}D {name}/{c}_re: shape {re.shape}, expected {(len(freqs), *box)}")
                    check(np.isfinite(re).all() and np.abs(re).max() > 0, f"{name}/{c}_re holds no transform")
                if g.attrs["kind"] in ("flux", b"flux"):
                    flux = g["flux"][()]
                    got = np.array([float(r["flux"]) for r in rows[name]])
                    f = np.array([float(r["frequency"]) for r in rows[name]])
                    check(np.array_equal(f, freqs) and np.array_equal(got, flux), f"{dims}D {name}: the HDF5 flux differs from the CSV's")
                elif all(n == 1 for n in box):
                    for c in comps:
                        rr = rows[f"{name}.{c}"]
                        z = np.array([float(r["re"]) + 1j * float(r["im"]) for r in rr])
                        got = (g[c + "_re"][()] + 1j * g[c + "_im"][()]).reshape(-1)  # one node: nfreq values
                        check(np.array_equal(z, got), f"{dims}D {name}.{c}: the HDF5 transform differs from the CSV's")
    print("checked", "FAILED" if failures else "fine")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
