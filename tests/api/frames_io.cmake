# The frames pipeline's files on the public API (include/pyrgrid_frames_io.h),
# in builds with the frames pipeline.
if(PYR_HAVE_FRAMES)
  pyr_add_api_test(test_api_frames_io LABELS frames quick)
endif()
