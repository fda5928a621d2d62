// DefinitionLowering::WelfordOp: fd.ops.welford(x, dims), which nvFuser's
// direct-bindings repro printer writes for every var_mean (it prints the
// fusion's own IR, where var_mean is a Welford reduction followed by
// var_sum / (count - correction) in scalar ops on sizes). Its three results
// are the mean, the sum of squared deviations (var_sum) and the count as an
// int64 tensor of the mean's shape. Lowered to the IR's var_mean with
// correction 0: var_sum = var * count, count the product of the reduced
// axes' sizes.
#include "absl/strings/str_cat.h"
#include "compiler/frontend/definition.h"
#include "compiler/ir/printer.h"

namespace fusiond {
namespace frontend {
std::optional<absl::StatusOr<PyValue>> DefinitionLowering::WelfordOp(const Expr& call,
                                                                     const Expr& op_name) {
  if (op_name.text != "welford") return std::nullopt;
  using R = absl::StatusOr<PyValue>;
  auto args = BindArguments(call, "fd.ops.welford", {"x", "dims"}, 2, errors_);
  if (!args.ok()) return R(args.status());
  auto x = Operand(*(*args)[0]);
  if (!x.ok()) return R(x.status());
  const Value& xv = g_->value(*x);
  if (!xv.is_tensor || !IsFloatingPoint(xv.dtype)) {
    return R(errors_.Error((*args)[0]->loc,
                           absl::StrCat("fd.ops.welford of ", DescribeValue(*g_, ValueOf(*x))),
                           "a floating-point tensor"));
  }
  auto dims = IntList(*(*args)[1], "dims", true);
  if (!dims.ok()) return R(dims.status());
  Attrs attrs;
  attrs.dims = *dims;
  attrs.correction = 0;
  auto outs = b_.AddNode(OpKind::kVarMean, {*x}, attrs);
  if (!outs.ok()) {
    return R(errors_.At(call.loc, outs.status(), "dims naming axes of x, each once"));
  }
  const ValueId var = (*outs)[0];
  const ValueId mean = (*outs)[1];
  // The builder normalized the dims (negative ones, order).
  const std::vector<int64_t> reduced = g_->nodes.back().attrs.dims;
  ValueId count = b_.DefineConstant(1, DataType::kInt64);
  for (int64_t d : reduced) {
    auto size = SizeAt(call, *x, d);
    if (!size.ok()) return R(size.status());
    auto m = b_.Binary(OpKind::kMul, count, size->id);
    if (!m.ok()) return R(errors_.At(call.loc, m.status(), "fd.ops.welford(x, dims)"));
    count = *m;
  }
  auto var_sum = b_.Binary(OpKind::kMul, var, count);
  if (!var_sum.ok()) return R(errors_.At(call.loc, var_sum.status(), "fd.ops.welford(x, dims)"));
  auto n = b_.BroadcastInDim(count, g_->value(mean).shape, {});
  if (!n.ok()) return R(errors_.At(call.loc, n.status(), "fd.ops.welford(x, dims)"));
  PyValue tuple;
  tuple.kind = PyValue::Kind::kTuple;
  tuple.items = {ValueOf(mean), ValueOf(*var_sum), ValueOf(*n)};
  return R(tuple);
}

}  // namespace frontend
}  // namespace fusiond
