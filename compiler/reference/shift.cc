// The reference's slice, pad and cat: slice is a view (a shifted offset and
// scaled strides); pad and cat write a fresh contiguous buffer and copy each
// operand into its window.
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "compiler/ir/dtype.h"
#include "compiler/reference/eval_internal.h"

namespace fusiond {
namespace reference_internal {
namespace {

// Copies every element of src into dst (contiguous) at dst's index
// origin + (src's index).
void CopyInto(const View& src, const Shape& origin, View& dst) {
  const int rank = src.rank();
  const int64_t count = src.numel();
  if (count == 0) return;
  const Shape dst_strides = RowMajorStrides(dst.shape);
  Shape idx(rank, 0);
  double* out = dst.buf->data() + dst.offset;
  const double* in = src.data();
  for (int64_t e = 0; e < count; ++e) {
    int64_t s = 0, d = 0;
    for (int i = 0; i < rank; ++i) {
      s += idx[i] * src.strides[i];
      d += (idx[i] + origin[i]) * dst_strides[i];
    }
    out[d] = in[s];
    for (int i = rank - 1; i >= 0; --i) {
      if (++idx[i] < src.shape[i]) break;
      idx[i] = 0;
    }
  }
}

}  // namespace

absl::StatusOr<View> EvalShift(const Node& n, const std::vector<const View*>& in,
                               const Shape& out_shape) {
  const View& x = *in[0];
  const int rank = x.rank();
  if (static_cast<int>(out_shape.size()) != rank) {
    return absl::InternalError(absl::StrCat("reference: ", OpName(n.op), " node ", n.id,
                                            " has rank ", out_shape.size(), ", operand ", rank));
  }
  if (n.op == OpKind::kSlice) {
    View v = x;
    for (int i = 0; i < rank; ++i) {
      v.offset += n.attrs.offsets[i] * x.strides[i];
      v.strides[i] = x.strides[i] * n.attrs.offsets[2 * rank + i];
    }
    v.shape = out_shape;
    return v;
  }
  View out = NewView(out_shape, x.dtype);
  if (n.op == OpKind::kPad) {
    const double fill = RoundTo(x.dtype, in[1]->data()[0]);
    double* p = out.buf->data() + out.offset;
    for (int64_t e = 0; e < out.numel(); ++e) p[e] = fill;
    Shape origin(rank);
    for (int i = 0; i < rank; ++i) origin[i] = n.attrs.offsets[2 * i];
    CopyInto(x, origin, out);
    return out;
  }
  Shape origin(rank, 0);
  const int64_t axis = n.attrs.axis;
  for (const View* y : in) {
    CopyInto(*y, origin, out);
    origin[axis] += y->shape[axis];
  }
  return out;
}

}  // namespace reference_internal
}  // namespace fusiond
