#include "compiler/ir/builder.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/binding.h"
#include "compiler/ir/builder_internal.h"

namespace fusiond {
using builder_internal::Bad;

absl::StatusOr<std::vector<int64_t>> NormalizeAxes(std::vector<int64_t> axes, int rank,
                                                   bool allow_repeat) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    int64_t n = a < 0 ? a + rank : a;
    if (n < 0 || n >= rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("axis ", a, " is out of range for rank ", rank));
    }
    out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  if (!allow_repeat && std::adjacent_find(out.begin(), out.end()) != out.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("axes [", absl::StrJoin(axes, ", "), "] repeat an axis"));
  }
  return out;
}

ValueId GraphBuilder::NewValue(std::string name, bool is_tensor, DataType dtype,
                               std::vector<Extent> shape) {
  Value v;
  v.id = static_cast<ValueId>(g_->values.size());
  v.name = std::move(name);
  v.is_tensor = is_tensor;
  v.dtype = dtype;
  v.shape = std::move(shape);
  g_->values.push_back(std::move(v));
  return g_->values.back().id;
}

absl::Status GraphBuilder::CheckValue(ValueId v, const char* what) const {
  if (v < 0 || v >= static_cast<ValueId>(g_->values.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " refers to value %", v, ", which is not defined"));
  }
  return absl::OkStatus();
}

absl::Status GraphBuilder::CheckShapeSize(const std::vector<Extent>& shape) const {
  if (static_cast<int>(shape.size()) > limits_.max_rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", shape.size(), " exceeds the limit of ", limits_.max_rank));
  }
  std::vector<int64_t> sizes;  // the static extents; symbolic ones are checked when bound
  for (const Extent& e : shape) {
    if (e.is_static()) sizes.push_back(e.size);
  }
  return CheckElementCount(sizes, limits_.max_elements);
}

absl::StatusOr<ValueId> GraphBuilder::DefineTensor(std::string name, DataType dtype,
                                                   const std::vector<int64_t>& sizes,
                                                   std::vector<std::optional<bool>> contiguity,
                                                   std::vector<int64_t> stride_order) {
  const int rank = static_cast<int>(sizes.size());
  std::vector<Extent> shape;
  for (int i = 0; i < rank; ++i) {
    if (sizes[i] < -1) {
      return absl::InvalidArgumentError(absl::StrCat("define_tensor: size ", sizes[i], " of axis ",
                                                     i,
                                                     " is negative (use -1 for a symbolic size)"));
    }
    shape.push_back(sizes[i] >= 0 ? Extent::Static(sizes[i]) : Extent{});
  }
  if (absl::Status s = CheckShapeSize(shape); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("define_tensor: ", s.message()));
  }
  if (!contiguity.empty() && static_cast<int>(contiguity.size()) != rank) {
    return absl::InvalidArgumentError(absl::StrCat("define_tensor: contiguity has ",
                                                   contiguity.size(),
                                                   " entries for a tensor of rank ", rank));
  }
  if (!stride_order.empty()) {
    if (static_cast<int>(stride_order.size()) != rank) {
      return absl::InvalidArgumentError(absl::StrCat("define_tensor: stride_order has ",
                                                     stride_order.size(),
                                                     " entries for a tensor of rank ", rank));
    }
    std::vector<int64_t> sorted = stride_order;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < rank; ++i) {
      if (sorted[i] != i) {
        return absl::InvalidArgumentError(absl::StrCat("define_tensor: stride_order [",
                                                       absl::StrJoin(stride_order, ", "),
                                                       "] is not a permutation of 0..", rank - 1));
      }
    }
  }
  ValueId id = NewValue(std::move(name), true, dtype, {});
  for (int i = 0; i < rank; ++i) {
    if (sizes[i] == -1) {
      SizeSymbol sym;
      sym.input = id;
      sym.axis = i;
      g_->symbols.push_back(sym);
      shape[i] = Extent::Symbolic(static_cast<SymbolId>(g_->symbols.size() - 1));
    }
  }
  Value& v = g_->value(id);
  v.shape = std::move(shape);
  v.contiguity = std::move(contiguity);
  v.stride_order = std::move(stride_order);
  g_->inputs.push_back(id);
  return id;
}

ValueId GraphBuilder::DefineConstant(double value, DataType dtype, std::string name) {
  ValueId id = NewValue(std::move(name), false, dtype, {});
  g_->value(id).constant = value;
  return id;
}

ValueId GraphBuilder::DefineScalarInput(DataType dtype, std::string name) {
  ValueId id = NewValue(std::move(name), false, dtype, {});
  g_->inputs.push_back(id);
  return id;
}

