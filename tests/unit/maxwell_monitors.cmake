# Maxwell's frequency-domain monitors (monitor.dftN, monitor.fluxN, pyr_spectra_*): a point's transform against the
# DFT of its probe series, spectra bit-identical across methods, heights, budgets and parts, flux conservation,
# refusals, the keys' round trip, the CSV.
pyr_add_test(test_maxwell_monitors SOURCES test_maxwell_monitors.c LABELS maxwell plan parts quick ARGS cpu)
if(PYR_HAVE_CUDA)
  add_test(NAME test_maxwell_monitors_gpu COMMAND test_maxwell_monitors cuda)
  set_tests_properties(test_maxwell_monitors_gpu PROPERTIES SKIP_RETURN_CODE 77 LABELS "maxwell;parts;cuda;gpu;quick" RESOURCE_LOCK gpu)
endif()
