# Chebyshev-accelerated Jacobi for the Poisson equation (in core, CPU): bit for
# bit against the recurrence written in the test, every kernel variant and pass
# cut; the converged result against LAPACK's direct solve; the sweeps to a
# tolerance against plain Jacobi's (the slow run: 257^2 against the documented count, 129^2 beside plain
# Jacobi measured there).
find_package(LAPACK)
if(LAPACK_FOUND)
  pyr_add_test(test_poisson_cheb SOURCES test_poisson_cheb.c LABELS poisson quick LIBS LAPACK::LAPACK)
  add_test(NAME test_poisson_cheb_slow COMMAND test_poisson_cheb slow)
  set_tests_properties(test_poisson_cheb_slow PROPERTIES LABELS "poisson;slow")
else()
  message(STATUS "pyrgrid: LAPACK not found; test_poisson_cheb is not built (apt install liblapack-dev)")
endif()
