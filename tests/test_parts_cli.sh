#!/usr/bin/env bash
# pyrgrid run with [run] devices (issue 25): several parts in one process give
# the one-device result byte for byte and report parts, H and the halo
# counters; wrong device lists and partitions are refused with a message.
# usage: test_parts_cli.sh PYRGRID [BACKEND]
set -u
pyr=$(realpath "$1")
backend=${2:-cpu}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
if [ "$backend" = cuda ] && ! "$pyr" info | grep -q "^backend cuda: [0-9]* GPU"; then
  echo "no usable GPU: skipped"
  exit 77
fi
fails=0
fail() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
cat > p.ini <<'EOF2'
[grid]
dims = 3
nx = 21
ny = 18
nz = 25
[scheme]
equation = heat
alpha = 1
dt = 1e-4
steps = 31
precision = float
[initial]
kind = random
seed = 9
[output]
field = out.npy
EOF2
"$pyr" run p.ini -q --set run.backend=cpu --set output.field=ref.npy > /dev/null || fail "one device"
for devs in 0,0 0,0,0; do
  for method in naive pyramid; do
    extra=()
    [ $method = pyramid ] && extra=(--set run.memory=64K)
    "$pyr" run p.ini -q --set run.backend=$backend --set run.devices=$devs --set run.method=$method "${extra[@]}" > run.txt 2> run.err ||
      fail "devices = $devs, $method: $(cat run.err)"
    n=$(echo $devs | tr ',' '\n' | wc -l)
    grep -q "parts=$n H=[0-9]* exchanges=[0-9]* halo_sent=[0-9]* halo_received=[0-9]*" run.txt || fail "summary: $(cat run.txt)"
    cmp -s out.npy ref.npy || fail "devices = $devs, $method: differs from one device"
  done
done
"$pyr" plan p.ini --set run.backend=$backend --set run.devices=0,0 --set run.partition=1x1x2 > plan.txt || fail "plan"
grep -q "^parts: 2 parts (1 rank x 2 devices, slabs 1x1x2)" plan.txt || fail "plan: $(tail -1 plan.txt)"
"$pyr" run p.ini --set run.devices=0,x 2> bad.err && fail "devices = 0,x accepted"
grep -q "not a device index" bad.err || fail "devices = 0,x: $(cat bad.err)"
"$pyr" run p.ini --set run.backend=$backend --set run.devices=0,0 --set run.partition=2x2x1 2> bad.err && fail "a partition of 4 for 2 devices accepted"
grep -q "makes 4 parts, but the run has 2" bad.err || fail "partition: $(cat bad.err)"
"$pyr" run p.ini --set run.partition=diagonal 2> bad.err && fail "partition = diagonal accepted"
grep -q "use auto, slabs, blocks" bad.err || fail "partition = diagonal: $(cat bad.err)"
if [ $fails = 0 ]; then echo "run.devices: parts in one process equal to one device ($backend)"; fi
exit $fails
