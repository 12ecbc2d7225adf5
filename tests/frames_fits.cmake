# The frames pipeline on astronomers' files: calibrated exposures (IMAGE,
# MASK, VARIANCE extensions), candidates as ECSV/FITS tables with MJD and
# RA/Dec from the WCS checked against astropy, bad input refused
# (python3-skimage/astropy; skipped with exit 77 where they are missing).
foreach(part calexp wcs bad)
  add_test(NAME test_frames_fits_${part}
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/test_frames_fits.py $<TARGET_FILE:pyrgrid_cli>
            ${CMAKE_CURRENT_BINARY_DIR}/frames_fits_${part} ${part})
  set_tests_properties(test_frames_fits_${part} PROPERTIES SKIP_RETURN_CODE 77 LABELS "frames;slow"
    ENVIRONMENT "OMP_NUM_THREADS=2" TIMEOUT 300)
endforeach()
