# The caller's fields in GPU memory (pyr_field_wrap_device, pyr_field_copy, pyr_plan_takes_field): the refusals
# every build gives, and on a GPU (skipped without one) device-wrapped runs against host runs, bit for bit.
pyr_add_test(test_device_fields SOURCES test_device_fields.c LABELS api quick)
add_test(NAME test_device_fields_gpu COMMAND test_device_fields gpu)
set_tests_properties(test_device_fields_gpu PROPERTIES SKIP_RETURN_CODE 77 LABELS "api;cuda;quick;gpu" RESOURCE_LOCK gpu)
# GPU arrays from Python (CuPy, PyTorch, a DLPack-only producer) computed on in place; skipped where the
# interpreter lacks NumPy, CuPy or PyTorch, or no GPU is usable.
if(NOT PYR_SANITIZE AND BUILD_SHARED_LIBS)
  add_test(NAME test_python_gpu_arrays
    COMMAND sh -c "exec \"\${PYR_GPU_PYTHON:-python3}\" ${CMAKE_CURRENT_SOURCE_DIR}/test_gpu_arrays.py")
  set_tests_properties(test_python_gpu_arrays PROPERTIES LABELS "python;cuda;slow;gpu" SKIP_RETURN_CODE 77 TIMEOUT 600
    RESOURCE_LOCK gpu
    ENVIRONMENT "PYRGRID_LIBRARY=$<TARGET_FILE:pyrgrid>;PYTHONPATH=${PROJECT_SOURCE_DIR}/python;PYTHONDONTWRITEBYTECODE=1")
endif()
