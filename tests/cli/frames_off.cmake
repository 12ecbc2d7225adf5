# A build without the frames pipeline (-DPYR_WITH_FRAMES=OFF): the library is
# configured and built in a temporary folder; it exports no pyr_frames_*
# symbol and needs none of cfitsio, FFTW and wcslib, and `pyrgrid frames` says how
# to get the pipeline.  Skipped (77) without cmake.
add_test(NAME test_frames_off COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_frames_off.sh ${PROJECT_SOURCE_DIR} ${CMAKE_COMMAND})
set_tests_properties(test_frames_off PROPERTIES LABELS "build;frames;slow" SKIP_RETURN_CODE 77 TIMEOUT 900
  ENVIRONMENT "OMP_NUM_THREADS=2")
