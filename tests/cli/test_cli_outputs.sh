#!/usr/bin/env bash
# issue 18 through the program: outputs never destroy what they must not.
#   - devices and FIFOs as outputs are written in place (mknod cases as root only);
#   - `solve` and `run` commit their outputs together: a full disk (a small
#     tmpfs, as root) or a file size limit while writing a later output keeps
#     every old output;
#   - SIGXFSZ and SIGTERM leave no temporary; SIGKILL's leftovers go at the
#     next write;
#   - over-long names, outputs that are inputs and outputs named twice fail
#     before any computing;
#   - `frames` the same way (reliability review H1, H3, M5, L1, L21): its
#     outputs are committed together, a late failure keeps every old output
#     and device node, outputs that are inputs (glob matches, --config) or
#     each other are refused before the first frame, FITS outputs that are
#     devices or FIFOs are refused (no crash), FIFO inputs do not hang, and a
#     full disk says so with the output's name.
# usage: test_cli_outputs.sh PYRGRID SOURCE_DIR
set -u
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
pyr_setup "$1"
bin=$pyr
src=$2
mnt=
pyr_at_exit '[ -n "$mnt" ] && umount "$mnt" 2>/dev/null'
pyr_at_exit 'jobs -p | xargs -r kill 2>/dev/null'
temps() { ls -A "${1:-.}" | grep -c '^\..*\.tmp\.' ; }
is_png() { head -c 8 "$1" 2>/dev/null | od -An -tx1 | grep -q "89 50 4e 47 0d 0a 1a 0a"; }
root=0
[ "$(id -u)" = 0 ] && root=1

small=(--set grid.nx=17 --set grid.ny=17 --set scheme.steps=3 --set scheme.dt=1e-4 --set run.backend=cpu)
run_small() { "$bin" run "$src/examples/heat2d.ini" --quiet "${small[@]}" "$@"; }
# a random float field: 1.3 kB of .npy, a 5 kB image that does not compress
noisy=(--set initial.kind=random --set scheme.precision=float)

# ---------------------------------------------------------------- devices, FIFOs
mkfifo img.fifo
# no reader: refused at once, the FIFO stays
msg=$(timeout 60 "$bin" run "$src/examples/heat2d.ini" --quiet "${small[@]}" --set output.field=f.npy --set output.image=img.fifo 2>&1); rc=$?
[ $rc -eq 1 ] && echo "$msg" | grep -q "no process is reading" && ok || bad "FIFO without a reader: rc $rc, '$msg'"
[ -p img.fifo ] && ok || bad "the FIFO was replaced"
# with a reader: the image goes through it
cat img.fifo > through.png &
reader=$!
for i in $(seq 1 100); do
  msg=$(run_small --set output.field=f.npy --set output.image=img.fifo 2>&1) && break
  sleep 0.05
done
wait $reader
[ -p img.fifo ] && is_png through.png && ok || bad "writing through a FIFO: '$msg'"
devices=0
if [ $root = 1 ] && mknod null c 1 3 2>/dev/null && chmod 666 null && (echo probe > null) 2>/dev/null; then
  devices=1
else
  echo "not root, or device nodes do not work here (a nodev mount): mknod cases skipped"
  rm -f null
