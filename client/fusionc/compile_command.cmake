# `fusionc compile` needs the compile pipeline (compiler/CMakeLists.pipeline.cmake),
# and, when the service is built, the kernel cache (embedded mode) and the
# gRPC client (--server).
if(TARGET fusion_pipeline)
  list(APPEND FUSIONC_LIBS fusion_pipeline)
  if(TARGET fusion_cache AND TARGET fusion_client)
    list(APPEND FUSIONC_LIBS fusion_cache fusion_client fusion_cache_report)
    list(APPEND FUSIONC_SOURCES compile_cached.cc)
    set(FUSIONC_WITH_CACHE ON)
  endif()
else()
  message(STATUS "fusionc: 'compile' is left out: no fusion_pipeline library in this tree")
  set(FUSIONC_SKIP_COMMAND ON)
endif()
