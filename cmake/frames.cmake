# The frames pipeline: shift estimation, temporal whitening and
# detection on image sequences.  Included from the top-level CMakeLists.txt
# after the library target exists.
#   src/pipelines/frames/   backend-neutral logic and the CPU implementation (FFTW)
#   src/io/fits.c           FITS through cfitsio (globbed with src/io)
#   frames_wcs.c            sky positions of candidates through wcslib (the frames' WCS)
#   src/pipelines/frames/cuda/    the CUDA implementation (globbed with every .cu; cuFFT,
#                                 loaded on first use: src/backend/cuda/cuda_libs.cu)
find_package(PkgConfig REQUIRED)
pkg_check_modules(CFITSIO REQUIRED IMPORTED_TARGET cfitsio)
pkg_check_modules(FFTW3F REQUIRED IMPORTED_TARGET fftw3f)
pkg_check_modules(WCSLIB REQUIRED IMPORTED_TARGET wcslib)
# FFTW's OpenMP threads library has no pkg-config file of its own.
find_library(PYR_FFTW3F_OMP fftw3f_omp HINTS ${FFTW3F_LIBRARY_DIRS})

file(GLOB PYR_FRAMES_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/pipelines/frames/*.c)
target_sources(pyrgrid_objects PRIVATE ${PYR_FRAMES_SOURCES})
set(PYR_FRAMES_DEPS PkgConfig::CFITSIO PkgConfig::FFTW3F PkgConfig::WCSLIB)
if(PYR_FFTW3F_OMP)
  list(APPEND PYR_FRAMES_DEPS ${PYR_FFTW3F_OMP})
  target_compile_definitions(pyrgrid_objects PRIVATE PYR_HAVE_FFTW_OMP=1)
endif()
# the objects compile against them; both libraries made of the objects link them
target_link_libraries(pyrgrid_objects PRIVATE ${PYR_FRAMES_DEPS})
target_link_libraries(pyrgrid PRIVATE ${PYR_FRAMES_DEPS})
target_link_libraries(pyrgrid_internal PUBLIC ${PYR_FRAMES_DEPS})
set_property(TARGET pyrgrid APPEND PROPERTY PUBLIC_HEADER include/pyrgrid_frames.h include/pyrgrid_frames_io.h)
