#!/usr/bin/env bash
# Results, restarts and reports through the program (issue 24):
#  - restarts equal the straight run bit for bit: heat from an HDF5 result and
#    from a .npy snapshot with initial.step (another plan each time), Poisson
#    with a tolerance from an HDF5 result (the same bytes and sweep count);
#    restarts that would miss a check or a snapshot are refused;
#  - the HDF5 file and its XDMF sidecar, read independently with h5py and an
#    XML parser (skipped without h5py): attributes, snapshots, links,
#    compression, 3D, 1D (no sidecar); Maxwell: every component of the mode
#    and the varying coefficients in the file and the sidecar, equal to .npy;
#  - --report and plan --json are JSON with what they promise;
#  - the grid's size from initial.file, inputs relative to the problem file;
#  - bad HDF5 inputs (truncated, not HDF5, wrong dataset) and refused outputs
#    stop before anything is written;
#  - FITS names and sizes in `frames` (reliability review H2, M8, L11, L12,
#    L20): names with ( and [ are plain names (cfitsio's extended syntax
#    clobbered other files), headers that promise more data than the file
#    holds are refused at once, many header cards are read in linear time,
#    and gzip-compressed FITS is read.  These run with or without HDF5.
# usage: test_formats_cli.sh PYRGRID SOURCE_DIR
set -u
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
pyr_setup "$1"
bin=$pyr
src=$2
py=/usr/bin/python3
# ---------------------------------------------------------------- frames: FITS names, sizes, compression
if $py -c "import numpy, astropy" 2>/dev/null; then
  mkdir fits && cd fits
  $py -c "import numpy as np; from astropy.io import fits; fits.PrimaryHDU(np.random.default_rng(1).normal(100, 5, (6, 64, 64)).astype('f4')).writeto('cube.fits')"
  fr=(frames --quiet --backend cpu --history 3 --shifts '' --candidates '' --snr-png '')
  "$bin" "${fr[@]}" -o ref.fits cube.fits >/dev/null || bad "frames reference run"
  # the residual written under a name is the reference's, byte for byte
  same_res() { cmp -s "$1" ref.fits; }
  # H2: ( and [ in output names, in the file and in a directory, never name other files
  printf 'export PATH=/bin\n' > .bashrc; cp .bashrc bashrc.keep
  echo data > run; mkdir 'run(1)'
  echo out > .out; echo mx > .mx; cp .out out.keep; cp .mx mx.keep
  o=$("$bin" "${fr[@]}" -o 'bashrc(2).fits' cube.fits 2>&1) && same_res 'bashrc(2).fits' && cmp -s .bashrc bashrc.keep && ok ||
    bad "output 'bashrc(2).fits': $o; .bashrc $(wc -c < .bashrc) bytes"
  o=$("$bin" "${fr[@]}" -o 'out[1].fits' cube.fits 2>&1) && same_res 'out[1].fits' && cmp -s .out out.keep && ok || bad "output 'out[1].fits': $o"
  o=$("$bin" "${fr[@]}" -o 'run(1)/r.fits' cube.fits 2>&1) && same_res 'run(1)/r.fits' && [ "$(cat run)" = data ] && ok ||
    bad "output in 'run(1)/': $o; run holds $(wc -c < run) bytes"
  o=$("$bin" "${fr[@]}" -o r.fits --max-snr 'mx(1).fits' cube.fits 2>&1) && [ -s 'mx(1).fits' ] && cmp -s .mx mx.keep && ok ||
    bad "--max-snr 'mx(1).fits': $o"
  # names cfitsio's disk-file calls would still alter: a leading '~' or blank
  o=$("$bin" "${fr[@]}" -o '~r.fits' cube.fits 2>&1) && same_res '~r.fits' && ok || bad "output '~r.fits': $o"
  o=$("$bin" "${fr[@]}" -o ' r.fits' cube.fits 2>&1) && same_res ' r.fits' && ok || bad "output ' r.fits': $o"
  # L12 and the read side: an input named d.fits(e.fits) is that file; no copy e.fits appears
  cp cube.fits d.fits
  cp cube.fits 'd.fits(e.fits)'
  o=$("$bin" "${fr[@]}" -o l12.fits 'd.fits(e.fits)' 2>&1) && [ ! -e e.fits ] && ok || bad "input 'd.fits(e.fits)': $o; $(ls)"
  cp cube.fits 'x[1].fits'
  cp cube.fits '~in.fits'
  o=$("$bin" "${fr[@]}" -o x1.fits 'x[1].fits' 2>&1) && "$bin" "${fr[@]}" -o t1.fits '~in.fits' >/dev/null 2>&1 && ok ||
    bad "inputs 'x[1].fits' and '~in.fits': $o"
  grep -q "input: x\[1\].fits" x1.fits && ok || bad "the residual of 'x[1].fits' does not name its input"
  # L20: gzip-compressed FITS is read (the same residual but for the input's name); other compressions are named
  gzip -c cube.fits > cube.fits.gz
  o=$("$bin" "${fr[@]}" -o gz.fits cube.fits.gz 2>&1) && ok || bad "cube.fits.gz: $o"
  $py -c "
