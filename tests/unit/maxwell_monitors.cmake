# Maxwell's frequency-domain monitors (monitor.dftN, monitor.fluxN, pyr_spectra_*): a point's transform against the
# DFT of its probe series, spectra bit-identical across methods, heights, budgets and parts, flux conservation,
# refusals, the keys' round trip, the CSV.
pyr_add_test(test_maxwell_monitors SOURCES test_maxwell_monitors.c LABELS maxwell plan parts quick ARGS cpu)
if(PYR_HAVE_CUDA)
  add_test(NAME test_maxwell_monitors_gpu COMMAND test_maxwell_monitors cuda)
  set_tests_properties(test_maxwell_monitors_gpu PROPERTIES SKIP_RETURN_CODE 77 LABELS "maxwell;parts;cuda;gpu;quick" RESOURCE_LOCK gpu)
endif()
# The monitors' groups in an HDF5 result, read with h5py against the run's CSV (skipped, 77, without h5py or HDF5).
if(PYR_HAVE_HDF5)
  add_test(NAME test_maxwell_monitors_h5 COMMAND sh -c "/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || exit 77; d=${CMAKE_CURRENT_BINARY_DIR}/maxwell_monitors_h5; rm -rf $d && mkdir -p $d && $<TARGET_FILE:test_maxwell_monitors> h5 $d && exec /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/test_maxwell_monitors_h5.py $d")
  set_tests_properties(test_maxwell_monitors_h5 PROPERTIES LABELS "maxwell;io;formats;quick" SKIP_RETURN_CODE 77)
endif()
