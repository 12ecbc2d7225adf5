#!/usr/bin/env bash
# The program (tools/) is a client of the public library: its files include
# only the public headers (include/) and its own (tools/), and CMakeLists.txt
# links pyrgrid_cli against the shared library pyrgrid, not the internal one,
# with no src/ on its include path.
#
# PENDING names the tools/ files that still include internal headers while
# the program moves onto the public API.  The list must be exact, both ways:
# a file not on it that includes an internal header fails, and so does a
# file on it that no longer does (take it off the list).  While the list is
# not empty the program cannot link the public library alone, so the link
# line is checked to be the internal one; once it is empty, the public one.
# usage: test_tools_public.sh [SRCDIR]   (the repository root; default: this script's ../)
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 1
[ -d tools ] && [ -d include ] || { echo "no tools/ or include/ under $root"; exit 1; }

PENDING=''

fails=0
internal_files=''
for f in $(find tools -maxdepth 1 -type f \( -name '*.c' -o -name '*.h' \) | sort); do
  base=${f#tools/}
  bad=''
  # quoted includes: the public headers or the program's own
  for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
    [ -f "include/$h" ] || [ -f "tools/$h" ] || bad="$bad $h"
  done
  # an internal header reached with <...> through an include path is no better
  for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<\([^>]*\)>.*/\1/p' "$f"); do
    [ -e "src/$h" ] && bad="$bad <$h>"
  done
  if [ -n "$bad" ]; then
    internal_files="$internal_files $base"
    if ! printf '%s\n' "$PENDING" | grep -qxF "$base"; then
      echo "FAIL: $f includes headers that are not public (include/) or the program's (tools/):$bad"
      echo "      use the public API (include/*.h); what the program needs that is not public becomes public"
      fails=1
    fi
  fi
done
for base in $PENDING; do
  case " $internal_files " in
    *" $base "*) ;;
    *) echo "FAIL: tools/$base is on PENDING in $0 but includes no internal header (or no longer exists): take it off the list"
       fails=1 ;;
  esac
done

# The program's target: its link libraries and include directories.
link=$(tr '\n' ' ' < CMakeLists.txt | grep -o 'target_link_libraries([[:space:]]*pyrgrid_cli[^)]*)' | sed 's/target_link_libraries([[:space:]]*pyrgrid_cli//; s/)$//; s/PRIVATE\|PUBLIC\|INTERFACE//g' | tr -s ' ' '\n' | grep -v '^$' | sort -u | tr '\n' ' ')
incs=$(tr '\n' ' ' < CMakeLists.txt | grep -o 'target_include_directories([[:space:]]*pyrgrid_cli[^)]*)' | tr '\n' ' ')
if [ -z "$link" ]; then
  echo "FAIL: no target_link_libraries(pyrgrid_cli ...) found in CMakeLists.txt: the pattern no longer matches"
  fails=1
elif [ -z "$PENDING" ]; then
  for l in $link; do
    case "$l" in
      pyrgrid | m | OpenMP::OpenMP_C | MPI::MPI_C) ;; # MPI: the program starts and ends the MPI runtime itself
      *) echo "FAIL: pyrgrid_cli links '$l': the program links only the public library pyrgrid (and system libraries it calls itself)"
         fails=1 ;;
    esac
  done
  case " $link " in *" pyrgrid "*) ;; *) echo "FAIL: pyrgrid_cli does not link the library pyrgrid (links: $link)"; fails=1 ;; esac
else
  case " $link " in
    *" pyrgrid_internal "*) ;;
    *) echo "FAIL: files are still PENDING but pyrgrid_cli links '$link', not pyrgrid_internal: empty PENDING first"; fails=1 ;;
  esac
fi
case "$incs" in
  *src*) echo "FAIL: pyrgrid_cli has src/ on its include path: $incs"; fails=1 ;;
esac

n_pending=$(printf '%s' "$PENDING" | grep -c . || true)
echo "tools/: $(find tools -maxdepth 1 -type f \( -name '*.c' -o -name '*.h' \) | wc -l) files, $n_pending still on internal headers; pyrgrid_cli links: $link"
exit $fails
