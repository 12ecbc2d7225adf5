#!/usr/bin/env bash
# The plans `pyrgrid plan` chooses (text and --json) for a sweep of problems: heat 1D/2D/3D, Poisson and
# Maxwell 2D/3D from examples/ and smaller generated ones, float and double, budgets from "none" (1 TiB) to a
# sixteenth of the grid, method auto and each one forced, some decompositions, heights, slots and pieces forced,
# on the CPU backend with ESTIMATE.  What is machine-dependent is pinned (run.threads = 2, an explicit
# run.memory, a wisdom file that does not exist) or normalized (the CPU's name), so that the output depends
# only on the planner: methods.cmake compares it with the committed methods_expected.txt, so that a change of
# the planner's structure that changes a single choice, a count or a message shows as a diff.
# usage: methods_sweep.sh PYRGRID SRCDIR [quick]
#   without quick: every case's `plan -v` and `plan --json` in full (a before/after comparison of a change to
#   the planner, about three minutes on 2 cores); quick: a few dozen cases, each one line of the --json plan's
#   choices, counts and notices, or its error (the committed expectation, seconds).
set -u
prog=$1
src=$2
mode=${3:-full}
ex=$src/examples
here=$(cd "$(dirname "$0")" && pwd)
export PYRGRID_WISDOM=/nonexistent/pyrgrid-methods-sweep/wisdom
export OMP_NUM_THREADS=2

# bytes of one field of the grid: nx*ny*nz*elem
field_bytes() { # nx ny nz precision
    local e=8
    [ "$4" = float ] && e=4
    echo $(($1 * $2 * $3 * e))
}

run_case() { # FILE SETS...
    local f=$1
    shift
    local args=() s
    for s in "$@"; do args+=(--set "$s"); done
    echo "=== $(basename "$f") $*"
    if [ "$mode" = quick ]; then
        local out rc
        out=$("$prog" plan "$f" --set run.backend=cpu --set run.threads=2 --set run.plan=estimate "${args[@]}" --json 2>&1)
        rc=$?
        printf '%s\n' "$out" | /usr/bin/python3 "$here/methods_summary.py" "$rc"
        return 0
    fi
    local t0=$EPOCHREALTIME
    "$prog" plan "$f" --set run.backend=cpu --set run.threads=2 --set run.plan=estimate "${args[@]}" -v 2>&1
    echo "rc=$?"
    "$prog" plan "$f" --set run.backend=cpu --set run.threads=2 --set run.plan=estimate "${args[@]}" --json 2>&1
    echo "rc=$?"
    [ -n "${SWEEP_TIMES:-}" ] && echo "$(echo "$EPOCHREALTIME - $t0" | bc) $(basename "$f") $*" >&2
    return 0
}

