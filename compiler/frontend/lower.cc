#include "compiler/frontend/lower.h"

#include "absl/strings/str_cat.h"
#include "compiler/frontend/definition.h"

namespace fusiond {
namespace frontend {

absl::Status LowerModule(const Module& module, const ErrorReporter& errors,
                         const GraphLimits& limits, ParsedFusion* out) {
  DefinitionLowering lowering(&out->graph, errors, limits);
  // Sizes computed by scalar arithmetic (fd.ops.mul(T0.size(0), T0.size(1)))
  // take their values from the inputs list, read ahead of the definition;
  // its errors are reported where they were, after the definition.
  std::vector<InputSpec> concrete;
  for (const Stmt& st : module.statements) {
    if (st.kind == Stmt::Kind::kAssign && st.targets.size() == 1 &&
        st.targets[0].name == "inputs" && st.value->kind == Expr::Kind::kList) {
      auto ahead = ReadInputList(*st.value, errors);
      if (ahead.ok()) {
        for (LocatedInput& in : *ahead) concrete.push_back(std::move(in.spec));
      }
      break;
    }
  }
  lowering.SetConcreteInputs(std::move(concrete));
  const Stmt* inputs_stmt = nullptr;
  for (const Stmt& st : module.statements) {
    // `inputs = [...]`: the concrete inputs, read after the definition.
    if (st.kind == Stmt::Kind::kAssign && st.targets.size() == 1 &&
        st.targets[0].name == "inputs" && st.value->kind == Expr::Kind::kList) {
      if (inputs_stmt != nullptr) {
        return errors.Error(st.loc, "a second inputs list",
                            absl::StrCat("one `inputs = [...]` (the first is at line ",
                                         inputs_stmt->loc.line, ")"));
      }
      inputs_stmt = &st;
      continue;
    }
    if (absl::Status s = lowering.Statement(st); !s.ok()) return s;
  }
  lowering.NameRemainingValues();
  Graph& g = out->graph;
  if (!lowering.saw_definition()) {
    return errors.Error(module.statements.empty() ? module.end : module.statements[0].loc,
                        "no fusion definition found",
                        "fd.define_tensor(...), fd.ops.<op>(...) and fd.add_output(...) "
                        "statements");
  }
  if (g.outputs.empty()) {
    return errors.Error(lowering.definition_loc(), "the fusion has no outputs",
                        "at least one fd.add_output(T)");
  }
  if (inputs_stmt != nullptr) {
    auto inputs = ReadInputList(*inputs_stmt->value, errors);
    if (!inputs.ok()) return inputs.status();
    if (absl::Status s = CheckInputList(g, *inputs, inputs_stmt->value->loc, errors, limits);
        !s.ok()) {
      return s;
    }
    for (const LocatedInput& in : *inputs) {
      out->inputs.push_back(in.spec);
      out->input_shapes.push_back(in.spec.generator == "scalar" ? std::vector<int64_t>{}
                                                                : in.spec.shape);
    }
    return absl::OkStatus();
  }
  // No list: the static sizes, when every tensor input is fully static.
  std::vector<std::vector<int64_t>> shapes;
  for (ValueId id : g.inputs) {
    std::vector<int64_t> shape;
    for (const Extent& e : g.value(id).shape) {
      const Extent c = g.Canonical(e);
      if (!c.is_static()) return absl::OkStatus();
      shape.push_back(c.size);
    }
    shapes.push_back(std::move(shape));
  }
  out->input_shapes = std::move(shapes);
  return absl::OkStatus();
}

}  // namespace frontend
}  // namespace fusiond
