# bench/mie_check.py, the checker of the Mie run larger than the GPU (bench/problems/mie_larger_than_gpu.ini), on the
# small case in float run by the program: within 5% of Mie's series, its arithmetic, its refusals (SciPy: skipped,
# 77, without it).
if(NOT PYR_SANITIZE AND BUILD_SHARED_LIBS)
  add_test(NAME test_mie_check COMMAND sh -c "/usr/bin/python3 -c 'import numpy, scipy' 2>/dev/null || exit 77; exec /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/test_mie_check.py $<TARGET_FILE:pyrgrid_cli>")
  set_tests_properties(test_mie_check PROPERTIES LABELS "maxwell;reference;python;slow" SKIP_RETURN_CODE 77 TIMEOUT 300 PROCESSORS 2
    ENVIRONMENT "PYRGRID_LIBRARY=$<TARGET_FILE:pyrgrid>;PYTHONPATH=${PROJECT_SOURCE_DIR}/python;PYTHONDONTWRITEBYTECODE=1;OMP_NUM_THREADS=2")
endif()
