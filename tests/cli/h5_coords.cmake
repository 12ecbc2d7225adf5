# HDF5 results that common readers understand (issue 49): x/y/z coordinates
# as dimension scales on every field, units and long_name, the snapshots
# stacked along a time axis (h5py; skipped, 77, without it), and
# xarray.open_dataset opening a result with its coordinates (skipped, 77,
# where python3-xarray or both netCDF engines are missing); restarts still
# read the file.
if(TARGET pyrgrid_cli)
  foreach(mode scales xarray)
    add_test(NAME test_h5_coords_${mode}
      COMMAND sh -c "[ -x /usr/bin/python3 ] || { echo '/usr/bin/python3 missing: skipped'; exit 77; }; exec /usr/bin/python3 \"$@\"" sh
              ${CMAKE_CURRENT_LIST_DIR}/test_h5_coords.py ${mode} $<TARGET_FILE:pyrgrid_cli> ${PROJECT_SOURCE_DIR})
    set_tests_properties(test_h5_coords_${mode} PROPERTIES LABELS "cli;formats;quick" SKIP_RETURN_CODE 77 TIMEOUT 300
      ENVIRONMENT "OMP_NUM_THREADS=2")
  endforeach()
endif()
