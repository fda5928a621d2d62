// DefinitionLowering::FactoryOp: tensors made from nothing but sizes and a
// value. fd.ops.full(shape, fill_value, dtype), zeros(shape, dtype) and
// ones(shape, dtype) become broadcast_in_dim of the (cast) fill scalar to the
// shape, so every later stage sees an ordinary broadcast.
#include "absl/strings/str_cat.h"
#include "compiler/frontend/definition.h"
#include "compiler/ir/printer.h"

namespace fusiond {
namespace frontend {

std::optional<absl::StatusOr<PyValue>> DefinitionLowering::FactoryOp(const Expr& call,
                                                                     const Expr& op_name) {
  const std::string& name = op_name.text;
  if (name == "iota" || name == "uniform" || name == "normal" || name == "rand_like" ||
      name == "randn_like" || name == "slice" || name == "pad" || name == "cat") {
    return absl::StatusOr<PyValue>(errors_.Error(
        op_name.loc,
        absl::StrCat("fd.ops.", name,
                     " (an op whose values depend on the element's index) is not supported"),
        "full, zeros, ones, or ops over the fusion's tensors"));
  }
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

}  // namespace frontend
}  // namespace fusiond
