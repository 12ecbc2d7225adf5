#!/usr/bin/env bash
# The shared library exports exactly the public API: every function declared
# with PYR_API in the public headers, and nothing else (no internal pyr_*
# helper, no symbol of nvcc's generated code or of a static dependency).
# usage: test_exports.sh LIBRARY HEADER...
# Exits 77 (skipped) when the library is not a shared object.
set -u
lib=$1
shift
case "$lib" in
  *.so | *.so.*) ;;
  *) echo "not a shared library ($lib): nothing to check"; exit 77 ;;
esac
command -v nm >/dev/null || { echo "nm not found"; exit 77; }
# The output header is always built; it sits beside pyrgrid.h.  The frames
# pipeline's files (pyrgrid_frames_io.h) come with the frames pipeline: they
# are checked where pyrgrid_frames.h is, and must be absent where it is not.
for h in "$@"; do
  case "$h" in
    */pyrgrid.h) out="${h%pyrgrid.h}pyrgrid_output.h"
      case " $* " in *" $out "*) ;; *) [ -f "$out" ] && set -- "$@" "$out" ;; esac ;;
    */pyrgrid_frames.h) out="${h%pyrgrid_frames.h}pyrgrid_frames_io.h"
      case " $* " in *" $out "*) ;; *) [ -f "$out" ] && set -- "$@" "$out" ;; esac ;;
  esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Declared: the name before '(' on each line that starts with PYR_API.
grep -h '^PYR_API' "$@" | sed -E 's/\(.*//; s/.*[ *]//' | sort -u > "$work/declared"
# Exported: defined dynamic symbols, less those every linker adds.
nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' |
  grep -vxE '_init|_fini|_edata|_end|__bss_start' | sort -u > "$work/exported"
fails=0
n_decl=$(wc -l < "$work/declared")
[ "$n_decl" -ge 50 ] || { echo "FAIL: only $n_decl declarations found in $*: the pattern no longer matches"; fails=1; }
extra=$(comm -13 "$work/declared" "$work/exported")
if [ -n "$extra" ]; then
  echo "FAIL: exported but not declared with PYR_API in the public headers ($(echo "$extra" | wc -l)):"
  echo "$extra" | head -50
  fails=1
fi
missing=$(comm -23 "$work/declared" "$work/exported")
if [ -n "$missing" ]; then
  echo "FAIL: declared with PYR_API but not exported:"
  echo "$missing"
  fails=1
fi
echo "$n_decl public functions declared, $(wc -l < "$work/exported") symbols exported"
exit $fails
