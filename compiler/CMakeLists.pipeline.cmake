# The compile pipeline (compiler/pipeline.cc): every stage in one call.
add_library(fusion_pipeline ${CMAKE_CURRENT_LIST_DIR}/pipeline.cc
  ${CMAKE_CURRENT_LIST_DIR}/compile_kernels.cc)
target_link_libraries(fusion_pipeline PUBLIC fusion_codegen_manifest fusion_passes fusion_segmenter fusion_scheduler
  fusion_ir absl::status absl::statusor absl::strings absl::str_format Threads::Threads)
# The compiler's version (a hash of its sources: compiler/version), for the cache key.
target_link_libraries(fusion_pipeline PUBLIC fusion_compiler_version)
# A split fusion's kernels compiled at once equal the serial compile's.
fusiond_test(compile_kernels_test SRCS ${CMAKE_CURRENT_LIST_DIR}/compile_kernels_test.cc
  LIBS fusion_pipeline)
