# Heat equation: methods, plans, physics.
pyr_add_test(test_pyramid SOURCES test_pyramid.c LABELS heat plan ARGS 300 1 cpu)
