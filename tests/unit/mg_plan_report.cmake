# A multigrid plan's own facts as JSON (methods/report.h): the hierarchy, what is streamed, the device's bytes, and
# the cost of a cycle the run then reports, over dimensions, faces, cycles and budgets; null for other methods.
pyr_add_test(test_mg_plan_report SOURCES test_mg_plan_report.c LABELS multigrid quick)