import sys, numpy as np
from astropy.io import fits
a, b = fits.getdata('ref.fits'), fits.getdata('gz.fits')
print('ok' if a.shape == (6, 64, 64) and np.array_equal(a, b, equal_nan=True) else 'differs')" 2>/dev/null | grep -qx ok && ok ||
    bad "the residual of cube.fits.gz differs or is missing"
  printf 'BZh91AY&SY%0100d' 0 > cube.fits.bz2
  o=$("$bin" "${fr[@]}" -o bz.fits cube.fits.bz2 2>&1)
  [ $? -eq 1 ] && echo "$o" | grep -q "compressed with bzip2, which is not read; decompress it first" && ok || bad "bzip2 input: $o"
  # a gzip trailer that claims more than deflate can expand to is refused before cfitsio allocates it
  $py -c "
import gzip, struct
d = gzip.compress(open('cube.fits', 'rb').read())
open('forged.fits.gz', 'wb').write(d[:-4] + struct.pack('<I', 0xfffffff0))"
  o=$("$bin" "${fr[@]}" -o f.fits forged.fits.gz 2>&1)
  [ $? -eq 1 ] && echo "$o" | grep -q "states an uncompressed size of 4294967280 bytes" && ok || bad "forged gzip size: $o"
  # M8: headers that promise more data than the file holds: refused at once, with the numbers
  $py - <<'PYEOF'
def header(*cards):
    return ''.join(c.ljust(80) for c in list(cards) + ['END']).ljust(2880).encode()
base = ['SIMPLE  =                    T', 'BITPIX  =                  -32']
open('lie.fits', 'wb').write(header(*base, 'NAXIS   =                    3', 'NAXIS1  =               100000',
                                    'NAXIS2  =               100000', 'NAXIS3  =                   10') + b'\0' * 16384)
open('lie_20k.fits', 'wb').write(header(*base, 'NAXIS   =                    3', 'NAXIS1  =                20000',
                                        'NAXIS2  =                20000', 'NAXIS3  =                    3') + b'\0' * 16384)
open('lie_frames.fits', 'wb').write(header(*base, 'NAXIS   =                    3', 'NAXIS1  =                   64',
                                           'NAXIS2  =                   64', 'NAXIS3  =           2147483647') + b'\0' * 16384)
PYEOF
  for f in lie.fits lie_20k.fits lie_frames.fits; do
    o=$(timeout 20 "$bin" "${fr[@]}" -o lie_out.fits $f 2>&1)
    [ $? -eq 1 ] && echo "$o" | grep -q "header promises .* but the file holds 19264 bytes" && [ ! -e lie_out.fits ] && ok || bad "lying header $f: $o"
  done
  o=$(timeout 20 "$bin" "${fr[@]}" -o lie_out.fits lie.fits 2>&1)
  echo "$o" | grep -q "100000 x 100000 x 10 pixels of 4 bytes (400000000000 bytes" && ok || bad "lie.fits: the numbers are missing: $o"
  # a tile-compressed cube whose header promises more frames than it has tiles
  $py -c "
import numpy as np
from astropy.io import fits
fits.HDUList([fits.PrimaryHDU(), fits.CompImageHDU(np.random.default_rng(2).normal(100, 5, (4, 48, 48)).astype('f4'), compression_type='RICE_1')]).writeto('rice.fits')
d = bytearray(open('rice.fits', 'rb').read())
i = d.find(b'ZNAXIS3 =')
d[i:i + 30] = ('ZNAXIS3 = %20d' % 1000000).encode()
open('rice_lie.fits', 'wb').write(bytes(d))"
  o=$("$bin" "${fr[@]}" -o rice_out.fits rice.fits 2>&1) && ok || bad "a RICE_1 tile-compressed cube: $o"
  o=$(timeout 20 "$bin" "${fr[@]}" -o rice_out2.fits rice_lie.fits 2>&1)
  [ $? -eq 1 ] && [ ! -e rice_out2.fits ] && echo "$o" | grep -q "rice_lie.fits" && ok || bad "a compressed cube with too few tiles: $o"
  # a compressed image with a tile size of 0: refused (cfitsio divided by it: SIGFPE)
  $py -c "
d = bytearray(open('rice.fits', 'rb').read())
i = d.find(b'ZTILE2  =')
d[i:i + 30] = ('ZTILE2  = %20d' % 0).encode()
open('rice_tile0.fits', 'wb').write(bytes(d))"
  o=$(timeout 20 "$bin" "${fr[@]}" -o rice_out3.fits rice_tile0.fits 2>&1)
  [ $? -eq 1 ] && echo "$o" | grep -q "a tile size ZTILEn that is not a number from 1 to 2^31 - 1" && ok || bad "ZTILE2 = 0: $o"
  # a table before the image naming a column with an unquoted 70-character value: refused (cfitsio overflowed a buffer: abort)
  $py -c "
