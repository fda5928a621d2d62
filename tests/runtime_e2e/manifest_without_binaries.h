// A compiled fusion's manifest as FusionManifestJson writes it, with each
// kernel's entry from the generator and no binary (nothing launches): for the
// runtime's launch checks without a GPU or NVRTC.
#ifndef FUSIOND_TESTS_RUNTIME_E2E_MANIFEST_WITHOUT_BINARIES_H_
#define FUSIOND_TESTS_RUNTIME_E2E_MANIFEST_WITHOUT_BINARIES_H_

#include <string>

#include "absl/status/statusor.h"
#include "compiler/compile_result.h"

namespace fusiond {

absl::StatusOr<std::string> ManifestWithoutBinaries(CompileResult& r);

}  // namespace fusiond

#endif  // FUSIOND_TESTS_RUNTIME_E2E_MANIFEST_WITHOUT_BINARIES_H_
