# Chebyshev-accelerated Jacobi out of core: random streamed plans (trivial,
# pyramid in every decomposition, method = auto under a budget the grid does
# not fit in) carry both layers of u and give the naive method's bits, sweep
# count and change, moving the values their plan predicts.
pyr_add_test(test_poisson_cheb_plans SOURCES test_poisson_cheb_plans.c LABELS poisson plan quick ARGS 120 1 cpu)
if(PYR_HAVE_CUDA)
  add_test(NAME test_cuda_poisson_cheb_plans COMMAND test_poisson_cheb_plans 120 2 cuda)
  set_tests_properties(test_cuda_poisson_cheb_plans PROPERTIES SKIP_RETURN_CODE 77 LABELS "poisson;cuda;gpu;quick" RESOURCE_LOCK gpu)
endif()
