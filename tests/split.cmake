# MPI in libpyrgrid_mpi of its own, the CUDA backend in its plug-in, and a one-process CPU run that
# loads no MPI and no CUDA library: readelf's NEEDED, the libraries the program and Python load, libpyrgrid_mpi's exports,
# the program under a launcher without its MPI module (test_split.sh).
set(_pyr_split_args $<TARGET_FILE:pyrgrid_cli> $<TARGET_FILE:pyrgrid> ${PROJECT_SOURCE_DIR} ${PYR_HAVE_MPI})
if(TARGET pyrgrid_mpi)
  list(APPEND _pyr_split_args $<TARGET_FILE:pyrgrid_mpi>)
endif()
add_test(NAME test_split COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_split.sh ${_pyr_split_args})
set(_pyr_split_env)
if(PYR_SANITIZE)
  list(APPEND _pyr_split_env PYR_SANITIZE=1)
endif()
if(TARGET pyrgrid_cuda)
  # the CUDA backend's plug-in beside libpyrgrid
  list(APPEND _pyr_split_env "PYR_TEST_CUDA_PLUGIN=$<TARGET_FILE:pyrgrid_cuda>")
endif()
set_tests_properties(test_split PROPERTIES LABELS "cli;api;mpi;quick" SKIP_RETURN_CODE 77 ENVIRONMENT "${_pyr_split_env}")
