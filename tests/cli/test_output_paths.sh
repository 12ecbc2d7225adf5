#!/usr/bin/env bash
# Every output of every command (reliability review: output paths), one case each:
#   1. a character device and a FIFO with a reader, given as the output, are written in place and
#      stay what they were (and a symbolic link to a file not made yet is followed: the link stays);
#   2. an output that is the same file as an input (the same name, a hard link, a symbolic link)
#      is refused at once, with a message naming both, and the input stays byte-identical;
#   3. two outputs naming one file are refused (character devices excepted);
#   4. a failure at any one output (a FIFO that nobody reads) fails the command with a message
#      naming it, leaves every other output's old file byte-identical and no temporary behind.
# Commands: run (heat .npy and .h5, snapshots, --report), Maxwell runs (fields, snapshots, probes,
# image, report), solve, frames, sweep (heights, --replot, --sizes), calibrate (the wisdom file,
# --export), assemble, and the Python module's writer (wisdom_export).
# "At once" is checked where the command can be made to compute for a long time (a run of 10^8
# steps under a 10 s limit, a full calibration, solve's progress lines); frames and assemble have
# no such knob: their refusals are checked for the message and for nothing written.
# usage: test_output_paths.sh PYRGRID SOURCE_DIR [SCRATCH_DIR]
#   SCRATCH_DIR: where the test's directory is made (default $TMPDIR or /tmp).  The Python part runs
#   when PYRGRID_LIBRARY names the library and /usr/bin/python3 has numpy (PYTHONPATH: python/).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
src=$(realpath "$2")
pyr_setup "$1" "${3:-}"
bin=$pyr
pyr_at_exit 'exec 3>&- 2>/dev/null'
pyr_at_exit 'jobs -p | xargs -r kill 2>/dev/null'
export PYRGRID_WISDOM=$work/wisdom # never the user's wisdom
export OMP_NUM_THREADS=2
ncase=0

# ---------------------------------------------------------------- helpers
# every case in a directory of its own
fresh() {
  ncase=$((ncase + 1))
  mkdir "$work/c$ncase-$1" && cd "$work/c$ncase-$1" || exit 1
}
# a character device: a null device of our own as root, else a symbolic link to /dev/null
devkind=
if [ "$(id -u)" = 0 ] && mknod "$work/probe" c 1 3 2>/dev/null && chmod 666 "$work/probe" && (echo x > "$work/probe") 2>/dev/null; then
  devkind=mknod
elif [ -c /dev/null ] && [ -w /dev/null ]; then
  devkind=link
  echo "not root (or no device nodes here): devices are symbolic links to /dev/null"
else
  echo "no writable character device: device cases skipped"
fi
rm -f "$work/probe"
mkdev() {
  rm -f "$1"
  case $devkind in
    mknod) mknod "$1" c 1 3 && chmod 666 "$1" ;;
    link) ln -s /dev/null "$1" ;;
  esac
}
isdev() { [ -c "$1" ] && { [ "$devkind" = mknod ] || [ -L "$1" ]; }; }
# holds FILE TEXT: FILE is a regular file of that one line
holds() { [ -f "$1" ] && [ ! -L "$1" ] && printf '%s\n' "$2" | cmp -s - "$1"; }
notemps() {
  local n
  n=$(find . -name '.*.tmp.*' | wc -l)
  [ "$n" = 0 ] && ok || bad "$1: temporaries left behind: $(find . -name '.*.tmp.*')"
}

