# Multigrid with Neumann and mixed faces (scheme.iteration = multigrid, [boundary]) against
# scipy.sparse.linalg.spsolve of the operator assembled independently in the test (pure Neumann: the constant
# fixed to the initial field's weighted mean, and Chebyshev's field), cycle counts, thread counts' bits, the
# incompatible-data refusal.
if(NOT PYR_SANITIZE)
  add_test(NAME test_poisson_multigrid_neumann COMMAND sh -c "/usr/bin/python3 -c 'import scipy' 2>/dev/null || exit 77; exec /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/test_poisson_multigrid_neumann.py $<TARGET_FILE:pyrgrid_cli> ${CMAKE_CURRENT_BINARY_DIR}/poisson_multigrid_neumann")
  set_tests_properties(test_poisson_multigrid_neumann PROPERTIES LABELS "poisson;multigrid;neumann;reference;python;slow" SKIP_RETURN_CODE 77 TIMEOUT 300
    ENVIRONMENT "OMP_NUM_THREADS=2;PYTHONDONTWRITEBYTECODE=1")
endif()
