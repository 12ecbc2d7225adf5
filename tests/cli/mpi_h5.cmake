# mpirun -np P pyrgrid run writes output.field = NAME.h5 as one HDF5 file (test_mpi_h5.sh): every
# dataset and attribute of a one-process run's file (h5py), np 1..4, heat 2D/3D, Poisson, Maxwell,
# float and double, fields of one row of chunks and of several, slabs along each axis and blocks; a
# failing rank keeps the old file and leaves no temporary.  Skips (77) without MPI, HDF5 or h5py.
# About 30 s on two cores: slow.
set(_pyr_mpih5_run "" "")
set(_pyr_mpih5_flags)
if(PYR_HAVE_MPI)
  set(_pyr_mpih5_run ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG})
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _pyr_mpih5_version ERROR_QUIET)
  if(_pyr_mpih5_version MATCHES "Open MPI|OpenRTE")
    # more ranks than cores, as root in CI containers, no binding to cores (as tests/mpi.cmake)
    set(_pyr_mpih5_flags --oversubscribe --allow-run-as-root --bind-to none --mca mpi_yield_when_idle 1)
  endif()
endif()
add_test(NAME test_mpi_h5 COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_mpi_h5.sh $<TARGET_FILE:pyrgrid_cli> ${_pyr_mpih5_run} ${_pyr_mpih5_flags})
set(_pyr_mpih5_env "OMP_NUM_THREADS=1")
if(PYR_SANITIZE)
  list(APPEND _pyr_mpih5_env "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1") # Open MPI keeps its allocations to the end
endif()
set_tests_properties(test_mpi_h5 PROPERTIES LABELS "mpi;cli;hdf5;slow" SKIP_RETURN_CODE 77 ENVIRONMENT "${_pyr_mpih5_env}" TIMEOUT 300
  PROCESSORS 2)