import numpy as np
from astropy.io import fits
fits.HDUList([fits.PrimaryHDU(), fits.BinTableHDU.from_columns([fits.Column('a', 'J', array=np.arange(3))]),
              fits.ImageHDU(np.zeros((3, 48, 48), 'f4'))]).writeto('ttype.fits')
d = bytearray(open('ttype.fits', 'rb').read())
i = d.find(b'TTYPE1  =')
d[i:i + 80] = b'TTYPE1  = ' + b'A' * 70
open('ttype70.fits', 'wb').write(bytes(d))"
  o=$(timeout 20 "$bin" "${fr[@]}" -o ttype_out.fits ttype70.fits 2>&1)
  [ $? -eq 1 ] && echo "$o" | grep -q "unquoted value of 70 characters" && ok || bad "TTYPE1 of 70 characters: $o"
  # a compressed image whose ZNAXIS2 is 40 characters of no number: refused (cfitsio's message for it overflowed a buffer: abort)
  $py -c "
d = bytearray(open('rice.fits', 'rb').read())
i = d.find(b'ZNAXIS2 =')
d[i:i + 80] = (b'ZNAXIS2 = ' + b'X' * 40).ljust(80)
open('rice_longint.fits', 'wb').write(bytes(d))"
  o=$(timeout 20 "$bin" "${fr[@]}" -o rice_out4.fits rice_longint.fits 2>&1)
  [ $? -eq 1 ] && [ ! -e rice_out4.fits ] && echo "$o" | grep -q "gives ZNAXIS2 a value of 29 characters or more" && ok || bad "ZNAXIS2 of 40 characters: $o"
  # a compressed image with no ZTILE1 and a first axis of length 0: refused (cfitsio took the axis as the tile size and divided by it: SIGFPE)
  $py -c "
d = bytearray(open('rice.fits', 'rb').read())
i = d.find(b'ZTILE1  =')
d[i:i + 80] = b'COMMENT'.ljust(80)
i = d.find(b'ZNAXIS1 =')
d[i:i + 30] = ('ZNAXIS1 = %20d' % 0).encode()
open('rice_axis0.fits', 'wb').write(bytes(d))"
  o=$(timeout 20 "$bin" "${fr[@]}" -o rice_out5.fits rice_axis0.fits 2>&1)
  [ $? -eq 1 ] && [ ! -e rice_out5.fits ] && echo "$o" | grep -q "an axis length ZNAXISn that is not a number from 1" && ok || bad "ZNAXIS1 = 0 without ZTILE1: $o"
  # L11: 100000 HISTORY cards are read (and copied) in linear time; a quadratic de-duplication took minutes
  $py - <<'PYEOF'
import numpy as np
cards = ['SIMPLE  =                    T', 'BITPIX  =                  -32', 'NAXIS   =                    3',
         'NAXIS1  =                   48', 'NAXIS2  =                   48', 'NAXIS3  =                    4',
         "OBJECT  = 'first'", "OBJECT  = 'second'"] + ['HISTORY card %d' % i for i in range(100000)] + ['END']
h = ''.join(c.ljust(80) for c in cards).encode()
h += b' ' * (-len(h) % 2880)
d = np.random.default_rng(3).normal(100, 5, (4, 48, 48)).astype('>f4').tobytes()
open('history.fits', 'wb').write(h + d + b'\0' * (-len(d) % 2880))
PYEOF
  # (CPU seconds, so that a busy machine does not decide: about 1 s, and 33 s quadratic)
  cpu=$(TIMEFORMAT=%U; { time timeout 120 "$bin" "${fr[@]}" -o hist_out.fits history.fits >/dev/null 2>hist.err; } 2>&1); rc=$?
  [ $rc -eq 0 ] && awk "BEGIN { exit !($cpu < 10) }" && ok || bad "100000 HISTORY cards: rc $rc, $cpu CPU seconds, $(cat hist.err)"
  $py -c "
from astropy.io import fits
h = fits.getheader('hist_out.fits')
print('ok' if len(h['HISTORY']) == 100004 and h['OBJECT'] == 'second' else (len(h['HISTORY']), h.get('OBJECT')))" 2>/dev/null | grep -qx ok && ok ||
    bad "the residual's header lost cards or kept a duplicate keyword"
  ls -A | grep -q '\.tmp\.' && bad "FITS cases left temporaries: $(ls -A)" || ok
  cd "$work"
else
  echo "note: no numpy/astropy for $py: the FITS cases are skipped"
fi

if ! "$bin" run "$src/examples/heat2d.ini" -q --set grid.nx=5 --set grid.ny=5 --set output.field=probe.h5 --set output.image= \
    >/dev/null 2>probe.err; then
  if grep -q "built without HDF5" probe.err; then echo "built without HDF5: the HDF5 cases are skipped"; [ $fails -eq 0 ] || exit 1; exit 77; fi
