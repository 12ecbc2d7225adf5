# Set-up at memory speed: the host memory decision (pinned or staged, from the plan's copies; run.host_memory overrides)
# and Maxwell's coefficient fields from shapes against the per-node materials, bit for bit.
pyr_add_test(test_setup_host SOURCES test_setup_host.c LABELS maxwell quick)
set_tests_properties(test_setup_host PROPERTIES ENVIRONMENT "OMP_NUM_THREADS=2")
