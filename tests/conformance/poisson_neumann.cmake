# Neumann and mixed faces of the Poisson scheme against scipy.sparse.linalg.spsolve of the same discrete operator
# (assembled independently in the test), second order on a manufactured solution, pure Neumann refusals and constant.
add_test(NAME test_poisson_neumann_scipy COMMAND sh -c "/usr/bin/python3 -c 'import scipy' 2>/dev/null || exit 77; exec /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/test_poisson_neumann.py $<TARGET_FILE:pyrgrid_cli> ${CMAKE_CURRENT_BINARY_DIR}/poisson_neumann")
set_tests_properties(test_poisson_neumann_scipy PROPERTIES LABELS "poisson;reference;python;quick" SKIP_RETURN_CODE 77 TIMEOUT 300
  ENVIRONMENT "OMP_NUM_THREADS=2")
