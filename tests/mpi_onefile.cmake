# mpirun -np P pyrgrid run writes one output file (test_mpi_onefile.sh): the one-process bytes over
# np 1..4, failures that keep the old file, the parts route when asked.  Without MPI the script
# skips (77).  About 40 s on two cores: slow.
set(_pyr_onefile_run)
set(_pyr_onefile_flags)
if(PYR_HAVE_MPI)
  set(_pyr_onefile_run ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG})
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _pyr_onefile_version ERROR_QUIET)
  if(_pyr_onefile_version MATCHES "Open MPI|OpenRTE")
    # more ranks than cores, as root in CI containers, no binding to cores (as tests/mpi.cmake)
    set(_pyr_onefile_flags --oversubscribe --allow-run-as-root --bind-to none --mca mpi_yield_when_idle 1)
  endif()
else()
  set(_pyr_onefile_run "" "")
endif()
add_test(NAME test_mpi_onefile COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_mpi_onefile.sh $<TARGET_FILE:pyrgrid_cli> ${_pyr_onefile_run}
  ${_pyr_onefile_flags})
set(_pyr_onefile_env "OMP_NUM_THREADS=1")
if(PYR_SANITIZE)
  list(APPEND _pyr_onefile_env "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1") # Open MPI keeps its allocations to the end
endif()
set_tests_properties(test_mpi_onefile PROPERTIES LABELS "mpi;cli;slow" SKIP_RETURN_CODE 77 ENVIRONMENT "${_pyr_onefile_env}" TIMEOUT 400
  PROCESSORS 2)
