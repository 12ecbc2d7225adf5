# Every output of every command (run, Maxwell runs, solve, frames, sweep, calibrate, assemble, the
# Python module's wisdom_export): devices and FIFOs written in place, an output that is an input or
# another output refused before computing, a failing output leaving the others' old files.  The
# Python part needs the shared library of an uninstrumented build (as test_python); without it, it
# is left out with a message.  Each refusal that does not come runs into a 10 s limit: the timeout
# leaves room for many.
set(PYR_OUTPUT_PATHS_ENV "OMP_NUM_THREADS=2")
if(NOT PYR_SANITIZE AND BUILD_SHARED_LIBS)
  list(APPEND PYR_OUTPUT_PATHS_ENV "PYRGRID_LIBRARY=$<TARGET_FILE:pyrgrid>" "PYTHONDONTWRITEBYTECODE=1")
endif()
add_test(NAME test_output_paths
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_output_paths.sh $<TARGET_FILE:pyrgrid_cli> ${PROJECT_SOURCE_DIR}
          ${CMAKE_CURRENT_BINARY_DIR}/output_paths)
set_tests_properties(test_output_paths PROPERTIES LABELS "cli;io;slow" TIMEOUT 600 ENVIRONMENT "${PYR_OUTPUT_PATHS_ENV}")
