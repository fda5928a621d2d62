# `fusionc eval` runs the CPU reference interpreter (compiler/reference).
if(TARGET fusion_reference)
  list(APPEND FUSIONC_LIBS fusion_reference)
  list(APPEND FUSIONC_SOURCES ${CMAKE_CURRENT_LIST_DIR}/eval_inputs.cc)
else()
  message(STATUS "fusionc: 'eval' is left out: no fusion_reference library in this tree")
  set(FUSIONC_SKIP_COMMAND ON)
endif()
