# The Python module (python/pyrgrid): pure Python over libpyrgrid
# through ctypes, installed by `cmake --install` into the Debian layout
# lib/python3/dist-packages under the prefix (PYR_PYTHON_DIR changes it; an
# absolute path is taken as it is).  An _install.py written at install time
# holds the library's path relative to the installed package, so that the
# module finds the library it was installed with, from any prefix (also a
# moved one).  pip install . (setup.py) makes a wheel that holds the library
# instead.  Also the program's manual page and bash completion (at the end).
# Included from the top-level CMakeLists.txt.
set(PYR_PYTHON_DIR "lib/python3/dist-packages" CACHE STRING
  "Where `cmake --install` puts the Python package pyrgrid (relative: under the prefix)")
option(PYR_INSTALL_PYTHON "Install the Python module (needs the shared library)" ON)
get_target_property(_pyr_lib_type pyrgrid TYPE)
if(PYR_INSTALL_PYTHON AND _pyr_lib_type STREQUAL "SHARED_LIBRARY")
  file(GLOB PYR_PYTHON_FILES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/python/pyrgrid/*.py)
  # py.typed: the package's type hints are for type checkers too (PEP 561)
  install(FILES ${PYR_PYTHON_FILES} ${PROJECT_SOURCE_DIR}/python/pyrgrid/py.typed DESTINATION ${PYR_PYTHON_DIR}/pyrgrid)
  set(_pyr_soname "libpyrgrid.so.${PYR_SOVERSION}")
  install(CODE "
    set(_pkg \"${PYR_PYTHON_DIR}/pyrgrid\")
    if(NOT IS_ABSOLUTE \"\${_pkg}\")
      set(_pkg \"\${CMAKE_INSTALL_PREFIX}/\${_pkg}\")
    endif()
    set(_libdir \"${CMAKE_INSTALL_LIBDIR}\")
    if(NOT IS_ABSOLUTE \"\${_libdir}\")
      set(_libdir \"\${CMAKE_INSTALL_PREFIX}/\${_libdir}\")
    endif()
    file(RELATIVE_PATH _rel \"\${_pkg}\" \"\${_libdir}/${_pyr_soname}\")
    message(STATUS \"Installing: \$ENV{DESTDIR}\${_pkg}/_install.py\")
    file(WRITE \"\$ENV{DESTDIR}\${_pkg}/_install.py\"
      \"# written by cmake --install: libpyrgrid relative to this package\\nLIBRARY = '\${_rel}'\\n\")
  ")
endif()

# The program's manual page and its bash completion, where man(1) and bash-completion's loader look under the
# prefix (the completion is named after the command it completes).
install(FILES ${PROJECT_SOURCE_DIR}/docs/man/pyrgrid.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${PROJECT_SOURCE_DIR}/tools/completion/pyrgrid.bash
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME pyrgrid)
