#!/usr/bin/env bash
# cli/common.sh, the prologue and epilogue the shell tests share, on its own: finish exits 1 on any
# failure (77 and 256 failures too, which an exit status of the count would read as a skip and a
# pass) and 0 on none; need_gpu skips (77) for cuda only where the program reports no usable GPU;
# the scratch folder is the working folder and is gone at exit, after the pyr_at_exit commands ran,
# also on an early exit; pyr_setup resolves a relative program path before it leaves the folder.
# usage: test_common.sh   (no program needed: fake ones stand in)
set -u
common=$(realpath "$(dirname "${BASH_SOURCE[0]}")/common.sh")
top=$(mktemp -d)
trap 'rm -rf "$top"' EXIT
cd "$top" || exit 1
errs=0
no() { echo "FAIL: $*"; errs=$((errs + 1)); }

# a fake program whose info says what $PYR_FAKE_INFO holds
cat > fake <<'EOF'
#!/usr/bin/env bash
[ "${1:-}" = info ] && printf '%s\n' "pyrgrid 0.0" "backend cpu: available, 1 threads (OpenMP)" "$PYR_FAKE_INFO"
EOF
chmod +x fake
# case NAME BODY: a script NAME.sh that sources common.sh, then BODY; run from $top with ./fake
case_() {
  printf '%s\n' "set -u" ". '$common'" "$2" > "$top/$1.sh"
  out=$(cd "$top" && bash "$top/$1.sh" 2>&1)
  rc=$?
}

case_ pass 'pyr_setup ./fake; ok; ok; finish "all good"'
[ $rc = 0 ] && [ "$out" = "all good
2 passed, 0 failed" ] || no "two passes: rc $rc, '$out'"
case_ onefail 'pyr_setup ./fake; ok; bad "this one"; ok; finish "all good"'
[ $rc = 1 ] && [ "$out" = "FAIL: this one
2 passed, 1 failed" ] || no "one failure: rc $rc, '$out'"
case_ failonly 'pyr_setup ./fake; fail "x"; finish "all good"'
[ $rc = 1 ] && [ "$out" = "FAIL: x
1 failed" ] || no "fail without ok: rc $rc, '$out'"
case_ none 'pyr_setup ./fake; finish'
[ $rc = 0 ] && [ -z "$out" ] || no "no checks: rc $rc, '$out'"
for n in 77 256; do
  case_ many$n "pyr_setup ./fake; for i in \$(seq $n); do fail x > /dev/null; done; finish"
  [ $rc = 1 ] && [ "$out" = "$n failed" ] || no "$n failures: rc $rc (must be 1), '$out'"
done

# need_gpu: 77 only for cuda on a program without a usable GPU
export PYR_FAKE_INFO="backend cuda: compiled in; no usable GPU found: no driver"
case_ nogpu 'pyr_setup ./fake; need_gpu cuda; echo ran'
[ $rc = 77 ] && [ "$out" = "no usable GPU: skipped" ] || no "cuda without a GPU: rc $rc, '$out'"
case_ nogpu_cpu 'pyr_setup ./fake; need_gpu cpu; echo ran'
[ $rc = 0 ] && [ "$out" = ran ] || no "cpu without a GPU: rc $rc, '$out'"
export PYR_FAKE_INFO="backend cuda: not compiled in (no CUDA compiler at build time)"
case_ nocuda 'pyr_setup ./fake; need_gpu cuda; echo ran'
[ $rc = 77 ] || no "cuda not compiled in: rc $rc, '$out'"
for info in "backend cuda: 1 GPU" "backend cuda: 2 GPUs"; do
  export PYR_FAKE_INFO=$info
  case_ gpu 'pyr_setup ./fake; need_gpu cuda; pyr_has_gpu && echo ran'
  [ $rc = 0 ] && [ "$out" = ran ] || no "cuda with '$info': rc $rc, '$out'"
done

# the scratch folder: the working folder, the program resolved before the cd, gone at exit after
# the pyr_at_exit commands, on an early exit too; in PARENT when given
case_ workdir "pyr_setup ./fake '$top/parent'; echo \"\$PWD|\$work|\$pyr\"; touch x; pyr_at_exit 'echo at exit: \$(ls)'; exit 5"
w=${out%%|*}
[ $rc = 5 ] || no "an early exit's status changed: rc $rc"
case $w in "$top/parent/workdir."*) ;; *) no "the scratch folder is not in the parent given, named after the script: '$out'" ;; esac
[ "$out" = "$w|$w|$top/fake
at exit: x" ] || no "working folder, \$work, \$pyr and the exit command: '$out'"
[ ! -e "$w" ] || no "the scratch folder $w is left after exit"
case_ noprog 'pyr_setup ""; echo ran'
[ $rc = 2 ] && echo "$out" | grep -q "no program given" || no "pyr_setup without a program: rc $rc, '$out'"

[ $errs = 0 ] && echo "common.sh: finish, need_gpu, the scratch folder and its exit commands as documented"
exit $((errs > 0))
