# The CUDA weights solve's block-parallel arithmetic against the CPU's one-thread solve, on the host.
pyr_add_test(test_frames_solve_block SOURCES test_frames_solve_block.c LABELS frames quick)
