# Maxwell's near-to-far-field transform (pyr_spectra_farfield): 2D line sources' isotropic patterns and their
# power against the flux out of the box, the same bits under every plan, the refusals (quick); a 3D dipole's
# sin^2(theta) pattern and radiated power against the box's flux (about 15 s of CPU in a Debug build).
pyr_add_test(test_maxwell_farfield SOURCES test_maxwell_farfield.c LABELS maxwell plan parts quick ARGS cpu quick)
add_test(NAME test_maxwell_farfield_3d COMMAND test_maxwell_farfield cpu 3d)
set_tests_properties(test_maxwell_farfield_3d PROPERTIES LABELS "maxwell;physics;slow")
if(PYR_HAVE_CUDA)
  add_test(NAME test_maxwell_farfield_gpu COMMAND test_maxwell_farfield cuda)
  set_tests_properties(test_maxwell_farfield_gpu PROPERTIES SKIP_RETURN_CODE 77 LABELS "maxwell;parts;cuda;gpu;slow" RESOURCE_LOCK gpu)
endif()
