# The methods as registered entries (src/methods/method.h): the registry, method = auto as the first
# automatic entry that fits, each plan's record of the entry that made it and why, the refusals.
pyr_add_test(test_methods SOURCES ../unit/test_methods.c LABELS model quick)
# The plans `pyrgrid plan` chooses for a few dozen problems, budgets and forced methods, decompositions,
# heights, slots and pieces on the CPU, against the committed methods_expected.txt: a change of the
# planner that changes a choice, a count, a prediction or a message shows as a diff.  Where such a change
# is meant, regenerate the file with
#   bash tests/repo/methods_sweep.sh BUILD/pyrgrid . quick > tests/repo/methods_expected.txt
# and say why in the commit.  Skipped (77) where /usr/bin/python3 is missing.
add_test(NAME test_methods_plans
  COMMAND bash -c "[ -x /usr/bin/python3 ] || { echo '/usr/bin/python3 missing: skipped'; exit 77; }; bash ${CMAKE_CURRENT_LIST_DIR}/methods_sweep.sh $<TARGET_FILE:pyrgrid_cli> ${PROJECT_SOURCE_DIR} quick | diff -u ${CMAKE_CURRENT_LIST_DIR}/methods_expected.txt -")
set_tests_properties(test_methods_plans PROPERTIES LABELS "model;quick" SKIP_RETURN_CODE 77 TIMEOUT 120)
