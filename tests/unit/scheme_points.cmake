# The scheme's point hooks (sources, probes, the scheme's own recorded points) as the executor and the
# parts call them for any scheme: a wrapping table over Maxwell's, one device and several parts.
pyr_add_test(test_scheme_points SOURCES test_scheme_points.c LABELS maxwell plan parts quick)
