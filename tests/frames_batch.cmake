# Frames on the GPU in batches against one frame at a time (GPU; exits 77 without one).
if(PYR_HAVE_CUDA)
  pyr_add_test(test_frames_batch SOURCES test_frames_batch.c LABELS frames slow GPU)
  set_tests_properties(test_frames_batch PROPERTIES TIMEOUT 300)
endif()
# How the GPU pipeline sizes its work: the dot products' occupancy, batches only for frames up to 1024^2.
if(PYR_HAVE_CUDA)
  pyr_add_test(test_frames_gpu_sizing SOURCES test_frames_gpu_sizing.c LABELS frames quick GPU)
endif()
