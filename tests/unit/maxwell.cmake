# Maxwell's equations on the Yee grid, physics: cavity frequency against the discrete
# dispersion relation, energy over long runs, lossy decay, CPML reflection.
pyr_add_test(test_maxwell SOURCES test_maxwell.c LABELS maxwell physics slow)
