#!/bin/sh
# Exchange .npy files with NumPy: pyrgrid writes, np.load checks; NumPy
# writes, pyrgrid reads.  Usage: test_npy_numpy.sh TEST_NPY_BINARY WORKDIR
# Exits 77 (skipped) when NumPy is not available to /usr/bin/python3.
PY=/usr/bin/python3
if ! "$PY" -c "import numpy" 2>/dev/null; then
    echo "numpy is not importable by $PY; skipping"
    exit 77
fi
set -e
bin=$1
dir=$2
rm -rf "$dir"
mkdir -p "$dir"
"$bin" --write "$dir"
"$PY" - "$dir" <<'PYEOF'
import sys
import numpy as np

d = sys.argv[1]

def ref(shape, dtype):
    n = int(np.prod(shape))
    return (np.arange(n) * 0.5 - 7.0).astype(dtype).reshape(shape)

def expect(name, shape, dtype):
    path = f"{d}/{name}"
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        hdr = np.lib.format.read_array_header_1_0(f)
        assert version == (1, 0), f"{name}: version {version}"
        assert f.tell() % 64 == 0, f"{name}: data at {f.tell()}, not 64-aligned"
        assert hdr == (shape, False, np.dtype(dtype)), f"{name}: header {hdr}"
    a = np.load(path)
    assert a.shape == shape, f"{name}: shape {a.shape}, expected {shape}"
    assert a.dtype == np.dtype(dtype), f"{name}: dtype {a.dtype}, expected {dtype}"
    assert np.array_equal(a, ref(shape, dtype)), f"{name}: values differ"

expect("c_f32_1d.npy", (37,), "<f4")
expect("c_f64_2d.npy", (5, 7), "<f8")
expect("c_f32_3d.npy", (2, 3, 4), "<f4")
expect("c_f64_scalar.npy", (), "<f8")

np.save(f"{d}/np_f32_1d.npy", ref((37,), np.float32))
np.save(f"{d}/np_f64_2d.npy", ref((5, 7), np.float64))
np.save(f"{d}/np_f32_3d.npy", ref((2, 3, 4), np.float32))
for v in (2, 3):
    with open(f"{d}/np_f64_2d_v{v}.npy", "wb") as f:
        np.lib.format.write_array(f, ref((5, 7), np.float64), version=(v, 0))
np.save(f"{d}/np_i64.npy", np.arange(6, dtype=np.int64).reshape(2, 3))
np.save(f"{d}/np_fortran.npy", np.asfortranarray(ref((2, 3), np.float64)))
np.save(f"{d}/np_big.npy", ref((2, 3), ">f8"))
print("numpy", np.__version__, "read pyrgrid's files")
PYEOF
"$bin" --check "$dir"
rm -rf "$dir"
