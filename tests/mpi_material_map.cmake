# A Maxwell material map over MPI ranks (np 2 and 3) and over two parts in one process: the bytes of the
# single-process run of the shapes it is drawn from (test_mpi_material_map.sh). Without MPI the script skips (77).
if(NOT PYR_HAVE_MPI)
  add_test(NAME test_mpi_material_map COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_mpi_material_map.sh $<TARGET_FILE:pyrgrid_cli> "" "")
else()
  set(_pyr_map_flags)
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _pyr_map_version ERROR_QUIET)
  if(_pyr_map_version MATCHES "Open MPI|OpenRTE")
    # more ranks than cores, as root in CI containers, no binding to cores (as tests/mpi.cmake)
    set(_pyr_map_flags --oversubscribe --allow-run-as-root --bind-to none --mca mpi_yield_when_idle 1)
  endif()
  add_test(NAME test_mpi_material_map COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_mpi_material_map.sh $<TARGET_FILE:pyrgrid_cli>
    ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${_pyr_map_flags})
endif()
set(_pyr_map_env "OMP_NUM_THREADS=1")
if(PYR_SANITIZE)
  list(APPEND _pyr_map_env "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1") # Open MPI keeps its allocations to the end (tests/mpi.cmake)
endif()
set_tests_properties(test_mpi_material_map PROPERTIES LABELS "mpi;maxwell;cli;quick" SKIP_RETURN_CODE 77 ENVIRONMENT "${_pyr_map_env}" TIMEOUT 300
  PROCESSORS 2)
