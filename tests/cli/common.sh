# The prologue and epilogue that the program's shell tests share (sourced, not run), written once so
# that every script resolves the program, skips, counts and exits the same way.  From tests/cli/:
#   . "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# from tests/:
#   . "$(dirname "${BASH_SOURCE[0]}")/cli/common.sh"
# (BASH_SOURCE, not $0: the path stays right when ctest runs the script from the build folder, and
# when a sourced file such as mpi_launch.sh sources this one.)
#
#   pyr_setup PROGRAM [PARENT]  $pyr: PROGRAM's absolute path (the tests cd away from where they
#                               were started); then pyr_workdir PARENT
#   pyr_workdir [PARENT]        $work: a new scratch folder in PARENT (default $TMPDIR or /tmp),
#                               made the working folder and removed at exit, whatever the exit
#   pyr_at_exit COMMAND         COMMAND (eval'ed) runs at exit before $work is removed: an unmount,
#                               background jobs to kill, a descriptor to close
#   pyr_has_gpu                 true when $pyr sees a usable GPU ("backend cuda: N GPU(s)" in info)
#   need_gpu BACKEND            exit 77 (ctest's skip) when BACKEND is cuda and no GPU is usable
#   ok                          count a check that passed
#   bad MSG, fail MSG           print "FAIL: MSG" and count a failure (the same; scripts use either)
#   finish [SENTENCE]           the summary (SENTENCE, what the script showed, only when nothing
#                               failed) and the exit status: 0 when no check failed, 1 otherwise.
#                               Never the failure count itself: 77 failures would read as a skip
#                               and 256 as a pass.
# $passes and $fails hold the counts.
passes=0
fails=0
pyr_exit_cmds=()

pyr_setup() {
  [ $# -ge 1 ] && [ -n "$1" ] || { echo "pyr_setup: no program given (usage: pyr_setup PROGRAM [PARENT])"; exit 2; }
  pyr=$(realpath "$1") || { echo "pyr_setup: cannot resolve the program '$1'"; exit 2; }
  pyr_workdir "${2:-}"
}

pyr_workdir() {
  local parent=${1:-${TMPDIR:-/tmp}}
  mkdir -p "$parent" || exit 1
  # named after the script, so that a folder left by a killed run says whose it is
  work=$(mktemp -d "$parent/$(basename "$0" .sh).XXXXXX") || exit 1
  trap pyr_exit_ EXIT
  cd "$work" || exit 1
}

pyr_at_exit() { pyr_exit_cmds+=("$1"); }

pyr_exit_() {
  local c
  for c in ${pyr_exit_cmds[@]+"${pyr_exit_cmds[@]}"}; do eval "$c"; done
  rm -rf "$work"
}

pyr_has_gpu() { "$pyr" info 2>/dev/null | grep -q "^backend cuda: [0-9]* GPU"; }

need_gpu() {
  if [ "${1:-}" = cuda ] && ! pyr_has_gpu; then
    echo "no usable GPU: skipped"
    exit 77
  fi
}

ok() { passes=$((passes + 1)); }
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
fail() { bad "$@"; }

finish() {
  if [ "$fails" -eq 0 ] && [ $# -gt 0 ]; then echo "$*"; fi
  if [ "$passes" -gt 0 ]; then
    echo "$passes passed, $fails failed"
  elif [ "$fails" -gt 0 ]; then
    echo "$fails failed"
  fi
  exit $((fails > 0))
}
