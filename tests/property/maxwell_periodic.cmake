# Maxwell's periodic axes (boundary.periodic): bitwise property tests of every accepted plan against the naive method,
# and the refusal of decompositions that would cut only periodic axes.
pyr_add_test(test_maxwell_periodic_property SOURCES test_maxwell_periodic_property.c LABELS maxwell plan slow ARGS 100 1 cpu)
if(PYR_HAVE_CUDA)
  add_test(NAME test_maxwell_periodic_property_gpu COMMAND test_maxwell_periodic_property 100 2 cuda)
  set_tests_properties(test_maxwell_periodic_property_gpu PROPERTIES SKIP_RETURN_CODE 77 LABELS "maxwell;cuda;gpu;slow" RESOURCE_LOCK gpu)
endif()
