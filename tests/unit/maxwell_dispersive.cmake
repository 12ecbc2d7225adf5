# Maxwell's dispersive materials: problem-file syntax and its round trip, refusals (parameters, files, plane waves,
# fields, unstable dt with the analytic Drude and Lorentz limits), no change without terms.
pyr_add_test(test_maxwell_dispersive SOURCES test_maxwell_dispersive.c LABELS maxwell physics quick)
