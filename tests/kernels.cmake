# Every registered kernel of every scheme, each variant, against the CPU naive method.
pyr_add_test(test_conformance SOURCES test_conformance.c LABELS heat poisson cpu cuda gpu)
set_tests_properties(test_conformance PROPERTIES RESOURCE_LOCK gpu)
