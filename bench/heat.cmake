# bench_heat: naive in-core vs trivial and pyramid out-of-core on one GPU.
add_executable(bench_heat bench_heat.c)
target_link_libraries(bench_heat PRIVATE pyrgrid_internal)
target_compile_definitions(bench_heat PRIVATE _POSIX_C_SOURCE=200809L)
# bench_stages: a pyramid pass's upload/compute/download alone and overlapped, next to the model (CUDA only).
if(PYR_HAVE_CUDA)
  add_executable(bench_stages bench_stages.c)
  target_link_libraries(bench_stages PRIVATE pyrgrid_internal)
  target_include_directories(bench_stages PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(bench_stages PRIVATE _POSIX_C_SOURCE=200809L)
endif()
# bench_maxwell: FDTD (Yee) in core vs the pyramid method out of core.
# With CUDA it runs the straightforward code (maxwell_peer.cu) beside pyrgrid with --peer.
add_executable(bench_maxwell bench_maxwell.c)
target_link_libraries(bench_maxwell PRIVATE pyrgrid_internal)
target_include_directories(bench_maxwell PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_definitions(bench_maxwell PRIVATE _POSIX_C_SOURCE=200809L)
if(PYR_HAVE_CUDA)
  target_sources(bench_maxwell PRIVATE maxwell_peer.cu)
  target_compile_definitions(bench_maxwell PRIVATE PYR_BENCH_PEER=1)
endif()
