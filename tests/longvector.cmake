# The long-vector method: its model, calibration fit, wisdom field
# and the step emulated on the CPU (no GPU); the refusals of unsupported
# problems and options; bit-identity with the naive method on the GPU.
pyr_add_test(test_longvector_model SOURCES test_longvector_model.c LABELS model longvector)
pyr_add_test(test_longvector_errors SOURCES test_longvector_errors.c LABELS errors longvector)
# On the GPU (skips without one): bit for bit against the CPU naive method, the plan, a quick calibration.
pyr_add_test(test_longvector_gpu SOURCES test_longvector_gpu.c LABELS cuda longvector GPU)
# Through the program: refusals, sweep --sizes, and with a GPU a run equal to the naive method's file.
add_test(NAME test_longvector_cli COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_longvector_cli.sh $<TARGET_FILE:pyrgrid_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_longvector_cli PROPERTIES LABELS "cli;longvector" RESOURCE_LOCK gpu)
