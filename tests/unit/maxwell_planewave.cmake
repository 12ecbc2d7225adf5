# Maxwell's total-field / scattered-field plane waves (source.planewaveN): no leakage outside the box, the incident
# field against the analytic plane wave, the same bits across methods, heights, budgets and parts, refusals, the keys'
# round trip.
pyr_add_test(test_maxwell_planewave SOURCES test_maxwell_planewave.c LABELS maxwell plan parts quick ARGS cpu)
if(PYR_HAVE_CUDA)
  add_test(NAME test_maxwell_planewave_gpu COMMAND test_maxwell_planewave cuda)
  set_tests_properties(test_maxwell_planewave_gpu PROPERTIES SKIP_RETURN_CODE 77 LABELS "maxwell;parts;cuda;gpu;quick" RESOURCE_LOCK gpu)
endif()
