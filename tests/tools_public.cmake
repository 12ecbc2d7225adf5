# The program is a client of the public library: tools/ includes only
# include/ and tools/ headers, and pyrgrid_cli links libpyrgrid
# (test_tools_public.sh).
add_test(NAME test_tools_public COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_tools_public.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(test_tools_public PROPERTIES LABELS "docs;quick" TIMEOUT 60)
