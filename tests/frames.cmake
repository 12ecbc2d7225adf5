# The frames pipeline: API and FITS unit tests, the CLI on
# sequences built from a real sky image (python3-skimage/astropy; skipped
# with exit 77 where they are missing), CPU vs CUDA agreement (GPU).
pyr_add_test(test_frames_api SOURCES test_frames_api.c LABELS frames)
set_tests_properties(test_frames_api PROPERTIES ENVIRONMENT "OMP_NUM_THREADS=2")
foreach(part shifts whiten poly fits scale)
  add_test(NAME test_frames_${part}
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/test_frames.py $<TARGET_FILE:pyrgrid_cli>
            ${CMAKE_CURRENT_BINARY_DIR}/frames_${part} ${part})
  set(env "OMP_NUM_THREADS=2")
  if(PYR_SANITIZE)
    list(APPEND env "PYR_FRAMES_QUICK=1") # fewer frames: the instrumented program is ~20x slower
  endif()
  set_tests_properties(test_frames_${part} PROPERTIES SKIP_RETURN_CODE 77 LABELS frames
    ENVIRONMENT "${env}" TIMEOUT 300)
endforeach()
# frames like a camera's: not periodic, a bias, bad pixels, a varying sky
foreach(part shifts bias badpix sky)
  add_test(NAME test_frames_real_${part}
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/test_frames_real.py $<TARGET_FILE:pyrgrid_cli>
            $<TARGET_FILE:pyrgrid> ${CMAKE_CURRENT_BINARY_DIR}/frames_real_${part} ${part})
  set(env "OMP_NUM_THREADS=2")
  if(PYR_SANITIZE)
    # the instrumented library cannot be loaded into Python (python.cmake): the program only
    list(APPEND env "PYR_FRAMES_QUICK=1" "PYR_FRAMES_NO_MODULE=1")
  endif()
  set_tests_properties(test_frames_real_${part} PROPERTIES SKIP_RETURN_CODE 77 LABELS frames
    ENVIRONMENT "${env}" TIMEOUT 300)
endforeach()
if(PYR_HAVE_CUDA)
  pyr_add_test(test_frames_gpu SOURCES test_frames_gpu.c LABELS frames GPU)
  # the CLI tests again on the GPU
  add_test(NAME test_frames_gpu_cli
    COMMAND sh -c "$<TARGET_FILE:test_frames_gpu> --probe && PYR_FRAMES_BACKEND=cuda /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/test_frames.py $<TARGET_FILE:pyrgrid_cli> ${CMAKE_CURRENT_BINARY_DIR}/frames_gpu all && PYR_FRAMES_BACKEND=cuda /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/test_frames_real.py $<TARGET_FILE:pyrgrid_cli> $<TARGET_FILE:pyrgrid> ${CMAKE_CURRENT_BINARY_DIR}/frames_real_gpu all")
  set_tests_properties(test_frames_gpu_cli PROPERTIES SKIP_RETURN_CODE 77 LABELS "frames;gpu" RESOURCE_LOCK gpu TIMEOUT 300)
endif()
