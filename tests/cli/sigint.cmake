# Ctrl-C during a run with an HDF5 result: the file is committed with what the
# run has, marked incomplete, and the restart it names gives the straight
# run's bits.  sigint_run is a heat run through the public API as a program
# makes it (pyr_interrupt_catch, a cancel hook, pyr_result_interrupted).
add_executable(sigint_run ${CMAKE_CURRENT_LIST_DIR}/sigint_run.c)
target_link_libraries(sigint_run PRIVATE pyrgrid)
add_test(NAME test_sigint_h5 COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_sigint_h5.sh $<TARGET_FILE:pyrgrid_cli> $<TARGET_FILE:sigint_run>)
set_tests_properties(test_sigint_h5 PROPERTIES LABELS "cli;formats;slow" SKIP_RETURN_CODE 77 TIMEOUT 120)
# The same through `pyrgrid run`, which makes the calls above (tools/cli_run.c).
add_test(NAME test_sigint_h5_cli COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_sigint_h5.sh $<TARGET_FILE:pyrgrid_cli> $<TARGET_FILE:pyrgrid_cli> run)
set_tests_properties(test_sigint_h5_cli PROPERTIES LABELS "cli;formats;slow" SKIP_RETURN_CODE 77 TIMEOUT 120)
