# The CPU backend's own operations.
pyr_add_test(test_cpu_wavefront SOURCES test_cpu_wavefront.c LABELS heat cpu quick)
# a lost wake-up between the wavefront's threads would hang, not fail: time out
set_tests_properties(test_cpu_wavefront PROPERTIES TIMEOUT 600)
