# The set-up the MPI program tests share (sourced, not run): their arguments PYRGRID MPIEXEC
# NUMPROC_FLAG [MPIEXEC FLAGS...], the skips (exit 77) without mpirun or without MPI in this
# pyrgrid, run_np NP ARGS... (pyrgrid under mpirun) and temps (the temporaries the atomic output
# machinery would leave in the folder: .NAME.tmp.PID@HOST.XXXXXX); the rest (the scratch folder as
# the working folder, fail() counting failures, finish) is cli/common.sh's.
# usage: . mpi_launch.sh PYRGRID MPIEXEC NUMPROC_FLAG [MPIEXEC FLAGS...]
. "$(dirname "${BASH_SOURCE[0]}")/cli/common.sh"
pyr_setup "$1"
mpiexec=${2:-}
npflag=${3:--np}
shift 3 2> /dev/null || shift $#
flags=("$@")
if [ -z "$mpiexec" ] || ! command -v "$mpiexec" > /dev/null 2>&1; then
  echo "no mpirun: skipped"
  exit 77
fi
"$pyr" info 2>&1 | grep -q "^mpi: compiled in (" || { echo "this pyrgrid has no MPI: skipped"; exit 77; }
run_np() { # NP ARGS...: pyrgrid under mpirun
  local np=$1
  shift
  "$mpiexec" "$npflag" "$np" "${flags[@]}" "$pyr" "$@"
}
temps() { ls -A | grep -E '\.tmp\.'; }
