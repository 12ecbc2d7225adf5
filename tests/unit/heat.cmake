# Heat equation: physics (eigenmode decay), refusals, counters against closed forms, in-place
# runs, the executor's hand-overs against the runtime contract (a vector-clock hazard checker).
pyr_add_test(test_heat SOURCES test_heat.c LABELS heat quick)
pyr_add_test(test_errors SOURCES test_errors.c LABELS heat errors quick)
pyr_add_test(test_counts SOURCES test_counts.c LABELS heat plan quick)
pyr_add_test(test_inplace SOURCES test_inplace.c LABELS heat plan quick)
pyr_add_test(test_exec_hazards SOURCES ${PROJECT_SOURCE_DIR}/tests/test_exec_hazards.c LABELS heat plan quick)
