# The Maxwell examples (issue 46, "Examples and figures"): every examples/maxwell_*.ini through the program with fewer
# steps, succeeding and writing the outputs it names; the Python examples (maxwell_spectra.py's PNG, maxwell.py, the
# dipole's far-field recipe) where Python can load the library (shared, unsanitized).
set(pyr_examples_python "")
if(NOT PYR_SANITIZE AND BUILD_SHARED_LIBS)
  set(pyr_examples_python /usr/bin/python3)
endif()
add_test(NAME test_examples_maxwell COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_examples_maxwell.sh $<TARGET_FILE:pyrgrid_cli>
  ${PROJECT_SOURCE_DIR} ${pyr_examples_python})
set_tests_properties(test_examples_maxwell PROPERTIES LABELS "maxwell;cli;examples;slow" TIMEOUT 300 PROCESSORS 2
  ENVIRONMENT "PYRGRID_LIBRARY=$<TARGET_FILE:pyrgrid>;PYTHONPATH=${PROJECT_SOURCE_DIR}/python;PYTHONDONTWRITEBYTECODE=1;OMP_NUM_THREADS=2")
