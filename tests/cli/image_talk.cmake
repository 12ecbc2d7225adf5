# Images fit for a talk from pyrgrid run (issue 49): output.image_width, output.colormap, output.probes_png.
add_test(NAME test_image_talk COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/test_image_talk.py $<TARGET_FILE:pyrgrid_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_image_talk PROPERTIES LABELS "io;cli;quick" TIMEOUT 300)
