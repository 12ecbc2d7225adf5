# Heat equation: methods, plans, physics.
pyr_add_test(test_pyramid SOURCES test_pyramid.c LABELS heat plan ARGS 300 1 cpu)
pyr_add_test(test_heat SOURCES test_heat.c LABELS heat)
pyr_add_test(test_errors SOURCES test_errors.c LABELS heat errors)
pyr_add_test(test_counts SOURCES test_counts.c LABELS heat plan)
pyr_add_test(test_inplace SOURCES test_inplace.c LABELS heat plan)
add_test(NAME test_cli COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_cli.sh $<TARGET_FILE:pyrgrid_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_cli PROPERTIES LABELS "cli")
