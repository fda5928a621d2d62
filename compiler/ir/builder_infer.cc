// GraphBuilder::AddNode: operand checks and result type/shape inference.
#include <algorithm>
#include <iterator>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/builder.h"
#include "compiler/ir/builder_internal.h"

namespace fusiond {
using builder_internal::Bad;
using builder_internal::Category;

namespace {

int Arity(OpKind op) {
  if (op == OpKind::kIota || op == OpKind::kPad) return 2;
  switch (CategoryOf(op)) {
    case OpCategory::kBinary:
      return 2;
    case OpCategory::kTernary:
      return 3;
    case OpCategory::kIndexed:
      return 4;
    default:
      return 1;
  }
}

// Result type of a pointwise op over operands, PyTorch style: tensors decide
// unless a scalar is of a higher category (float > int > bool).
DataType PromoteOperands(const Graph& g, const std::vector<ValueId>& ops) {
  std::optional<DataType> tensor_t, scalar_t;
  for (ValueId v : ops) {
    const Value& val = g.value(v);
    auto& slot = val.is_tensor ? tensor_t : scalar_t;
    slot = slot ? PromoteTypes(*slot, val.dtype) : val.dtype;
  }
  if (!tensor_t) return *scalar_t;
  if (!scalar_t || Category(*scalar_t) <= Category(*tensor_t)) return *tensor_t;
  return Category(*scalar_t) == 2 ? DataType::kFloat : DataType::kInt64;
}

bool AnyTensor(const Graph& g, const std::vector<ValueId>& ops) {
  return std::any_of(ops.begin(), ops.end(), [&](ValueId v) { return g.value(v).is_tensor; });
}

DataType DefaultFloat(bool is_tensor) { return is_tensor ? DataType::kFloat : DataType::kDouble; }

using InferResult = std::vector<std::pair<bool, std::vector<Extent>>>;

// sum / prod / max / min / mean / var / var_mean over attrs.dims (normalized
// in place).
absl::StatusOr<InferResult> InferReduction(Graph& g, OpKind op, const Value& x, Attrs& attrs,
                                           std::vector<DataType>& dtypes) {
  const OpCategory cat = CategoryOf(op);
  if (attrs.dims.empty()) return Bad(op, "dims is empty; name the axes to reduce");
  auto dims = NormalizeAxes(attrs.dims, x.rank());
  if (!dims.ok()) return Bad(op, std::string(dims.status().message()));
  attrs.dims = *dims;
  if ((op == OpKind::kVar || cat == OpCategory::kVarMean) && attrs.correction < 0) {
    return Bad(op, absl::StrCat("correction ", attrs.correction, " is negative"));
  }
  std::vector<Extent> shape;
  for (int i = 0; i < x.rank(); ++i) {
    bool reduced = std::binary_search(dims->begin(), dims->end(), i);
    if (!reduced)
      shape.push_back(g.Canonical(x.shape[i]));
    else if (attrs.keepdim)
      shape.push_back(Extent::Static(1));
  }
  DataType t = x.dtype;
  if (op == OpKind::kVar || cat == OpCategory::kVarMean) {
    if (!IsFloatingPoint(t)) t = DataType::kFloat;
  } else if ((op == OpKind::kSum || op == OpKind::kProd) && !IsFloatingPoint(t)) {
    t = DataType::kInt64;
  }
  if (attrs.dtype) t = *attrs.dtype;
  if (cat == OpCategory::kVarMean) {
    dtypes = {t, t};
    return InferResult{{true, shape}, {true, shape}};
  }
  dtypes = {t};
  return InferResult{{true, shape}};
}

// broadcast_in_dim: operand axis i becomes output axis broadcast_dims[i] of
// attrs.shape (canonicalized in place).
absl::StatusOr<InferResult> BroadcastInDimShape(Graph& g, OpKind op, const Value& x,
                                                std::vector<Extent>& xs, Attrs& attrs) {
  const auto& bd = attrs.broadcast_dims;
  if (static_cast<int>(bd.size()) != x.rank()) {
    return Bad(op, absl::StrCat("broadcast_dims has ", bd.size(),
                                " entries for an operand of rank ", x.rank()));
  }
  const int out_rank = static_cast<int>(attrs.shape.size());
  if (out_rank < x.rank()) {
    return Bad(op,
               absl::StrCat("output rank ", out_rank, " is below the operand's rank ", x.rank()));
  }
  for (size_t i = 0; i < bd.size(); ++i) {
    if (bd[i] < 0 || bd[i] >= out_rank) {
      return Bad(op, absl::StrCat("broadcast_dims[", i, "] = ", bd[i],
                                  " is out of range for output rank ", out_rank));
    }
    if (i > 0 && bd[i] <= bd[i - 1]) {
      return Bad(op, absl::StrCat("broadcast_dims [", absl::StrJoin(bd, ", "),
                                  "] must be strictly increasing"));
    }
  }
  for (const Extent& e : attrs.shape) {
    if (e.size < -1 || (e.size == -1 && e.symbol == kNone)) {
      return Bad(op, "output shape has a negative or unknown extent");
    }
  }
  for (size_t i = 0; i < bd.size(); ++i) {
    Extent want = attrs.shape[bd[i]];
    if (xs[i].is_broadcast() || g.SameExtent(xs[i], want)) continue;
    if (!g.UnifyExtents(xs[i], want)) {
      return Bad(op, absl::StrCat("operand axis ", i, " has extent ", g.ExtentName(xs[i]),
                                  " but output axis ", bd[i], " has extent ", g.ExtentName(want)));
    }
  }
  std::vector<Extent> shape = attrs.shape;
  for (Extent& e : shape) e = g.Canonical(e);
  attrs.shape = shape;
  return InferResult{{true, shape}};
}

// broadcast: a new extent-1 axis for every true entry of is_broadcast_dim.
absl::StatusOr<InferResult> BroadcastShape(Graph& g, OpKind op, const Value& x,
                                           std::vector<Extent>& xs, Attrs& attrs) {
  const auto& nb = attrs.is_broadcast_dim;
  int kept = static_cast<int>(std::count(nb.begin(), nb.end(), false));
  if (kept != x.rank()) {
    return Bad(op, absl::StrCat("is_broadcast_dim keeps ", kept, " axes for an operand of rank ",
                                x.rank()));
  }
  std::vector<Extent> shape;
  int j = 0;
  for (bool b : nb) shape.push_back(b ? Extent::Static(1) : xs[j++]);
  return InferResult{{true, shape}};
}

// expand: extent-1 axes grow to attrs.shape (-1 keeps an axis).
absl::StatusOr<InferResult> ExpandShape(Graph& g, OpKind op, const Value& x,
                                        std::vector<Extent>& xs, Attrs& attrs) {
  if (static_cast<int>(attrs.shape.size()) != x.rank()) {
    return Bad(op, absl::StrCat("shape has ", attrs.shape.size(),
                                " entries for an operand of rank ", x.rank()));
  }
  std::vector<Extent> shape = xs;
  for (int i = 0; i < x.rank(); ++i) {
    Extent want = attrs.shape[i];
    if (want.size == -1 && want.symbol == kNone) {
      // -1 keeps the axis: recorded as the operand's extent, so the printer
      // and the wire form never see the marker (it names no input axis).
      attrs.shape[i] = g.Canonical(xs[i]);
      continue;
    }
    if (xs[i].is_broadcast()) {
      shape[i] = g.Canonical(want);
    } else if (!g.UnifyExtents(xs[i], want)) {
      return Bad(op, absl::StrCat("axis ", i, " of extent ", g.ExtentName(xs[i]),
                                  " cannot expand to ", g.ExtentName(want)));
    }
  }
  for (Extent& e : shape) e = g.Canonical(e);
  return InferResult{{true, shape}};
}

// squeeze: drops the extent-1 axes attrs.dims (normalized in place).
absl::StatusOr<InferResult> SqueezeShape(Graph& g, OpKind op, const Value& x,
                                         std::vector<Extent>& xs, Attrs& attrs) {
  auto dims = NormalizeAxes(attrs.dims, x.rank());
  if (!dims.ok()) return Bad(op, std::string(dims.status().message()));
  attrs.dims = *dims;
  std::vector<Extent> shape;
  for (int i = 0; i < x.rank(); ++i) {
    if (std::binary_search(dims->begin(), dims->end(), i)) {
      if (!xs[i].is_broadcast()) {
        return Bad(op, absl::StrCat("axis ", i, " has extent ", g.ExtentName(xs[i]), ", not 1"));
      }
    } else {
      shape.push_back(xs[i]);
    }
  }
  return InferResult{{true, shape}};
}

// permute: output axis i is operand axis attrs.dims[i] (made non-negative
// in place).
absl::StatusOr<InferResult> PermuteShape(Graph& g, OpKind op, const Value& x,
                                         std::vector<Extent>& xs, Attrs& attrs) {
  if (static_cast<int>(attrs.dims.size()) != x.rank()) {
    return Bad(op, absl::StrCat("permutation has ", attrs.dims.size(),
                                " entries for an operand of rank ", x.rank()));
  }
  auto sorted = NormalizeAxes(attrs.dims, x.rank());
  if (!sorted.ok()) return Bad(op, std::string(sorted.status().message()));
  std::vector<Extent> shape;
  for (int64_t d : attrs.dims) shape.push_back(xs[d < 0 ? d + x.rank() : d]);
  for (int64_t& d : attrs.dims)
    if (d < 0) d += x.rank();
  return InferResult{{true, shape}};
}

// reshape to attrs.shape (canonicalized in place): the same number of
// elements, symbolic axes on both sides.
absl::StatusOr<InferResult> ReshapeShape(Graph& g, OpKind op, const Value& x,
                                         std::vector<Extent>& xs, Attrs& attrs) {
  std::vector<Extent> shape = attrs.shape;
  for (Extent& e : shape) {
    if (e.size < -1 || (e.size == -1 && e.symbol == kNone)) {
      return Bad(op, "new shape has a negative or unknown extent");
    }
    e = g.Canonical(e);
  }
  // Static sizes must agree in product; symbolic extents must appear on
  // both sides (reshape may regroup static axes and add or drop 1s).
  // The product of the static extents; false when it passes int64.
  auto split = [&](const std::vector<Extent>& s, int64_t* prod, std::vector<SymbolId>* syms) {
    *prod = 1;
    bool fits = true;
    for (const Extent& e : s) {
      if (e.is_static())
        fits = !__builtin_mul_overflow(*prod, e.size, prod) && fits;
      else
        syms->push_back(e.symbol);
    }
    std::sort(syms->begin(), syms->end());
    return fits;
  };
  int64_t pin, pout;
  std::vector<SymbolId> sin, sout;
  split(xs, &pin, &sin);
  if (!split(shape, &pout, &sout)) {
    return Bad(op, "the new shape's static extents multiply past the int64 range");
  }
  if (sin != sout && pin != 0 && pout != 0) {
    // One symbolic axis split into (or merged from) static factors: the
    // symbol must equal the quotient of the static products, so it is
    // bound to it ([s0, s1] -> [8, 16, s1] binds s0 to 128).
    std::vector<SymbolId> only_in, only_out;
    std::set_difference(sin.begin(), sin.end(), sout.begin(), sout.end(),
                        std::back_inserter(only_in));
    std::set_difference(sout.begin(), sout.end(), sin.begin(), sin.end(),
                        std::back_inserter(only_out));
    const bool in_side = only_in.size() == 1 && only_out.empty();
    const bool out_side = only_out.size() == 1 && only_in.empty();
    const int64_t num = in_side ? pout : pin, den = in_side ? pin : pout;
    if ((in_side || out_side) && num % den == 0) {
      g.UnifyExtents(Extent::Symbolic(in_side ? only_in[0] : only_out[0]),
                     Extent::Static(num / den));
      for (Extent& e : xs) e = g.Canonical(e);
      for (Extent& e : shape) e = g.Canonical(e);
      sin.clear();
      sout.clear();
      split(xs, &pin, &sin);
      split(shape, &pout, &sout);
    }
  }
  if (pin != pout || sin != sout) {
    return Bad(op, absl::StrCat("cannot reshape ", x.rank(),
                                "-d operand to a shape with a different number of elements (or "
                                "regroup symbolic axes)"));
  }
  attrs.shape = shape;
  return InferResult{{true, shape}};
}

}  // namespace

absl::StatusOr<std::vector<ValueId>> GraphBuilder::AddNode(OpKind op, std::vector<ValueId> in,
                                                           Attrs attrs) {
  if (std::string_view(OpName(op)) == "invalid_op") {
    return absl::InvalidArgumentError(absl::StrCat("unknown op code ", static_cast<int>(op)));
  }
  if (static_cast<int>(g_->nodes.size()) >= limits_.max_nodes) {
    return Bad(op, absl::StrCat("the graph exceeds the limit of ", limits_.max_nodes, " nodes"));
  }
  if (op == OpKind::kCat) {  // variadic
    if (in.empty()) return Bad(op, "takes a list of at least one tensor, got none");
  } else if (static_cast<int>(in.size()) != Arity(op)) {
    return Bad(op, absl::StrCat("takes ", Arity(op), " operand(s), got ", in.size()));
  }
  for (ValueId v : in) {
    if (absl::Status s = CheckValue(v, std::string(OpName(op)).c_str()); !s.ok()) {
      return s;
    }
  }
  std::vector<DataType> dtypes;
  auto shapes = InferShape(op, in, attrs, dtypes);
  if (!shapes.ok()) return shapes.status();
  for (const auto& [is_tensor, shape] : *shapes) {
    if (absl::Status s = CheckShapeSize(shape); !s.ok()) {
      return Bad(op, std::string(s.message()));
    }
  }

  Node node;
  node.id = static_cast<NodeId>(g_->nodes.size());
  node.op = op;
  node.inputs = std::move(in);
  node.attrs = std::move(attrs);
  for (size_t i = 0; i < shapes->size(); ++i) {
    ValueId out = NewValue("", (*shapes)[i].first, dtypes[i], (*shapes)[i].second);
    g_->value(out).def = node.id;
    node.outputs.push_back(out);
  }
  g_->nodes.push_back(std::move(node));
  return g_->nodes.back().outputs;
}

absl::StatusOr<std::vector<std::pair<bool, std::vector<Extent>>>> GraphBuilder::InferShape(
    OpKind op, const std::vector<ValueId>& in, Attrs& attrs, std::vector<DataType>& dtypes) {
  using Result = std::vector<std::pair<bool, std::vector<Extent>>>;
  const OpCategory cat = CategoryOf(op);
  const Value& x = g_->value(in[0]);
  const bool tensor = AnyTensor(*g_, in);

  if (cat == OpCategory::kUnary) {
    DataType t = x.dtype;
    if (IsPredicateOp(op)) {
      t = DataType::kBool;
    } else if (op == OpKind::kBitwiseNot) {
      if (IsFloatingPoint(t))
        return Bad(op, "operand is floating point; bitwise ops take integers or bools");
    } else if (IsFloatOnlyUnary(op) && !IsFloatingPoint(t)) {
      t = DefaultFloat(x.is_tensor);
    } else if (t == DataType::kBool && op != OpKind::kAbs) {
      return Bad(op, "operand is bool; cast it to a numeric type first");
    }
    dtypes = {t};
    return Result{{x.is_tensor, x.shape}};
  }
  if (cat == OpCategory::kBinary || cat == OpCategory::kTernary) {
    auto shape = BroadcastShapes(op, in);
    if (!shape.ok()) return shape.status();
    std::vector<ValueId> data = in;
    if (op == OpKind::kWhere) data.erase(data.begin());  // where's condition
    DataType t = PromoteOperands(*g_, data);
    if (IsBitwiseOp(op)) {
      const bool shift = op == OpKind::kBitwiseLeftShift || op == OpKind::kBitwiseRightShift;
      for (ValueId v : in) {
        const DataType vt = g_->value(v).dtype;
        if (IsFloatingPoint(vt) || (shift && !IsIntegral(vt))) {
          return Bad(op, absl::StrCat("an operand is ", DataTypeName(vt), "; ",
                                      shift ? "shifts take integers"
                                            : "bitwise ops take integers or bools"));
        }
      }
    } else if (IsPredicateOp(op)) {
      t = DataType::kBool;
    } else if (op == OpKind::kAtan2 && !IsFloatingPoint(t)) {
      t = DefaultFloat(tensor);
    } else if (op == OpKind::kDiv && !IsFloatingPoint(t) && (tensor || !IsIntegral(t))) {
      t = DefaultFloat(tensor);  // true division, as in PyTorch
      // Integer scalars (sizes) divide as nvFuser's do: an integer, rounded
      // toward zero (fd.ops.div(T0.size(1), 32) for group norm's shapes).
    } else if (t == DataType::kBool && op != OpKind::kWhere) {
      return Bad(op, "the operands are bool; cast them to a numeric type first");
    }
    dtypes = {t};
    return Result{{tensor, *shape}};
  }
  if (cat == OpCategory::kCast) {
    if (!attrs.dtype) return Bad(op, "needs a target dtype");
    dtypes = {*attrs.dtype};
    return Result{{x.is_tensor, x.shape}};
  }
  if (cat == OpCategory::kSize) {
    if (!x.is_tensor) return Bad(op, "operand is a scalar, not a tensor");
    if (attrs.axis < -x.rank() || attrs.axis >= x.rank()) {
      return Bad(op, absl::StrCat("axis ", attrs.axis, " is out of range for rank ", x.rank()));
    }
    if (attrs.axis < 0) attrs.axis += x.rank();
    dtypes = {DataType::kInt64};
    return Result{{false, {}}};
  }
  if (cat == OpCategory::kIndexed) return InferIndexed(op, in, attrs, dtypes);
  if (cat == OpCategory::kShift) return InferShift(op, in, attrs, dtypes);
  // broadcast_in_dim of a scalar (no broadcast_dims) fills a tensor with it:
  // what fd.ops.full / zeros / ones become.
  if (!x.is_tensor && op != OpKind::kBroadcastInDim) {
    return Bad(op, "operand is a scalar, not a tensor");
  }

  if (cat == OpCategory::kReduction || cat == OpCategory::kVarMean) {
    return InferReduction(*g_, op, x, attrs, dtypes);
  }

  // Shape ops.
  dtypes = {x.dtype};
  std::vector<Extent> xs = x.shape;
  for (Extent& e : xs) e = g_->Canonical(e);
  switch (op) {
    case OpKind::kBroadcastInDim:
      return BroadcastInDimShape(*g_, op, x, xs, attrs);
    case OpKind::kBroadcast:
      return BroadcastShape(*g_, op, x, xs, attrs);
    case OpKind::kExpand:
      return ExpandShape(*g_, op, x, xs, attrs);
    case OpKind::kSqueeze:
      return SqueezeShape(*g_, op, x, xs, attrs);
    case OpKind::kPermute:
      return PermuteShape(*g_, op, x, xs, attrs);
    case OpKind::kReshape:
      return ReshapeShape(*g_, op, x, xs, attrs);
    default:
      return Bad(op, "unsupported op");
  }
}

}  // namespace fusiond
