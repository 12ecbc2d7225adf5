# Multigrid (scheme.iteration = multigrid) against scipy.sparse.linalg.spsolve of the same discrete operator
# (assembled independently in the test) on random awkward grids, thread counts' bits, HDF5 and Python results,
# refusals.
# The script also loads the library into Python (pyrgrid.poisson against the program), which a sanitizer
# build's library cannot be (its runtime must come first): shared, unsanitized builds only.
if(NOT PYR_SANITIZE AND BUILD_SHARED_LIBS)
  add_test(NAME test_poisson_multigrid_scipy COMMAND sh -c "/usr/bin/python3 -c 'import scipy' 2>/dev/null || exit 77; exec /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/test_poisson_multigrid.py $<TARGET_FILE:pyrgrid_cli> ${CMAKE_CURRENT_BINARY_DIR}/poisson_multigrid")
  set_tests_properties(test_poisson_multigrid_scipy PROPERTIES LABELS "poisson;multigrid;reference;python;quick" SKIP_RETURN_CODE 77 TIMEOUT 300
    ENVIRONMENT "OMP_NUM_THREADS=2;PYRGRID_LIBRARY=$<TARGET_FILE:pyrgrid>;PYTHONDONTWRITEBYTECODE=1")
endif()
