# The CPU backend's own operations.
pyr_add_test(test_cpu_wavefront SOURCES test_cpu_wavefront.c LABELS heat cpu)
# The property test of test_pyramid with every multi-layer compute call of the
# CPU backend forced through its wavefront (the test's pieces are small enough
# for the layer-by-layer path otherwise).
add_test(NAME test_pyramid_wavefront COMMAND test_pyramid 50 7 cpu wave)
set_tests_properties(test_pyramid_wavefront PROPERTIES LABELS "heat;plan;cpu")
# a lost wake-up between the wavefront's threads would hang, not fail: time out (under the
# sanitizers on 2 busy cores test_pyramid_wavefront takes ~2 min)
set_tests_properties(test_cpu_wavefront test_pyramid_wavefront PROPERTIES TIMEOUT 600)