fi
have_h5py=0
$py -c "import h5py, numpy" 2>/dev/null && have_h5py=1
[ $have_h5py = 1 ] || echo "note: no h5py for /usr/bin/python3: the independent reads are skipped"
# the result of a python check: its last line is "ok" or the reason
pycheck() { # name, script (argv: the rest)
  local name=$1 script=$2
  shift 2
  [ $have_h5py = 1 ] || return 0
  local o
  o=$($py -c "$script" "$@" 2>&1)
  [ "$(echo "$o" | tail -1)" = ok ] && ok || bad "$name: $o"
}

heat=(--set grid.nx=65 --set grid.ny=49 --set scheme.dt=1e-5 --set run.backend=cpu --set output.image= -q)
E=$src/examples/heat2d.ini

# ---------------------------------------------------------------- restarts
"$bin" run "$E" "${heat[@]}" --set scheme.steps=120 --set output.field=straight.npy >/dev/null || bad "straight run"
"$bin" run "$E" "${heat[@]}" --set scheme.steps=50 --set output.field=half.h5 >/dev/null || bad "half run"
out=$("$bin" run "$E" "${heat[@]}" --set scheme.steps=120 --set initial.kind=file --set initial.file=half.h5 \
  --set run.method=pyramid --set run.memory=32K --set output.field=rest.h5 --set output.every=10 --report rest.json)
echo "$out" | grep -q "steps=70 from=50" && ok || bad "restart summary: $out"
"$bin" run "$E" "${heat[@]}" --set scheme.steps=120 --set output.field=snap.npy --set output.every=40 >/dev/null || bad "snapshot run"
out=$("$bin" run "$E" "${heat[@]}" --set scheme.steps=120 --set initial.kind=file --set initial.file=snap_000080.npy \
  --set initial.step=80 --set output.field=rest2.npy --set output.every=20 --set run.method=trivial)
echo "$out" | grep -q "steps=40 from=80" && [ -s rest2_000100.npy ] && [ -s rest2_000120.npy ] && [ ! -e rest2_000020.npy ] && ok ||
  bad "npy restart: $out $(ls)"
cmp -s straight.npy rest2.npy && ok || bad "the .npy restart differs from the straight run"
cmp -s snap_000120.npy straight.npy && ok || bad "the straight run's last snapshot differs from its field"
pycheck heat-restart '
import sys, numpy as np, h5py
a = np.load("straight.npy"); f = h5py.File("rest.h5", "r")
assert np.array_equal(f["u"][...], a), "restart differs from the straight run"
assert f.attrs["step"] == 120 and f["u"].attrs["step"] == 120, f.attrs["step"]
assert abs(f.attrs["t"] - 120 * 1e-5) < 1e-15, f.attrs["t"]
steps = sorted(int(k) for k in f["snapshots"])
assert steps == list(range(60, 121, 10)), steps
assert f["snapshots/000120/u"].id == f["u"].id, "the final field is not the last snapshot"
assert np.array_equal(f["snapshots/000080/u"][...], np.load("snap_000080.npy")), "snapshot 80 differs"
print("ok")'

# Poisson with a tolerance: the restart stops at the same sweep with the same bytes
pois=(--set grid.nx=33 --set grid.ny=33 --set scheme.tolerance=1e-7 --set scheme.check_every=20 --set run.backend=cpu --set output.image= -q)
P=$src/examples/poisson2d.ini
out=$("$bin" run "$P" "${pois[@]}" --set output.field=pstraight.h5)
sweeps=$(echo "$out" | sed -n 's/.* sweeps=\([0-9]*\).*/\1/p')
[ -n "$sweeps" ] && [ "$sweeps" -gt 100 ] && ok || bad "poisson straight: $out"
"$bin" run "$P" "${pois[@]}" --set scheme.iterations=100 --set output.field=phalf.h5 >/dev/null 2>&1
[ $? -eq 3 ] && ok || bad "the first half should stop unconverged (exit 3)"
out=$("$bin" run "$P" "${pois[@]}" --set initial.kind=file --set initial.file=phalf.h5 --set output.field=prest.h5 \
  --set run.method=pyramid --set run.memory=24K)
echo "$out" | grep -q "sweeps=$((sweeps - 100)) from=100" && echo "$out" | grep -q "converged=yes" && ok || bad "poisson restart: $out"
pycheck poisson-restart '
import numpy as np, h5py
a, b = h5py.File("pstraight.h5", "r"), h5py.File("prest.h5", "r")
assert np.array_equal(a["u"][...], b["u"][...]), "the restart differs"
assert a.attrs["step"] == b.attrs["step"], (a.attrs["step"], b.attrs["step"])
assert "f" in a and np.array_equal(a["f"][...], b["f"][...]) and a.attrs["rhs"] == "sine"
assert "t" not in a["u"].attrs or True
print("ok")'
# misaligned restarts are refused before anything is written
"$bin" run "$P" "${pois[@]}" --set scheme.iterations=90 --set output.field=p90.h5 >/dev/null 2>&1
o=$("$bin" run "$P" "${pois[@]}" --set initial.kind=file --set initial.file=p90.h5 --set output.field=bad.h5 2>&1)
[ $? -eq 1 ] && echo "$o" | grep -q "check_every = 20" && [ ! -e bad.h5 ] && ok || bad "misaligned poisson restart: $o"
o=$("$bin" run "$E" "${heat[@]}" --set scheme.steps=120 --set initial.kind=file --set initial.file=half.h5 --set output.every=20 \
  --set output.field=bad.npy 2>&1)
