# Plan sizing against the memory budget: a plan that fits a budget fits every larger one, and a refusal
# names the smallest budget that plans (random problems on the CPU's buffer layout and on the CUDA one).
pyr_add_test(test_sizing_monotone SOURCES test_sizing_monotone.c LABELS model quick)
