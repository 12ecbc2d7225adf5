# Maxwell's equations against an independent NumPy reference, through the program.
add_test(NAME test_maxwell_numpy COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/test_maxwell_numpy.py $<TARGET_FILE:pyrgrid_cli>
         ${CMAKE_CURRENT_BINARY_DIR}/maxwell_numpy)
set_tests_properties(test_maxwell_numpy PROPERTIES LABELS "maxwell;reference;quick" TIMEOUT 300)
