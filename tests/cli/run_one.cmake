# pyrgrid run is one run for every scheme, in one process or over MPI ranks (issue 52): the summary
# line, the refusals and the Poisson and restart messages agree (test_run_one.sh); under mpirun
# when the build has MPI.
set(pyr_run_one_labels cli quick)
if(PYR_HAVE_MPI)
  list(APPEND pyr_run_one_labels mpi)
  set(pyr_run_one_mpi ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG})
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE pyr_run_one_mpiexec ERROR_QUIET)
  if(pyr_run_one_mpiexec MATCHES "Open MPI|OpenRTE")
    list(APPEND pyr_run_one_mpi --oversubscribe --allow-run-as-root --bind-to none --mca mpi_yield_when_idle 1)
  endif()
endif()
add_test(NAME test_run_one COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_run_one.sh $<TARGET_FILE:pyrgrid_cli> ${pyr_run_one_mpi})
set(pyr_run_one_env "OMP_NUM_THREADS=1")
if(PYR_SANITIZE)
  # as tests/mpi.cmake: Open MPI's allocations are not leak-checked
  list(APPEND pyr_run_one_env "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1")
endif()
set_tests_properties(test_run_one PROPERTIES LABELS "${pyr_run_one_labels}" ENVIRONMENT "${pyr_run_one_env}" TIMEOUT 120 PROCESSORS 2)
