# Plots fit for a talk (issue 49): text that grows with the image's width.
pyr_add_test(test_plot_talk SOURCES test_plot_talk.c LABELS io quick LIBS PNG::PNG)