[ $? -eq 1 ] && echo "$o" | grep -q "output.every = 20" && [ ! -e bad.npy ] && ok || bad "misaligned snapshots: $o"
o=$("$bin" run "$E" "${heat[@]}" --set scheme.steps=40 --set initial.kind=file --set initial.file=half.h5 --set output.field=bad.npy 2>&1)
[ $? -eq 1 ] && echo "$o" | grep -q "past scheme.steps = 40" && [ ! -e bad.npy ] && ok || bad "restart past the end: $o"

# ---------------------------------------------------------------- the files
pycheck h5-attributes '
import json, numpy as np, h5py
f = h5py.File("rest.h5", "r")
a = f.attrs
assert a["format"] == "pyrgrid-field" and a["format_version"] == 1 and a["equation"] == "heat", dict(a)
assert list(a["n"]) == [65, 49, 1] and a["dims"] == 2 and a["precision"] == "double"
assert np.allclose(a["h"][:2], [1 / 64, 1 / 48]) and a["dt"] == 1e-5 and a["alpha"] == 1.0 and a["steps"] == 120
plan = json.loads(a["plan"]); run = json.loads(a["run"])
assert plan["method"] == "pyramid" and plan["steps"] == 70 and run["steps"] == 70, (plan, run)
assert a["initial"] == "half.h5" and f["u"].chunks is not None and f["u"].dtype == np.float64
print("ok")'
pycheck xdmf '
import xml.etree.ElementTree as ET, h5py
root = ET.parse("rest.xmf").getroot()
grids = root.findall("./Domain/Grid/Grid")
assert len(grids) == 7, len(grids)
f = h5py.File("rest.h5", "r")
times = []
for g in grids:
    times.append(float(g.find("Time").get("Value")))
    assert g.find("Topology").get("TopologyType") == "2DCoRectMesh" and g.find("Topology").get("Dimensions") == "49 65"
    item = g.find("Attribute/DataItem")
    name, path = item.text.split(":")
    assert name == "rest.h5" and path in f and f[path].shape == (49, 65), item.text
assert times == sorted(times) and abs(times[-1] - 1.2e-3) < 1e-15, times
print("ok")'
# 3D float with compression; 1D has no sidecar
"$bin" run "$src/examples/heat3d.ini" -q --set grid.nx=17 --set grid.ny=13 --set grid.nz=9 --set scheme.steps=10 --set run.backend=cpu \
  --set output.image= --set output.field=c3.h5 --set output.compression=6 --set output.every=5 >/dev/null && [ -s c3.xmf ] && ok ||
  bad "3D run"
pycheck h5-3d '
import numpy as np, h5py, xml.etree.ElementTree as ET
f = h5py.File("c3.h5", "r")
assert f["u"].shape == (9, 13, 17) and f["u"].dtype == np.float32 and f["u"].compression == "gzip" and f["u"].shuffle
g = ET.parse("c3.xmf").getroot().find("./Domain/Grid/Grid")
assert g.find("Topology").get("TopologyType") == "3DCoRectMesh" and g.find("Geometry").get("GeometryType") == "ORIGIN_DXDYDZ"
assert g.find("Topology").get("Dimensions") == "9 13 17" and g.find("Attribute/DataItem").get("Precision") == "4"
print("ok")'
"$bin" run "$src/examples/heat1d.ini" -q --set scheme.steps=10 --set run.backend=cpu --set output.image= --set output.field=one.h5 \
  >/dev/null && [ -s one.h5 ] && [ ! -e one.xmf ] && ok || bad "1D: $(ls one.*)"