if [ "$mode" = quick ]; then
    h1=(scheme.steps=2000)
    h2=(grid.nx=301 grid.ny=257 scheme.steps=700)
    h3=(grid.nx=61 grid.ny=47 grid.nz=33 scheme.steps=90)
    p3=(grid.nx=65 grid.ny=65 grid.nz=65 scheme.iterations=150)
    for m in auto naive trivial pyramid; do run_case "$ex/heat1d.ini" "${h1[@]}" run.memory=4004 run.method=$m; done
    run_case "$ex/heat1d.ini" "${h1[@]}" scheme.precision=float run.memory=1TiB
    for mem in 1TiB 154756 38689; do run_case "$ex/heat2d.ini" "${h2[@]}" run.memory=$mem; done
    run_case "$ex/heat2d.ini" "${h2[@]}" run.memory=154756 run.method=naive
    run_case "$ex/heat2d.ini" "${h2[@]}" run.memory=154756 run.method=trivial
    run_case "$ex/heat2d.ini" "${h2[@]}" run.memory=38689 run.method=pyramid
    run_case "$ex/heat2d.ini" "${h2[@]}" scheme.precision=float run.memory=77378 run.method=pyramid
    run_case "$ex/heat2d.ini" "${h2[@]}" scheme.precision=float run.memory=19344 run.method=trivial
    run_case "$ex/heat3d.ini" "${h3[@]}" run.memory=189222 run.method=auto run.decomposition=auto
    run_case "$ex/heat3d.ini" "${h3[@]}" run.memory=189222
    run_case "$ex/heat3d.ini" "${h3[@]}" run.memory=189222 run.method=trivial run.decomposition=blocks
    run_case "$ex/heat3d.ini" "${h3[@]}" scheme.precision=float run.memory=47305 run.method=auto run.decomposition=auto
    run_case "$ex/poisson2d.ini" scheme.iterations=2000 run.memory=132098
    run_case "$ex/poisson2d.ini" scheme.iterations=2000 run.memory=33024 run.method=pyramid
    run_case "$ex/poisson3d.ini" "${p3[@]}" run.memory=274625 run.method=auto run.decomposition=auto
    run_case "$ex/poisson3d.ini" "${p3[@]}" run.memory=274625 run.method=trivial
    run_case "$ex/maxwell_scatterer.ini" scheme.steps=800 run.memory=116162
    run_case "$ex/maxwell_scatterer.ini" scheme.steps=800 scheme.precision=float run.memory=14520 run.method=pyramid
    run_case "$ex/maxwell_cavity.ini" scheme.steps=600 run.memory=67650
    for d in strips blocks skewed segments; do run_case "$ex/heat2d.ini" "${h2[@]}" run.memory=65536 run.method=pyramid run.decomposition=$d; done
    for d in slabs blocks; do run_case "$ex/heat3d.ini" "${h3[@]}" run.memory=262144 run.method=pyramid run.decomposition=$d; done
    run_case "$ex/heat2d.ini" "${h2[@]}" run.memory=65536 run.method=pyramid run.height=7
    run_case "$ex/heat2d.ini" "${h2[@]}" run.memory=1TiB run.method=naive run.height=40
    run_case "$ex/heat2d.ini" "${h2[@]}" run.memory=65536 run.method=trivial run.height=7
    for sl in 1 2; do run_case "$ex/heat2d.ini" "${h2[@]}" run.memory=65536 run.method=pyramid run.slots=$sl; done
    run_case "$ex/heat2d.ini" "${h2[@]}" run.memory=65536 run.method=pyramid run.rows=40
    run_case "$ex/heat2d.ini" "${h2[@]}" run.memory=65536 run.method=pyramid run.decomposition=blocks run.block=48
    run_case "$ex/heat2d.ini" "${h2[@]}" run.memory=1000 run.method=pyramid
    run_case "$ex/heat2d.ini" "${h2[@]}" run.memory=1TiB run.kernel=sweep
    run_case "$ex/heat2d_longvector.ini"
    run_case "$ex/heat2d.ini" "${h2[@]}" run.method=longvector run.memory=1TiB
    run_case "$ex/heat3d.ini" run.method=longvector run.decomposition=auto
    run_case "$ex/heat2d.ini" "${h2[@]}" run.kernel=longvector
    run_case "$ex/heat2d.ini" "${h2[@]}" run.method=longvector run.decomposition=strips
    exit 0
fi

# name file nx ny nz dims-sets
problems=(
    "heat1d.ini 1001 1 1 scheme.steps=2000"
    "heat1d.ini 100001 1 1 grid.nx=100001 scheme.dt=1e-11 scheme.steps=300"
    "heat2d.ini 1025 1025 1"
    "heat2d.ini 301 257 1 grid.nx=301 grid.ny=257 scheme.steps=700"
    "heat3d.ini 129 129 129"
    "heat3d.ini 61 47 33 grid.nx=61 grid.ny=47 grid.nz=33 scheme.steps=90"
    "poisson2d.ini 257 257 1 scheme.iterations=2000"
    "poisson3d.ini 800 800 800"
    "poisson3d.ini 65 65 65 grid.nx=65 grid.ny=65 grid.nz=65 scheme.iterations=150"
    "maxwell_waveguide.ini 321 161 1 scheme.steps=1200"
    "maxwell_scatterer.ini 241 241 1 scheme.steps=800"
    "maxwell_cavity.ini 41 33 25 scheme.steps=600"
    "maxwell_cavity.ini 81 65 49 grid.nx=81 grid.ny=65 grid.nz=49 scheme.steps=300"
)

