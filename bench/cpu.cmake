add_executable(bench_cpu ${CMAKE_CURRENT_LIST_DIR}/bench_cpu.c)
target_link_libraries(bench_cpu PRIVATE pyrgrid_internal)
target_compile_definitions(bench_cpu PRIVATE _POSIX_C_SOURCE=200809L)
