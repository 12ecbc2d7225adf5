# Maxwell's DFT and flux monitors and their far field over MPI ranks (test_mpi_monitors.c): every
# rank's spectra equal one process's, bit for bit, under mpirun -np 1..4 (2D TM, 2D TE, 3D; slabs
# along each axis, blocks, two devices per rank); a cancelled rank stops every rank.  Built only
# with MPI; ranks run one OpenMP thread each and share the cores (oversubscribed), as tests/mpi.cmake.
if(NOT PYR_HAVE_MPI)
  return()
endif()
set(pyr_mpimon_flags)
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE pyr_mpimon_version ERROR_QUIET)
if(pyr_mpimon_version MATCHES "Open MPI|OpenRTE")
  set(pyr_mpimon_flags --oversubscribe --allow-run-as-root --bind-to none --mca mpi_yield_when_idle 1)
endif()
set(pyr_mpimon_env "OMP_NUM_THREADS=1")
if(PYR_SANITIZE)
  list(APPEND pyr_mpimon_env "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1") # Open MPI keeps its allocations to the end
endif()
pyr_add_test(test_mpi_monitors SOURCES test_mpi_monitors.c LABELS mpi parts slow LIBS MPI::MPI_C)
set_tests_properties(test_mpi_monitors PROPERTIES ENVIRONMENT "${pyr_mpimon_env}" TIMEOUT 300)
foreach(np 2 3 4)
  add_test(NAME test_mpi_monitors_np${np} COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${pyr_mpimon_flags}
    $<TARGET_FILE:test_mpi_monitors>)
  set_tests_properties(test_mpi_monitors_np${np} PROPERTIES LABELS "mpi;parts;slow" ENVIRONMENT "${pyr_mpimon_env}" TIMEOUT 300 PROCESSORS 2)
endforeach()
# The program (test_mpi_monitors.sh): mpirun -np 1..4 pyrgrid run with [monitor] writes the spectra CSV
# and plot of a one-process run, byte for byte; a failing rank keeps the old spectra.  About 25 s on
# two cores: slow.
add_test(NAME test_mpi_monitors_cli COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_mpi_monitors.sh $<TARGET_FILE:pyrgrid_cli> ${PROJECT_SOURCE_DIR}
  ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${pyr_mpimon_flags})
set_tests_properties(test_mpi_monitors_cli PROPERTIES LABELS "mpi;cli;slow" SKIP_RETURN_CODE 77 ENVIRONMENT "${pyr_mpimon_env}" TIMEOUT 300
  PROCESSORS 2)
