# Maxwell's flux spectra as a PNG (pyr_spectra_write_png): a slab's transmittance plotted and read back (labels where
# they belong, the line against the Fabry-Perot spectrum), refusals.
pyr_add_test(test_maxwell_spectra_png SOURCES test_maxwell_spectra_png.c LABELS maxwell io quick LIBS PNG::PNG)
