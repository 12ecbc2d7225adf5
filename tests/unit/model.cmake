# Performance model, calibration, wisdom, automatic choice.  Each
# test points PYRGRID_WISDOM at its own temporary file; the environment here
# keeps a user's wisdom out of the way of the other checks.
pyr_add_test(test_model SOURCES test_model.c LABELS model slow)
# "timing": compares measured run times; the sanitizer pass of scripts/test.sh
# leaves such tests out (instrumented code does not run at the calibrated speeds)
pyr_add_test(test_model_auto SOURCES test_model_auto.c LABELS model timing slow)
set_tests_properties(test_model test_model_auto PROPERTIES
  ENVIRONMENT "PYRGRID_WISDOM=${CMAKE_CURRENT_BINARY_DIR}/model-wisdom-unused" RUN_SERIAL TRUE)
# Concurrent wisdom exports, in the library and through `pyrgrid calibrate`.
pyr_add_test(test_wisdom_lock SOURCES test_wisdom_lock.c LABELS model quick ARGS $<TARGET_FILE:pyrgrid_cli>)
# pyr_wisdom_calibrate: the registry's schemes, Maxwell calibrated, sets checked before measuring;
# `pyrgrid calibrate --help` names every option it takes
# (the architecture issue: the program and the library calibrated different schemes).
pyr_add_test(test_model_calibrate SOURCES test_model_calibrate.c LABELS model quick ARGS $<TARGET_FILE:pyrgrid_cli>)
set_tests_properties(test_model_calibrate PROPERTIES
  ENVIRONMENT "PYRGRID_WISDOM=${CMAKE_CURRENT_BINARY_DIR}/model-calibrate-wisdom-unused" RUN_SERIAL TRUE)
