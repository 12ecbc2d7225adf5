# The Poisson equation: bitwise property tests of every plan.
pyr_add_test(test_poisson_property SOURCES test_poisson_property.c LABELS poisson plan quick ARGS 200 1 cpu)
if(PYR_HAVE_CUDA)
  add_test(NAME test_cuda_poisson COMMAND test_poisson_property 200 2 cuda)
  set_tests_properties(test_cuda_poisson PROPERTIES SKIP_RETURN_CODE 77 LABELS "poisson;cuda;gpu;slow" RESOURCE_LOCK gpu)
endif()
