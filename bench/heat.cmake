# bench_heat: naive in-core vs trivial and pyramid out-of-core on one GPU.
add_executable(bench_heat bench_heat.c)
target_link_libraries(bench_heat PRIVATE pyrgrid)
target_compile_definitions(bench_heat PRIVATE _POSIX_C_SOURCE=200809L)
