# HDF5: the format (src/io/hdf5.c) and the results with their XDMF sidecar
# (src/outputs/), globbed with their folders.  HDF5 is optional: without
# it the library builds and .h5 paths fail with a message saying what to
# install.  Included from the top-level CMakeLists.txt after the library
# targets exist.
option(PYR_WITH_HDF5 "HDF5 results and inputs (libhdf5-dev)" ON)
set(PYR_HAVE_HDF5 OFF)
if(PYR_WITH_HDF5)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(PYR_HDF5 IMPORTED_TARGET hdf5)
  if(PYR_HDF5_FOUND)
    set(PYR_HAVE_HDF5 ON)
    target_compile_definitions(pyrgrid_objects PRIVATE PYR_HAVE_HDF5=1)
    target_link_libraries(pyrgrid_objects PRIVATE PkgConfig::PYR_HDF5)
    target_link_libraries(pyrgrid PRIVATE PkgConfig::PYR_HDF5)
    target_link_libraries(pyrgrid_internal PUBLIC PkgConfig::PYR_HDF5)
    target_compile_definitions(pyrgrid_internal INTERFACE PYR_HAVE_HDF5=1)
    # The high-level library's dimension scales (H5DS) give results x/y/z/time
    # coordinates that netCDF-4 readers (xarray) understand; optional too.
    find_library(PYR_HDF5_HL_LIBRARY NAMES hdf5_hl hdf5_serial_hl HINTS ${PYR_HDF5_LIBRARY_DIRS})
    find_path(PYR_HDF5_HL_INCLUDE_DIR hdf5_hl.h HINTS ${PYR_HDF5_INCLUDE_DIRS})
    if(PYR_HDF5_HL_LIBRARY AND PYR_HDF5_HL_INCLUDE_DIR)
      target_compile_definitions(pyrgrid_objects PRIVATE PYR_HAVE_HDF5_HL=1)
      target_link_libraries(pyrgrid_objects PRIVATE ${PYR_HDF5_HL_LIBRARY})
      target_link_libraries(pyrgrid PRIVATE ${PYR_HDF5_HL_LIBRARY})
      target_link_libraries(pyrgrid_internal PUBLIC ${PYR_HDF5_HL_LIBRARY})
    else()
      message(STATUS "pyrgrid: HDF5's high-level library (hdf5_hl) not found; results are written without dimension scales")
    endif()
  else()
    message(STATUS "pyrgrid: HDF5 not found (apt install libhdf5-dev); building without HDF5 outputs")
  endif()
endif()
