# Tests of src/io: .npy files, atomic writes, PNG heat maps and plots, the INI reader, HDF5.
pyr_add_test(test_npy SOURCES test_npy.c LABELS io quick)
pyr_add_test(test_png SOURCES test_png.c LABELS io quick LIBS PNG::PNG)

# Exchange with NumPy (/usr/bin/python3); skipped (77) without it.
add_test(NAME test_npy_numpy
  COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/test_npy_numpy.sh $<TARGET_FILE:test_npy>
          ${CMAKE_CURRENT_BINARY_DIR}/npy_numpy)
set_tests_properties(test_npy_numpy PROPERTIES SKIP_RETURN_CODE 77 LABELS "io;quick")
# Problem files: the INI reader of both config readers.
pyr_add_test(test_ini SOURCES test_ini.c LABELS io quick)
set_tests_properties(test_ini PROPERTIES TIMEOUT 60)
# Outputs: devices and FIFOs in place, stages, signal cleanup, stale temporaries, checks.
pyr_add_test(test_outputs SOURCES test_outputs.c LABELS io quick)
set_tests_properties(test_outputs PROPERTIES TIMEOUT 120)
# HDF5 results and inputs, restarts (issue 24's formats).
pyr_add_test(test_hdf5 SOURCES test_hdf5.c LABELS io formats quick)
# The parts index and pyrgrid assemble against forged indexes, and the JSON
# writer of reports (reliability review M2, M3, M10, L10, L13, L14).
pyr_add_test(test_assemble SOURCES test_assemble.c LABELS io parts quick)
