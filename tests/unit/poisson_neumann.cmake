# Neumann and mixed faces of the Poisson scheme: the [boundary] keys, refusals, the Jacobi radius and a pure
# Neumann problem's damping against power iteration on the assembled matrix, the compatibility check, parts' faces.
pyr_add_test(test_poisson_neumann SOURCES test_poisson_neumann.c LABELS poisson quick)
