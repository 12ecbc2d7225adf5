# Frames: variance planes as the detection's noise model (pyr_frames_set_variance,
# frames.noise): the false-positive rate and an injected source's SNR on a
# scene whose variance changes across the frame (python3-numpy/scipy/skimage;
# skipped with exit 77 where they are missing), and the C API's rules.
pyr_add_test(test_frames_noise_api SOURCES test_frames_noise.c LABELS frames slow)
set_tests_properties(test_frames_noise_api PROPERTIES ENVIRONMENT "OMP_NUM_THREADS=2")
if(NOT PYR_SANITIZE) # the instrumented library cannot be loaded into Python (python.cmake)
  foreach(part fp snr refused)
    add_test(NAME test_frames_noise_${part}
      COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/test_frames_noise.py $<TARGET_FILE:pyrgrid>
              ${CMAKE_CURRENT_BINARY_DIR}/frames_noise_${part} ${part})
    set_tests_properties(test_frames_noise_${part} PROPERTIES SKIP_RETURN_CODE 77 LABELS "frames;slow"
      ENVIRONMENT "OMP_NUM_THREADS=2" TIMEOUT 300)
  endforeach()
endif()
