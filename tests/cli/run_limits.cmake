# pyrgrid run at the edges of memory (the automatic CPU budget under ulimit -v, out-of-memory advice)
# and of the number range (heat and Poisson values overflowing to inf/NaN): the reliability review's
# M9, L23 and L4.
add_test(NAME test_run_limits COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_run_limits.sh $<TARGET_FILE:pyrgrid_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_run_limits PROPERTIES LABELS "cli;memory;quick" TIMEOUT 300)
