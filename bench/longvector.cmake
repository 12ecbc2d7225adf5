# bench_longvector: the long-vector method (cuBLAS) beside the naive stencil kernel, rates and values moved.
add_executable(bench_longvector bench_longvector.c)
target_link_libraries(bench_longvector PRIVATE pyrgrid_internal)
target_compile_definitions(bench_longvector PRIVATE _POSIX_C_SOURCE=200809L)
