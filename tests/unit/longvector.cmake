# The long-vector method: its model, calibration fit, wisdom field
# and the step emulated on the CPU (no GPU); the refusals of unsupported
# problems and options; bit-identity with the naive method on the GPU.
pyr_add_test(test_longvector_model SOURCES test_longvector_model.c LABELS model longvector quick)
pyr_add_test(test_longvector_errors SOURCES test_longvector_errors.c LABELS errors longvector quick)
# On the GPU (skips without one): bit for bit against the CPU naive method, the plan, a quick calibration.
pyr_add_test(test_longvector_gpu SOURCES test_longvector_gpu.c LABELS cuda longvector slow GPU)
