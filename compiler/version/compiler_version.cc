#include "compiler/version/compiler_version.h"

#include "compiler/version/compiler_source_hash.h"

namespace fusiond {

std::string CompilerSourceHash() { return FUSIOND_COMPILER_SOURCE_HASH; }

int CompilerSourceFiles() { return FUSIOND_COMPILER_SOURCE_FILES; }

}  // namespace fusiond
