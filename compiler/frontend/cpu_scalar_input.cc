#include "compiler/frontend/cpu_scalar_input.h"

#include "absl/strings/str_cat.h"

namespace fusiond {
namespace frontend {

absl::StatusOr<InputSpec> TorchTensorEntry(
    const Expr& e, const ErrorReporter& errors,
    const std::function<absl::StatusOr<double>(const Expr&)>& number,
    const std::function<absl::StatusOr<DataType>(const Expr&)>& dtype) {
  constexpr const char* kForm = "torch.tensor(x, dtype=torch.<type>) with a number x";
  if (e.num_args() != 1) return errors.Error(e.loc, "torch.tensor takes one number", kForm);
  InputSpec s;
  s.generator = "full";  // shape {}: one element, the value
  const Expr& x = e.arg(0);
  if (x.kind == Expr::Kind::kBool) {
    s.value = static_cast<double>(x.int_value);
    s.dtype = DataType::kBool;
  } else {
    auto v = number(x);
    if (!v.ok()) return errors.Error(x.loc, "torch.tensor of something other than a number", kForm);
    s.value = *v;
    const bool integer = x.kind == Expr::Kind::kInt ||
                         (x.kind == Expr::Kind::kUnary && x.operands[0]->kind == Expr::Kind::kInt);
    s.dtype = integer ? DataType::kInt64 : DataType::kFloat;
  }
  for (const Keyword& k : e.keywords) {
    if (k.name == "dtype") {
      auto t = dtype(*k.value);
      if (!t.ok()) return t.status();
      s.dtype = *t;
    } else if (k.name != "device" && k.name != "requires_grad") {
      return errors.Error(
          k.loc, absl::StrCat("unexpected keyword argument '", k.name, "' for torch.tensor"),
          kForm);
    }
  }
  return s;
}

absl::Status CheckCpuScalarEntry(DataType t, const InputSpec& s, Location at,
                                 const std::string& who, const ErrorReporter& errors) {
  if (s.generator != "scalar" && s.shape.empty() && s.generator != "softmax" && s.strides.empty() &&
      s.dtype == t) {
    return absl::OkStatus();
  }
  return errors.Error(at, absl::StrCat(who, " is a 0-dim CPU tensor of type ", DataTypeName(t)),
                      absl::StrCat("torch.tensor(x, dtype=torch.", DataTypeName(t),
                                   ") or torch.randn((), dtype=torch.", DataTypeName(t), ")"));
}

}  // namespace frontend
}  // namespace fusiond
