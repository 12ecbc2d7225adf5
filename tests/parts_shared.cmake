# Parts of one process on the caller's grid in place: bitwise equal to one
# device, with inputs given or made, halos device to device or through the
# host; the parts download only their own boxes.
pyr_add_test(test_parts_shared SOURCES test_parts_shared.c LABELS parts quick ARGS 40 1)
