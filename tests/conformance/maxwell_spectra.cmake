# A dielectric slab's transmission and reflection spectra (flux monitors, two runs) against the analytic
# Fabry-Perot formulas, and against MEEP where Debian's python3-meep imports (else skipped, 77).
if(NOT PYR_SANITIZE AND BUILD_SHARED_LIBS)
  foreach(variant IN ITEMS analytic meep)
    set(name test_maxwell_spectra)
    if(variant STREQUAL "meep")
      set(name test_maxwell_spectra_meep)
    endif()
    add_test(NAME ${name} COMMAND sh -c "/usr/bin/python3 -c 'import numpy' 2>/dev/null || exit 77; exec /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/test_maxwell_spectra.py ${variant}")
    set_tests_properties(${name} PROPERTIES LABELS "maxwell;reference;python;quick" SKIP_RETURN_CODE 77 TIMEOUT 300
      ENVIRONMENT "PYRGRID_LIBRARY=$<TARGET_FILE:pyrgrid>;PYTHONPATH=${PROJECT_SOURCE_DIR}/python;PYTHONDONTWRITEBYTECODE=1;OMP_NUM_THREADS=2")
  endforeach()
endif()