fi
if [ $devices = 1 ]; then
  # the issue's case: a null device and a FIFO as outputs; neither may become a regular file
  cat img.fifo > through2.png &
  reader=$!
  for i in $(seq 1 100); do
    msg=$(run_small --set output.field=null --set output.image=img.fifo 2>&1) && break
    sleep 0.05
  done
  wait $reader
  [ -c null ] && [ -p img.fifo ] && is_png through2.png && ok || bad "null device and FIFO as outputs: '$msg'; $(ls -l null img.fifo)"
  mknod blk b 7 200
  msg=$(run_small --set output.field=blk --set output.image= 2>&1); rc=$?
  [ $rc -eq 1 ] && echo "$msg" | grep -q "block device" && [ -b blk ] && ok || bad "block device output: rc $rc, '$msg'"
  # a user who cannot write /dev: a device of our own in a root-owned directory, as nobody
  if command -v setpriv >/dev/null && [ -x "$bin" ]; then
    chmod 755 "$work"
    mkdir -m 755 devdir && mknod devdir/null c 1 3 && chmod 666 devdir/null
    cp "$src/examples/heat2d.ini" p.ini && chmod 644 p.ini
    if setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$bin" 2>/dev/null; then
      msg=$(cd devdir && setpriv --reuid=65534 --regid=65534 --clear-groups "$bin" run ../p.ini --quiet "${small[@]}" \
        --set output.field=null --set output.image=null 2>&1); rc=$?
      [ $rc -eq 0 ] && [ -c devdir/null ] && ok || bad "as nobody, a device in a directory nobody cannot write: rc $rc, '$msg'"
    else
      echo "nobody cannot run $bin: the second-user case is skipped"
    fi
  fi
elif [ $root = 0 ] && [ -c /dev/null ] && [ -w /dev/null ]; then
  # not root: the real /dev/null (which we could not replace anyway)
  msg=$(run_small --set output.field=/dev/null --set output.image=/dev/null 2>&1); rc=$?
  [ $rc -eq 0 ] && [ -c /dev/null ] && ok || bad "/dev/null as output for a user: rc $rc, '$msg'"
fi

