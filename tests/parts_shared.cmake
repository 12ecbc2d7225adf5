# Parts of one process on the caller's grid in place: bitwise equal to one
# device, with inputs given or made, halos device to device or through the
# host; the parts download only their own boxes.
pyr_add_test(test_parts_shared SOURCES test_parts_shared.c LABELS parts quick ARGS 40 1)
add_test(NAME test_cli_zero_start COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_cli_zero_start.sh $<TARGET_FILE:pyrgrid_cli>)
set_tests_properties(test_cli_zero_start PROPERTIES LABELS "parts;cli;quick")
if(PYR_HAVE_CUDA)
  add_test(NAME test_cli_zero_start_cuda COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_cli_zero_start.sh $<TARGET_FILE:pyrgrid_cli> cuda)
  set_tests_properties(test_cli_zero_start_cuda PROPERTIES SKIP_RETURN_CODE 77 LABELS "parts;cli;cuda;gpu" RESOURCE_LOCK gpu)
endif()
