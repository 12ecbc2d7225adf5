# Maxwell's dispersive materials (Drude, Lorentz, Debye): random problems under every plan, decomposition, height,
# budget and part count equal the naive method bit for bit; the same on the CUDA backend (skipped without a GPU).
pyr_add_test(test_maxwell_dispersive_property SOURCES test_maxwell_dispersive_property.c LABELS maxwell plan physics slow ARGS 200 1 cpu)
add_test(NAME test_maxwell_dispersive_quick COMMAND test_maxwell_dispersive_property 4 5 cpu)
set_tests_properties(test_maxwell_dispersive_quick PROPERTIES SKIP_RETURN_CODE 77 LABELS "maxwell;plan;physics;quick")
if(PYR_HAVE_CUDA)
  add_test(NAME test_cuda_maxwell_dispersive COMMAND test_maxwell_dispersive_property 120 2 cuda)
  set_tests_properties(test_cuda_maxwell_dispersive PROPERTIES SKIP_RETURN_CODE 77 LABELS "maxwell;cuda;gpu;slow" RESOURCE_LOCK gpu)
endif()