# ---------------------------------------------------------------- stages (issue items 2 and 8)
# solve: the old results survive a failure while writing a later output.
cat > s.ini <<'EOF'
[system]
kind = laplace
N = 24
M = 24
tolerance = 1e-8
[run]
backend = cpu
[output]
solution = y.npy
history = r.csv
image = y.png
EOF
"$bin" solve s.ini --quiet >/dev/null 2>&1 && [ -s y.npy ] && [ -s r.png ] && ok || bad "first solve"
cp y.npy y.old
# the limit lets y.npy and r.csv through and stops the images
msg=$(bash -c 'trap "" XFSZ; ulimit -f 6; exec "$0" solve s.ini --quiet --set system.N=25' "$bin" 2>&1); rc=$?
[ $rc -ne 0 ] && ok || bad "solve under a file size limit: exit 0"
cmp -s y.npy y.old && ok || bad "solve deleted or changed the previous y.npy after a later output failed: '$msg'"
[ "$(temps)" = 0 ] && ok || bad "solve left temporaries: $(ls -A)"
# a full disk, where root may mount a small tmpfs
if [ $root = 1 ] && mkdir -p disk && mount -t tmpfs -o size=96k tmpfs disk 2>/dev/null; then
  mnt=$work/disk
  sed 's#= y\.#= disk/y.#; s#= r\.#= disk/r.#' s.ini > sd.ini
  "$bin" solve sd.ini --quiet >/dev/null 2>&1 && [ -s disk/y.npy ] && ok || bad "solve on the tmpfs"
  cp disk/y.npy y.disk
  # fill the disk, then free room for the new y.npy (2 pages) and r.csv (1 page) only
  fill_leaving() { head -c 400000 /dev/zero > disk/filler 2>/dev/null; truncate -s "-$1" disk/filler; }
  fill_leaving 12288
  msg=$("$bin" solve sd.ini --quiet --set system.N=30 --set system.M=30 2>&1); rc=$?
  [ $rc -eq 1 ] && echo "$msg" | grep -q "No space left" && ok || bad "solve on a full disk: rc $rc, '$msg'"
  cmp -s disk/y.npy y.disk && ok || bad "a full disk cost the previous solution"
  [ "$(temps disk)" = 0 ] && ok || bad "temporaries left on the full disk"
  # run: the field and the image together
  rm -f disk/filler disk/*
  run_small "${noisy[@]}" --set output.field=disk/u.npy --set output.image=disk/u.png >/dev/null 2>&1 && ok || bad "run on the tmpfs"
  cp disk/u.npy u.disk
  fill_leaving 4096 # room for the field (1.3 kB), not for the image (5 kB)
  msg=$(run_small "${noisy[@]}" --set scheme.steps=4 --set output.field=disk/u.npy --set output.image=disk/u.png 2>&1); rc=$?
  [ $rc -eq 1 ] && cmp -s disk/u.npy u.disk && [ "$(temps disk)" = 0 ] && ok || bad "run on a full disk: rc $rc, '$msg'; field kept: $(cmp -s disk/u.npy u.disk && echo yes || echo no)"
  umount disk && mnt=
else
  echo "no tmpfs mount here (not root, or not allowed): full-disk cases skipped"
fi
# run: the image fails (size limit) after the field: the old field stays
run_small "${noisy[@]}" --set output.field=u.npy --set output.image=u.png >/dev/null && ok || bad "run"
cp u.npy u.old
msg=$(bash -c 'trap "" XFSZ; ulimit -f 4; exec "$0" run "$1/examples/heat2d.ini" --quiet --set grid.nx=17 --set grid.ny=17 --set scheme.steps=5 --set scheme.dt=1e-4 --set run.backend=cpu --set initial.kind=random --set scheme.precision=float --set output.field=u.npy --set output.image=u.png' "$bin" "$src" 2>&1); rc=$?
[ $rc -eq 1 ] && echo "$msg" | grep -q "output.image" && ok || bad "run with a failing image: rc $rc, '$msg'"
cmp -s u.npy u.old && ok || bad "run left the new field behind when the image failed"
[ "$(temps)" = 0 ] && ok || bad "run left temporaries: $(ls -A)"

# sweep: the CSV and the plot together
sw=(--set grid.nx=129 --set grid.ny=129 --set scheme.precision=float --set scheme.dt=1e-6 --set run.backend=cpu --set run.method=pyramid --set run.memory=64K --heights 1,2 --passes 1)
PYRGRID_WISDOM=$work/wisdom "$bin" sweep "$src/examples/heat2d.ini" "${sw[@]}" --quiet --csv sw.csv --png sw.png >/dev/null 2>&1 && cp sw.csv sw.old && ok || bad "sweep"
msg=$(PYRGRID_WISDOM=$work/wisdom bash -c 'trap "" XFSZ; ulimit -f 2; exec "$0" sweep "$@"' "$bin" "$src/examples/heat2d.ini" "${sw[@]}" --heights 1,3 --quiet --csv sw.csv --png sw.png 2>&1); rc=$?
[ $rc -eq 1 ] && cmp -s sw.csv sw.old && [ "$(temps)" = 0 ] && ok || bad "sweep whose plot fails: rc $rc, CSV kept: $(cmp -s sw.csv sw.old && echo yes || echo no), '$msg'"

# ---------------------------------------------------------------- signals (item 5)
# SIGXFSZ, default disposition: the kernel ends pyrgrid; no temporary is left
msg=$(bash -c 'ulimit -f 4; exec "$0" run "$1/examples/heat2d.ini" --quiet --set grid.nx=17 --set grid.ny=17 --set scheme.steps=5 --set scheme.dt=1e-4 --set run.backend=cpu --set initial.kind=random --set scheme.precision=float --set output.field=u.npy --set output.image=u.png' "$bin" "$src" 2>&1); rc=$?
[ $rc -eq $((128 + 25)) ] && ok || bad "SIGXFSZ: rc $rc (expected 153), '$msg'"
[ "$(temps)" = 0 ] && cmp -s u.npy u.old && ok || bad "SIGXFSZ left temporaries or changed u.npy: $(ls -A)"
# SIGTERM while the image waits on a FIFO nobody drains (the field's temporary is staged)
big=(--set grid.nx=601 --set grid.ny=601 --set scheme.steps=1 --set scheme.dt=1e-7 --set initial.kind=random --set run.backend=cpu)
"$bin" run "$src/examples/heat2d.ini" --quiet "${big[@]}" --set output.field=big.npy --set output.image= >/dev/null && cp big.npy big.old
exec 3<>img.fifo   # a reader that never reads: the writer blocks once the pipe is full
"$bin" run "$src/examples/heat2d.ini" --quiet "${big[@]}" --set scheme.steps=2 --set output.field=big.npy --set output.image=img.fifo >/dev/null 2>&1 &
runner=$!
for i in $(seq 1 200); do [ "$(temps)" -gt 0 ] && break; sleep 0.05; done
sleep 0.3
[ "$(temps)" -gt 0 ] && ok || bad "no staged temporary seen while the image blocked"
kill -TERM $runner
wait $runner; rc=$?
exec 3<&-
[ $rc -eq $((128 + 15)) ] && ok || bad "SIGTERM: rc $rc"
[ "$(temps)" = 0 ] && ok || bad "SIGTERM left temporaries: $(ls -A)"
cmp -s big.npy big.old && ok || bad "SIGTERM changed big.npy"
# SIGKILL cannot be caught: its temporary goes at the next write of that output
exec 3<>img.fifo
"$bin" run "$src/examples/heat2d.ini" --quiet "${big[@]}" --set scheme.steps=2 --set output.field=big.npy --set output.image=img.fifo >/dev/null 2>&1 &
runner=$!
for i in $(seq 1 200); do [ "$(temps)" -gt 0 ] && break; sleep 0.05; done
sleep 0.3
kill -KILL $runner
wait $runner 2>/dev/null
exec 3<&-
[ "$(temps)" = 1 ] && ok || bad "SIGKILL: expected one leftover temporary, found $(temps)"
"$bin" run "$src/examples/heat2d.ini" --quiet "${big[@]}" --set output.field=big.npy --set output.image= >/dev/null
[ "$(temps)" = 0 ] && ok || bad "the next write left the dead run's temporary: $(ls -A)"

# ---------------------------------------------------------------- checks before computing (item 8)
expect_early() { # name pattern args...: fails fast (a 4097^2 run of 10^6 steps would take hours), message, nothing written
  local name=$1 pattern=$2
  shift 2
  local msg rc
  msg=$(timeout 60 "$bin" "$@" 2>&1 >/dev/null); rc=$?
  [ $rc -eq 1 ] && echo "$msg" | grep -q "$pattern" && ok || bad "$name: rc $rc, '$msg'"
}
long=(--set grid.nx=4097 --set grid.ny=4097 --set scheme.steps=1000000 --set scheme.dt=1e-8 --set run.backend=cpu)
name300=$(printf 'n%.0s' $(seq 1 300)).npy
expect_early name-too-long "more than the 255 bytes" run "$src/examples/heat2d.ini" "${long[@]}" --set output.field=$name300 --set output.image=
expect_early image-name-too-long "output.image" run "$src/examples/heat2d.ini" "${long[@]}" --set output.field=a.npy --set output.image=$name300.png
cp u.old init.npy # float32, as the problem below
cp init.npy init.keep
expect_early field-is-input "the input initial.file" run "$src/examples/heat2d.ini" "${long[@]}" --set grid.nx=17 --set grid.ny=17 \
  --set scheme.precision=float --set initial.kind=file --set initial.file=init.npy --set output.field=./init.npy --set output.image=
cmp -s init.npy init.keep && ok || bad "the input was changed"
cp "$src/examples/heat2d.ini" p2.ini
expect_early field-is-problem "the problem file" run p2.ini "${long[@]}" --set output.field=p2.ini --set output.image=
expect_early field-is-image "same file as output.field" run "$src/examples/heat2d.ini" "${long[@]}" --set output.field=same.npy --set output.image=same.npy
expect_early snapshot-is-input "writes the snapshot" run "$src/examples/heat2d.ini" "${long[@]}" --set grid.nx=17 --set grid.ny=17 \
  --set initial.kind=file --set initial.file=snap_000020.npy --set output.field=snap.npy --set output.every=10 --set output.image=
expect_early solve-history-is-solution "same file as output.solution" solve s.ini --set output.history=y.npy
expect_early solve-output-is-problem "the problem file" solve s.ini --set output.image=s.ini
[ -s s.ini ] && [ ! -e same.npy ] && ok || bad "a refused run wrote something"
[ "$(temps)" = 0 ] && ok || bad "temporaries left: $(ls -A)"

# ---------------------------------------------------------------- frames (reliability review H1, H3, M5, L1, L21)
py=/usr/bin/python3
if $py -c 'import numpy' 2>/dev/null; then
  mkdir fr && cd fr
  $py -c 'import numpy as np; np.save("st.npy", np.random.default_rng(1).normal(100, 5, (6, 48, 48)).astype(np.float32))'
  fq=(frames --quiet --backend cpu --history 3)
  # a FITS cube of our own making serves as the FITS input
  "$bin" "${fq[@]}" -o cube.fits --shifts '' --candidates '' --snr-png '' st.npy >/dev/null && ok || bad "frames: making cube.fits"
  all=(-o o/res.fits --shifts o/s.csv --candidates o/c.csv --snr-png o/m.png --max-snr o/ms.fits)
  mkdir o
  "$bin" "${fq[@]}" "${all[@]}" --report o/rep.json cube.fits >/dev/null && [ "$(ls o | wc -l)" = 6 ] && ok || bad "frames: first run: $(ls o)"
  cp -a o o.keep
  same_old() { diff -r o o.keep >/dev/null && [ "$(temps o)" = 0 ] && [ "$(temps)" = 0 ]; }
  # H1: a late failure (the report, a FIFO nobody reads, fails after every
  # other output is finished) keeps the previous run's outputs
  mkfifo rep.fifo
  msg=$(timeout 60 "$bin" "${fq[@]}" "${all[@]}" --history 2 --report rep.fifo cube.fits 2>&1); rc=$?
  [ $rc -eq 1 ] && echo "$msg" | grep -q -- "--report: .*no process is reading" && ok || bad "frames, FIFO report: rc $rc, '$msg'"
  same_old && [ -p rep.fifo ] && ok || bad "frames: a late failure changed or removed earlier outputs: $(ls -A o); $(diff -r o o.keep 2>&1 | head -3)"
  # the same with the residual as .npy and a device output: the device is written in place and stays
  if [ $devices = 1 ]; then
    mknod fnull c 1 3 && chmod 666 fnull
    msg=$(timeout 60 "$bin" "${fq[@]}" "${all[@]}" --snr-png fnull --report rep.fifo cube.fits 2>&1); rc=$?
    [ $rc -eq 1 ] && [ -c fnull ] && same_old && ok || bad "frames: device output with a late failure: rc $rc, '$msg'; $(ls -l fnull 2>&1)"
    msg=$(timeout 60 "$bin" "${fq[@]}" -o res.npy --shifts fnull --candidates fnull --snr-png fnull cube.fits 2>&1); rc=$?
    [ $rc -eq 0 ] && [ -c fnull ] && [ -s res.npy ] && ok || bad "frames: devices as outputs: rc $rc, '$msg'"
  fi
  # H3: outputs that are inputs, the configuration, or each other: refused before reading a frame, nothing written
  cp st.npy st.keep
  cp cube.fits cube.keep
  ln cube.fits hard.fits
  ln -s cube.fits soft.fits
  printf '[frames]\nhistory = 3\n' > f.ini
  cp f.ini f.keep
  frames_refused() { # name pattern args...: refused with the message, every input as it was
    local name=$1 pattern=$2
    shift 2
    local msg rc
    msg=$(timeout 60 "$bin" "${fq[@]}" "$@" 2>&1 >/dev/null); rc=$?
    [ $rc -eq 1 ] && echo "$msg" | grep -q "$pattern" && ok || bad "frames $name: rc $rc, '$msg'"
    if cmp -s st.npy st.keep && cmp -s cube.fits cube.keep && cmp -s f.ini f.keep; then ok; else
      bad "frames $name: an input was changed"
      cp st.keep st.npy && cp cube.keep cube.fits && cp f.keep f.ini # in place: the links stay
    fi
  }
  frames_refused residual-is-input "frames.residual = cube.fits is the same file as the input" -o cube.fits cube.fits
  frames_refused max-snr-is-input "frames.max_snr = cube.fits is the same file as the input" -o r.fits --max-snr cube.fits cube.fits
  frames_refused shifts-is-input "frames.shifts = cube.fits is the same file as the input" -o r.fits --shifts cube.fits cube.fits
  frames_refused candidates-is-input "frames.candidates = ./cube.fits is the same" -o r.fits --candidates ./cube.fits cube.fits
  frames_refused png-is-input "frames.snr_image = cube.fits is the same" -o r.fits --snr-png cube.fits cube.fits
  frames_refused report-is-input "report = cube.fits is the same file as the input" -o r.fits --report cube.fits cube.fits
  frames_refused glob-match-is-output "the input frames.input = cube.fits" -o r.fits --shifts cube.fits 'cub*.fits'
  frames_refused hard-link "is the same file as the input" -o r.fits --shifts hard.fits cube.fits
  frames_refused symlink "is the same file as the input" -o soft.fits cube.fits
  frames_refused npy-stack "frames.residual = st.npy is the same file as the input" -o st.npy st.npy
  frames_refused config "the input --config = f.ini" --config f.ini --shifts f.ini cube.fits
  frames_refused residual-is-max-snr "frames.max_snr = x.fits is the same file as frames.residual" -o x.fits --max-snr x.fits cube.fits
  frames_refused shifts-are-candidates "frames.candidates = s.csv is the same file as frames.shifts" -o r.fits --shifts s.csv --candidates s.csv cube.fits
  frames_refused report-is-png "report = m.png is the same file as frames.snr_image" -o r.fits --snr-png m.png --report m.png cube.fits
  cmp -s st.npy st.keep && cmp -s cube.fits cube.keep && cmp -s f.ini f.keep && [ -L soft.fits ] && ok || bad "frames: a refused run changed an input"
  [ ! -e r.fits ] && [ ! -e x.fits ] && [ ! -e s.csv ] && [ ! -e m.png ] && [ "$(temps)" = 0 ] && ok || bad "frames: a refused run wrote something: $(ls -A)"
  # M5: a FITS output that is a device or a FIFO is refused before computing (it crashed); .npy goes to them
  ln -s /dev/null null.fits
  mkfifo pipe.fits
  frames_refused fits-to-device-link "frames.residual: cannot write null.fits: it is a character device, and a FITS file needs a regular file" -o null.fits cube.fits
  frames_refused max-snr-to-device "frames.max_snr: cannot write null.fits: it is a character device" -o r.fits --max-snr null.fits cube.fits
  frames_refused fits-to-fifo "frames.residual: cannot write pipe.fits: it is a FIFO (named pipe), and a FITS file needs a regular file" -o pipe.fits cube.fits
  frames_refused residual-dev-null "frames.residual = /dev/null: the residual is written as .fits or .npy (an empty name writes none)" -o /dev/null cube.fits
  [ -L null.fits ] && [ -c /dev/null ] && [ -p pipe.fits ] && [ ! -e r.fits ] && ok || bad "frames: a refused device output changed something"
  ln -s /dev/null null.npy
  msg=$("$bin" "${fq[@]}" -o null.npy --shifts /dev/null --candidates /dev/null --snr-png /dev/null --max-snr null.npy cube.fits 2>&1); rc=$?
  [ $rc -eq 0 ] && [ -L null.npy ] && [ -c /dev/null ] && ok || bad "frames: .npy outputs to /dev/null: rc $rc, '$msg'"
  # a .npy residual through a FIFO, written in place
  mkfifo pipe.npy
  cat pipe.npy > through.npy &
  reader=$!
  for i in $(seq 1 100); do
    msg=$(timeout 60 "$bin" "${fq[@]}" -o pipe.npy --shifts '' --candidates '' --snr-png '' cube.fits 2>&1) && break
    sleep 0.05
  done
  for i in $(seq 1 50); do kill -0 $reader 2>/dev/null || break; sleep 0.1; done
  kill $reader 2>/dev/null # no run got through: the reader would wait forever
  wait $reader
  [ -p pipe.npy ] && [ "$(wc -c < through.npy)" = $((128 + 6 * 48 * 48 * 4)) ] && ok || bad "frames: .npy residual through a FIFO: '$msg', $(wc -c < through.npy) bytes"
  # L1: FIFO inputs are refused at once (they hung)
  mkfifo in.fits in.npy
  frames_refused fifo-fits-input "cannot read in.fits: not a regular file" -o r.fits in.fits
  frames_refused fifo-npy-input "cannot read in.npy: not a regular file" -o r.fits in.npy
  # L21: a full disk while writing the residual: the output's name and the reason; the old residual stays
  if [ $root = 1 ] && mkdir -p fdisk && mount -t tmpfs -o size=64k tmpfs fdisk 2>/dev/null; then
    mnt=$work/fr/fdisk
    $py -c 'import numpy as np; np.save("small.npy", np.random.default_rng(2).normal(100, 5, (3, 40, 40)).astype(np.float32))'
    "$bin" "${fq[@]}" -o fdisk/r.fits --shifts fdisk/s.csv --candidates '' --snr-png '' small.npy >/dev/null && cp fdisk/r.fits r.disk && cp fdisk/s.csv s.disk &&
      ok || bad "frames: residual on the tmpfs"
    msg=$("$bin" "${fq[@]}" -o fdisk/r.fits --shifts fdisk/s.csv --candidates '' --snr-png '' cube.fits 2>&1); rc=$?
    [ $rc -eq 1 ] && echo "$msg" | grep -q "frames.residual: .*No space left on device" && ok || bad "frames, full disk: rc $rc, '$msg'"
    cmp -s fdisk/r.fits r.disk && cmp -s fdisk/s.csv s.disk && [ "$(temps fdisk)" = 0 ] && ok || bad "frames: the full disk cost the old outputs: $(ls -A fdisk)"
    umount fdisk && mnt=
  else
    echo "no tmpfs mount here (not root, or not allowed): the frames full-disk case is skipped"
  fi
  cd "$work"
else
  echo "no numpy for $py: the frames cases are skipped"
fi

# ---------------------------------------------------------------- frames: numbers in --config
# each way a number can be wrong is named as such (reliability review: frames_config's one message
# for all); none gets as far as the inputs
cd "$work"
for v in "abc:is not a number" "1e999:is too large: doubles end at 1.8e+308" "nan:is not a finite number" \
  "-inf:is not a finite number" "1e-320:is too small to compute with: below 2.23e-308, the smallest normal double"; do
  printf '[frames]\nepsilon = %s\n' "${v%%:*}" > fnum.ini
  msg=$("$bin" frames --quiet --config fnum.ini -o '' no-such-input.npy 2>&1); rc=$?
  [ $rc -eq 1 ] && echo "$msg" | grep -qF "frames.epsilon = \"${v%%:*}\" ${v#*:}" && ok || bad "frames.epsilon = ${v%%:*}: rc $rc, '$msg'"
done
printf '[frames]\nepsilon = 0\nthreshold = 1e-300\n' > fnum.ini
msg=$("$bin" frames --quiet --config fnum.ini -o '' no-such-input.npy 2>&1); rc=$?
echo "$msg" | grep -q "no-such-input.npy" && ok || bad "frames: 0 and 1e-300 in --config refused: '$msg'"
rm -f fnum.ini

finish
