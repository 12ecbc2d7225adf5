# The parts index and pyrgrid assemble against forged indexes, and the JSON
# writer of reports (reliability review M2, M3, M10, L10, L13, L14).
pyr_add_test(test_assemble SOURCES test_assemble.c LABELS io parts)
