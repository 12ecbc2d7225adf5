# The CUDA backend against the CPU, bit for bit, over random plans.
if(NOT PYR_HAVE_CUDA)
  return()
endif()
pyr_add_test(test_cuda_property SOURCES test_cuda_property.c LABELS cuda slow GPU ARGS 300 1)
# The pyramid issue's property test, run on this backend against the CPU naive method.
add_test(NAME test_cuda_pyramid COMMAND test_pyramid 200 3 cuda)
set_tests_properties(test_cuda_pyramid PROPERTIES SKIP_RETURN_CODE 77 LABELS "cuda;gpu;slow" RESOURCE_LOCK gpu)
