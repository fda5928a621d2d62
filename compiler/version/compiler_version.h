// The compiler's version: a hash of every source that can change a kernel or
// a manifest (compiler/version/sources.cmake: IR, passes, segmenter,
// schedulers and heuristics, code generator, NVRTC wrapper, pipeline),
// computed by the build. Part of every cache key (cache/cache_key.h).
#ifndef FUSIOND_COMPILER_VERSION_COMPILER_VERSION_H_
#define FUSIOND_COMPILER_VERSION_COMPILER_VERSION_H_

#include <string>

namespace fusiond {

// 16 hex digits of the SHA-256 over the sources' paths and contents.
std::string CompilerSourceHash();

// How many files the hash covers.
int CompilerSourceFiles();

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_VERSION_COMPILER_VERSION_H_
