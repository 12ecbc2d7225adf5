# Maxwell's periodic axes (boundary.periodic): a periodic 2D run against a 1D one, the TF/SF plane wave across the wrap,
# the keys and the refusals.
pyr_add_test(test_maxwell_periodic SOURCES test_maxwell_periodic.c LABELS maxwell plan quick ARGS cpu)
if(PYR_HAVE_CUDA)
  add_test(NAME test_maxwell_periodic_gpu COMMAND test_maxwell_periodic cuda)
  set_tests_properties(test_maxwell_periodic_gpu PROPERTIES SKIP_RETURN_CODE 77 LABELS "maxwell;cuda;gpu;quick" RESOURCE_LOCK gpu)
endif()
