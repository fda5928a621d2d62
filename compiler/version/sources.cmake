# The sources that decide a kernel or a manifest: every file of the IR,
# passes, segmenter, schedulers and heuristics, code generator, NVRTC wrapper
# and shared utilities, and the pipeline itself; not tests, device scripts,
# developer tools (*_main.cc), the front end (the key holds the graph it
# produced) or the CPU reference. Used at configure time (the custom
# command's dependencies) and by hash_sources.cmake at build time.
set(FUSIOND_COMPILER_VERSION_DIRS ir passes segmenter scheduler codegen nvrtc util)

# fusiond_compiler_sources(ROOT OUT_VAR): the files, relative to ROOT, sorted.
function(fusiond_compiler_sources root out_var)
  file(GLOB top RELATIVE ${root} ${root}/compiler/*.cc ${root}/compiler/*.h ${root}/compiler/*.cmake
    ${root}/compiler/CMakeLists.txt)
  set(globs "")
  foreach(d ${FUSIOND_COMPILER_VERSION_DIRS})
    list(APPEND globs ${root}/compiler/${d}/*.cc ${root}/compiler/${d}/*.h ${root}/compiler/${d}/*.inc
      ${root}/compiler/${d}/*.cu ${root}/compiler/${d}/*.cuh ${root}/compiler/${d}/CMakeLists.txt)
  endforeach()
  file(GLOB_RECURSE files RELATIVE ${root} ${globs})
  list(APPEND files ${top})
  list(FILTER files EXCLUDE REGEX "(_test\\.(cc|h)|_main\\.cc)$")
  list(FILTER files EXCLUDE REGEX "/(device|testdata|fuzz)/")
  list(SORT files)
  set(${out_var} ${files} PARENT_SCOPE)
endfunction()
