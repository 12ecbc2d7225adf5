# Maxwell's sources, probes, plane waves and monitors as Python objects (the problem file's lines, the same bits as
# its run) and the flux spectra as a PNG read back (labels, the line against the spectrum): the one pytest file, alone
# and quick (test_python runs it with the rest).  Skipped (77) without pytest or numpy for /usr/bin/python3.
if(NOT PYR_SANITIZE AND BUILD_SHARED_LIBS)
  add_test(NAME test_python_maxwell_objects
    COMMAND sh -c "/usr/bin/python3 -c 'import pytest, numpy' 2>/dev/null || { echo 'pytest or numpy missing for /usr/bin/python3: skipped'; exit 77; }; exec /usr/bin/python3 -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/python/test_maxwell_objects.py")
  set_tests_properties(test_python_maxwell_objects PROPERTIES LABELS "python;maxwell;quick" SKIP_RETURN_CODE 77 TIMEOUT 120
    ENVIRONMENT "PYRGRID_LIBRARY=$<TARGET_FILE:pyrgrid>;PYTHONPATH=${PROJECT_SOURCE_DIR}/python;PYTHONDONTWRITEBYTECODE=1;OMP_NUM_THREADS=2")
endif()
