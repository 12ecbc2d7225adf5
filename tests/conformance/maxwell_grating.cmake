# A lossless dielectric grating (2D, periodic along y) under a normally incident TF/SF plane wave: R + T = 1 from flux
# monitors, and MEEP's zeroth-order transmission where Debian's python3-meep imports (else skipped, 77).
if(NOT PYR_SANITIZE AND BUILD_SHARED_LIBS)
  foreach(variant IN ITEMS power meep)
    set(name test_maxwell_grating)
    if(variant STREQUAL "meep")
      set(name test_maxwell_grating_meep)
    endif()
    add_test(NAME ${name} COMMAND sh -c "/usr/bin/python3 -c 'import numpy' 2>/dev/null || exit 77; exec /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/test_maxwell_grating.py ${variant}")
    set_tests_properties(${name} PROPERTIES LABELS "maxwell;reference;python;quick" SKIP_RETURN_CODE 77 TIMEOUT 300
      ENVIRONMENT "PYRGRID_LIBRARY=$<TARGET_FILE:pyrgrid>;PYTHONPATH=${PROJECT_SOURCE_DIR}/python;PYTHONDONTWRITEBYTECODE=1;OMP_NUM_THREADS=2")
  endforeach()
endif()
