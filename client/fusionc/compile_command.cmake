# `fusionc compile` needs the compile pipeline (compiler/CMakeLists.pipeline.cmake).
if(TARGET fusion_pipeline)
  list(APPEND FUSIONC_LIBS fusion_pipeline)
else()
  message(STATUS "fusionc: 'compile' is left out: no fusion_pipeline library in this tree")
  set(FUSIONC_SKIP_COMMAND ON)
endif()
