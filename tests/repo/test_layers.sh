#!/usr/bin/env bash
# The floors of src/ (docs/architecture.md): a file may include only files of its own folder or of a
# folder on a lower floor.  Folders on the same floor stand side by side and include each other only
# where ALLOWED below names the pair.  Checked over every quoted #include of src/ (.c .h .cu .cuh),
# resolved as the compiler does: beside the including file first, then from src/; a name that is
# neither (the public headers of include/) is no edge between folders.  A folder of src/ that is on
# no floor is a failure too, so that a new folder is given its place here.
# usage: test_layers.sh [SRCDIR]   (the repository root; default: this script's ../../)
set -u
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 1
[ -d src ] || { echo "no src/ under $root"; exit 1; }

# Lowest first; one line per floor, folders of one floor separated by spaces.
FLOORS='core
io
schemes
problem
backend
pipelines solvers plan
methods
exec
tune
multi
outputs
api'
# Same-floor pairs "from>to" that may include each other's files (none today).
ALLOWED=''

files=$(find src -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | sort)
[ -n "$files" ] || { echo "no sources under src/"; exit 1; }

# grep prints FILE:LINE:TEXT; awk resolves each include and judges the edge.
# shellcheck disable=SC2086
grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' $files /dev/null |
awk -v floors="$FLOORS" -v allowed="$ALLOWED" -v filelist="$files" '
function norm(p,    n, parts, out, i, k) {
  n = split(p, parts, "/"); k = 0
  for (i = 1; i <= n; i++) {
    if (parts[i] == "" || parts[i] == ".") continue
    if (parts[i] == "..") { if (k > 0) k--; else out[++k] = ".."; continue }
    out[++k] = parts[i]
  }
  p = ""
  for (i = 1; i <= k; i++) p = p (i > 1 ? "/" : "") out[i]
  return p
}
function folder(p,    a) { split(p, a, "/"); return a[2] }   # src/<folder>/...
function fname(f) { return (f in floor) ? f "@" floor[f] : f "@none" }
BEGIN {
  n = split(floors, lines, "\n")
  for (i = 1; i <= n; i++) { m = split(lines[i], fs, " "); for (j = 1; j <= m; j++) floor[fs[j]] = i }
  m = split(allowed, al, " "); for (j = 1; j <= m; j++) ok[al[j]] = 1
  m = split(filelist, fl, "\n"); for (j = 1; j <= m; j++) { exists[fl[j]] = 1; f = folder(fl[j]); if (f !~ /\./) seen[f] = 1 }
  bad = 0; edges = 0
}
{
  # FILE:LINE:TEXT; the included name is between the first pair of quotes of TEXT
  file = $0; sub(/:.*/, "", file)
  rest = substr($0, length(file) + 2); line = rest; sub(/:.*/, "", line)
  text = substr(rest, length(line) + 2)
  q = index(text, "\""); inc = substr(text, q + 1); inc = substr(inc, 1, index(inc, "\"") - 1)
  dir = file; sub(/\/[^\/]*$/, "", dir)
  target = norm(dir "/" inc)
  if (!(target in exists)) target = norm("src/" inc)
  if (!(target in exists)) next          # include/ (public) or a system header
  edges++
  from = folder(file); to = folder(target)
  if (from == to) next
  if (!(from in floor) || !(to in floor)) next   # reported once below
  if (floor[to] < floor[from]) next
  if (floor[to] == floor[from] && ((from ">" to) in ok)) next
  printf "%s:%s -> %s (%s %s %s)\n", file, line, target, fname(from),
         floor[to] == floor[from] ? "beside" : "below", fname(to)
  bad++
}
END {
  for (f in seen) if (!(f in floor)) {
    printf "src/%s/ is on no floor: give it its place in FLOORS of tests/repo/test_layers.sh (and docs/architecture.md)\n", f
    bad++
  }
  if (edges < 100) { printf "only %d includes between files of src/ were read: the pattern no longer matches\n", edges; bad++ }
  if (bad) {
    printf "%d include(s) against the floors: a file may include its own folder or a lower floor (folder@floor)\n", bad
    exit 1
  }
  printf "%d includes of src/ stand on their floors\n", edges
}'
