# One grid over MPI ranks: the C API under mpirun -np 1..4 on the
# CPU backend (bitwise equal to one device, halo counters, failures), and
# the program (mpirun ... pyrgrid run, pyrgrid assemble).  Built only with
# MPI; ranks run one OpenMP thread each, and share the cores (oversubscribed).
if(NOT PYR_HAVE_MPI)
  return()
endif()
set(PYR_MPIEXEC_FLAGS)
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE pyr_mpiexec_version ERROR_QUIET)
if(pyr_mpiexec_version MATCHES "Open MPI|OpenRTE")
  # more ranks than cores (CI has 2), as root in CI containers, no binding to cores
  set(PYR_MPIEXEC_FLAGS --oversubscribe --allow-run-as-root --bind-to none --mca mpi_yield_when_idle 1)
endif()
set(PYR_MPI_ENV "OMP_NUM_THREADS=1")
if(PYR_SANITIZE)
  # Open MPI keeps allocations to the end (and its plugins have no frame
  # pointers for LeakSanitizer's stacks, so no suppression list matches
  # them): leaks are not checked under MPI; test_parts runs the same engine
  # in one process with leak checks on.
  list(APPEND PYR_MPI_ENV "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1")
endif()
pyr_add_test(test_mpi SOURCES test_mpi.c LABELS mpi parts ARGS 24 1 LIBS MPI::MPI_C)
set_tests_properties(test_mpi PROPERTIES ENVIRONMENT "${PYR_MPI_ENV}")
foreach(np 2 3 4)
  add_test(NAME test_mpi_np${np} COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${PYR_MPIEXEC_FLAGS}
    $<TARGET_FILE:test_mpi> 24 ${np})
  set_tests_properties(test_mpi_np${np} PROPERTIES LABELS "mpi;parts" ENVIRONMENT "${PYR_MPI_ENV}" TIMEOUT 300 PROCESSORS 2)
endforeach()
add_test(NAME test_mpi_cli COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_mpi_cli.sh $<TARGET_FILE:pyrgrid_cli> ${MPIEXEC_EXECUTABLE}
  ${MPIEXEC_NUMPROC_FLAG} ${PYR_MPIEXEC_FLAGS})
set_tests_properties(test_mpi_cli PROPERTIES LABELS "mpi;cli" ENVIRONMENT "${PYR_MPI_ENV}" TIMEOUT 300 PROCESSORS 2)
