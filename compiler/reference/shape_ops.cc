// Shape ops as views: broadcast_in_dim, broadcast, expand, squeeze and
// permute re-index the operand's buffer without copying; reshape copies
// only a non-contiguous operand. `out_shape` is the bound output shape.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/reference/eval_internal.h"

namespace fusiond {
namespace reference_internal {
namespace {

absl::Status Mismatch(const Node& n, const View& in, const Shape& out) {
  return absl::InvalidArgumentError(absl::StrCat(
      "node ", n.id, " (", OpName(n.op), "): operand shape [", absl::StrJoin(in.shape, ", "),
      "] does not fit output shape [", absl::StrJoin(out, ", "), "]"));
}

// Maps operand axis i to output axis dims[i]; unmapped output axes and
// operand axes of extent 1 under a larger output extent get stride 0.
absl::StatusOr<View> Scatter(const Node& n, const View& in, const Shape& out,
                             const std::vector<int64_t>& dims) {
  if (dims.size() != in.shape.size()) return Mismatch(n, in, out);
  View v = in;
  v.shape = out;
  v.strides.assign(out.size(), 0);
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t o = dims[i];
    if (o < 0 || o >= static_cast<int64_t>(out.size())) return Mismatch(n, in, out);
    if (in.shape[i] == out[o]) {
      v.strides[o] = in.strides[i];
    } else if (in.shape[i] != 1) {
      return Mismatch(n, in, out);
    }
  }
  return v;
}

}  // namespace

absl::StatusOr<View> EvalShapeOp(const Node& n, const View& in, const Shape& out) {
  const int r = in.rank();
  switch (n.op) {
    case OpKind::kBroadcastInDim:
      return Scatter(n, in, out, n.attrs.broadcast_dims);
    case OpKind::kBroadcast: {
      std::vector<int64_t> dims;
      const auto& nb = n.attrs.is_broadcast_dim;
      for (size_t o = 0; o < nb.size(); ++o) {
        if (!nb[o]) dims.push_back(static_cast<int64_t>(o));
      }
      if (nb.size() != out.size()) return Mismatch(n, in, out);
      return Scatter(n, in, out, dims);
    }
    case OpKind::kExpand: {
      std::vector<int64_t> dims(r);
      for (int i = 0; i < r; ++i) dims[i] = i;
      if (static_cast<int>(out.size()) != r) return Mismatch(n, in, out);
      return Scatter(n, in, out, dims);
    }
    case OpKind::kSqueeze: {
      View v = in;
      v.shape.clear();
      v.strides.clear();
      const auto& d = n.attrs.dims;
      for (int i = 0; i < r; ++i) {
        bool drop = std::find(d.begin(), d.end(), i) != d.end() ||
                    std::find(d.begin(), d.end(), i - r) != d.end();
        if (drop && in.shape[i] != 1) return Mismatch(n, in, out);
        if (drop) continue;
        v.shape.push_back(in.shape[i]);
        v.strides.push_back(in.strides[i]);
      }
      if (v.shape != out) return Mismatch(n, in, out);
      return v;
    }
    case OpKind::kPermute: {
      const auto& d = n.attrs.dims;
      if (static_cast<int>(d.size()) != r) return Mismatch(n, in, out);
      View v = in;
      for (int i = 0; i < r; ++i) {
        const int64_t a = d[i] < 0 ? d[i] + r : d[i];
        if (a < 0 || a >= r) return Mismatch(n, in, out);
        v.shape[i] = in.shape[a];
        v.strides[i] = in.strides[a];
      }
      if (v.shape != out) return Mismatch(n, in, out);
      return v;
    }
    case OpKind::kReshape: {
      if (NumElements(out) != in.numel()) return Mismatch(n, in, out);
      View v = Materialize(in);
      v.shape = out;
      v.strides = RowMajorStrides(out);
      return v;
    }
    default:
      break;
  }
  return absl::InternalError(absl::StrCat("reference: ", OpName(n.op), " is not a shape op"));
}

}  // namespace reference_internal
}  // namespace fusiond
