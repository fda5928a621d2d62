// Copies a strided device tensor into a dense row-major buffer with the
// driver's 2D copies (no kernel of our own): rows whose innermost axis is
// contiguous move as one pitched copy per outer index, anything else element
// by element. Meant for the occasional non-contiguous input, not for speed.
#ifndef FUSIOND_CLIENT_RUNTIME_STRIDED_COPY_H_
#define FUSIOND_CLIENT_RUNTIME_STRIDED_COPY_H_

#include <cuda.h>

#include <cstdint>
#include <vector>

#include "absl/status/status.h"

namespace fusiond {
namespace runtime {

// True when `strides` (elements) describe a dense row-major layout of
// `shape`, ignoring the strides of axes of extent 1. Empty strides: dense.
bool IsDense(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides);

// dst must hold prod(shape) * elem_size bytes. InvalidArgument for negative
// or zero strides on axes of extent > 1 (expanded views must be materialized
// by the caller).
absl::Status CopyToDense(CUdeviceptr src, const std::vector<int64_t>& shape,
                         const std::vector<int64_t>& strides, int elem_size, CUdeviceptr dst,
                         CUstream stream);

}  // namespace runtime
}  // namespace fusiond

#endif  // FUSIOND_CLIENT_RUNTIME_STRIDED_COPY_H_
