# The Poisson equation with Jacobi sweeps (issue 19): physics against analytic
# and direct solutions, refusals; bitwise property tests of every plan.
find_package(LAPACK)
if(LAPACK_FOUND)
  pyr_add_test(test_poisson SOURCES test_poisson.c LABELS poisson LIBS LAPACK::LAPACK)
else()
  message(STATUS "pyrgrid: LAPACK not found; test_poisson is not built (apt install liblapack-dev)")
endif()
pyr_add_test(test_poisson_property SOURCES test_poisson_property.c LABELS poisson plan ARGS 200 1 cpu)
if(PYR_HAVE_CUDA)
  add_test(NAME test_cuda_poisson COMMAND test_poisson_property 200 2 cuda)
  set_tests_properties(test_cuda_poisson PROPERTIES SKIP_RETURN_CODE 77 LABELS "poisson;cuda;gpu" RESOURCE_LOCK gpu)
endif()
pyr_add_test(test_poisson_model SOURCES test_poisson_model.c LABELS poisson model)
