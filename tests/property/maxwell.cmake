# Maxwell's equations: bitwise property tests of every plan.
pyr_add_test(test_maxwell_property SOURCES test_maxwell_property.c LABELS maxwell plan slow ARGS 150 1 cpu)
if(PYR_HAVE_CUDA)
  add_test(NAME test_cuda_maxwell COMMAND test_maxwell_property 150 2 cuda)
  set_tests_properties(test_cuda_maxwell PROPERTIES SKIP_RETURN_CODE 77 LABELS "maxwell;cuda;gpu;slow" RESOURCE_LOCK gpu)
endif()
if(PYR_HAVE_CUDA)
  pyr_add_test(test_maxwell_fused SOURCES test_maxwell_fused.c LABELS maxwell cuda slow GPU)
endif()