# ---------------------------------------------------------------- reports
pycheck report '
import json
r = json.load(open("rest.json"))
assert r["report"] == "pyrgrid-run-report" and r["command"] == "run" and r["exit_status"] == 0
assert r["problem"]["scheme"]["steps"] == 120 and r["restart"] == {"from": "half.h5", "step": 50, "t": 0.0005}, r["restart"]
assert r["plan"]["method"] == "pyramid" and r["run"]["steps"] == 70 and r["step"] == 120
s = r["seconds"]
assert all(s[k] >= 0 for k in ("plan", "initial", "execute", "output")) and abs(s["total"] - sum(s[k] for k in ("plan", "initial", "execute", "output"))) < 1e-9
assert r["gcells_per_second"] > 0 and r["versions"]["pyrgrid"] and r["machine"]["cpu_threads"] >= 1
assert r["outputs"] == {"field": "rest.h5", "xdmf": "rest.xmf", "image": None, "every": 10}, r["outputs"]
print("ok")'
"$bin" plan "$P" "${pois[@]}" --set run.method=pyramid --set run.memory=24K --json > plan.json && ok || bad "plan --json"
$py -c '
import json
r = json.load(open("plan.json"))
assert r["problem"]["scheme"]["equation"] == "poisson" and r["options"]["memory"] == 24576 and r["plan"]["method"] == "pyramid"
assert r["plan"]["fields"] == 2 and r["plan"]["predicted_seconds"] > 0
print("ok")' | grep -qx ok && ok || bad "plan json: $(cat plan.json)"
o=$("$bin" run "$E" "${heat[@]}" --set scheme.steps=5 --set output.field=r.npy --report /nonexistent/dir/r.json 2>&1)
[ $? -eq 1 ] && echo "$o" | grep -q -- "--report" && [ ! -e r.npy ] && ok || bad "unwritable report: $o"
o=$("$bin" run "$E" "${heat[@]}" --set scheme.steps=5 --set output.field=same.json --report same.json 2>&1)
[ $? -eq 1 ] && echo "$o" | grep -q "same file" && ok || bad "report = field: $o"
o=$("$bin" run "$E" "${heat[@]}" --report 2>&1)
[ $? -eq 2 ] && echo "$o" | grep -q "needs a file name" && ok || bad "--report without a file: $o"

# solve and frames reports
printf '[system]\nkind = laplace\nN = 24\nM = 40\n[run]\nbackend = cpu\n[output]\nsolution = y.npy\n' > s.ini
"$bin" solve s.ini -q --report solve.json >/dev/null && ok || bad "solve --report"
$py -c '
import json
r = json.load(open("solve.json"))
assert r["command"] == "solve" and r["system"]["n"] == 24 and r["result"]["stop"] == "converged" and r["exit_status"] == 0
assert r["outputs"]["solution"] == "y.npy" and r["seconds"]["iterate"] > 0 and r["gunknowns_per_second"] > 0
print("ok")' | grep -qx ok && ok || bad "solve report: $(cat solve.json)"
$py -c 'import numpy as np; np.save("stack.npy", (np.random.default_rng(1).random((5, 48, 48)) * 100).astype(np.float32))'
"$bin" frames stack.npy --quiet --backend cpu --history 3 -o res.npy --snr-png "" --report frames.json >/dev/null && ok || bad "frames --report"
$py -c '
import json
r = json.load(open("frames.json"))
assert r["command"] == "frames" and r["inputs"] == ["stack.npy"] and r["sequence"] == {"frames": 5, "nx": 48, "ny": 48}
assert r["options"]["history"] == 3 and r["run"]["backend"] == "cpu" and r["seconds"]["total"] > 0 and r["outputs"]["residual"] == "res.npy"
print("ok")' | grep -qx ok && ok || bad "frames report: $(cat frames.json)"
rm -f res2.npy shifts.csv
o=$("$bin" frames stack.npy --quiet --backend cpu --history 3 -o res2.npy --snr-png "" --report /nonexistent/f.json 2>&1)
[ $? -eq 1 ] && echo "$o" | grep -q -- "--report" && [ ! -e res2.npy ] && [ ! -e shifts.csv ] && ok || bad "frames unwritable report: $o"

# ---------------------------------------------------------------- inputs
# the grid from initial.file; inputs relative to the problem file's folder
mkdir -p case out
$py -c 'import numpy as np; np.save("case/u0.npy", np.arange(7 * 5, dtype=np.float64).reshape(7, 5) / 35)' || bad "numpy"
printf '[scheme]\nsteps = 3\ndt = 1e-3\n[initial]\nkind = file\nfile = u0.npy\n[run]\nbackend = cpu\n[output]\nfield = r.npy\nimage =\n' > case/p.ini
(cd out && "$bin" run ../case/p.ini -q > ../rel.txt 2>&1) && grep -q "grid=7x5 " rel.txt && [ -s out/r.npy ] && [ ! -e case/r.npy ] && ok ||
  bad "relative input, grid from the file: $(cat rel.txt)"
o=$(cd out && "$bin" run ../case/p.ini -q --set grid.nx=9 2>&1)
[ $? -eq 1 ] && echo "$o" | grep -q "expected (7, 9) from grid.nx" && ok || bad "size given and different: $o"
# solve's input arrays too
$py -c 'import numpy as np; np.save("case/y0.npy", np.full((4, 5), 0.5))'
printf '[system]\nkind = laplace\nN = 4\nM = 5\ninitial = file\ninitial_file = y0.npy\n[run]\nbackend = cpu\n[output]\nsolution = y.npy\n' > case/s.ini
(cd out && "$bin" solve ../case/s.ini -q > ../srel.txt 2>&1) && [ -s out/y.npy ] && ok || bad "solve relative input: $(cat srel.txt)"
# --set paths stay relative to the current directory
o=$(cd out && "$bin" run ../case/p.ini -q --set initial.file=u0.npy 2>&1)
[ $? -eq 1 ] && echo "$o" | grep -q "u0.npy" && ok || bad "--set path relative to the cwd: $o"

