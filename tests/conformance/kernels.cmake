# Every registered kernel of every scheme, each variant, against the CPU naive method.
# Registered twice: the CPU's kernels (no gpu label, so that `ctest -LE gpu` runs them) and,
# in CUDA builds, the GPU's (skipped, 77, without a usable GPU).
pyr_add_test(test_conformance SOURCES test_conformance.c LABELS heat poisson maxwell cpu quick ARGS cpu)
if(PYR_HAVE_CUDA)
  add_test(NAME test_conformance_gpu COMMAND test_conformance cuda)
  set_tests_properties(test_conformance_gpu PROPERTIES SKIP_RETURN_CODE 77 LABELS "heat;poisson;maxwell;cuda;gpu;slow"
    RESOURCE_LOCK gpu)
endif()
