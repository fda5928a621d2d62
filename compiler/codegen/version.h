// The code generator's version. It is part of the cache key: bump it whenever
// the generated source for a given graph and HeuristicParams can change.
#ifndef FUSIOND_COMPILER_CODEGEN_VERSION_H_
#define FUSIOND_COMPILER_CODEGEN_VERSION_H_

namespace fusiond {

constexpr int kCodegenVersion = 27;

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_CODEGEN_VERSION_H_
