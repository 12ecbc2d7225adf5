# Maxwell's sources, probes, plane-wave boxes and monitors in physical coordinates (`at X Y [Z]`): the same bits as by
# node indices, the rounding rule at half-node positions, refusals off the grid.
pyr_add_test(test_maxwell_coords SOURCES test_maxwell_coords.c LABELS maxwell quick)
