#!/usr/bin/env bash
# The program's manual page (docs/man/pyrgrid.1) and bash completion (tools/completion/pyrgrid.bash).
# usage: test_man_completion.sh man PROGRAM          man -l renders the page without warnings, and it names every
#                                                     command and option that the program's --help texts list
#        test_man_completion.sh completion PROGRAM    pyrgrid r<TAB> completes to run, pyrgrid run --<TAB> lists
#                                                     run's options (those of its --help), values and files
#        test_man_completion.sh install BUILD_DIR     cmake --install puts both where man and bash-completion look
#                                                     (and the Python package's py.typed)
# 77: man, groff or col missing for "man"
set -eu
mode=$1
arg=$2
src=$(cd "$(dirname "$0")/.." && pwd)
page=$src/docs/man/pyrgrid.1
comp=$src/tools/completion/pyrgrid.bash
top=$(mktemp -d)
trap 'rm -rf "$top"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# the commands of PROGRAM --help, and the long options of the program and of each command
commands() { "$arg" --help | sed -n 's/^  pyrgrid \([a-z][a-z-]*\).*/\1/p' | sort -u; }
long_options() { "$arg" "$@" --help | grep -oE -- '--[a-zA-Z][a-zA-Z0-9-]*' | sort -u; }

case $mode in
man)
  command -v man >/dev/null && command -v groff >/dev/null && command -v col >/dev/null ||
    { echo "man, groff or col missing (apt-get install man-db groff-base bsdextrautils): skipped"; exit 77; }
  warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
  [ -z "$warnings" ] || fail "groff warns about $page: $warnings"
  MANWIDTH=100 man -l "$page" 2>"$top/err" | col -b >"$top/page.txt"
  [ ! -s "$top/err" ] || fail "man -l $page: $(cat "$top/err")"
  grep -q '^NAME' "$top/page.txt" && grep -q 'pyrgrid - ' "$top/page.txt" || fail "man -l rendered no NAME section"
  cmds=$(commands)
  [ -n "$cmds" ] || fail "$arg --help lists no commands"
  missing=""
  for c in $cmds; do
    grep -qE "^       $c( |$)" "$top/page.txt" || missing="$missing command:$c"
    for o in $(long_options "$c"); do
      grep -qE -- "(^|[^a-z-])$o([^a-z-]|$)" "$top/page.txt" || missing="$missing $c:$o"
    done
  done
  for o in $(long_options); do
    grep -qE -- "(^|[^a-z-])$o([^a-z-]|$)" "$top/page.txt" || missing="$missing pyrgrid:$o"
  done
  [ -z "$missing" ] || fail "the manual page lacks what --help lists:$missing"
  echo "man page renders and names $(echo $cmds | wc -w) commands and their options"
  ;;
completion)
  mkdir -p "$top/bin" "$top/work/dir"
  ln -s "$(cd "$(dirname "$arg")" && pwd)/$(basename "$arg")" "$top/bin/pyrgrid"
  touch "$top/work/a.ini" "$top/work/b.txt" "$top/work/c.parts.json"
  # complete WORD... : what the completion registered for pyrgrid offers when the last word is being completed
  cat >"$top/complete.sh" <<'EOF'
source "$COMP_FILE"
spec=$(complete -p pyrgrid) || { echo "no completion registered for pyrgrid"; exit 1; }
fn=$(printf '%s\n' "$spec" | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
[ -n "$fn" ] || { echo "no completion function in: $spec"; exit 1; }
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
"$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}" | sort
EOF
  complete() { (cd "$top/work" && PATH=$top/bin:$PATH COMP_FILE=$comp bash --norc --noprofile "$top/complete.sh" "$@"); }
  expect() { # WANT WORD...
    local want=$1; shift
    got=$(complete "$@" | tr '\n' ' ' | sed 's/ $//')
    [ "$got" = "$want" ] || fail "completing '$*': got '$got', want '$want'"
  }
  expect "run" pyrgrid r
  expect "run" /nonexistent/pyrgrid r # the program not found: the list in the completion stands in
  expect "$(commands | tr '\n' ' ' | sed 's/ $//')" pyrgrid ""
  for c in $(commands); do # each command's options: those of its --help, and --help
    want=$( (long_options "$c"; echo --help) | sort -u | tr '\n' ' ' | sed 's/ $//')
    expect "$want" pyrgrid "$c" --
  done
  run_opts=$(complete pyrgrid run --)
  for o in --set --report --help --verbose --quiet; do
    printf '%s\n' "$run_opts" | grep -qx -- "$o" || fail "pyrgrid run --<TAB> lacks $o: $run_opts"
  done
  expect "cpu cuda" pyrgrid calibrate --backend c
  expect "a.ini dir" pyrgrid run ""
  expect "a.ini dir" pyrgrid -q plan --set scheme.steps=3 ""
  expect "c.parts.json dir" pyrgrid assemble ""
  expect "" pyrgrid run --set ""
  expect "--help --quiet --verbose" /nonexistent/pyrgrid run --
  echo "completion: commands, options, values and files as expected"
  ;;
install)
  # one cmake --install at a time from this build tree (RESOURCE_LOCK cmake_install)
  cmake --install "$arg" --prefix "$top/p" >/dev/null
  cmp "$page" "$top/p/share/man/man1/pyrgrid.1" || fail "share/man/man1/pyrgrid.1 not installed"
  cmp "$comp" "$top/p/share/bash-completion/completions/pyrgrid" ||
    fail "share/bash-completion/completions/pyrgrid not installed"
  # and the Python package's py.typed, beside its modules (PEP 561)
  [ -f "$top/p/lib/python3/dist-packages/pyrgrid/py.typed" ] || fail "pyrgrid/py.typed not installed"
  if command -v man >/dev/null; then
    MANPATH=$top/p/share/man man -w pyrgrid | grep -q "^$top/p/share/man/man1/pyrgrid.1" || fail "man -w does not find it"
  fi
  echo "man page and completion installed"
  ;;
*) echo "usage: $0 man|completion PROGRAM | install BUILD_DIR"; exit 2 ;;
esac
