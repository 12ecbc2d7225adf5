#!/usr/bin/env bash
# Ctrl-C during a run that writes an HDF5 result (issue 49, item 1): a SIGINT
# sent from a timer, once the run has written a snapshot, stops the run; the
# .h5 is committed whole with what it has, marked incomplete (complete = 0,
# steps_done = the step reached), no temporary is left; the run says
# "interrupted at step N; restart with initial.kind=file initial.file=F
# initial.step=K", and the restart it names gives the same bits as a run
# that was never interrupted.
# usage: test_sigint_h5.sh PYRGRID RUNNER...   (RUNNER: the command that runs a problem file, e.g.
#        "PYRGRID run" or the sigint_run driver; PYRGRID makes the straight run and the restart)
# Exits 77 (skipped) without HDF5 or without Python's h5py.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
pyrgrid=$1
shift
runner=("$@")
py=/usr/bin/python3
[ -x "$py" ] && "$py" -c 'import h5py, numpy' 2>/dev/null || { echo "h5py missing: skipped"; exit 77; }
pyr_setup "$pyrgrid"
pyrgrid=$pyr
printf '[grid]\ndims = 1\nnx = 9\n[scheme]\nsteps = 1\ndt = 1e-4\n[output]\nfield = probe.h5\n' > probe.ini
if ! "$pyrgrid" run probe.ini -q > /dev/null 2> probe.err; then
  grep -q "built without HDF5" probe.err && { echo "built without HDF5: skipped"; exit 77; }
  cat probe.err; echo "FAIL: a one-step HDF5 run failed"; exit 1
fi

cat > heat.ini <<'INI'
[grid]
dims = 2
nx = 481
ny = 401
lx = 1.2
ly = 1.0
[scheme]
equation = heat
alpha = 1.0
dt = 1e-6
steps = 12000
precision = double
[initial]
kind = gauss
[run]
method = naive
threads = 1
[output]
field = a.h5
INI

# run the problem with the overrides $2..., interrupt it once $1 is true, leave rc, err
interrupt_when() {
  local cond=$1
  shift
  "${runner[@]}" heat.ini "$@" 2> err &
  local pid=$! i
  for i in $(seq 1 1500); do
    if eval "$cond"; then break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
  done
  kill -INT "$pid" 2>/dev/null
  wait "$pid"
  rc=$?
}
tmp_size() { stat -c %s .a.h5.tmp.* 2>/dev/null | head -1; }

# 1. snapshots every 500 steps: the signal once one is on disk
# the run never interrupted, to compare with
"$pyrgrid" run heat.ini -q --set output.every=500 --set output.field=c.h5 > /dev/null || fail "the straight run failed"
interrupt_when '[ "$(tmp_size)" -gt 300000 ] 2>/dev/null' "--set" "output.every=500"
cat err
[ "$rc" = 130 ] || fail "interrupted run: exit status $rc, expected 130"
line=$(grep -o 'interrupted at step [0-9]*; restart with initial.kind=file initial.file=a.h5 initial.step=[0-9]*' err)
[ -n "$line" ] || fail "no 'interrupted at step N; restart with initial.kind=file initial.file=a.h5 initial.step=K' line"
n=$(echo "$line" | sed -E 's/interrupted at step ([0-9]+);.*/\1/')
k=$(echo "$line" | sed -E 's/.*initial.step=([0-9]+)$/\1/')
ls -a | grep -q '\.tmp\.' && fail "a temporary was left: $(ls -a)"
[ -f a.xmf ] || fail "no XDMF sidecar a.xmf"
if [ -n "$line" ]; then
  [ "$n" -gt 0 ] && [ "$n" -lt 12000 ] || fail "interrupted at step $n: not inside the run (the signal came too late?)"
  [ $((k % 500)) = 0 ] && [ "$k" -le "$n" ] && [ "$k" -gt $((n - 500)) ] || fail "initial.step=$k: not the last snapshot at or before step $n"
  "$py" - "$n" <<'PY' || fail "a.h5 is not the interrupted run's file (above)"
import sys, h5py
n = int(sys.argv[1])
with h5py.File("a.h5", "r") as f:
    a = f.attrs
    assert int(a["complete"]) == 0, ("complete", a["complete"])
    assert int(a["steps_done"]) == n, ("steps_done", a["steps_done"], n)
    assert int(a["step"]) == n and int(f["u"].attrs["step"]) == n, (a["step"], f["u"].attrs["step"])
    snaps = sorted(int(s) for s in f["snapshots"])
    assert snaps and snaps == list(range(500, n + 1, 500)), snaps
    for s in snaps:
        assert f["snapshots/%06d/u" % s].shape == (401, 481)
PY
  # the restart it names
  "$pyrgrid" run heat.ini -q --set output.every=500 --set initial.kind=file --set initial.file=a.h5 --set initial.step="$k" \
    --set output.field=b.h5 > /dev/null || fail "the restart it names failed"
  "$py" - <<'PY' || fail "the restart's result differs from the straight run's"
import h5py, numpy as np
with h5py.File("b.h5", "r") as b, h5py.File("c.h5", "r") as c:
    assert int(c.attrs["complete"]) == 1 and int(b.attrs["complete"]) == 1
    assert int(b.attrs["step"]) == int(c.attrs["step"]) == 12000
    assert np.asarray(b["u"]).tobytes() == np.asarray(c["u"]).tobytes(), "bits differ"
    # the snapshots after the restart's step too
    for s in b["snapshots"]:
        assert np.asarray(b["snapshots/%s/u" % s]).tobytes() == np.asarray(c["snapshots/%s/u" % s]).tobytes(), s
PY
fi

# 2. no snapshots: the restart starts from the step reached
rm -f a.h5 a.xmf b.h5 b.xmf
interrupt_when '[ -n "$(tmp_size)" ] && sleep 0.3' "--set" "output.every=0"
cat err
[ "$rc" = 130 ] || fail "interrupted run without snapshots: exit status $rc, expected 130"
line=$(grep -o 'interrupted at step [0-9]*; restart with initial.kind=file initial.file=a.h5 initial.step=[0-9]*' err)
n=$(echo "$line" | sed -E 's/interrupted at step ([0-9]+);.*/\1/')
k=$(echo "$line" | sed -E 's/.*initial.step=([0-9]+)$/\1/')
if [ -z "$line" ] || [ "$n" != "$k" ]; then
  fail "without snapshots: expected 'interrupted at step N; restart with ... initial.step=N'"
else
  "$pyrgrid" run heat.ini -q --set initial.kind=file --set initial.file=a.h5 --set initial.step="$k" --set output.field=b.h5 > /dev/null ||
    fail "the restart from step $k failed"
  "$py" - <<'PY' || fail "the restart from the interrupted step differs from the straight run"
import h5py, numpy as np
with h5py.File("a.h5", "r") as a, h5py.File("b.h5", "r") as b, h5py.File("c.h5", "r") as c:
    assert int(a.attrs["complete"]) == 0 and "snapshots" not in a
    assert np.asarray(b["u"]).tobytes() == np.asarray(c["u"]).tobytes(), "bits differ"
PY
fi

finish "all passed"