absl::StatusOr<std::vector<Extent>> GraphBuilder::BroadcastShapes(
    OpKind op, const std::vector<ValueId>& operands) {
  // Scalars and 0-d tensors broadcast freely; tensors of rank > 0 must agree
  // in rank, and per axis in extent unless one side is a static 1.
  std::vector<Extent> shape;
  int rank = -1;
  for (ValueId v : operands) {
    const Value& val = g_->value(v);
    if (!val.is_tensor || val.rank() == 0) continue;
    if (rank == -1) {
      rank = val.rank();
      shape = val.shape;
      continue;
    }
    if (val.rank() != rank) {
      return Bad(op, absl::StrCat("operands have ranks ", rank, " and ", val.rank(),
                                  "; broadcast explicitly first"));
    }
    for (int i = 0; i < rank; ++i) {
      Extent a = g_->Canonical(shape[i]), b = g_->Canonical(val.shape[i]);
      if (g_->SameExtent(a, b)) continue;
      if (b.is_broadcast()) continue;
      if (a.is_broadcast()) {
        shape[i] = b;
        continue;
      }
      if (!g_->UnifyExtents(a, b)) {
        return Bad(op, absl::StrCat("axis ", i, " has extents ", g_->ExtentName(a), " and ",
                                    g_->ExtentName(b), ", which cannot broadcast"));
      }
    }
  }
  for (Extent& e : shape) e = g_->Canonical(e);
  return shape;
}

absl::StatusOr<ValueId> GraphBuilder::Unary(OpKind op, ValueId x) {
  auto out = AddNode(op, {x});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

absl::StatusOr<ValueId> GraphBuilder::Binary(OpKind op, ValueId a, ValueId b) {
  auto out = AddNode(op, {a, b});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

absl::StatusOr<ValueId> GraphBuilder::Where(ValueId c, ValueId a, ValueId b) {
  auto out = AddNode(OpKind::kWhere, {c, a, b});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

absl::StatusOr<ValueId> GraphBuilder::Cast(ValueId x, DataType dtype) {
  Attrs attrs;
  attrs.dtype = dtype;
  auto out = AddNode(OpKind::kCast, {x}, attrs);
  if (!out.ok()) return out.status();
  return (*out)[0];
}

absl::StatusOr<ValueId> GraphBuilder::BroadcastInDim(ValueId x, std::vector<Extent> shape,
                                                     std::vector<int64_t> broadcast_dims) {
  Attrs attrs;
  attrs.shape = std::move(shape);
  attrs.broadcast_dims = std::move(broadcast_dims);
  auto out = AddNode(OpKind::kBroadcastInDim, {x}, attrs);
  if (!out.ok()) return out.status();
  return (*out)[0];
}

absl::StatusOr<ValueId> GraphBuilder::Reduce(OpKind op, ValueId x, std::vector<int64_t> dims,
                                             bool keepdim, std::optional<DataType> dtype) {
  Attrs attrs;
  attrs.dims = std::move(dims);
  attrs.keepdim = keepdim;
  attrs.dtype = dtype;
  auto out = AddNode(op, {x}, attrs);
  if (!out.ok()) return out.status();
  return (*out)[0];
}

absl::StatusOr<ValueId> GraphBuilder::Size(ValueId x, int64_t axis) {
  Attrs attrs;
  attrs.axis = axis;
  auto out = AddNode(OpKind::kSize, {x}, attrs);
  if (!out.ok()) return out.status();
  return (*out)[0];
}

absl::Status GraphBuilder::AddOutput(ValueId v) {
  if (absl::Status s = CheckValue(v, "add_output"); !s.ok()) return s;
  if (!g_->value(v).is_tensor) {
    return absl::InvalidArgumentError(
        absl::StrCat("add_output: ", g_->value(v).name.empty() ? "value" : g_->value(v).name,
                     " is a scalar; outputs must be tensors"));
  }
  g_->outputs.push_back(v);
  return absl::OkStatus();
}

std::optional<Extent> GraphBuilder::ExtentOfScalar(ValueId v) const {
  if (v < 0 || v >= static_cast<ValueId>(g_->values.size())) return std::nullopt;
  const Value& val = g_->value(v);
  if (val.is_tensor) return std::nullopt;
  if (val.constant && IsIntegral(val.dtype) && *val.constant >= 0) {
    return Extent::Static(static_cast<int64_t>(*val.constant));
  }
  const Node* def = g_->def(v);
  if (def && def->op == OpKind::kSize) {
    const Value& t = g_->value(def->inputs[0]);
    return g_->Canonical(t.shape[def->attrs.axis]);
  }
  return std::nullopt;
}

}  // namespace fusiond
