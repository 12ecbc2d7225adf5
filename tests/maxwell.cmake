# Maxwell's equations on the Yee grid: bitwise property tests of
# every plan, physics (cavity frequency against the discrete dispersion
# relation, energy over long runs, lossy decay, CPML reflection), an
# independent NumPy reference, the CLI.
pyr_add_test(test_maxwell_property SOURCES test_maxwell_property.c LABELS maxwell plan ARGS 150 1 cpu)
if(PYR_HAVE_CUDA)
  add_test(NAME test_cuda_maxwell COMMAND test_maxwell_property 150 2 cuda)
  set_tests_properties(test_cuda_maxwell PROPERTIES SKIP_RETURN_CODE 77 LABELS "maxwell;cuda;gpu" RESOURCE_LOCK gpu)
endif()
pyr_add_test(test_maxwell SOURCES test_maxwell.c LABELS maxwell physics)
add_test(NAME test_maxwell_numpy COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/test_maxwell_numpy.py $<TARGET_FILE:pyrgrid_cli>
         ${CMAKE_CURRENT_BINARY_DIR}/maxwell_numpy)
set_tests_properties(test_maxwell_numpy PROPERTIES LABELS "maxwell;reference" TIMEOUT 300)
add_test(NAME test_maxwell_cli COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_maxwell_cli.sh $<TARGET_FILE:pyrgrid_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_maxwell_cli PROPERTIES LABELS "maxwell;cli" TIMEOUT 300)
