# What bench/multigpu.sh and bench/multigpu_scaling.sh share (sourced by both, not run): the two heat
# problems and run(), which times one configuration from two runs.  The sourcing script sets pyr (the
# program), out (its results folder), run_limit (seconds one run may take), run_opts (an array of
# options every run gets), mpi (the launcher, an array; only for LAUNCH = mpi), and defines
# run_row NAME STEADY E2E T1 T2 HOST, which prints one row of its own table.
# shellcheck disable=SC2154  # pyr, out, run_limit, run_opts, mpi: the sourcing script's

# problem FILE DIMS NODES DT: heat in float, NODES nodes along each of DIMS axes, a Gaussian, on the GPU
problem() {
  local axes=(nx ny nz) i
  {
    printf '[grid]\ndims = %s\n' "$2"
    for ((i = 0; i < $2; i++)); do printf '%s = %s\n' "${axes[i]}" "$3"; done
    printf '[scheme]\ndt = %s\nsteps = 100\nprecision = float\n[initial]\nkind = gauss\n[run]\nbackend = cuda\n' "$4"
  } >"$1"
}

# problems DIR: DIR/s2.ini, 2D 32768^2 interior, and DIR/s3.ini, 3D 1024^3 interior (the runs' steps
# and devices come from run's SETS)
problems() {
  problem "$1/s2.ini" 2 32769 5e-11
  problem "$1/s3.ini" 3 1025 5e-8
}

# run NAME LAUNCH FILE S1 S2 SETS...: FILE with S1 and then S2 steps, SETS after the script's own
# options (LAUNCH one: in this process; mpi: under "${mpi[@]}").  Steady = interior x (S2 - S1) /
# (t2 - t1), which leaves out what both runs share (making the initial field, copies in and out,
# pinning); end to end = interior x S2 / t2; both from the runs' own seconds, in Gcell/s.  Each run's
# summary line goes to OUT/scaling.log, its stderr to OUT/scaling.err.
run() {
  local name=$1 launch=$2 file=$3 s1=$4 s2=$5
  shift 5
  local t=() line="" s via=() cells host rates
  [ "$launch" = mpi ] && via=("${mpi[@]}")
  for s in $s1 $s2; do
    line=$(timeout "$run_limit" "${via[@]}" "$pyr" run "$file" "${run_opts[@]}" --set scheme.steps="$s" --set output.field= --set output.image= "$@" 2>>"$out/scaling.err" | grep "method=" | tail -1)
    echo "$name steps=$s: $line" >>"$out/scaling.log"
    t+=("$(echo "$line" | grep -o 'seconds=[0-9.]*' | cut -d= -f2)")
  done
  host=$(echo "$line" | grep -o 'host=[^ ]*' | head -1)
  cells=$(echo "$line" | grep -o 'grid=[0-9x]*' | cut -d= -f2 | awk -F x '{p = 1; for (i = 1; i <= NF; i++) p *= ($i - 2); print p}')
  # %.17g: run_row reads back the same doubles
  rates=$(awk -v c="$cells" -v a="${t[0]:-0}" -v b="${t[1]:-0}" -v s1="$s1" -v s2="$s2" 'BEGIN {
    m = (b > a) ? c * (s2 - s1) / (b - a) / 1e9 : 0; e = b > 0 ? c * s2 / b / 1e9 : 0;
    printf "%.17g %.17g\n", m, e }')
  run_row "$name" "${rates% *}" "${rates#* }" "${t[0]:-0}" "${t[1]:-0}" "$host"
}
