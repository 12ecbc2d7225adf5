# The floors of src/: every quoted #include of src/ goes to its own folder or
# to a lower floor (the list in repo/test_layers.sh, as docs/architecture.md draws it).
add_test(NAME test_layers COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_layers.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(test_layers PROPERTIES LABELS "docs;quick" TIMEOUT 60)
