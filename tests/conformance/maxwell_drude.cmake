# Dispersive materials (Drude, Lorentz, Debye) against analytic formulas: a Drude half-space's reflectance and the
# decay inside it (as a box, and as a label map: drude_map), Lorentz and Debye slabs' power and complex transmission spectra and the permittivity recovered from
# them; and the Lorentz slab and Drude half-space against MEEP where Debian's python3-meep imports (else skipped, 77).
if(NOT PYR_SANITIZE AND BUILD_SHARED_LIBS)
  foreach(variant IN ITEMS drude drude_map lorentz debye meep)
    set(name test_maxwell_dispersive_${variant})
    add_test(NAME ${name} COMMAND sh -c "/usr/bin/python3 -c 'import numpy' 2>/dev/null || exit 77; exec /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/test_maxwell_drude.py ${variant}")
    set_tests_properties(${name} PROPERTIES LABELS "maxwell;physics;reference;python;quick" SKIP_RETURN_CODE 77 TIMEOUT 300
      ENVIRONMENT "PYRGRID_LIBRARY=$<TARGET_FILE:pyrgrid>;PYTHONPATH=${PROJECT_SOURCE_DIR}/python;PYTHONDONTWRITEBYTECODE=1;OMP_NUM_THREADS=2")
  endforeach()
endif()
