# Line Gauss-Seidel benchmark: sequential CPU, red-black CPU, red-black CUDA.
add_executable(bench_lgs ${CMAKE_CURRENT_SOURCE_DIR}/bench_lgs.c)
target_link_libraries(bench_lgs PRIVATE pyrgrid_internal OpenMP::OpenMP_C)
target_compile_definitions(bench_lgs PRIVATE _POSIX_C_SOURCE=200809L)
