# Skewed pieces for the Poisson scheme (f streamed beside the state, the change measured per piece):
# random problems and plans bit-identical to the CPU naive method, the same sweeps and change.
pyr_add_test(test_skewed_poisson SOURCES test_skewed_poisson.c LABELS poisson plan quick ARGS 120 1 cpu)
if(PYR_HAVE_CUDA)
  add_test(NAME test_cuda_skewed_poisson COMMAND test_skewed_poisson 200 2 cuda)
  set_tests_properties(test_cuda_skewed_poisson PROPERTIES SKIP_RETURN_CODE 77 LABELS "poisson;cuda;gpu;slow" RESOURCE_LOCK gpu)
endif()