# go CMD...: run CMD for at most $limit seconds, @IN@, @A@ and @B@ in its words replaced by $S_IN,
# $S_A and $S_B; sets rc and msg (stdout and stderr)
limit=30
S_IN=
S_OUT=
S_A=
S_B=
go() {
  local a args=()
  for a; do
    a=${a//@IN@/$S_IN}
    a=${a//@OUT@/$S_OUT}
    a=${a//@A@/$S_A}
    a=${a//@B@/$S_B}
    args+=("$a")
  done
  msg=$(timeout -k 5 "$limit" "${args[@]}" 2>&1)
  rc=$?
}
# a refusal that should come before any computing: busy (when set) is a pattern the command prints
# only once it computes
busy=
early() { # LABEL: rc 1 within the limit, nothing computed
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    bad "$1: not refused within $limit s (it computed)"
    return 1
  fi
  if [ -n "$busy" ] && echo "$msg" | grep -q -- "$busy"; then
    bad "$1: refused only after computing: '$msg'"
    return 1
  fi
  if [ $rc -ne 1 ]; then
    bad "$1: rc $rc (expected 1), '$msg'"
    return 1
  fi
  return 0
}

# 1. inplace LABEL NODE CMD...: CMD writes an output at NODE; a device there and then a FIFO with a
# reader are written in place (rc 0) and stay what they are; a symbolic link there to a file not
# made yet makes that file and stays.  With refusable=1 (outputs that seek
# while writing may refuse them), a refusal with rc 1 and a message naming NODE passes too.
refusable=0
inplace() {
  local label=$1 node=$2
  shift 2
  if [ -n "$devkind" ]; then
    mkdev "$node"
    go "$@"
    if isdev "$node" && { [ $rc -eq 0 ] || { [ $refusable = 1 ] && [ $rc -eq 1 ] && echo "$msg" | grep -qF -- "$node"; }; }; then
      ok
    else
      bad "$label: a device as the output: rc $rc, now $(ls -ld "$node" 2>&1), '$msg'"
    fi
    rm -f "$node"
  fi
  local got=$work/got.$ncase reader
  mkfifo "$node"
  cat "$node" > "$got" &
  reader=$!
  exec 3> "$node" # returns once the reader has the FIFO open
  go "$@" 3>&-
  exec 3>&-
  wait $reader
  if [ -p "$node" ] && { { [ $rc -eq 0 ] && [ -s "$got" ]; } ||
    { [ $refusable = 1 ] && [ $rc -eq 1 ] && echo "$msg" | grep -qF -- "$node"; }; }; then
    ok
  else
    bad "$label: a FIFO with a reader as the output: rc $rc, now $(ls -ld "$node" 2>&1), $(wc -c < "$got") bytes read, '$msg'"
  fi
  rm -f "$node" "$got"
  # a symbolic link to a file not made yet: the file is made, the link stays
  ln -s "${node##*/}.target" "$node"
  go "$@"
  [ $rc -eq 0 ] && [ -L "$node" ] && [ -f "$node.target" ] && [ -s "$node.target" ] && ok ||
    bad "$label: a symbolic link to a file not made yet: rc $rc, now $(ls -ld "$node" "$node.target" 2>&1), '$msg'"
  rm -f "$node" "$node.target"
  notemps "$label"
}
# refused_node LABEL NODE PATTERN CMD...: an output that cannot be a device or a FIFO (it seeks):
# refused with rc 1 and a message matching PATTERN, the node left as it is
refused_node() {
  local label=$1 node=$2 pattern=$3 kind
  shift 3
  for kind in device fifo; do
    if [ $kind = device ]; then
      [ -n "$devkind" ] || continue
      mkdev "$node"
    else
      rm -f "$node"
      mkfifo "$node"
    fi
    go "$@"
    local same=0
    if [ $kind = fifo ]; then [ -p "$node" ] && same=1; else isdev "$node" && same=1; fi
    if [ $rc -eq 1 ] && echo "$msg" | grep -q -- "$pattern" && [ $same = 1 ]; then
      ok
    else
      bad "$label: a $kind as the output: rc $rc, now $(ls -ld "$node" 2>&1), '$msg'"
    fi
    rm -f "$node"
  done
  notemps "$label"
}

# what a refusal of one file for two roles says
which="same file|would destroy|would overwrite"

# 2. as_input LABEL OUTNAME INNAME IN NODE CMD...: CMD reads the input IN (written @IN@ in CMD) and
# writes an output at NODE (written @OUT@ in CMD, unless NODE is a name made from another, such as a
# snapshot's).  The output is the input by its name (@OUT@ = IN; without @OUT@, the input is moved
# to NODE's name), then NODE is a hard link and a symbolic link to IN: each refused at once, the
# message naming the output (OUTNAME, when not empty) and the input (INNAME, or when empty the
# input's name as given), the input byte-identical and still where it was.
as_input() {
  local label=$1 outname=$2 inname=$3 in=$4 node=$5 v target a named=0
  shift 5
  for a; do case $a in *@OUT@*) named=1 ;; esac; done
  local keep=$work/keep.$ncase
  cp "$in" "$keep" || exit 1
  for v in name hardlink symlink; do
    rm -f "$node"
    S_OUT=$node
    S_IN=$in
    target=$in
    case $v in
      name) if [ $named = 1 ]; then S_OUT=$in; else cp "$keep" "$node" && S_IN=$node && target=$node; fi ;;
      hardlink) ln "$in" "$node" ;;
      symlink) ln -s "$in" "$node" ;;
    esac
    go "$@"
    if early "$label, output = input by $v"; then
      if echo "$msg" | grep -qiE "$which" && echo "$msg" | grep -qF -- "${inname:-$S_IN}" && { [ -z "$outname" ] || echo "$msg" | grep -qF -- "$outname"; }; then
        ok
      else
        bad "$label, output = input by $v: the message does not say which files: '$msg'"
      fi
    fi
    cmp -s "$target" "$keep" && ok || bad "$label, output = input by $v: the input $target was changed or removed"
    [ $v != symlink ] || [ -L "$node" ] && ok || bad "$label, output = input by $v: the link was replaced"
    # the next cases need the input as it was
    cmp -s "$in" "$keep" || { rm -f "$in" && cp "$keep" "$in"; }
  done
  rm -f "$node" "$keep"
  S_IN=
  S_OUT=
  notemps "$label"
}

# 3. twice LABEL NAME CMD...: two outputs of CMD (@A@ and @B@) name one file: NAME twice, then NAME
# and a symbolic link to it; refused at once, NAME's old contents kept
twice() {
  local label=$1 name=$2 v
  shift 2
  for v in name symlink; do
    rm -f "$name" "l_$name"
    echo "old $name" > "$name"
    S_A=$name
    S_B=$name
    if [ $v = symlink ]; then
      ln -s "$name" "l_$name"
      S_B=l_$name
    fi
    go "$@"
    if early "$label, one file named twice ($v)"; then
      echo "$msg" | grep -qiE "$which" && echo "$msg" | grep -qF -- "$name" && ok ||
        bad "$label, one file named twice ($v): the message does not say which: '$msg'"
    fi
    holds "$name" "old $name" && ok || bad "$label, one file named twice ($v): $name lost its old contents"
  done
  rm -f "$name" "l_$name"
  S_A=
  S_B=
  notemps "$label"
}
# twice_dev LABEL CMD...: @A@ and @B@ both one character device: fine (rc 0), the device stays
twice_dev() {
  local label=$1
  shift
  [ -n "$devkind" ] || return 0
  mkdev null.dev
  S_A=null.dev
  S_B=null.dev
  go "$@"
  [ $rc -eq 0 ] && isdev null.dev && ok || bad "$label: one device for two outputs: rc $rc, now $(ls -ld null.dev 2>&1), '$msg'"
  rm -f null.dev
  S_A=
  S_B=
}

