# Multigrid out of core (src/solvers/multigrid/, pyr_mg_stream_t): streamed levels' bits, cycles and bytes against
# the in-core solve on random awkward grids; the plan and its refusal; the GPU's streamed bits (skipped without one).
pyr_add_test(test_multigrid_ooc SOURCES test_multigrid_ooc.c LABELS multigrid quick)
pyr_add_test(test_multigrid_ooc_gpu GPU SOURCES test_multigrid_ooc.c ARGS gpu LABELS multigrid quick)
