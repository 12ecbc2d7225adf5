# Geometric multigrid for Poisson (src/solvers/multigrid/, method = multigrid): rates, cycle counts, thread
# counts' bits, awkward grids, refusals; the GPU's bits (skipped without one); pyr_execute_fields' hand-off.
pyr_add_test(test_multigrid SOURCES test_multigrid.c LABELS multigrid quick)
pyr_add_test(test_multigrid_gpu GPU SOURCES test_multigrid.c ARGS gpu LABELS multigrid quick)
pyr_add_test(test_multigrid_wired SOURCES test_multigrid.c ARGS wired LABELS multigrid quick)
