# pyrgrid plan of a multigrid problem says its own plan (levels, cycle, smoother, coarsest solve, what is in core and
# what is streamed, the device's bytes, the cost of a cycle, the same cost a run then reports) and none of the sweeping
# methods' lines (passes, time layers, predicted counts, the run model).
add_test(NAME test_mg_plan COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_mg_plan.sh $<TARGET_FILE:pyrgrid_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_mg_plan PROPERTIES LABELS "poisson;multigrid;cli;quick")
