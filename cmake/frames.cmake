# The frames pipeline (issue 22): shift estimation, temporal whitening and
# detection on image sequences.  Included from the top-level CMakeLists.txt
# after the library target exists.
#   src/pipelines/frames/   backend-neutral logic and the CPU implementation (FFTW)
#   src/io/fits.c           FITS through cfitsio (globbed with src/io)
#   src/backend/cuda/frames_*.cu  the CUDA implementation (globbed with src/backend/cuda; cuFFT)
pkg_check_modules(CFITSIO REQUIRED IMPORTED_TARGET cfitsio)
pkg_check_modules(FFTW3F REQUIRED IMPORTED_TARGET fftw3f)
# FFTW's OpenMP threads library has no pkg-config file of its own.
find_library(PYR_FFTW3F_OMP fftw3f_omp HINTS ${FFTW3F_LIBRARY_DIRS})

file(GLOB PYR_FRAMES_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/pipelines/frames/*.c)
target_sources(pyrgrid PRIVATE ${PYR_FRAMES_SOURCES})
target_link_libraries(pyrgrid PRIVATE PkgConfig::CFITSIO PkgConfig::FFTW3F)
if(PYR_FFTW3F_OMP)
  target_link_libraries(pyrgrid PRIVATE ${PYR_FFTW3F_OMP})
  target_compile_definitions(pyrgrid PRIVATE PYR_HAVE_FFTW_OMP=1)
endif()
if(PYR_HAVE_CUDA)
  target_link_libraries(pyrgrid PRIVATE CUDA::cufft)
endif()
set_property(TARGET pyrgrid APPEND PROPERTY PUBLIC_HEADER include/pyrgrid_frames.h)
