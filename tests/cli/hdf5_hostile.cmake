# HDF5 through the program (reliability review M1, M4, L2, L3, L15, L17, L18,
# L19): inputs made with h5py to read what is not theirs or to mislead, each
# refused with its reason and the old output intact (skipped, 77, without
# h5py for /usr/bin/python3); output onto a full 2 MiB tmpfs, status 1 and a
# short message rather than a crash at exit (skipped, 77, unless mounting a
# tmpfs is permitted).
if(TARGET pyrgrid_cli)
  foreach(mode hostile full_disk)
    add_test(NAME test_hdf5_${mode}
      COMMAND sh -c "[ -x /usr/bin/python3 ] || { echo '/usr/bin/python3 missing: skipped'; exit 77; }; exec /usr/bin/python3 \"$@\"" sh
              ${CMAKE_CURRENT_LIST_DIR}/test_hdf5_hostile.py ${mode} $<TARGET_FILE:pyrgrid_cli> ${PROJECT_SOURCE_DIR})
    set_tests_properties(test_hdf5_${mode} PROPERTIES LABELS "cli;formats;quick" SKIP_RETURN_CODE 77 TIMEOUT 300
      ENVIRONMENT "OMP_NUM_THREADS=2")
  endforeach()
endif()
