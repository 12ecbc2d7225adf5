# Mie scattering: a dielectric sphere's scattering cross-section (TF/SF plane wave, a closed box of six flux planes)
# against the analytic Mie series (SciPy's spherical Bessel functions; skipped, 77, without SciPy), and the box's far
# field against Mie's differential cross-section.
if(NOT PYR_SANITIZE AND BUILD_SHARED_LIBS)
  add_test(NAME test_maxwell_mie COMMAND sh -c "/usr/bin/python3 -c 'import numpy, scipy' 2>/dev/null || exit 77; exec /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/test_maxwell_mie.py")
  set_tests_properties(test_maxwell_mie PROPERTIES LABELS "maxwell;reference;python;slow" SKIP_RETURN_CODE 77 TIMEOUT 300 PROCESSORS 2
    ENVIRONMENT "PYRGRID_LIBRARY=$<TARGET_FILE:pyrgrid>;PYTHONPATH=${PROJECT_SOURCE_DIR}/python;PYTHONDONTWRITEBYTECODE=1;OMP_NUM_THREADS=2")
endif()
