# scheme.iteration = jacobi | chebyshev through the program: Chebyshev's far fewer sweeps, and the refusals of every plan
# that cannot carry two layers (trivial, pyramid, auto out of core, several parts, a restart).
add_test(NAME test_poisson_iteration COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_poisson_iteration.sh $<TARGET_FILE:pyrgrid_cli>
  ${PROJECT_SOURCE_DIR})
set_tests_properties(test_poisson_iteration PROPERTIES LABELS "poisson;cli;quick")
