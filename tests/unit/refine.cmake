# plan = refine (issue 51): the run's first passes try the model's best candidates and the rest runs with
# the fastest; the same bits as a plain run, every step once, the winner recorded in the wisdom; and the
# executor's ranges of a run's steps (pyr_exec_fields_range) against one run. About 20 s of CPU: slow.
pyr_add_test(test_refine SOURCES test_refine.c LABELS model slow)
set_tests_properties(test_refine PROPERTIES ENVIRONMENT "PYRGRID_WISDOM=${CMAKE_CURRENT_BINARY_DIR}/refine-wisdom-unused")
