# The CUDA Maxwell kernel's wave variant (several 2D steps per launch) against the CPU naive method and the tile variant, bit for bit.
if(PYR_HAVE_CUDA)
  pyr_add_test(test_maxwell_wave SOURCES test_maxwell_wave.c LABELS maxwell cuda slow GPU ARGS 80 1)
endif()
