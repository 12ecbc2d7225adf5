# Installing like a Python package and like a command: pip install . (pyproject.toml, setup.py: a wheel built
# offline with Debian's pip, setuptools and wheel, run from a venv, then uninstalled), the program's manual page
# and its bash completion (docs/man, tools/completion; cmake/python.cmake installs them).
if(NOT PYR_SANITIZE AND NOT PYR_FUZZ)
  # builds its own library (CMake inside pip, CPU only): two compile jobs, about a minute on two cores
  add_test(NAME test_pip_install COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_pip_install.sh)
  set_tests_properties(test_pip_install PROPERTIES LABELS "python;slow" SKIP_RETURN_CODE 77 TIMEOUT 600 PROCESSORS 2)
endif()
if(TARGET pyrgrid_cli)
  add_test(NAME test_man_page
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_man_completion.sh man $<TARGET_FILE:pyrgrid_cli>)
  add_test(NAME test_bash_completion
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_man_completion.sh completion $<TARGET_FILE:pyrgrid_cli>)
  add_test(NAME test_man_completion_install
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_man_completion.sh install ${PROJECT_BINARY_DIR})
  set_tests_properties(test_man_page test_bash_completion test_man_completion_install PROPERTIES
    LABELS "cli;quick" SKIP_RETURN_CODE 77)
  # installs from this build tree (install_manifest.txt), as test_install and test_python_install do: one at a time
  set_tests_properties(test_man_completion_install PROPERTIES RESOURCE_LOCK cmake_install)
endif()
