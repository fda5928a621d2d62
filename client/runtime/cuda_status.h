// CUresult -> absl::Status: every driver failure is Unavailable and names the
// call, the error and what the runtime was doing.
#ifndef FUSIOND_CLIENT_RUNTIME_CUDA_STATUS_H_
#define FUSIOND_CLIENT_RUNTIME_CUDA_STATUS_H_

#include <cuda.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "client/runtime/driver_api.h"

namespace fusiond {
namespace runtime {

inline absl::Status CudaStatus(CUresult r, const char* call, const std::string& context) {
  if (r == CUDA_SUCCESS) return absl::OkStatus();
  const char* name = nullptr;
  const char* text = nullptr;
  if (Cu().cuGetErrorName(r, &name) != CUDA_SUCCESS || name == nullptr) name = "CUDA_ERROR_?";
  if (Cu().cuGetErrorString(r, &text) != CUDA_SUCCESS || text == nullptr) text = "";
  return absl::UnavailableError(absl::StrCat(call, " failed (", context, "): ", name, " (",
                                             static_cast<int>(r), "): ", text));
}

}  // namespace runtime
}  // namespace fusiond

// Returns from the enclosing function when a driver call fails.
#define FUSIOND_CU(call, context)                                                          \
  do {                                                                                     \
    ::absl::Status _fusiond_cu = ::fusiond::runtime::CudaStatus((call), #call, (context)); \
    if (!_fusiond_cu.ok()) return _fusiond_cu;                                             \
  } while (0)

#endif  // FUSIOND_CLIENT_RUNTIME_CUDA_STATUS_H_
