# Multigrid beside Chebyshev-accelerated Jacobi: time to a relative residual of 1e-8 (bench_multigrid.c).
add_executable(bench_multigrid ${CMAKE_CURRENT_SOURCE_DIR}/bench_multigrid.c)
target_include_directories(bench_multigrid PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(bench_multigrid PRIVATE pyrgrid_internal OpenMP::OpenMP_C)
target_compile_definitions(bench_multigrid PRIVATE _POSIX_C_SOURCE=200809L)
