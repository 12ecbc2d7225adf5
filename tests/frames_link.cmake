# Candidates linked into tracks (pyr_frames_link): synthetic candidate lists
# (crossing movers, gaps, a stationary false positive, noise), the link_* keys
# and the tracks table; then `pyrgrid frames --tracks` on a real-sky scene with
# a mover, and the Python module's tracks= (python3-skimage/astropy; skipped
# with exit 77 where they are missing).
pyr_add_test(test_frames_link SOURCES test_frames_link.c LABELS "frames;quick")
add_test(NAME test_frames_link_cli
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/test_frames_link.py $<TARGET_FILE:pyrgrid_cli>
          $<TARGET_FILE:pyrgrid> ${CMAKE_CURRENT_BINARY_DIR}/frames_link)
set(env "OMP_NUM_THREADS=2")
if(PYR_SANITIZE)
  # the instrumented library cannot be loaded into Python (python.cmake): the program only
  list(APPEND env "PYR_FRAMES_NO_MODULE=1")
endif()
set_tests_properties(test_frames_link_cli PROPERTIES SKIP_RETURN_CODE 77 LABELS "frames;slow"
  ENVIRONMENT "${env}" TIMEOUT 120)