# 4. late LABEL "OUT..." "UNSTAGED..." CMD...: CMD writes every OUT; each in turn is a FIFO that
# nobody reads while the others hold old contents: rc 1, a message naming the FIFO, every other
# output's old contents kept (UNSTAGED ones excepted: snapshots, written while the run goes on), the
# FIFO still a FIFO, no temporaries
late() {
  local label=$1 outs=$2 unstaged=$3 o k
  shift 3
  for o in $outs; do
    for k in $outs; do
      [ "$k" = "$o" ] && continue
      rm -f "$k"
      echo "old $k" > "$k"
    done
    rm -f "$o"
    mkfifo "$o"
    go "$@"
    [ $rc -eq 1 ] && echo "$msg" | grep -qF -- "$o" && ok || bad "$label, $o a FIFO nobody reads: rc $rc, '$msg'"
    for k in $outs; do
      [ "$k" = "$o" ] && continue
      case " $unstaged " in *" $k "*) continue ;; esac
      holds "$k" "old $k" && ok || bad "$label, $o a FIFO nobody reads: $k lost its old contents ($(ls -ld "$k" 2>&1))"
    done
    [ -p "$o" ] && ok || bad "$label, $o a FIFO nobody reads: it is no longer a FIFO ($(ls -ld "$o" 2>&1))"
    rm -f "$o"
    notemps "$label, $o failing"
  done
  for k in $outs; do rm -f "$k"; done
}

