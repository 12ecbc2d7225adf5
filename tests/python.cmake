# The Python module: pytest suite (tests/python) against this
# build's library and program, and the installed package.  Skipped (77) when
# /usr/bin/python3 lacks pytest or numpy.  Not run under the sanitizers: an
# instrumented libpyrgrid cannot be loaded into an uninstrumented Python.
if(NOT PYR_SANITIZE AND BUILD_SHARED_LIBS)
  add_test(NAME test_python
    COMMAND sh -c "/usr/bin/python3 -c 'import pytest, numpy' 2>/dev/null || { echo 'pytest or numpy missing for /usr/bin/python3 (apt-get install python3-pytest python3-numpy): skipped'; exit 77; }; exec /usr/bin/python3 -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/python")
  set_tests_properties(test_python PROPERTIES LABELS "python;slow" SKIP_RETURN_CODE 77 TIMEOUT 300
    ENVIRONMENT "PYRGRID_LIBRARY=$<TARGET_FILE:pyrgrid>;PYRGRID_CLI=$<TARGET_FILE:pyrgrid_cli>;PYTHONPATH=${PROJECT_SOURCE_DIR}/python;PYTHONDONTWRITEBYTECODE=1;OMP_NUM_THREADS=2")
  add_test(NAME test_python_install COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_python_install.sh ${PROJECT_BINARY_DIR})
  set_tests_properties(test_python_install PROPERTIES LABELS "python;cli;quick" SKIP_RETURN_CODE 77)
endif()
if(TARGET pyrgrid_cli AND NOT PYR_SANITIZE AND BUILD_SHARED_LIBS)
  # both install from this build tree (install_manifest.txt): one at a time
  set_tests_properties(test_python_install test_install PROPERTIES RESOURCE_LOCK cmake_install)
endif()
# The examples/*.py scripts run (small sizes), so that they keep working.
if(NOT PYR_SANITIZE AND BUILD_SHARED_LIBS)
  add_test(NAME test_python_examples
    COMMAND sh -c "/usr/bin/python3 -c 'import numpy' 2>/dev/null || exit 77; set -e; cd ${PROJECT_SOURCE_DIR}/examples; /usr/bin/python3 heat.py 65 50 2>/dev/null; /usr/bin/python3 poisson.py 33; /usr/bin/python3 lgs.py 16 24; /usr/bin/python3 frames.py 14; /usr/bin/python3 maxwell.py 41 400")
  set_tests_properties(test_python_examples PROPERTIES LABELS "python;quick" SKIP_RETURN_CODE 77 TIMEOUT 300
    ENVIRONMENT "PYRGRID_LIBRARY=$<TARGET_FILE:pyrgrid>;PYTHONPATH=${PROJECT_SOURCE_DIR}/python;PYTHONDONTWRITEBYTECODE=1;OMP_NUM_THREADS=2")
endif()
