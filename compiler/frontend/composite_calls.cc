// DefinitionLowering::CompositeOp: fd.ops calls that nvFuser's front end
// offers and front ends print, lowered to IR ops (no op of their own):
//   set(x), segment_set(x)          the value itself (a copy / a segmentation
//                                   hint in nvFuser; the segmenter decides here)
//   lerp(start, end, weight)        ATen's two-branch form: |w| < 0.5 ?
//                                   start + w (end - start) : end - (end - start) (1 - w)
//   addcmul(x, t1, t2, value)       x + value * t1 * t2
//   threshold(x, threshold, value)  x <= threshold ? value : x
//   shape(x), at(shape, index)      x's sizes as a list, one entry of it
//   stride_order(x, stride_order)   the value itself (outputs are contiguous)
// lerp and addcmul compute 16- and 8-bit float operands in float32 and round
// once to the promoted type, as ATen's (and so eager's and Inductor's) do.
// Ops that are out of scope (matmuls, attention, gathers and scatters) are
// refused here, naming the op and why.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/frontend/definition.h"
#include "compiler/ir/printer.h"

namespace fusiond {
namespace frontend {
namespace {

using K = PyValue::Kind;

// Why an nvFuser op is out of scope here, or nullptr for other names.
const char* OutOfScope(const std::string& name) {
  static const std::pair<const char*, const char*> kOps[] = {
      {"matmul", "matrix multiplication"},
      {"linear", "matrix multiplication"},
      {"sdpfa_fwd", "fused attention"},
      {"sdpfa_bwd", "fused attention"},
      {"embedding_fwd", "an embedding gather"},
      {"index_select", "a gather"},
      {"gather", "a gather"},
      {"take_along_axis", "a gather"},
      {"select", "an indexed select"},
      {"scatter", "a scatter"},
      {"index_put_accumulate", "a scatter"},
      {"argsort", "a sort"},
      {"topk", "a sort"},
      {"grouped_mm", "matrix multiplication"},
      {"scaled_mm", "matrix multiplication"},
      {"cutlass_nvfp4_grouped_mm", "matrix multiplication"},
      {"cumsum", "a scan"},
      {"cumprod", "a scan"},
      {"cummax", "a scan"},
      {"cummin", "a scan"},
      {"real", "complex arithmetic"},
      {"imag", "complex arithmetic"},
      {"nextafter", "stepping a float's bit pattern"},
  };
  for (const auto& [op, what] : kOps) {
    if (name == op) return what;
  }
  return nullptr;
}

bool IsReducedFloat(DataType t) { return IsFloatingPoint(t) && ComputeType(t) != t; }

}  // namespace

bool IsPermutation(const std::vector<int64_t>& order, int rank) {
  std::vector<bool> seen(rank, false);
  for (int64_t a : order) {
    if (a < 0 || a >= rank || seen[a]) return false;
    seen[a] = true;
  }
  return static_cast<int>(order.size()) == rank;
}

namespace {}  // namespace

std::optional<absl::StatusOr<PyValue>> DefinitionLowering::CompositeOp(const Expr& call,
                                                                       const Expr& op_name) {
  const std::string& name = op_name.text;
  const std::string fname = absl::StrCat("fd.ops.", name);
  if (const char* what = OutOfScope(name)) {
    return absl::StatusOr<PyValue>(
        errors_.Error(op_name.loc,
                      absl::StrCat(fname, " is out of scope: ", what,
                                   " is left to the caller (run it outside the fusion)"),
                      "pointwise ops, casts, broadcasts, reductions, norms and softmax"));
  }
  if (name == "shape" || name == "at" || name == "stride_order") return ShapeQuery(call, name);
  std::vector<std::string> params;
  size_t required = 0;
  if (name == "set" || name == "segment_set") {
    params = {"x"};
    required = 1;
  } else if (name == "lerp") {
    params = {"start", "end", "weight"};
    required = 3;
  } else if (name == "addcmul") {
    params = {"x", "tensor1", "tensor2", "value"};
    required = 3;
  } else if (name == "threshold") {
    params = {"x", "threshold", "value"};
    required = 3;
  } else {
    return std::nullopt;
  }
  auto args = BindArguments(call, fname, params, required, errors_);
  if (!args.ok()) return absl::StatusOr<PyValue>(args.status());
  std::vector<ValueId> x;
  for (const Expr* a : *args) {
    if (a == nullptr) {
      x.push_back(b_.DefineConstant(1, DataType::kDouble));  // addcmul's value
      continue;
    }
    auto v = Operand(*a);
    if (!v.ok()) return absl::StatusOr<PyValue>(v.status());
    x.push_back(*v);
  }
  auto out = CompositeValue(name, x);
  if (!out.ok()) {
    return absl::StatusOr<PyValue>(
        errors_.At(call.loc, out.status(),
                   absl::StrCat(fname, "(", absl::StrJoin(params, ", "),
                                ") with operands of equal rank (or scalars) that broadcast")));
  }
  PyValue v;
  v.kind = K::kValue;
  v.id = *out;
  return absl::StatusOr<PyValue>(v);
}

// fd.ops.shape(T): T's sizes, a list of size scalars; fd.ops.at(V, index):
// entry index (negative from the end) of such a list; fd.ops.stride_order(T,
// stride_order): T itself (a layout request: outputs here are contiguous).
absl::StatusOr<PyValue> DefinitionLowering::ShapeQuery(const Expr& call, const std::string& name) {
  const std::string fname = absl::StrCat("fd.ops.", name);
  std::vector<std::string> params = {"arg"};
  if (name == "at") params.push_back("index");
  if (name == "stride_order") params.push_back("stride_order");
  auto args = BindArguments(call, fname, params, params.size(), errors_);
  if (!args.ok()) return args.status();
  const Expr& arg = *(*args)[0];
  auto v = Eval(arg);
  if (!v.ok()) return v.status();
  if (name == "at") {
    auto index = IntArg(*(*args)[1], "index");
    if (!index.ok()) return index.status();
    const int64_t n = v->kind == K::kExtents ? static_cast<int64_t>(v->extents.size())
                                             : static_cast<int64_t>(v->items.size());
    if ((v->kind != K::kList && v->kind != K::kTuple && v->kind != K::kExtents) || *index < -n ||
        *index >= n) {
      return errors_.Error((*args)[1]->loc,
                           absl::StrCat(fname, " of ", DescribeValue(*g_, *v), " at ", *index),
                           "a shape from fd.ops.shape(T) and an index within its length");
    }
    const int64_t k = *index < 0 ? *index + n : *index;
    if (v->kind != K::kExtents) return v->items[k];
    if (!v->extents[k].is_static()) {
      return errors_.Error(arg.loc, "fd.ops.at of a symbolic entry of T.shape()",
                           "fd.ops.at(fd.ops.shape(T), index)");
    }
    PyValue size;
    size.kind = K::kInt;
    size.i = v->extents[k].size;
    return size;
  }
  if (v->kind != K::kValue || !g_->value(v->id).is_tensor) {
    return errors_.Error(arg.loc, absl::StrCat(fname, " of ", DescribeValue(*g_, *v)), "a tensor");
  }
  const int rank = g_->value(v->id).rank();
  if (name == "stride_order") {
    auto order = IntList(*(*args)[1], "stride_order", false);
    if (!order.ok()) return order.status();
    if (!IsPermutation(*order, rank)) {
      return errors_.Error((*args)[1]->loc, "stride_order is not a permutation of the axes",
                           absl::StrCat("each of 0..", rank - 1, " once"));
    }
    return *v;
  }
  PyValue list;
  list.kind = K::kList;
  for (int a = 0; a < rank; ++a) {
    auto size = SizeAt(call, v->id, a);
    if (!size.ok()) return size.status();
    list.items.push_back(*size);
  }
  return list;
}

absl::StatusOr<ValueId> DefinitionLowering::CompositeValue(const std::string& name,
                                                           std::vector<ValueId> x) {
  if (name == "set" || name == "segment_set") return x[0];
  if (name == "threshold") {
    auto le = b_.Binary(OpKind::kLe, x[0], x[1]);
    if (!le.ok()) return le.status();
    return b_.Where(*le, x[2], x[0]);
  }
  // lerp, addcmul: 16- and 8-bit floats computed in float32.
  std::optional<DataType> target;
  for (ValueId& v : x) {
    const Value& val = g_->value(v);
    if (!val.is_tensor) continue;
    target = target ? PromoteTypes(*target, val.dtype) : val.dtype;
    if (IsReducedFloat(val.dtype)) {
      auto c = b_.Cast(v, DataType::kFloat);
      if (!c.ok()) return c.status();
      v = *c;
    }
  }
  absl::StatusOr<ValueId> r;
  if (name == "addcmul") {
    auto a = b_.Binary(OpKind::kMul, x[3], x[1]);
    if (!a.ok()) return a.status();
    auto b = b_.Binary(OpKind::kMul, *a, x[2]);
    if (!b.ok()) return b.status();
    r = b_.Binary(OpKind::kAdd, x[0], *b);
  } else {  // lerp
    auto diff = b_.Binary(OpKind::kSub, x[1], x[0]);
    if (!diff.ok()) return diff.status();
    auto abs_w = b_.Unary(OpKind::kAbs, x[2]);
    if (!abs_w.ok()) return abs_w.status();
    auto small = b_.Binary(OpKind::kLt, *abs_w, b_.DefineConstant(0.5, DataType::kDouble));
    if (!small.ok()) return small.status();
    auto wd = b_.Binary(OpKind::kMul, x[2], *diff);
    if (!wd.ok()) return wd.status();
    auto lo = b_.Binary(OpKind::kAdd, x[0], *wd);
    if (!lo.ok()) return lo.status();
    auto rest = b_.Binary(OpKind::kSub, b_.DefineConstant(1, DataType::kDouble), x[2]);
    if (!rest.ok()) return rest.status();
    auto dr = b_.Binary(OpKind::kMul, *diff, *rest);
    if (!dr.ok()) return dr.status();
    auto hi = b_.Binary(OpKind::kSub, x[1], *dr);
    if (!hi.ok()) return hi.status();
    r = b_.Where(*small, *lo, *hi);
  }
  if (!r.ok() || !target || !IsReducedFloat(*target)) return r;
  return b_.Cast(*r, *target);
}

}  // namespace frontend
}  // namespace fusiond
