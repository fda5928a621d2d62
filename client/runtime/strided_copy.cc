#include "client/runtime/strided_copy.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "client/runtime/cuda_status.h"

namespace fusiond {
namespace runtime {

bool IsDense(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  if (strides.empty()) return true;
  if (strides.size() != shape.size()) return false;
  int64_t expected = 1;
  for (int a = static_cast<int>(shape.size()) - 1; a >= 0; --a) {
    if (shape[a] == 1) continue;
    if (strides[a] != expected) return false;
    expected *= shape[a];
  }
  return true;
}

absl::Status CopyToDense(CUdeviceptr src, const std::vector<int64_t>& shape,
                         const std::vector<int64_t>& strides, int elem_size, CUdeviceptr dst,
                         CUstream stream) {
  // Drop axes of extent 1; they never move the address.
  std::vector<int64_t> dims, st;
  for (size_t a = 0; a < shape.size(); ++a) {
    if (shape[a] == 0) return absl::OkStatus();
    if (shape[a] == 1) continue;
    if (strides[a] <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("input axis ", a, " has stride ", strides[a],
                                                     "; materialize expanded views first"));
    }
    dims.push_back(shape[a]);
    st.push_back(strides[a]);
  }
  if (dims.empty()) {
    FUSIOND_CU(Cu().cuMemcpyAsync(dst, src, elem_size, stream), "copying a one-element input");
    return absl::OkStatus();
  }
  const int rank = static_cast<int>(dims.size());
  const bool inner_dense = st[rank - 1] == 1;
  // A 2D copy covers: (inner dense) axes rank-2 and rank-1, else axis rank-1
  // alone; an odometer walks the remaining outer axes.
  CUDA_MEMCPY2D copy;
  std::memset(&copy, 0, sizeof(copy));
  copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  int outer_axes;
  if (inner_dense) {
    copy.WidthInBytes = dims[rank - 1] * elem_size;
    copy.Height = rank >= 2 ? dims[rank - 2] : 1;
    copy.srcPitch = rank >= 2 ? st[rank - 2] * elem_size : copy.WidthInBytes;
    copy.dstPitch = copy.WidthInBytes;
    outer_axes = rank >= 2 ? rank - 2 : 0;
  } else {
    copy.WidthInBytes = elem_size;
    copy.Height = dims[rank - 1];
    copy.srcPitch = st[rank - 1] * elem_size;
    copy.dstPitch = elem_size;
    outer_axes = rank - 1;
  }
  const int64_t block_bytes = static_cast<int64_t>(copy.WidthInBytes) * copy.Height;
  std::vector<int64_t> index(outer_axes, 0);
  int64_t dst_offset = 0;
  while (true) {
    int64_t src_offset = 0;
    for (int a = 0; a < outer_axes; ++a) src_offset += index[a] * st[a];
    copy.srcDevice = src + src_offset * elem_size;
    copy.dstDevice = dst + dst_offset;
    FUSIOND_CU(Cu().cuMemcpy2DAsync(&copy, stream), "making an input contiguous");
    dst_offset += block_bytes;
    int a = outer_axes - 1;
    while (a >= 0 && ++index[a] == dims[a]) {
      index[a] = 0;
      --a;
    }
    if (a < 0) break;
  }
  return absl::OkStatus();
}

}  // namespace runtime
}  // namespace fusiond
