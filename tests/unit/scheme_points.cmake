# The scheme's point hooks (sources, probes, the scheme's own recorded points) as the executor and the
# parts call them for any scheme: a wrapping table over Maxwell's, one device and several parts.
pyr_add_test(test_scheme_points SOURCES test_scheme_points.c LABELS maxwell plan parts quick ARGS cpu)
if(PYR_HAVE_CUDA)
  add_test(NAME test_scheme_points_gpu COMMAND test_scheme_points cuda)
  set_tests_properties(test_scheme_points_gpu PROPERTIES SKIP_RETURN_CODE 77 LABELS "maxwell;parts;cuda;gpu;quick" RESOURCE_LOCK gpu)
endif()
