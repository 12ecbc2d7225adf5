#!/usr/bin/env bash
# pyrgrid run with [run] devices (issue 25): several parts in one process give
# the one-device result byte for byte and report parts, H and the halo
# counters; wrong device lists and partitions are refused with a message;
# pyrgrid assemble refuses forged parts indexes and keeps the old output.
# usage: test_parts_cli.sh PYRGRID [BACKEND]
set -u
. "$(dirname "${BASH_SOURCE[0]}")/cli/common.sh"
pyr_setup "$1"
backend=${2:-cpu}
need_gpu "$backend"
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

# pyrgrid assemble against the reliability review's forged indexes (M2, M3,
# M10, L13, L14): each is refused with its message, the old output stays as
# it was and no temporary is left.  Parts: (2, 4) float64 arrays written here.
npy() { # npy FILE SHAPE BYTE...: a <f8 .npy of that shape, its data those bytes
  local f=$1 shape=$2
  shift 2
  printf '\x93NUMPY\x01\x00\x76\x00%-117s\n' "{'descr': '<f8', 'fortran_order': False, 'shape': $shape, }" > "$f"
  local b
  for b in "$@"; do printf "%64s" "" | tr ' ' "$b" >> "$f"; done
}
mkdir -p asm/sub asm/x && cd asm || exit 1
npy a.npy '(2, 4)' A
npy b.npy '(2, 4)' B
npy x/secret.npy '(2, 4)' S
npy want.npy '(4, 4)' A B
npy old.npy '(2, 4)' O
head='"format":"pyrgrid-parts","version":1,"dims":2,"dtype":"<f8"'
refused() { # refused INDEX MESSAGE: assemble fails with MESSAGE; out.npy keeps its old bytes
  cp old.npy out.npy
  # at most 1 MiB written: a regression of fill.json would fill the disk
  (ulimit -f 1024; exec "$pyr" assemble "$1" out.npy 2> asm.err) && fail "assemble $1 accepted"
  grep -qF -- "$2" asm.err || fail "assemble $1: $(cat asm.err) (wanted: $2)"
  cmp -s out.npy old.npy || fail "assemble $1 changed the old output"
  ls -a | grep -q '\.tmp\.' && fail "assemble $1 left a temporary"
  rm -f out.npy
}
echo "{$head,\"shape\":[4,4],\"parts\":[{\"file\":\"a.npy\",\"offset\":[0,0],\"shape\":[2,4]},{\"file\":\"b.npy\",\"offset\":[2,0],\"shape\":[2,4]}]}" > ok.json
"$pyr" assemble ok.json out.npy -q 2> asm.err || fail "assemble ok.json: $(cat asm.err)"
cmp -s out.npy want.npy || fail "assemble ok.json: wrong result"
rm -f out.npy
echo "{$head,\"shape\":[4,4],\"parts\":[{\"file\":\"a.npy\",\"offset\":[2,0],\"shape\":[2,4]},{\"file\":\"b.npy\",\"offset\":[9223372036854775807,0],\"shape\":[2,4]}]}" > wrap.json
refused wrap.json "part 1 (b.npy) lies outside the array along axis 0"
npy p122.npy '(1, 2, 2)' C
echo '{"format":"pyrgrid-parts","version":1,"dims":3,"dtype":"<f8","shape":[4611686018427387905,2,2],"parts":[{"file":"p122.npy","offset":[0,0,0],"shape":[1,2,2]}]}' > fill.json
refused fill.json "would take more than 2^63 bytes"
{ printf '{"format": "pyrgrid-parts", "x": '; head -c 200000 /dev/zero | tr '\0' '['; head -c 200000 /dev/zero | tr '\0' ']'; printf '}'; } > deep.json
refused deep.json "nested more than 200 levels deep"
echo "{$head,\"shape\":[4,4],\"parts\":[]}" > empty.json
refused empty.json "the parts hold 0 values, the array 16; a part is missing"
echo "{$head,\"shape\":[2,4],\"parts\":[{\"file\":\"../x/secret.npy\",\"offset\":[0,0],\"shape\":[2,4]}]}" > sub/up.json
refused sub/up.json "leads out of the index's directory"
echo "{$head,\"shape\":[2,4],\"parts\":[{\"file\":\"$PWD/x/secret.npy\",\"offset\":[0,0],\"shape\":[2,4]}]}" > abs.json
refused abs.json "names the absolute path"
echo "{$head,\"shape\":[4,4],\"parts\":[{\"file\":\"a.npy\",\"offset\":[0,0],\"shape\":[2,4]},{\"file\":\"a.npy\",\"offset\":[2,0],\"shape\":[2,4]}]}" > twice.json
refused twice.json "parts 0 (a.npy) and 1 (a.npy) are the same file"
cp b.npy b_saved.npy
"$pyr" assemble ok.json b.npy 2> asm.err && fail "assemble over one of its parts accepted"
grep -q "would destroy that part" asm.err || fail "assemble over a part: $(cat asm.err)"
cmp -s b.npy b_saved.npy || fail "assemble over a part changed it"
cd .. || exit 1

# reliability review L10: a report of a run over parts whose output's name is not UTF-8 is still
# valid UTF-8 JSON (the byte becomes \ufffd)
odd=$(printf 'a\377b.npy')
"$pyr" run p.ini -q --set run.backend=$backend --set run.devices=0,0 --set "output.field=$odd" --report rep.json > /dev/null 2> rep.err ||
  fail "a run with a report: $(cat rep.err)"
[ -f "$odd" ] || fail "the output with a name that is not UTF-8 was not written"
iconv -f UTF-8 -t UTF-8 rep.json > /dev/null 2>&1 || fail "the report is not valid UTF-8"
grep -qF '"field": "a\ufffdb.npy"' rep.json || fail "the report's output name: $(grep '"field"' rep.json)"
if [ -x /usr/bin/python3 ]; then
  /usr/bin/python3 -c 'import json, sys; r = json.load(open("rep.json", encoding="utf-8")); sys.exit(r["outputs"]["field"] != "a\ufffdb.npy")' ||
    fail "json.load of the report"
fi

finish "run.devices: parts in one process equal to one device ($backend); assemble refuses forged indexes"
