# CUDA backend: overlap of transfers and compute, failure handling, and small
# cases for compute-sanitizer (the bitwise property test: property/cuda.cmake).
# These use the CUDA backend's own entry points; a build without CUDA checks
# "backend = cuda" in test_errors instead.
# How a call's layers are cut into fused launches (host code: every build).
pyr_add_test(test_launch_split SOURCES test_launch_split.c LABELS cuda quick)
# How a launch's streamed axis is cut into segments, the edge tiles' shorter (host code: every build).
pyr_add_test(test_launch_segments SOURCES test_launch_segments.c LABELS cuda quick)
# How a 3D launch lays out its blocks: the streamed axis, the tiles (host code: every build).
pyr_add_test(test_launch_tiles3d SOURCES test_launch_tiles3d.c LABELS cuda quick)
# The device-context cache (backend/session.c), in every build.
pyr_add_test(test_cuda_context SOURCES test_cuda_context.c LABELS cuda quick ARGS cpu)
if(NOT PYR_HAVE_CUDA)
  return()
endif()
# The CUDA runtime on the cache: contexts lent again, the device's hooks, two plans from two threads, MEASURE.
add_test(NAME test_cuda_context_gpu COMMAND test_cuda_context gpu)
set_tests_properties(test_cuda_context_gpu PROPERTIES SKIP_RETURN_CODE 77 LABELS "cuda;gpu;slow" RESOURCE_LOCK gpu)
pyr_add_test(test_cuda_overlap SOURCES test_cuda_overlap.c LABELS cuda slow GPU)
pyr_add_test(test_cuda_errors SOURCES test_cuda_errors.c LABELS cuda slow GPU)
pyr_add_test(test_cuda_small SOURCES test_cuda_small.c LABELS cuda slow GPU)
# Copies staged through pinned chunks (run.host_memory = stage): every kind of chunk, against the CPU.
pyr_add_test(test_cuda_staged SOURCES test_cuda_staged.c LABELS cuda slow GPU)
pyr_add_test(test_cuda_nodevice SOURCES test_cuda_nodevice.c LABELS cuda quick)
