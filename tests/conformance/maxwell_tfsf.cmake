# A dielectric slab lit by a total-field / scattered-field plane wave (source.planewaveN), its transmission and
# reflection read by flux monitors (R in the scattered-field region alone) against the analytic Fabry-Perot formulas;
# the empty line's scattered-field region sees no power (-60 dB).
if(NOT PYR_SANITIZE AND BUILD_SHARED_LIBS)
  add_test(NAME test_maxwell_tfsf COMMAND sh -c "/usr/bin/python3 -c 'import numpy' 2>/dev/null || exit 77; exec /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/test_maxwell_tfsf.py")
  set_tests_properties(test_maxwell_tfsf PROPERTIES LABELS "maxwell;reference;python;quick" SKIP_RETURN_CODE 77 TIMEOUT 300
    ENVIRONMENT "PYRGRID_LIBRARY=$<TARGET_FILE:pyrgrid>;PYTHONPATH=${PROJECT_SOURCE_DIR}/python;PYTHONDONTWRITEBYTECODE=1;OMP_NUM_THREADS=2")
endif()
