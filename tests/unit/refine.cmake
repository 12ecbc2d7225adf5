# plan = refine (issue 51): the run's first passes try the model's best candidates and the rest runs with
# the fastest; the same bits as a plain run, every step once, the winner recorded in the wisdom; and the
# executor's ranges of a run's steps (pyr_exec_fields_range) against one run. About 20 s of CPU: slow.
pyr_add_test(test_refine SOURCES test_refine.c LABELS model slow ARGS cpu)
set_tests_properties(test_refine PROPERTIES ENVIRONMENT "PYRGRID_WISDOM=${CMAKE_CURRENT_BINARY_DIR}/refine-wisdom-unused")
if(PYR_HAVE_CUDA)
  # Chebyshev, Maxwell (CPML, sources, plane waves, monitors) and runs split into ranges on the CUDA runtime
  add_test(NAME test_refine_gpu COMMAND test_refine cuda)
  set_tests_properties(test_refine_gpu PROPERTIES SKIP_RETURN_CODE 77 LABELS "model;cuda;gpu;slow" RESOURCE_LOCK gpu
                       ENVIRONMENT "PYRGRID_WISDOM=${CMAKE_CURRENT_BINARY_DIR}/refine-wisdom-unused")
endif()
