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
  # xfer_probe: block vs strip transfers out of a large pinned grid, 4 KiB vs huge pages.
  add_executable(xfer_probe xfer_probe.cu)
  target_link_libraries(xfer_probe PRIVATE pyrgrid_internal CUDA::cudart)
  target_include_directories(xfer_probe PRIVATE ${PROJECT_SOURCE_DIR}/src)  # pthread: part of glibc 2.34+
  # kernel_lab: the fused heat kernels alone against the plain one, bit for bit, timed (a developer's tool)
  add_executable(kernel_lab kernel_lab.cu)
  target_link_libraries(kernel_lab PRIVATE pyrgrid_internal CUDA::cudart)
  target_include_directories(kernel_lab PRIVATE ${PROJECT_SOURCE_DIR}/src)
endif()
# bench_maxwell: FDTD (Yee) in core vs the pyramid method out of core (issue 21).
add_executable(bench_maxwell bench_maxwell.c)
target_link_libraries(bench_maxwell PRIVATE pyrgrid_internal)
target_compile_definitions(bench_maxwell PRIVATE _POSIX_C_SOURCE=200809L)
# fill_probe: the host's first-touch fill rate of a grid by allocation strategy (issue 20).
add_executable(fill_probe fill_probe.c)
target_link_libraries(fill_probe PRIVATE m)
if(OpenMP_C_FOUND)
  target_link_libraries(fill_probe PRIVATE OpenMP::OpenMP_C)
endif()
target_compile_definitions(fill_probe PRIVATE _GNU_SOURCE)
