# Heat maps fit for a talk (issue 49): image width, physical axes, y up, colour maps.
pyr_add_test(test_heatmap_talk SOURCES test_heatmap_talk.c LABELS io quick LIBS PNG::PNG)
pyr_add_test(test_output_image_keys SOURCES test_output_image_keys.c LABELS io quick)