# a float64 .npy of ones, as NumPy writes it: npy_ones FILE DIM...
npy_ones() {
  local file=$1 shape count=1 d
  shift
  shape=$(IFS=,; echo "$*")
  [ $# = 1 ] && shape="$shape,"
  for d; do count=$((count * d)); done
  local h="{'descr': '<f8', 'fortran_order': False, 'shape': ($shape), }"
  local len=$(( (10 + ${#h} + 1 + 63) / 64 * 64 - 10 ))
  {
    printf '\x93NUMPY\x01\x00'
    printf "\\x$(printf %02x $((len % 256)))\\x$(printf %02x $((len / 256)))"
    printf "%-$((len - 1))s\n" "$h"
    printf '\0\0\0\0\0\0\360\077%.0s' $(seq $count)
  } > "$file"
}

# ---------------------------------------------------------------- inputs, made once
in=$work/in
mkdir "$in"
cp "$src/examples/heat2d.ini" "$in/p.ini"
small=(--set grid.nx=17 --set grid.ny=17 --set scheme.steps=3 --set scheme.dt=1e-4 --set run.backend=cpu --set output.every=0)
# 10^8 steps: hours; a refusal must come long before the limit
heavy=(--set grid.nx=17 --set grid.ny=17 --set scheme.steps=100000000 --set scheme.dt=1e-4 --set run.backend=cpu --set output.every=0)
(cd "$in" && "$bin" run p.ini -q "${small[@]}" --set output.field=init.npy --set output.image= > /dev/null &&
  "$bin" run p.ini -q "${small[@]}" --set output.field=init.h5 --set output.image= > /dev/null) || bad "making the run inputs"
cat > "$in/s.ini" <<'EOF'
[system]
kind = laplace
N = 24
M = 24
tolerance = 1e-8
[run]
backend = cpu
report_every = 1
[output]
solution =
history =
image =
EOF
(cd "$in" && "$bin" solve s.ini -q --set output.solution=y0.npy > /dev/null) || bad "making the solve input"
# frames: a 12-frame float32 stack (a 3D field), a FITS cube (a residual of it), a config
(cd "$in" && "$bin" run "$src/examples/heat3d.ini" -q --set grid.nx=48 --set grid.ny=48 --set grid.nz=12 --set scheme.steps=0 \
  --set scheme.precision=float --set initial.kind=random --set run.backend=cpu --set output.field=stack.npy --set output.image= > /dev/null &&
  "$bin" frames --quiet -o cube.fits --shifts '' --candidates '' --snr-png '' stack.npy > /dev/null) || bad "making the frames inputs"
printf '[frames]\nhistory = 5\n' > "$in/f.ini"
# Maxwell: a 2D TM cavity with a probe, a material file
cat > "$in/m.ini" <<'EOF'
[grid]
dims = 2
nx = 61
ny = 61
[scheme]
equation = maxwell
courant = 0.5
steps = 3
precision = double
[boundary]
kind = pec
[source]
source1 = Ez point 30 30 gaussian width=0.05 delay=0.2
[probe]
probe1 = Ez 20 20
[output]
field =
image =
probes =
EOF
npy_ones "$in/eps.npy" 61 61
# assemble: two parts of a 6 x 4 array and their index
npy_ones "$in/p_a.npy" 3 4
npy_ones "$in/p_b.npy" 3 4
cat > "$in/a.parts.json" <<'EOF'
{"format": "pyrgrid-parts", "version": 1, "dims": 2, "shape": [6, 4], "dtype": "<f8",
 "parts": [{"file": "p_a.npy", "offset": [0, 0], "shape": [3, 4]}, {"file": "p_b.npy", "offset": [3, 0], "shape": [3, 4]}]}
EOF
# wisdom of this machine (empty: nothing measured), for calibrate --import
PYRGRID_WISDOM=$in/unused "$bin" calibrate --export "$in/w.in" > /dev/null 2>&1 || bad "making a wisdom file"
[ "$fails" = 0 ] || exit 1

# ---------------------------------------------------------------- run: heat, .npy
fresh run-npy
cp "$in/p.ini" "$in/init.npy" .
R=("$bin" run p.ini --quiet --set output.field= --set output.image=)
limit=30
inplace "run output.field" f.npy "${R[@]}" "${small[@]}" --set output.field=f.npy
inplace "run output.image" i.png "${R[@]}" "${small[@]}" --set output.image=i.png
inplace "run --report" r.json "${R[@]}" "${small[@]}" --report r.json
inplace "run snapshot" s_000002.npy "${R[@]}" "${small[@]}" --set output.field=s.npy --set output.every=2
limit=10
fromfile=(--set initial.kind=file --set initial.file=@IN@)
as_input "run output.field" output.field initial.file init.npy f.npy "${R[@]}" "${heavy[@]}" "${fromfile[@]}" --set output.field=@OUT@
as_input "run output.image" output.image initial.file init.npy i.png "${R[@]}" "${heavy[@]}" "${fromfile[@]}" --set output.image=@OUT@
as_input "run --report" --report initial.file init.npy r.json "${R[@]}" "${heavy[@]}" "${fromfile[@]}" --report @OUT@
as_input "run snapshot" snapshot initial.file init.npy s_000020.npy "${R[@]}" "${heavy[@]}" "${fromfile[@]}" --set output.field=s.npy --set output.every=10
as_input "run output.image, the problem file" output.image "the problem file" p.ini q.ini \
  "$bin" run @IN@ --quiet --set output.field= "${heavy[@]}" --set output.image=@OUT@
as_input "run --report, the problem file" --report "the problem file" p.ini q.ini \
  "$bin" run @IN@ --quiet --set output.field= --set output.image= "${heavy[@]}" --report @OUT@
twice "run output.field = output.image" x.npy "${R[@]}" "${heavy[@]}" --set output.field=@A@ --set output.image=@B@
twice "run output.field = --report" x.npy "${R[@]}" "${heavy[@]}" --set output.field=@A@ --report @B@
twice "run output.image = --report" x.png "${R[@]}" "${heavy[@]}" --set output.image=@A@ --report @B@
twice "run snapshot = output.image" s_000010.npy "${R[@]}" "${heavy[@]}" --set output.field=s.npy --set output.every=10 --set output.image=@B@
twice "run snapshot = --report" s_000010.npy "${R[@]}" "${heavy[@]}" --set output.field=s.npy --set output.every=10 --report @B@
limit=30
twice_dev "run output.field = output.image = --report" "${R[@]}" "${small[@]}" --set output.field=@A@ --set output.image=@B@ --report @A@
late "run" "f.npy i.png r.json f_000002.npy" "f_000002.npy" \
  "${R[@]}" "${small[@]}" --set output.field=f.npy --set output.image=i.png --set output.every=2 --report r.json

# ---------------------------------------------------------------- run: heat, HDF5 (the sidecar beside it)
fresh run-h5
cp "$in/p.ini" "$in/init.h5" .
refused_node "run output.field .h5" f.h5 "not a regular file" "${R[@]}" "${small[@]}" --set output.field=f.h5
inplace "run output.field .h5, its XDMF sidecar" f.xmf "${R[@]}" "${small[@]}" --set output.field=f.h5
limit=10
as_input "run output.field .h5" output.field initial.file init.h5 f.h5 "${R[@]}" "${heavy[@]}" "${fromfile[@]}" --set output.field=@OUT@
as_input "run output.field .h5, the sidecar" sidecar "the problem file" p.ini f.xmf \
  "$bin" run @IN@ --quiet --set output.image= "${heavy[@]}" --set output.field=f.h5
twice "run output.field .h5 = --report" x.h5 "${R[@]}" "${heavy[@]}" --set output.field=@A@ --report @B@
twice "run the sidecar = output.image" f.xmf "${R[@]}" "${heavy[@]}" --set output.field=f.h5 --set output.image=@B@
# the sidecar is named with its field, never as if it were the field (reliability review L22)
go "${R[@]}" "${heavy[@]}" --set output.field=b.h5 --set output.image=b.xmf
early "run the sidecar = output.image, the message" &&
  { echo "$msg" | grep -qF "the XDMF sidecar of output.field (b.h5) = b.xmf is the same file as output.image = b.xmf" && ok ||
    bad "run the sidecar = output.image: the message does not name the sidecar by its field: '$msg'"; }
[ ! -e b.h5 ] && [ ! -e b.xmf ] && ok || bad "run the sidecar = output.image: a refused run wrote $(ls b.* 2>&1)"
limit=30
late "run .h5" "f.h5 f.xmf i.png r.json" "" "${R[@]}" "${small[@]}" --set output.field=f.h5 --set output.image=i.png --set output.every=2 --report r.json

# ---------------------------------------------------------------- run: Maxwell
fresh maxwell
cp "$in/m.ini" "$in/eps.npy" .
M=("$bin" run m.ini --quiet)
mheavy=(--set scheme.steps=10000000)
inplace "maxwell output.field" m_Ez.npy "${M[@]}" --set output.field=m.npy
inplace "maxwell output.image" m.png "${M[@]}" --set output.image=m.png
inplace "maxwell output.probes" m.csv "${M[@]}" --set output.probes=m.csv
inplace "maxwell --report" m.json "${M[@]}" --report m.json
inplace "maxwell snapshot" m_Ez_000002.npy "${M[@]}" --set output.field=m.npy --set output.every=2
refused_node "maxwell output.field .h5" m.h5 "not a regular file" "${M[@]}" --set output.field=m.h5
inplace "maxwell output.field .h5, its XDMF sidecar" m.xmf "${M[@]}" --set output.field=m.h5
limit=10
E=("$bin" run m.ini --quiet "${mheavy[@]}" --set material.eps_file=@IN@)
as_input "maxwell output.field" output.field material.eps_file eps.npy m_Ez.npy "${E[@]}" --set output.field=m.npy
as_input "maxwell output.field .h5" output.field material.eps_file eps.npy m.h5 "${E[@]}" --set output.field=m.h5
as_input "maxwell output.image" output.image material.eps_file eps.npy m.png "${E[@]}" --set output.image=@OUT@
as_input "maxwell output.probes" output.probes material.eps_file eps.npy m.csv "${E[@]}" --set output.probes=@OUT@
as_input "maxwell --report" --report material.eps_file eps.npy m.json "${E[@]}" --report @OUT@
as_input "maxwell snapshot" snapshot material.eps_file eps.npy m_Ez_000010.npy "${E[@]}" --set output.field=m.npy --set output.every=10
as_input "maxwell output.probes, the problem file" output.probes "the problem file" m.ini q.ini \
  "$bin" run @IN@ --quiet "${mheavy[@]}" --set output.probes=@OUT@
M=("$bin" run m.ini --quiet "${mheavy[@]}")
twice "maxwell output.field = output.image" m_Ez.npy "${M[@]}" --set output.field=m.npy --set output.image=@B@
twice "maxwell output.probes = --report" m.csv "${M[@]}" --set output.probes=@A@ --report @B@
twice "maxwell output.image = output.probes" m.png "${M[@]}" --set output.image=@A@ --set output.probes=@B@
twice "maxwell snapshot = output.probes" m_Ez_000010.npy "${M[@]}" --set output.field=m.npy --set output.every=10 --set output.probes=@B@
limit=30
M=("$bin" run m.ini --quiet)
twice_dev "maxwell output.image = output.probes = --report" "${M[@]}" --set output.image=@A@ --set output.probes=@B@ --report @A@
late "maxwell" "m_Ez.npy m_Hx.npy m_Hy.npy m.png m.csv m.json m_Ez_000002.npy" "m_Ez_000002.npy m_Hx_000002.npy m_Hy_000002.npy" \
  "${M[@]}" --set output.field=m.npy --set output.image=m.png --set output.probes=m.csv --set output.every=2 --report m.json
late "maxwell .h5" "m.h5 m.xmf m.png m.csv m.json" "" \
  "${M[@]}" --set output.field=m.h5 --set output.image=m.png --set output.probes=m.csv --set output.every=2 --report m.json
limit=10
go "${M[@]}" "${mheavy[@]}" --set output.field=b.h5 --set output.image=b.xmf
early "maxwell the sidecar = output.image, the message" &&
  { echo "$msg" | grep -qF "the XDMF sidecar of output.field (b.h5) = b.xmf" && echo "$msg" | grep -qF "output.image = b.xmf" &&
    echo "$msg" | grep -qF "same file" && ok || bad "maxwell the sidecar = output.image: the message does not name the sidecar by its field: '$msg'"; }
limit=30

# ---------------------------------------------------------------- snapshots: links to and among them
# A snapshot is matched by its name and by what is at its path already (reliability review: snapshots
# through links): a snapshot that exists as a link to an input or output, an output that is a link to a
# snapshot not written yet, and a snapshot that is a link to another snapshot are refused at once, and
# nothing is written; snapshots the run does not write (another step, another spelling) are no concern.
fresh snapshots
cp "$in/p.ini" "$in/init.npy" "$in/m.ini" "$in/eps.npy" .
cp init.npy keep.npy
limit=10
S=("${R[@]}" "${heavy[@]}" --set output.field=s.npy --set output.every=10)
# snap_refused LABEL PATTERN CMD...: refused at once with a message matching PATTERN (grep -E)
snap_refused() {
  local label=$1 pattern=$2
  shift 2
  go "$@"
  early "$label" && { echo "$msg" | grep -qE -- "$pattern" && ok || bad "$label: the message does not say which files: '$msg'"; }
}
ln -s init.npy s_000020.npy
snap_refused "snapshot a symbolic link to initial.file" "s_000020.npy.*same file as the input initial.file = init.npy" \
  "${S[@]}" --set initial.kind=file --set initial.file=init.npy
rm s_000020.npy
ln init.npy s_000020.npy
snap_refused "snapshot a hard link to initial.file" "s_000020.npy.*same file as the input initial.file = init.npy" \
  "${S[@]}" --set initial.kind=file --set initial.file=init.npy
rm s_000020.npy
cmp -s init.npy keep.npy && ok || bad "snapshot a link to initial.file: the input was changed"
echo "old r.json" > r.json
ln -s r.json s_000030.npy
snap_refused "snapshot a symbolic link to --report" "s_000030.npy.*same file as --report = r.json" "${S[@]}" --report r.json
holds r.json "old r.json" && [ -L s_000030.npy ] && ok || bad "snapshot a symbolic link to --report: r.json or the link changed"
rm -f s_000030.npy r.json
# links to what does not exist yet
ln -s x.png s_000020.npy
snap_refused "snapshot a link to output.image, not written yet" "s_000020.npy.*same file as output.image = x.png" "${S[@]}" --set output.image=x.png
rm s_000020.npy
ln -s s_000020.npy l.png
snap_refused "output.image a link to a snapshot not written yet" "s_000020.npy.*same file as output.image = l.png" "${S[@]}" --set output.image=l.png
rm l.png
ln -s s_000010.npy s_000020.npy
snap_refused "a snapshot a link to another, not written yet" "snapshots s_000020.npy and s_000010.npy" "${S[@]}"
[ -L s_000020.npy ] && [ ! -e s_000010.npy ] && ok || bad "a snapshot a link to another: $(ls -l s_* 2>&1)"
echo "old s_000010.npy" > s_000010.npy
snap_refused "a snapshot a link to another that exists" "snapshots s_000020.npy and s_000010.npy" "${S[@]}"
holds s_000010.npy "old s_000010.npy" && ok || bad "a snapshot a link to another that exists: it was overwritten"
rm -f s_000010.npy s_000020.npy
# Maxwell: one component's snapshot a link to another's
ln -s m_Hx_000020.npy m_Ez_000020.npy
snap_refused "maxwell a snapshot a link to another component's" "snapshots m_Ez_000020.npy and m_Hx_000020.npy" \
  "$bin" run m.ini --quiet "${mheavy[@]}" --set output.field=m.npy --set output.every=10
[ ! -e m_Hx_000020.npy ] && ok || bad "maxwell a snapshot a link to another component's: something was written"
rm -f m_Ez_000020.npy
cp eps.npy keep_eps.npy
ln -s eps.npy m_Hy_000010.npy
snap_refused "maxwell a snapshot a symbolic link to material.eps_file" "m_Hy_000010.npy.*same file as the input material.eps_file = eps.npy" \
  "$bin" run m.ini --quiet "${mheavy[@]}" --set output.field=m.npy --set output.every=10 --set material.eps_file=eps.npy
cmp -s eps.npy keep_eps.npy && ok || bad "maxwell a snapshot a symbolic link to material.eps_file: the input was changed"
rm -f m_Hy_000010.npy
limit=30
# no concern: links where the run writes no snapshot (steps 2 of 3 are written; step 3, and step 2
# spelt with more digits, are not), and a restart from a snapshot of the same name
cmp -s init.npy keep.npy || cp keep.npy init.npy
ln -s init.npy s_000003.npy
ln -s init.npy s_0000002.npy
go "${R[@]}" "${small[@]}" --set output.field=s.npy --set output.every=2 --set initial.kind=file --set initial.file=init.npy
[ $rc -eq 0 ] && [ -f s_000002.npy ] && [ ! -L s_000002.npy ] && cmp -s init.npy keep.npy && ok ||
  bad "links to the input where no snapshot is written: rc $rc, '$msg'"
rm -f s_*
go "${R[@]}" "${small[@]}" --set scheme.steps=4 --set output.field=s.npy --set output.every=2
cp s_000004.npy keep4.npy
go "${R[@]}" "${small[@]}" --set scheme.steps=6 --set output.field=s.npy --set output.every=2 --set initial.kind=file \
  --set initial.file=s_000004.npy --set initial.step=4
[ $rc -eq 0 ] && [ -f s_000006.npy ] && cmp -s s_000004.npy keep4.npy && ok || bad "a restart from a snapshot of the same name: rc $rc, '$msg'"
rm -f s_* keep4.npy
# a snapshot that cannot be written is named as one (output.every), for heat and Maxwell
mkfifo s_000002.npy
go "${R[@]}" "${small[@]}" --set output.field=s.npy --set output.every=2
[ $rc -eq 1 ] && echo "$msg" | grep -qF "output.every: cannot write s_000002.npy" && ok || bad "a snapshot that fails: rc $rc, '$msg'"
rm -f s_*
mkfifo m_Hx_000002.npy
go "$bin" run m.ini --quiet --set output.field=m.npy --set output.every=2
[ $rc -eq 1 ] && echo "$msg" | grep -qF "output.every: cannot write m_Hx_000002.npy" && ok || bad "maxwell a snapshot that fails: rc $rc, '$msg'"
rm -f m_*
notemps "snapshots"

# ---------------------------------------------------------------- solve
fresh solve
cp "$in/s.ini" "$in/y0.npy" .
Q=("$bin" solve s.ini --quiet)
inplace "solve output.solution" y.npy "${Q[@]}" --set output.solution=y.npy
inplace "solve output.history" h.csv "${Q[@]}" --set output.history=h.csv --set output.history_image=
inplace "solve output.image" y.png "${Q[@]}" --set output.image=y.png
inplace "solve output.history_image" h.png "${Q[@]}" --set output.history=h.csv --set output.history_image=h.png
inplace "solve --report" r.json "${Q[@]}" --report r.json
# solve prints a progress line every iteration (report_every = 1) unless --quiet: none may come before a refusal
limit=10
busy="solve: iteration"
Q=("$bin" solve s.ini --set system.tolerance=1e-14 --set system.initial=file --set system.initial_file=@IN@)
as_input "solve output.solution" output.solution system.initial_file y0.npy y.npy "${Q[@]}" --set output.solution=@OUT@
as_input "solve output.history" output.history system.initial_file y0.npy h.csv "${Q[@]}" --set output.history=@OUT@
as_input "solve output.image" output.image system.initial_file y0.npy y.png "${Q[@]}" --set output.image=@OUT@
as_input "solve output.history_image" output.history_image system.initial_file y0.npy h.png "${Q[@]}" --set output.history=h.csv
as_input "solve --report" --report system.initial_file y0.npy r.json "${Q[@]}" --report @OUT@
as_input "solve --report, the problem file" --report "the problem file" s.ini q.ini "$bin" solve @IN@ --report @OUT@
Q=("$bin" solve s.ini --set system.tolerance=1e-14)
twice "solve output.solution = output.history" x.npy "${Q[@]}" --set output.solution=@A@ --set output.history=@B@
twice "solve output.image = output.history_image" x.png "${Q[@]}" --set output.image=@A@ --set output.history=h.csv --set output.history_image=@B@
twice "solve output.history_image = --report" x.png "${Q[@]}" --set output.history=h.csv --set output.history_image=@A@ --report @B@
twice "solve output.solution = --report" x.npy "${Q[@]}" --set output.solution=@A@ --report @B@
busy=
limit=30
Q=("$bin" solve s.ini --quiet)
twice_dev "solve every output one device" "${Q[@]}" --set output.solution=@A@ --set output.history=@B@ --set output.image=@A@ \
  --set output.history_image=@B@ --report @A@
late "solve" "y.npy h.csv y.png h.png r.json" "" "${Q[@]}" --set output.solution=y.npy --set output.history=h.csv --set output.image=y.png \
  --set output.history_image=h.png --report r.json

# ---------------------------------------------------------------- frames
fresh frames
cp "$in/stack.npy" "$in/cube.fits" "$in/f.ini" .
F=("$bin" frames --quiet -o '' --shifts '' --candidates '' --snr-png '')
# FITS outputs seek while writing: written in place or refused with a message, never a crash
refusable=1
inplace "frames -o .fits" r.fits "${F[@]}" -o r.fits stack.npy
inplace "frames --max-snr .fits" ms.fits "${F[@]}" --max-snr ms.fits stack.npy
refusable=0
inplace "frames -o .npy" r.npy "${F[@]}" -o r.npy stack.npy
inplace "frames --max-snr .npy" ms.npy "${F[@]}" --max-snr ms.npy stack.npy
inplace "frames --shifts" s.csv "${F[@]}" --shifts s.csv stack.npy
inplace "frames --candidates" c.csv "${F[@]}" --candidates c.csv stack.npy
inplace "frames --snr-png" m.png "${F[@]}" --snr-png m.png stack.npy
inplace "frames --report" rep.json "${F[@]}" --report rep.json stack.npy
limit=10
as_input "frames -o .npy" "" "" stack.npy r.npy "${F[@]}" -o @OUT@ @IN@
as_input "frames -o .fits" "" "" cube.fits r.fits "${F[@]}" -o @OUT@ @IN@
as_input "frames --max-snr .fits" "" "" cube.fits ms.fits "${F[@]}" --max-snr @OUT@ @IN@
as_input "frames --max-snr .npy" "" "" stack.npy ms.npy "${F[@]}" --max-snr @OUT@ @IN@
as_input "frames --shifts" "" "" stack.npy s.csv "${F[@]}" --shifts @OUT@ @IN@
as_input "frames --candidates" "" "" cube.fits c.csv "${F[@]}" --candidates @OUT@ @IN@
as_input "frames --snr-png" "" "" stack.npy m.png "${F[@]}" --snr-png @OUT@ @IN@
as_input "frames --report" "" "" cube.fits rep.json "${F[@]}" --report @OUT@ @IN@
as_input "frames --shifts, --config" "" "" f.ini s.ini "${F[@]}" --config @IN@ --shifts @OUT@ stack.npy
twice "frames -o = --max-snr" x.fits "${F[@]}" -o @A@ --max-snr @B@ stack.npy
twice "frames --shifts = --candidates" x.csv "${F[@]}" --shifts @A@ --candidates @B@ stack.npy
twice "frames --snr-png = --report" x.png "${F[@]}" --snr-png @A@ --report @B@ stack.npy
twice "frames -o = --report" x.npy "${F[@]}" -o @A@ --report @B@ stack.npy
limit=30
twice_dev "frames --shifts = --candidates = --snr-png" "${F[@]}" --shifts @A@ --candidates @B@ --snr-png @A@ stack.npy
late "frames .fits" "r.fits ms.fits s.csv c.csv m.png rep.json" "" \
  "${F[@]}" -o r.fits --max-snr ms.fits --shifts s.csv --candidates c.csv --snr-png m.png --report rep.json stack.npy
late "frames .npy" "r.npy ms.npy s.csv c.csv m.png rep.json" "" \
  "${F[@]}" -o r.npy --max-snr ms.npy --shifts s.csv --candidates c.csv --snr-png m.png --report rep.json stack.npy

# ---------------------------------------------------------------- sweep
fresh sweep
cp "$in/p.ini" "$in/init.npy" .
W=("$bin" sweep p.ini --quiet --set grid.nx=33 --set grid.ny=33 --set scheme.precision=double --set scheme.dt=1e-5 --set run.backend=cpu
  --set run.method=pyramid --set run.memory=16K --heights 1 --passes 1 --decomposition strips)
inplace "sweep --csv" sw.csv "${W[@]}" --csv sw.csv
inplace "sweep --png" sw.png "${W[@]}" --png sw.png
limit=10
# thousands of passes at 64 heights, a hundred times each: far beyond the limit
Wh=("$bin" sweep p.ini --quiet --set grid.nx=17 --set grid.ny=17 --set scheme.dt=1e-4 --set run.backend=cpu --heights 1:64 --passes 1000 --repeat 100)
as_input "sweep --csv" --csv "the problem file" p.ini q.csv "$bin" sweep @IN@ --quiet --set grid.nx=17 --set grid.ny=17 --set scheme.dt=1e-4 \
  --set run.backend=cpu --heights 1:64 --passes 1000 --repeat 100 --csv @OUT@
as_input "sweep --png" --png initial.file init.npy q.png "${Wh[@]}" --set initial.kind=file --set initial.file=@IN@ --png @OUT@
twice "sweep --csv = --png" x.csv "${Wh[@]}" --csv @A@ --png @B@
limit=30
twice_dev "sweep --csv = --png" "${W[@]}" --csv @A@ --png @B@
late "sweep" "sw.csv sw.png" "" "${W[@]}" --csv sw.csv --png sw.png
# --replot: the plot of an earlier sweep's CSV
"${W[@]}" --csv old.csv > /dev/null 2>&1 || bad "a sweep for --replot"
inplace "sweep --replot --png" re.png "$bin" sweep --replot old.csv --png re.png
limit=10
as_input "sweep --replot --png" --png --replot old.csv re.png "$bin" sweep --replot @IN@ --png @OUT@
# --sizes (the long-vector method, CUDA): the checks come before any GPU is needed
as_input "sweep --sizes --csv" --csv "the problem file" p.ini q.csv "$bin" sweep @IN@ --sizes 10:7000 --csv @OUT@
twice "sweep --sizes --csv = --png" x.csv "$bin" sweep p.ini --sizes 10:7000 --csv @A@ --png @B@
limit=30

# ---------------------------------------------------------------- calibrate: the wisdom file and --export
fresh calibrate
cp "$in/w.in" .
# nothing measured (--import only): fast
C=("$bin" calibrate --import w.in)
inplace "calibrate --export" e.w "${C[@]}" --export e.w
inplace "calibrate, the wisdom file" wf env PYRGRID_WISDOM=wf "${C[@]}"
limit=10
# a whole calibration (--backend cpu) measures for minutes: a refusal comes first
C=(env PYRGRID_WISDOM=wf "$bin" calibrate --backend cpu)
as_input "calibrate --export" --export --import w.in e.w "${C[@]}" --import @IN@ --export @OUT@
twice "calibrate --export = the wisdom file" x.w env PYRGRID_WISDOM=@A@ "$bin" calibrate --backend cpu --export @B@
limit=30
# The wisdom file is the machine's cache, merged under its lock and written first: its new records
# stay when --export fails after it (a measurement is never thrown away for its copy); --export's
# old contents stay when the wisdom file fails.
rm -f wf e.w
echo "old e.w" > e.w
mkfifo wf
go env PYRGRID_WISDOM=wf "$bin" calibrate --import w.in --export e.w
[ $rc -eq 1 ] && echo "$msg" | grep -qF wf && [ -p wf ] && holds e.w "old e.w" && ok ||
  bad "calibrate, the wisdom file a FIFO nobody reads: rc $rc, wf $(ls -ld wf), e.w '$(cat e.w)', '$msg'"
rm -f wf e.w
mkfifo e.w
go env PYRGRID_WISDOM=wf "$bin" calibrate --import w.in --export e.w
[ $rc -eq 1 ] && echo "$msg" | grep -qF e.w && [ -p e.w ] && ok || bad "calibrate, --export a FIFO nobody reads: rc $rc, '$msg'"
rm -f e.w wf
# a device or a FIFO is written in place, with no lock file beside it (nothing there to merge with)
for target in e.w wf; do
  for kind in device fifo; do
    rm -f e.w wf e.w.lock wf.lock
    if [ $kind = device ]; then
      [ -n "$devkind" ] || continue
      mkdev $target
    else
      mkfifo $target
      cat $target > got.w &
      exec 3> $target
    fi
    go env PYRGRID_WISDOM=wf "$bin" calibrate --import w.in --export e.w 3>&-
    [ $kind = fifo ] && { exec 3>&-; wait; }
    [ $rc -eq 0 ] && [ ! -e $target.lock ] && ok || bad "calibrate, $target a $kind: rc $rc, now $(ls -d $target* 2>&1), '$msg'"
    if [ $kind = device ]; then
      # nothing is read from it either: no "cannot read", no warning
      echo "$msg" | grep -qiE "cannot read|warning" && bad "calibrate, $target a device: '$msg'" || ok
    fi
  done
done
rm -f e.w wf e.w.lock wf.lock got.w
# --export and the wisdom file are checked before measuring: a path that cannot be written is refused
# at once; one whose directories do not exist yet is made
limit=10
busy="calibrating the"
echo "a file" > f.txt
go env PYRGRID_WISDOM=wf "$bin" calibrate --backend cpu --export f.txt/sub/e.w
early "calibrate --export under a file" && { echo "$msg" | grep -qF -- "--export: cannot write f.txt/sub/e.w" && ok ||
  bad "calibrate --export under a file: '$msg'"; }
mkdir d
go env PYRGRID_WISDOM=wf "$bin" calibrate --backend cpu --export d
early "calibrate --export a directory" && { echo "$msg" | grep -qF -- "--export: cannot write d" && ok || bad "calibrate --export a directory: '$msg'"; }
go env PYRGRID_WISDOM=f.txt/w "$bin" calibrate --backend cpu
early "calibrate, the wisdom file under a file" && { echo "$msg" | grep -qF -- "the wisdom file: cannot write f.txt/w" && ok ||
  bad "calibrate, the wisdom file under a file: '$msg'"; }
busy=
limit=30
go env PYRGRID_WISDOM=new/a/wf "$bin" calibrate --import w.in --export d/new/b/e.w
[ $rc -eq 0 ] && [ -s new/a/wf ] && [ -s d/new/b/e.w ] && ok || bad "calibrate into directories not made yet: rc $rc, '$msg'"
rm -rf d new f.txt
notemps "calibrate"

# ---------------------------------------------------------------- assemble
fresh assemble
cp "$in/a.parts.json" "$in/p_a.npy" "$in/p_b.npy" .
inplace "assemble OUT.npy" o.npy "$bin" assemble -q a.parts.json o.npy
limit=10
as_input "assemble OUT.npy, the index" "" "" a.parts.json o.npy "$bin" assemble -q @IN@ @OUT@
# a part named as the output: the index names p_a.npy, so only the name and a symbolic link apply here
cp p_a.npy keep_a.npy
for v in name symlink; do
  if [ $v = symlink ]; then
    ln -s p_a.npy l_a.npy
    out=l_a.npy
  else
    out=p_a.npy
  fi
  go "$bin" assemble -q a.parts.json $out
  early "assemble OUT.npy = a part ($v)" && { echo "$msg" | grep -qiE "$which" && echo "$msg" | grep -qF p_a.npy && ok ||
    bad "assemble OUT.npy = a part ($v): the message does not say which: '$msg'"; }
  cmp -s p_a.npy keep_a.npy && ok || bad "assemble OUT.npy = a part ($v): the part was changed"
  rm -f l_a.npy
done
limit=30
notemps "assemble"

# ---------------------------------------------------------------- Python: wisdom_export
fresh python
if [ -z "${PYRGRID_LIBRARY:-}" ]; then
  echo "PYRGRID_LIBRARY not set: the Python module's writer is not tested"
elif ! /usr/bin/python3 -c "import numpy" 2>/dev/null; then
  echo "/usr/bin/python3 without numpy: the Python module's writer is not tested"
else
  export PYTHONPATH=$src/python${PYTHONPATH:+:$PYTHONPATH}
  P=(/usr/bin/python3 -c 'import sys, pyrgrid; pyrgrid.wisdom_export(sys.argv[1])')
  inplace "python wisdom_export" e.w "${P[@]}" e.w
  # one output, no input: a failure keeps what was there (a file that is not wisdom of this machine)
  echo "old e.w" > e.w
  go "${P[@]}" e.w
  [ $rc -ne 0 ] && echo "$msg" | grep -qF e.w && holds e.w "old e.w" && ok || bad "python wisdom_export over a foreign file: rc $rc, '$msg'"
  rm -f e.w
  mkfifo e.w
  go "${P[@]}" e.w
  [ $rc -ne 0 ] && echo "$msg" | grep -qF e.w && [ -p e.w ] && ok || bad "python wisdom_export to a FIFO nobody reads: rc $rc, '$msg'"
  rm -f e.w
  notemps "python"
  # pyrgrid.calibrate(save=True) writes through wisdom_export(wisdom_path()), the call tested here;
  # it measures for seconds first, so it is not run here
fi

finish
