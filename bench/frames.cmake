# Frames pipeline benchmark: pyrgrid GPU, pyrgrid CPU and skimage side by side.
add_executable(bench_frames ${CMAKE_CURRENT_SOURCE_DIR}/bench_frames.c)
target_link_libraries(bench_frames PRIVATE pyrgrid m)
target_compile_definitions(bench_frames PRIVATE _POSIX_C_SOURCE=200809L PYR_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
