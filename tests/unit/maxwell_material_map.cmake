# Maxwell's per-node material map ([material] map with label1 .. labelN): the same bits as the shapes it is drawn
# from (2D TM/TE, 3D; Drude, Lorentz, Debye; in core, streamed, skewed, two parts), the refusals, the keys' round trip.
pyr_add_test(test_maxwell_material_map SOURCES test_maxwell_material_map.c LABELS maxwell physics quick)
if(PYR_HAVE_CUDA)
  add_test(NAME test_cuda_maxwell_material_map COMMAND test_maxwell_material_map cuda)
  set_tests_properties(test_cuda_maxwell_material_map PROPERTIES SKIP_RETURN_CODE 77 LABELS "maxwell;cuda;gpu;quick" RESOURCE_LOCK gpu)
endif()
