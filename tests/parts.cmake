# One grid over several devices (and MPI ranks: mpi.cmake), issue 25:
# bitwise equal to one device, halo counters equal to the formula, refusals.
pyr_add_test(test_parts SOURCES test_parts.c LABELS parts plan ARGS 120 1 cpu)
if(PYR_HAVE_CUDA)
  # devices = 0,0,...: contexts of one GPU, so the whole multi-device path runs on one
  add_test(NAME test_parts_cuda COMMAND test_parts 60 2 cuda)
  set_tests_properties(test_parts_cuda PROPERTIES SKIP_RETURN_CODE 77 LABELS "parts;cuda;gpu" RESOURCE_LOCK gpu)
endif()