# bad HDF5 inputs: clear errors, nothing written
head -c 700 rest.h5 > trunc.h5
echo "plain text" > text.h5
for f in trunc.h5 text.h5; do
  o=$("$bin" run "$E" "${heat[@]}" --set initial.kind=file --set initial.file=$f --set output.field=x.npy 2>&1)
  [ $? -eq 1 ] && echo "$o" | grep -q "initial.file: $f" && [ ! -e x.npy ] && ok || bad "bad input $f: $o"
done
o=$("$bin" run "$E" "${heat[@]}" --set initial.kind=file --set initial.file=rest.h5 --set initial.step=65 --set output.field=x.npy 2>&1)
[ $? -eq 1 ] && echo "$o" | grep -q "no snapshot of that step" && [ ! -e x.npy ] && ok || bad "missing snapshot: $o"
o=$("$bin" run "$E" "${heat[@]}" --set scheme.steps=80 --set initial.kind=file --set initial.file=rest.h5 --set initial.step=70 \
  --set output.field=s70.npy 2>&1) && "$bin" run "$E" "${heat[@]}" --set scheme.steps=80 --set output.field=s80.npy >/dev/null &&
  cmp -s s70.npy s80.npy && ok || bad "restart from a snapshot: $o"
# a pyrgrid result that lost an attribute is refused as a restart
if [ $have_h5py = 1 ]; then
  cp half.h5 nostep.h5
  $py -c 'import h5py; f = h5py.File("nostep.h5", "a"); del f["u"].attrs["t"]; f.close()'
  o=$("$bin" run "$E" "${heat[@]}" --set scheme.steps=120 --set initial.kind=file --set initial.file=nostep.h5 --set output.field=x.npy 2>&1)
  [ $? -eq 1 ] && echo "$o" | grep -q "lacks the attribute t" && [ ! -e x.npy ] && ok || bad "missing attribute: $o"
  cp half.h5 nover.h5
  $py -c 'import h5py; f = h5py.File("nover.h5", "a"); del f.attrs["format_version"]; f.close()'
  o=$("$bin" run "$E" "${heat[@]}" --set scheme.steps=120 --set initial.kind=file --set initial.file=nover.h5 --set output.field=x.npy 2>&1)
  [ $? -eq 1 ] && echo "$o" | grep -q "format_version (it is missing)" && [ ! -e x.npy ] && ok || bad "missing format_version: $o"
  $py -c 'import h5py, numpy as np; f = h5py.File("i8.h5", "w"); f["u"] = np.zeros((49, 65), np.int64); f.close()'
  o=$("$bin" run "$E" "${heat[@]}" --set initial.kind=file --set initial.file=i8.h5 --set output.field=x.npy 2>&1)
  [ $? -eq 1 ] && echo "$o" | grep -q "holds integers" && [ ! -e x.npy ] && ok || bad "integer dataset: $o"
fi
# ---------------------------------------------------------------- Maxwell
# every component of the grid's mode and the coefficients that vary, in the
# file and its sidecar, equal to the .npy run; 3D: all six components
cat > mx.ini <<'EOF2'
[grid]
dims = 2
nx = 41
ny = 31
lx = 2.0
ly = 1.5
[scheme]
equation = maxwell
courant = 0.7
steps = 40
precision = float
[boundary]
kind = cpml
cpml_cells = 6
[material]
shape1 = box 0.8 1.2 0.5 1.0 eps_r=4 sigma=0.5
[source]
source1 = Ez point 10 15 ricker frequency=2 delay=0.6
[probe]
probe1 = Ez 30 15
[output]
field = mx.npy
probes = mxp.csv
EOF2
"$bin" run mx.ini -q --set run.backend=cpu >/dev/null && ok || bad "Maxwell .npy run"
out=$("$bin" run mx.ini -q --set run.backend=cpu --set output.field=mx.h5 --set output.probes=mxp2.csv --set output.every=20 \
  --set output.compression=3 --report mx.json) && [ -s mx.h5 ] && [ -s mx.xmf ] && ok || bad "Maxwell HDF5 run: $out"
cmp -s mxp.csv mxp2.csv && ok || bad "the probes of the HDF5 run differ"
pycheck maxwell-h5 '
import json, sys, numpy as np, h5py, xml.etree.ElementTree as ET
f = h5py.File("mx.h5", "r")
dt = f.attrs["dt"]
assert f.attrs["equation"] == "maxwell" and f.attrs["mode"] == "tm" and f.attrs["boundary"] == "cpml" and f.attrs["cpml_cells"] == 6, dict(f.attrs)
assert f.attrs["fields"] == "Ez Hx Hy ca cb", f.attrs["fields"]
assert abs(dt - 0.7 / np.sqrt(1 / 0.05**2 + 1 / 0.05**2)) < 1e-15, dt
for c in ("Ez", "Hx", "Hy"):
    a = np.load("mx_" + c + ".npy")
    assert f[c].dtype == np.float32 and np.array_equal(f[c][...], a) and a.any(), c
    assert f[c].attrs["step"] == 40, c
    assert np.array_equal(f["snapshots/000040/" + c][...], a), c
    assert f["snapshots/000020/" + c].attrs["step"] == 20 and not np.array_equal(f["snapshots/000020/" + c][...], a), c
    assert f[c].compression == "gzip", c
