// The code generator's hand-set version, shown in reports and metrics. The
// cache key does not depend on it: it holds a hash of the compiler's sources
// (compiler/version), which changes with any edit to the generator.
#ifndef FUSIOND_COMPILER_CODEGEN_VERSION_H_
#define FUSIOND_COMPILER_CODEGEN_VERSION_H_

namespace fusiond {

constexpr int kCodegenVersion = 27;

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_CODEGEN_VERSION_H_
