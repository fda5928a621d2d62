// DefinitionLowering::FactoryOp: tensors made from nothing but sizes and
// scalars. fd.ops.full(shape, fill_value, dtype), zeros(shape, dtype) and
// ones(shape, dtype) become broadcast_in_dim of the (cast) fill scalar to the
// shape, so every later stage sees an ordinary broadcast; iota and the random
// ops (uniform, normal, rand_like, randn_like) are ops of their own.
#include "absl/strings/str_cat.h"
#include "compiler/frontend/definition.h"
#include "compiler/ir/printer.h"

namespace fusiond {
namespace frontend {

std::optional<absl::StatusOr<PyValue>> DefinitionLowering::FactoryOp(const Expr& call,
                                                                     const Expr& op_name) {
  const std::string& name = op_name.text;
  if (auto composite = CompositeOp(call, op_name)) return composite;
  if (auto math = MathOp(call, op_name)) return math;
  if (auto arith = ArithmeticOp(call, op_name)) return arith;
  if (auto welford = WelfordOp(call, op_name)) return welford;
  if (name == "uniform" || name == "normal" || name == "rand_like" || name == "randn_like") {
    return RandomOp(call, op_name);
  }
  if (name == "iota") return IotaOp(call, op_name);
  if (name == "slice" || name == "pad" || name == "cat") return ShiftOp(call, op_name);
  if (name != "full" && name != "zeros" && name != "ones") return std::nullopt;
  const std::string fname = absl::StrCat("fd.ops.", name);
  const bool full = name == "full";
  auto args = BindArguments(call, fname,
                            full ? std::vector<std::string>{"shape", "fill_value", "dtype"}
                                 : std::vector<std::string>{"shape", "dtype"},
                            full ? 2 : 1, errors_);
  if (!args.ok()) return absl::StatusOr<PyValue>(args.status());
  auto shape = ShapeArg(*(*args)[0], false);
  if (!shape.ok()) return absl::StatusOr<PyValue>(shape.status());
  std::optional<DataType> dtype;
  if (const Expr* d = (*args)[full ? 2 : 1]) {
    auto t = DTypeArg(*d, false);
    if (!t.ok()) return absl::StatusOr<PyValue>(t.status());
    dtype = *t;
  }
  ValueId fill;
  if (full) {
    auto v = Operand(*(*args)[1]);
    if (!v.ok()) return absl::StatusOr<PyValue>(v.status());
    if (g_->value(*v).is_tensor) {
      return absl::StatusOr<PyValue>(errors_.Error(
          (*args)[1]->loc, absl::StrCat("fill_value is ", ValueName(*g_, *v), ", a tensor"),
          "a number or a scalar"));
    }
    fill = *v;
  } else {
    fill = b_.DefineConstant(name == "ones" ? 1 : 0, dtype.value_or(DataType::kFloat));
  }
  if (dtype && g_->value(fill).dtype != *dtype) {
    auto c = b_.Cast(fill, *dtype);
    if (!c.ok()) return absl::StatusOr<PyValue>(errors_.At(call.loc, c.status()));
    fill = *c;
  }
  auto out = b_.BroadcastInDim(fill, *shape, {});
  if (!out.ok()) return absl::StatusOr<PyValue>(errors_.At(call.loc, out.status()));
  PyValue v;
  v.kind = PyValue::Kind::kValue;
  v.id = *out;
  return absl::StatusOr<PyValue>(v);
}

// fd.ops.iota(length, start, step, dtype): [length] with element i
// start + step * i (start 0, step 1, dtype Int by default).
absl::StatusOr<PyValue> DefinitionLowering::IotaOp(const Expr& call, const Expr& op_name) {
  auto args = BindArguments(call, "fd.ops.iota", {"length", "start", "step", "dtype"}, 1, errors_);
  if (!args.ok()) return args.status();
  const std::vector<const Expr*>& a = *args;
  auto length = Eval(*a[0]);
  if (!length.ok()) return length.status();
  auto extent = ExtentArg(*length, *a[0], false);
  if (!extent.ok()) return extent.status();
  Attrs attrs;
  attrs.shape = {*extent};
  attrs.dtype = DataType::kInt64;
  if (const Expr* d = a[3]) {
    auto t = DTypeArg(*d, false);
    if (!t.ok()) return t.status();
    attrs.dtype = **t;
  }
  const DataType t = *attrs.dtype;
  std::vector<ValueId> operands;
  for (int k = 1; k <= 2; ++k) {
    if (a[k] == nullptr) {
      operands.push_back(
          b_.DefineConstant(k == 1 ? 0 : 1, IsIntegral(t) ? DataType::kInt64 : DataType::kDouble));
      continue;
    }
    auto v = Operand(*a[k]);
    if (!v.ok()) return v.status();
    operands.push_back(*v);
  }
  auto outs = b_.AddNode(OpKind::kIota, operands, attrs);
  if (!outs.ok()) {
    return errors_.At(call.loc, outs.status(),
                      "a length (a number or a size), scalar start and step, a numeric dtype");
  }
  PyValue v;
  v.kind = PyValue::Kind::kValue;
  v.id = (*outs)[0];
  return v;
}

// fd.ops.uniform(minval, maxval, shape, rng_seed, rng_offset, dtype),
// normal(mean, std, shape, ...), rand_like(x, rng_seed, rng_offset) and
// randn_like (x's shape and dtype). Without rng_seed / rng_offset a random op
// takes seed 0 and, as offset, how many such ops came before it in the
// definition: distinct streams, the same numbers at every launch.
absl::StatusOr<PyValue> DefinitionLowering::RandomOp(const Expr& call, const Expr& op_name) {
  const std::string& name = op_name.text;
  const std::string fname = absl::StrCat("fd.ops.", name);
  const bool like = name == "rand_like" || name == "randn_like";
  const bool uniform = name == "uniform" || name == "rand_like";
  std::vector<std::string> params = like ? std::vector<std::string>{"arg", "rng_seed", "rng_offset"}
                                         : std::vector<std::string>{uniform ? "minval" : "mean",
                                                                    uniform ? "maxval" : "std",
                                                                    "shape",
                                                                    "rng_seed",
                                                                    "rng_offset",
                                                                    "dtype"};
  auto args = BindArguments(call, fname, params, like ? 1 : 3, errors_);
  if (!args.ok()) return args.status();
  const std::vector<const Expr*>& a = *args;
  Attrs attrs;
  std::vector<ValueId> operands;
  if (like) {
    auto x = Operand(*a[0]);
    if (!x.ok()) return x.status();
    const Value& xv = g_->value(*x);
    if (!xv.is_tensor) {
      return errors_.Error(a[0]->loc, absl::StrCat(fname, " of ", ValueName(*g_, *x), ", a scalar"),
                           "a tensor whose shape and dtype the result takes");
    }
    attrs.shape = xv.shape;
    attrs.dtype = xv.dtype;
    operands = {b_.DefineConstant(0, DataType::kDouble), b_.DefineConstant(1, DataType::kDouble)};
  } else {
    for (int k = 0; k < 2; ++k) {
      auto v = Operand(*a[k]);
      if (!v.ok()) return v.status();
      operands.push_back(*v);
    }
    auto shape = ShapeArg(*a[2], false);
    if (!shape.ok()) return shape.status();
    attrs.shape = *shape;
    attrs.dtype = DataType::kFloat;
    if (const Expr* d = a[5]) {
      auto t = DTypeArg(*d, false);
      if (!t.ok()) return t.status();
      attrs.dtype = **t;
    }
  }
  const int seed_arg = like ? 1 : 3;
  if ((a[seed_arg] == nullptr) != (a[seed_arg + 1] == nullptr)) {
    const Expr* given = a[seed_arg] ? a[seed_arg] : a[seed_arg + 1];
    return errors_.Error(given->loc, absl::StrCat(fname, " has only one of rng_seed, rng_offset"),
                         "both (integer scalars) or neither");
  }
  if (a[seed_arg] == nullptr) {
    operands.push_back(b_.DefineConstant(0, DataType::kInt64));
    operands.push_back(b_.DefineConstant(unseeded_random_ops_++, DataType::kInt64));
  } else {
    for (int k = seed_arg; k <= seed_arg + 1; ++k) {
      auto v = Operand(*a[k]);
      if (!v.ok()) return v.status();
      operands.push_back(*v);
    }
  }
  auto outs = b_.AddNode(uniform ? OpKind::kUniform : OpKind::kNormal, operands, attrs);
  if (!outs.ok()) {
    return errors_.At(call.loc, outs.status(),
                      "scalar parameters, integer rng_seed and rng_offset, a shape and a "
                      "floating dtype (Float, Double, Half, BFloat16)");
  }
  PyValue v;
  v.kind = PyValue::Kind::kValue;
  v.id = (*outs)[0];
  return v;
}

}  // namespace frontend
}  // namespace fusiond
