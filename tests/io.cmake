# Tests of src/io: .npy files, atomic writes, PNG heat maps and plots.
pyr_add_test(test_npy SOURCES test_npy.c LABELS io)
pyr_add_test(test_png SOURCES test_png.c LABELS io LIBS PNG::PNG)

# Exchange with NumPy (/usr/bin/python3); skipped (77) without it.
add_test(NAME test_npy_numpy
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/test_npy_numpy.sh $<TARGET_FILE:test_npy>
          ${CMAKE_CURRENT_BINARY_DIR}/npy_numpy)
set_tests_properties(test_npy_numpy PROPERTIES SKIP_RETURN_CODE 77 LABELS io)
# Problem files: the INI reader of both config readers.
pyr_add_test(test_ini SOURCES test_ini.c LABELS io)
set_tests_properties(test_ini PROPERTIES TIMEOUT 60)
# Outputs: devices and FIFOs in place, stages, signal cleanup, stale temporaries, checks.
pyr_add_test(test_outputs SOURCES test_outputs.c LABELS io)
set_tests_properties(test_outputs PROPERTIES TIMEOUT 120)
