// GraphBuilder::InferShift: typing of the ops whose element i reads an
// operand at a shifted index: slice (starts, ends, strides per axis), pad
// (low and high widths per axis, a scalar fill value) and cat (operands joined
// along one axis). Offsets are static; an axis they move must have a static
// extent (a symbolic axis may only be kept whole).
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "compiler/ir/builder.h"
#include "compiler/ir/builder_internal.h"

namespace fusiond {
using builder_internal::Bad;

namespace {

using Result = std::vector<std::pair<bool, std::vector<Extent>>>;

// Output extent of slice [start, end) by stride along an axis of extent e.
absl::StatusOr<Extent> SliceExtent(OpKind op, int axis, Extent e, int64_t start, int64_t end,
                                   int64_t stride) {
  const std::string where = absl::StrCat("axis ", axis, ": ");
  if (stride < 1) return Bad(op, absl::StrCat(where, "stride ", stride, " is not positive"));
  if (start < 0 || end < start) {
    return Bad(op, absl::StrCat(where, "start ", start, " and end ", end,
                                " do not make a range (0 <= start <= end)"));
  }
  if (!e.is_static()) {
    // A symbolic axis is kept whole: nothing else is provably in range.
    if (start == 0 && stride == 1 && end == INT64_MAX) return e;
    return Bad(op, absl::StrCat(where,
                                "the extent is symbolic; only the whole axis (start 0, "
                                "stride 1) can be sliced from it"));
  }
  if (end == INT64_MAX) end = e.size;
  if (end > e.size) {
    return Bad(op, absl::StrCat(where, "end ", end, " is past the extent ", e.size));
  }
  // ceil((end - start) / stride), without overflow for any stride.
  return Extent::Static(end == start ? 0 : (end - start - 1) / stride + 1);
}

}  // namespace

absl::StatusOr<Result> GraphBuilder::InferShift(OpKind op, const std::vector<ValueId>& in,
                                                Attrs& attrs, std::vector<DataType>& dtypes) {
  const Value& x = g_->value(in[0]);
  if (!x.is_tensor) return Bad(op, "operand is a scalar, not a tensor");
  const int rank = x.rank();
  if (rank == 0) return Bad(op, "operand is a 0-d tensor; it needs at least one axis");
  std::vector<Extent> shape;
  for (const Extent& e : x.shape) shape.push_back(g_->Canonical(e));
  dtypes = {x.dtype};
  if (op == OpKind::kSlice) {
    if (static_cast<int>(attrs.offsets.size()) != 3 * rank) {
      return Bad(op, absl::StrCat("takes a start, an end and a stride per axis (", 3 * rank,
                                  " offsets for rank ", rank, "), got ", attrs.offsets.size()));
    }
    for (int i = 0; i < rank; ++i) {
      auto e = SliceExtent(op, i, shape[i], attrs.offsets[i], attrs.offsets[rank + i],
                           attrs.offsets[2 * rank + i]);
      if (!e.ok()) return e.status();
      shape[i] = *e;
    }
    return Result{{true, shape}};
  }
  if (op == OpKind::kPad) {
    const Value& v = g_->value(in[1]);
    if (v.is_tensor) return Bad(op, "the fill value is a tensor; it takes a scalar");
    if (static_cast<int>(attrs.offsets.size()) != 2 * rank) {
      return Bad(op, absl::StrCat("takes a low and a high width per axis (", 2 * rank,
                                  " offsets for rank ", rank, "), got ", attrs.offsets.size()));
    }
    for (int i = 0; i < rank; ++i) {
      const int64_t lo = attrs.offsets[2 * i], hi = attrs.offsets[2 * i + 1];
      if (lo < 0 || hi < 0) {
        return Bad(op, absl::StrCat("axis ", i, ": widths ", lo, " and ", hi,
                                    " must not be negative (slice to cut)"));
      }
      if (lo == 0 && hi == 0) continue;
      if (!shape[i].is_static()) {
        return Bad(op, absl::StrCat("axis ", i, " has a symbolic extent; only static axes pad"));
      }
      if (lo > limits_.max_elements || hi > limits_.max_elements) {
        return Bad(op, absl::StrCat("axis ", i, ": widths ", lo, " and ", hi, " are absurd"));
      }
      shape[i] = Extent::Static(shape[i].size + lo + hi);
    }
    return Result{{true, shape}};
  }
  // cat: every operand has the first one's dtype, rank and extents, except
  // along the joined axis, whose extents are static and add up.
  if (attrs.axis < -rank || attrs.axis >= rank) {
    return Bad(op, absl::StrCat("axis ", attrs.axis, " is out of range for rank ", rank));
  }
  if (attrs.axis < 0) attrs.axis += rank;
  const int axis = static_cast<int>(attrs.axis);
  int64_t total = 0;
  for (size_t k = 0; k < in.size(); ++k) {
    const Value& y = g_->value(in[k]);
    const std::string which = absl::StrCat("operand ", k);
    if (!y.is_tensor) return Bad(op, absl::StrCat(which, " is a scalar, not a tensor"));
    if (y.dtype != x.dtype) {
      return Bad(op, absl::StrCat(which, " is ", DataTypeName(y.dtype), ", operand 0 is ",
                                  DataTypeName(x.dtype), "; cast them to one dtype"));
    }
    if (y.rank() != rank) {
      return Bad(op, absl::StrCat(which, " has rank ", y.rank(), ", operand 0 rank ", rank));
    }
    for (int i = 0; i < rank; ++i) {
      if (i == axis) continue;
      if (!g_->UnifyExtents(shape[i], y.shape[i])) {
        return Bad(op, absl::StrCat(which, " has extent ", g_->ExtentName(y.shape[i]), " on axis ",
                                    i, ", operand 0 ", g_->ExtentName(shape[i])));
      }
    }
    const Extent e = g_->Canonical(y.shape[axis]);
    if (!e.is_static()) {
      return Bad(op, absl::StrCat(which, " has a symbolic extent on the joined axis ", axis,
                                  "; only static extents join"));
    }
    total += e.size;
  }
  for (Extent& e : shape) e = g_->Canonical(e);
  shape[axis] = Extent::Static(total);
  return Result{{true, shape}};
}

}  // namespace fusiond
