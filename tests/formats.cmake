# Issue 24: the layout-free API (handles and keys, wrapped fields, JSON),
# HDF5 results and inputs, restarts, run reports, the grid from initial.file.
pyr_add_test(test_api_keys SOURCES test_api_keys.c LABELS api formats)
pyr_add_test(test_hdf5 SOURCES test_hdf5.c LABELS io formats)
add_test(NAME test_formats_cli COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_formats_cli.sh $<TARGET_FILE:pyrgrid_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_formats_cli PROPERTIES LABELS "cli;formats" SKIP_RETURN_CODE 77 TIMEOUT 300)
