// A generated kernel's CUDA C++ (prelude included, as GenerateKernel gives
// it) rewritten as host C++ for cuda_host.h: every inline PTX statement
// becomes its host equivalent from a fixed table (an unknown one is an
// error naming it, never skipped), and __shared__ declarations become views
// of the emulated block's shared memory. Everything else is compiled as
// generated, the preludes' C++ included.
#ifndef FUSIOND_TESTS_HOST_EMULATION_TRANSLATE_H_
#define FUSIOND_TESTS_HOST_EMULATION_TRANSLATE_H_

#include <string>

#include "absl/status/statusor.h"

namespace fusiond {
namespace host_emulation {

// The kernel inside `namespace ns { ... }` plus an extern "C" entry
// `fz_emu_entry_<kernel_name>(void* const* slots)` that calls it with the
// manifest's 8-byte parameter slots. InvalidArgument naming the statement
// for PTX the table lacks or an asm statement that does not parse.
absl::StatusOr<std::string> TranslateKernel(const std::string& cuda_source,
                                            const std::string& kernel_name, const std::string& ns);

// Only the inline PTX rewrite (for tests).
absl::StatusOr<std::string> RewriteAsm(const std::string& source);
// Only the __shared__ rewrite (for tests).
std::string RewriteShared(const std::string& source);

}  // namespace host_emulation
}  // namespace fusiond

#endif  // FUSIOND_TESTS_HOST_EMULATION_TRANSLATE_H_
