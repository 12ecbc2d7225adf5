# Line Gauss-Seidel / Thomas solver.
pyr_add_test(test_lgs SOURCES test_lgs.c LABELS lgs slow)
set_tests_properties(test_lgs PROPERTIES ENVIRONMENT "OMP_NUM_THREADS=2")

find_package(LAPACK)
if(LAPACK_FOUND)
  pyr_add_test(test_lgs_lapack SOURCES test_lgs_lapack.c LABELS lgs quick LIBS LAPACK::LAPACK)
else()
  message(STATUS "pyrgrid: LAPACK not found; test_lgs_lapack is not built (apt install liblapack-dev)")
endif()

# CPU vs CUDA bit for bit; exits 77 (skipped) without a usable GPU.
pyr_add_test(test_lgs_gpu SOURCES test_lgs_gpu.c LABELS lgs slow GPU)
