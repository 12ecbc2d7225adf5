# One grid over several devices (and MPI ranks: mpi.cmake):
# bitwise equal to one device, halo counters equal to the formula, refusals.
pyr_add_test(test_parts SOURCES test_parts.c LABELS parts plan ARGS 200 1 cpu)
add_test(NAME test_parts_cli COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_parts_cli.sh $<TARGET_FILE:pyrgrid_cli> cpu)
set_tests_properties(test_parts_cli PROPERTIES LABELS "parts;cli")
if(PYR_HAVE_CUDA)
  # devices = 0,0,...: contexts of one GPU, so the whole multi-device path runs on one;
  # devices = 0,1,...: every GPU (skipped with fewer than two)
  add_test(NAME test_parts_cuda COMMAND test_parts 60 2 cuda same)
  add_test(NAME test_parts_multigpu COMMAND test_parts 60 4 cuda all)
  add_test(NAME test_parts_cli_cuda COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_parts_cli.sh $<TARGET_FILE:pyrgrid_cli> cuda)
  set_tests_properties(test_parts_cuda test_parts_multigpu test_parts_cli_cuda PROPERTIES SKIP_RETURN_CODE 77 LABELS "parts;cuda;gpu"
    RESOURCE_LOCK gpu)
endif()
