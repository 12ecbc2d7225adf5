# Initial fields made where they are needed (core/recipe.h): the runtimes' fill op against
# pyr_field_init_part's bits, runs from recipe fields against runs from host-made ones, reads before a
# run; on a GPU (skipped without one) the CUDA runtime's fill and the same runs.
pyr_add_test(test_field_recipe SOURCES test_field_recipe.c LABELS api quick)
add_test(NAME test_field_recipe_gpu COMMAND test_field_recipe gpu)
set_tests_properties(test_field_recipe_gpu PROPERTIES SKIP_RETURN_CODE 77 LABELS "api;cuda;quick;gpu" RESOURCE_LOCK gpu)
