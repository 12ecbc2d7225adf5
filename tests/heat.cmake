# Heat equation: methods, plans, physics.
pyr_add_test(test_pyramid SOURCES test_pyramid.c LABELS heat plan ARGS 300 1 cpu)
pyr_add_test(test_heat SOURCES test_heat.c LABELS heat)
pyr_add_test(test_errors SOURCES test_errors.c LABELS heat errors)
pyr_add_test(test_counts SOURCES test_counts.c LABELS heat plan)
pyr_add_test(test_inplace SOURCES test_inplace.c LABELS heat plan)
pyr_add_test(test_exec_hazards SOURCES test_exec_hazards.c LABELS heat plan)
add_test(NAME test_cli COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_cli.sh $<TARGET_FILE:pyrgrid_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_cli PROPERTIES LABELS "cli")
# Outputs through the program: devices, FIFOs, full disks, signals, early checks.
add_test(NAME test_cli_outputs COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_cli_outputs.sh $<TARGET_FILE:pyrgrid_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_cli_outputs PROPERTIES LABELS "cli" TIMEOUT 300)
set(PYR_INSTALL_TEST_CFLAGS)
if(PYR_SANITIZE)
  set(PYR_INSTALL_TEST_CFLAGS ${PYR_SAN_FLAGS})
endif()
add_test(NAME test_install COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_install.sh ${PROJECT_BINARY_DIR} ${PYR_INSTALL_TEST_CFLAGS})
set_tests_properties(test_install PROPERTIES LABELS "cli")
# Only the public API leaves the shared library.
set(PYR_MPI_HEADER)
if(PYR_HAVE_MPI)
  set(PYR_MPI_HEADER ${PROJECT_SOURCE_DIR}/include/pyrgrid_mpi.h) # its functions exist only in builds with MPI
endif()
add_test(NAME test_exports COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_exports.sh $<TARGET_FILE:pyrgrid>
  ${PROJECT_SOURCE_DIR}/include/pyrgrid.h ${PROJECT_SOURCE_DIR}/include/pyrgrid_lgs.h ${PROJECT_SOURCE_DIR}/include/pyrgrid_frames.h
  ${PYR_MPI_HEADER})
set_tests_properties(test_exports PROPERTIES LABELS "cli" SKIP_RETURN_CODE 77)
