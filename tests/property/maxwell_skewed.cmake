# Skewed pieces for the Maxwell scheme (its state updated in place in a ring of planes the slots share):
# random problems and plans bit-identical to the CPU naive method, each plane up and down once a pass.
pyr_add_test(test_maxwell_skewed_property SOURCES test_maxwell_skewed_property.c LABELS maxwell plan quick ARGS 100 1 cpu)
if(PYR_HAVE_CUDA)
  add_test(NAME test_cuda_maxwell_skewed COMMAND test_maxwell_skewed_property 200 2 cuda)
  set_tests_properties(test_cuda_maxwell_skewed PROPERTIES SKIP_RETURN_CODE 77 LABELS "maxwell;cuda;gpu;slow" RESOURCE_LOCK gpu)
endif()
