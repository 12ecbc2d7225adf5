# The pyramid issue's property test: random problems and plans, every task within its bounds,
# bit for bit against the naive method.
pyr_add_test(test_pyramid SOURCES test_pyramid.c LABELS heat plan slow ARGS 300 1 cpu)
# The same with every multi-layer compute call of the CPU backend forced
# through its wavefront (the test's pieces are small enough for the
# layer-by-layer path otherwise).
add_test(NAME test_pyramid_wavefront COMMAND test_pyramid 50 7 cpu wave)
set_tests_properties(test_pyramid_wavefront PROPERTIES LABELS "heat;plan;cpu;slow")
# a lost wake-up between the wavefront's threads would hang, not fail: time out (under the
# sanitizers on 2 busy cores test_pyramid_wavefront takes ~2 min)
set_tests_properties(test_pyramid_wavefront PROPERTIES TIMEOUT 600)
