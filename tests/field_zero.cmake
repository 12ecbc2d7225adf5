# Caller's fields of zeros (pyr_field_create_zero): refusals, the mark against written pages, Maxwell runs
# from them bit for bit as from filled fields; on a GPU (skipped without one) the same runs in core on CUDA.
pyr_add_test(test_field_create_zero SOURCES test_field_create_zero.c LABELS api quick)
add_test(NAME test_field_create_zero_gpu COMMAND test_field_create_zero gpu)
set_tests_properties(test_field_create_zero_gpu PROPERTIES SKIP_RETURN_CODE 77 LABELS "api;cuda;quick;gpu" RESOURCE_LOCK gpu)