assert "Ex" not in f and "Hz" not in f and "dh" not in f and "psi_Ezx" not in f, list(f)
assert f["ca"].shape == (31, 41) and np.ptp(f["cb"][...]) > 0, "coefficients"
assert abs(f["Ez"].attrs["t"] - 40 * dt) < 1e-15 and abs(f["Hx"].attrs["t"] - 39.5 * dt) < 1e-15, "times"
assert list(f["Hx"].attrs["offset"]) == [0, 0.5, 0] and list(f["Hy"].attrs["offset"]) == [0.5, 0, 0] and list(f["Ez"].attrs["offset"]) == [0, 0, 0]
x = ET.parse("mx.xmf").getroot()
grids = x.findall("./Domain/Grid/Grid")
assert [g.get("Name") for g in grids] == ["step 20", "step 40"], [g.get("Name") for g in grids]
for g, step in zip(grids, (20, 40)):
    assert abs(float(g.find("Time").get("Value")) - step * dt) < 1e-12
    assert g.find("Topology").get("Dimensions") == "31 41" and g.find("Topology").get("TopologyType") == "2DCoRectMesh"
    names = [a.get("Name") for a in g.findall("Attribute")]
    assert names == ["Ez", "Hx", "Hy", "ca", "cb"], names
    items = [a.find("DataItem").text for a in g.findall("Attribute")]
    assert items[0] == "mx.h5:/snapshots/%06d/Ez" % step and items[3] == "mx.h5:/ca", items
r = json.load(open("mx.json"))
assert r["outputs"]["field"] == "mx.h5" and r["outputs"]["xdmf"] == "mx.xmf" and r["outputs"]["probes"] == "mxp2.csv", r["outputs"]
assert r["step"] == 40 and abs(r["t"] - 40 * dt) < 1e-15 and r["problem"]["scheme"]["equation"] == "maxwell" and r["run"]["steps"] == 40
print("ok")'
cav=(--set grid.nx=17 --set grid.ny=15 --set grid.nz=11 --set scheme.steps=12 --set output.image= --set output.probes=
     --set "source.source1=Ez point 5 5 5 gaussian width=0.05 delay=0.2" --set "probe.probe1=Ez 9 9 5" --set "probe.probe2=Hx 4 10 5"
     --set run.backend=cpu -q)
"$bin" run "$src/examples/maxwell_cavity.ini" "${cav[@]}" --set output.every=0 --set output.field=cav.npy >/dev/null &&
  "$bin" run "$src/examples/maxwell_cavity.ini" "${cav[@]}" --set output.every=6 --set output.field=cav.h5 >/dev/null && ok ||
  bad "Maxwell 3D runs"
pycheck maxwell-h5-3d '
import numpy as np, h5py, xml.etree.ElementTree as ET
f = h5py.File("cav.h5", "r")
six = ["Ex", "Ey", "Ez", "Hx", "Hy", "Hz"]
assert f.attrs["fields"] == " ".join(six) and "mode" not in f.attrs and f.attrs["boundary"] == "pec", dict(f.attrs)
for c in six:
    assert f[c].shape == (11, 15, 17) and np.array_equal(f[c][...], np.load("cav_" + c + ".npy")), c
assert list(f["Hz"].attrs["offset"]) == [0.5, 0.5, 0] and list(f["Ez"].attrs["offset"]) == [0, 0, 0.5]
grids = ET.parse("cav.xmf").getroot().findall("./Domain/Grid/Grid")
assert len(grids) == 2 and all([a.get("Name") for a in g.findall("Attribute")] == six for g in grids)
assert grids[0].find("Topology").get("Dimensions") == "11 15 17" and grids[0].find("Topology").get("TopologyType") == "3DCoRectMesh"
print("ok")'
# a Maxwell HDF5 output over an input, and a restart of Maxwell, are refused before the run
o=$("$bin" run mx.ini -q --set output.field=mx.h5 --set output.probes= --report mx.ini 2>&1)
[ $? -eq 1 ] && grep -q "equation = maxwell" mx.ini && ok || bad "report over the problem file: $o"

# an HDF5 output to a FIFO is refused before the run
mkfifo pipe.h5
o=$("$bin" run "$E" "${heat[@]}" --set scheme.steps=5 --set output.field=pipe.h5 2>&1)
[ $? -eq 1 ] && echo "$o" | grep -q "not a regular file" && ok || bad "FIFO output: $o"
ls -A | grep -q '\.tmp\.' && bad "temporaries left: $(ls -A)" || ok

finish
