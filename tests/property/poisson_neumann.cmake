# Neumann and mixed faces of the Poisson scheme: random problems under random plans (naive, trivial, pyramid in every
# decomposition, method = auto under a budget, several parts) give the naive method's bits, sweep count and change.
pyr_add_test(test_poisson_neumann_property SOURCES test_poisson_neumann_property.c LABELS poisson plan quick ARGS 80 1 cpu)
if(PYR_HAVE_CUDA)
  add_test(NAME test_cuda_poisson_neumann_property COMMAND test_poisson_neumann_property 150 2 cuda)
  set_tests_properties(test_cuda_poisson_neumann_property PROPERTIES SKIP_RETURN_CODE 77 LABELS "poisson;cuda;gpu;quick" RESOURCE_LOCK gpu)
endif()
