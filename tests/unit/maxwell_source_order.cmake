# Sources meeting on one node (line sources over the same nodes, a TF/SF box's edges) are added in the order of the
# scheme's list on every backend and plan: the in-order float sums, and the CPU naive method's bits.
pyr_add_test(test_maxwell_source_order SOURCES test_maxwell_source_order.c LABELS maxwell quick ARGS cpu)
if(PYR_HAVE_CUDA)
  add_test(NAME test_maxwell_source_order_gpu COMMAND test_maxwell_source_order cuda)
  set_tests_properties(test_maxwell_source_order_gpu PROPERTIES SKIP_RETURN_CODE 77 LABELS "maxwell;cuda;gpu;quick" RESOURCE_LOCK gpu)
endif()
