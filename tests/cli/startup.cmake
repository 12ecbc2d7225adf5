# The program's start-up footprint (reliability review L9): --version and a
# small CPU run under ulimit -v of a few hundred MB, and in a CUDA build no
# GPU library among those loaded at start (cuBLAS and cuFFT are loaded on
# first use).  Skipped (77) under the sanitizers.
add_test(NAME test_startup
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/test_startup.sh $<TARGET_FILE:pyrgrid_cli> ${PROJECT_SOURCE_DIR} ${PYR_HAVE_CUDA}
          $<TARGET_FILE:pyrgrid>)
set(_pyr_startup_env "OMP_NUM_THREADS=2")
if(PYR_SANITIZE)
  list(APPEND _pyr_startup_env "PYR_SANITIZE=1")
endif()
set_tests_properties(test_startup PROPERTIES LABELS "cli;quick" SKIP_RETURN_CODE 77 ENVIRONMENT "${_pyr_startup_env}")
