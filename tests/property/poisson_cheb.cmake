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
  if(PYR_HAVE_CUDA)
    # the CUDA kernel's Chebyshev sweeps against the same reference bits
    add_test(NAME test_cuda_poisson_cheb COMMAND test_poisson_cheb cuda)
    set_tests_properties(test_cuda_poisson_cheb PROPERTIES SKIP_RETURN_CODE 77 LABELS "poisson;cuda;gpu;quick" RESOURCE_LOCK gpu)
  endif()
else()
  message(STATUS "pyrgrid: LAPACK not found; test_poisson_cheb is not built (apt install liblapack-dev)")
endif()
