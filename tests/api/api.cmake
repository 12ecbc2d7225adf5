# The public API as its users have it.  pyr_add_api_test builds api/NAME.c on
# include/ alone (and the tests' check.h), linked against libpyrgrid (the
# library that is installed, with only the public symbols exported), never
# against pyrgrid_internal or with src/ on the include path.
function(pyr_add_api_test name)
  cmake_parse_arguments(T "" "" "LABELS" ${ARGN})
  add_executable(${name} ${CMAKE_CURRENT_LIST_DIR}/${name}.c)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(${name} PRIVATE pyrgrid)
  if(MATH_LIBRARY)
    target_link_libraries(${name} PRIVATE m)
  endif()
  target_compile_definitions(${name} PRIVATE _POSIX_C_SOURCE=200809L PYR_BINARY_DIR="${PROJECT_BINARY_DIR}")
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 LABELS "api;${T_LABELS}")
endfunction()
# Keys, a plan and its description, a run against its prediction and the naive method, wisdom, failures.
pyr_add_api_test(test_api_public LABELS quick)
# The layout-free API: handles and keys, wrapped fields, JSON, pyr_struct_size, problem files.
pyr_add_api_test(test_api_keys LABELS formats quick)

# `cmake --install`, then a program built against the installed tree (pkg-config, find_package).
set(PYR_INSTALL_TEST_CFLAGS)
if(PYR_SANITIZE)
  set(PYR_INSTALL_TEST_CFLAGS ${PYR_SAN_FLAGS})
endif()
add_test(NAME test_install COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_install.sh ${PROJECT_BINARY_DIR} ${PYR_INSTALL_TEST_CFLAGS})
set_tests_properties(test_install PROPERTIES LABELS "api;cli;quick")
# Only the public API leaves the shared library.
set(PYR_EXPORT_HEADERS ${PROJECT_SOURCE_DIR}/include/pyrgrid.h ${PROJECT_SOURCE_DIR}/include/pyrgrid_lgs.h)
if(PYR_HAVE_FRAMES)
  list(APPEND PYR_EXPORT_HEADERS ${PROJECT_SOURCE_DIR}/include/pyrgrid_frames.h)
endif()
# pyrgrid_mpi.h's functions leave libpyrgrid_mpi (tests/test_split.sh), and libpyrgrid the one private
# entry point that library calls (src/multi/ranks.h)
list(APPEND PYR_EXPORT_HEADERS ${PROJECT_SOURCE_DIR}/src/multi/ranks.h)
add_test(NAME test_exports COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_exports.sh $<TARGET_FILE:pyrgrid> ${PYR_EXPORT_HEADERS})
set_tests_properties(test_exports PROPERTIES LABELS "api;cli;quick" SKIP_RETURN_CODE 77)