for p in "${problems[@]}"; do
    read -r file nx ny nz sets <<<"$p"
    extra=()
    [ -n "${sets:-}" ] && read -r -a extra <<<"$sets"
    for prec in double float; do
        fb=$(field_bytes "$nx" "$ny" "$nz" "$prec")
        for mem in 1TiB $((fb / 4)) $((fb / 16)); do
            for method in auto naive trivial pyramid; do
                # the example's own decomposition applies to pyramid and trivial only: reset it for the others
                dec=()
                [ "$method" = auto ] || [ "$method" = naive ] && dec=(run.decomposition=auto)
                run_case "$ex/$file" "${extra[@]}" scheme.precision=$prec run.memory=$mem run.method=$method "${dec[@]}"
            done
        done
    done
done

# forced decompositions, heights, slots and pieces, and the long-vector method's refusals on the CPU
h2=(grid.nx=301 grid.ny=257 scheme.steps=700)
h3=(grid.nx=61 grid.ny=47 grid.nz=33 scheme.steps=90)
for d in strips blocks skewed segments slabs; do
    run_case "$ex/heat2d.ini" "${h2[@]}" run.memory=65536 run.method=pyramid run.decomposition=$d
    run_case "$ex/heat3d.ini" "${h3[@]}" run.memory=262144 run.method=pyramid run.decomposition=$d
    run_case "$ex/maxwell_scatterer.ini" scheme.steps=800 run.memory=200000 run.method=auto run.decomposition=$d
done
for h in 1 7 40; do
    run_case "$ex/heat2d.ini" "${h2[@]}" run.memory=65536 run.method=pyramid run.height=$h
    run_case "$ex/heat2d.ini" "${h2[@]}" run.memory=1TiB run.method=naive run.height=$h
    run_case "$ex/heat2d.ini" "${h2[@]}" run.memory=65536 run.method=trivial run.height=$h
    run_case "$ex/poisson3d.ini" run.memory=64MiB run.height=$h
done
for s in 1 2 3; do
    run_case "$ex/heat2d.ini" "${h2[@]}" run.memory=65536 run.method=pyramid run.slots=$s
    run_case "$ex/heat3d.ini" "${h3[@]}" run.memory=262144 run.method=auto run.slots=$s
done
run_case "$ex/heat2d.ini" "${h2[@]}" run.memory=65536 run.method=pyramid run.rows=40
run_case "$ex/heat2d.ini" "${h2[@]}" run.memory=65536 run.method=pyramid run.decomposition=blocks run.block=48
run_case "$ex/heat2d.ini" "${h2[@]}" run.memory=65536 run.method=pyramid run.decomposition=skewed run.rows=30
run_case "$ex/heat2d.ini" "${h2[@]}" run.memory=1000 run.method=pyramid
run_case "$ex/heat2d.ini" "${h2[@]}" run.memory=1TiB run.kernel=sweep
run_case "$ex/heat2d.ini" "${h2[@]}" run.memory=65536 run.kernel=wave
run_case "$ex/heat2d_longvector.ini"
run_case "$ex/heat2d_longvector.ini" run.backend=auto
run_case "$ex/heat2d.ini" "${h2[@]}" run.method=longvector run.memory=1TiB
run_case "$ex/heat3d.ini" run.method=longvector run.decomposition=auto
run_case "$ex/heat2d.ini" "${h2[@]}" run.kernel=longvector
run_case "$ex/heat2d.ini" "${h2[@]}" run.method=longvector run.decomposition=strips
run_case "$ex/poisson2d.ini" run.method=longvector
