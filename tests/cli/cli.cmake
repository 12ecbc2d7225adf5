# The program through its command line.
add_test(NAME test_cli COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_cli.sh $<TARGET_FILE:pyrgrid_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_cli PROPERTIES LABELS "cli;slow")
# Outputs through the program: devices, FIFOs, full disks, signals, early checks.
add_test(NAME test_cli_outputs COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_cli_outputs.sh $<TARGET_FILE:pyrgrid_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_cli_outputs PROPERTIES LABELS "cli;quick" TIMEOUT 300)
# HDF5 results and inputs, restarts, run reports, the grid from initial.file (issue 24).
add_test(NAME test_formats_cli COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_formats_cli.sh $<TARGET_FILE:pyrgrid_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_formats_cli PROPERTIES LABELS "cli;formats;slow" SKIP_RETURN_CODE 77 TIMEOUT 300)
# The solve sub-command, linked directly so it is tested without the main program.
pyr_add_test(test_lgs_cli SOURCES test_lgs_cli.c ${PROJECT_SOURCE_DIR}/tools/cli_solve.c ${PROJECT_SOURCE_DIR}/tools/cli_common.c
  ${PROJECT_SOURCE_DIR}/tools/cli_result.c
  LABELS lgs quick)
# The long-vector method through the program: refusals, sweep --sizes, and with a GPU a run equal to the naive method's file.
add_test(NAME test_longvector_cli COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_longvector_cli.sh $<TARGET_FILE:pyrgrid_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_longvector_cli PROPERTIES LABELS "cli;longvector;quick" RESOURCE_LOCK gpu)
add_test(NAME test_maxwell_cli COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_maxwell_cli.sh $<TARGET_FILE:pyrgrid_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_maxwell_cli PROPERTIES LABELS "maxwell;cli;quick" TIMEOUT 300)
add_test(NAME test_poisson_cli COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_poisson_cli.sh $<TARGET_FILE:pyrgrid_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_poisson_cli PROPERTIES LABELS "poisson;cli;quick")
# common.sh, the prologue and epilogue the shell tests source, on its own: exit statuses, skips, the scratch folder.
add_test(NAME test_cli_common COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_common.sh)
set_tests_properties(test_cli_common PROPERTIES LABELS "cli;quick")
