# Every weights mode on one scene on the CPU: no mode reports the sky's noise.
pyr_add_test(test_frames_modes SOURCES test_frames_modes.c LABELS frames slow)
set_tests_properties(test_frames_modes PROPERTIES ENVIRONMENT "OMP_NUM_THREADS=2")
