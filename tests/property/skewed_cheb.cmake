# Chebyshev's sweeps (u read two sweeps back where they write) in skewed pieces: both layers of u carried
# through the pieces, their halo stores and the passes' ends; random problems and plans (test_skewed_poisson's
# draws with Chebyshev's sweeps) bit-identical to the CPU naive method, the same sweeps and change, and the
# values each way their plan counted.
add_test(NAME test_skewed_cheb COMMAND test_skewed_poisson 40 3 cpu chebyshev)
set_tests_properties(test_skewed_cheb PROPERTIES SKIP_RETURN_CODE 77 LABELS "poisson;plan;quick")
if(PYR_HAVE_CUDA)
  add_test(NAME test_cuda_skewed_cheb COMMAND test_skewed_poisson 120 4 cuda chebyshev)
  set_tests_properties(test_cuda_skewed_cheb PROPERTIES SKIP_RETURN_CODE 77 LABELS "poisson;cuda;gpu;slow" RESOURCE_LOCK gpu)
endif()
