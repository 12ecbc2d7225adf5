# The Poisson equation with Jacobi sweeps: physics against analytic
# and direct solutions, refusals; its performance model.
find_package(LAPACK)
if(LAPACK_FOUND)
  pyr_add_test(test_poisson SOURCES test_poisson.c LABELS poisson slow LIBS LAPACK::LAPACK)
else()
  message(STATUS "pyrgrid: LAPACK not found; test_poisson is not built (apt install liblapack-dev)")
endif()
pyr_add_test(test_poisson_model SOURCES test_poisson_model.c LABELS poisson model quick)
