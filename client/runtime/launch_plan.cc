#include "client/runtime/launch_plan.h"

#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fusiond {
namespace runtime {

int64_t NumElements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string ShapeToString(const Shape& s) { return absl::StrCat("[", absl::StrJoin(s, ", "), "]"); }

namespace {

absl::StatusOr<Shape> EvalShape(const ManifestTensor& t, const SymbolValues& symbols,
                                const std::string& what) {
  Shape shape;
  for (size_t a = 0; a < t.shape.size(); ++a) {
    absl::StatusOr<int64_t> v = t.shape[a].Eval(symbols);
    if (!v.ok()) return v.status();
    if (*v < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " axis ", a, ": '", t.shape[a].text(), "' evaluates to ", *v, " < 0"));
    }
    shape.push_back(*v);
  }
  return shape;
}

absl::Status EvalDims(const Expr* exprs, const SymbolValues& symbols, const std::string& what,
                      const int64_t* limits, uint32_t* out) {
  for (int d = 0; d < 3; ++d) {
    absl::StatusOr<int64_t> v = exprs[d].Eval(symbols);
    if (!v.ok()) return v.status();
    if (*v < 1 || *v > limits[d]) {
      return absl::InvalidArgumentError(absl::StrCat(what, "[", d, "] = '", exprs[d].text(),
                                                     "' evaluates to ", *v, ", outside [1, ",
                                                     limits[d], "]"));
    }
    out[d] = static_cast<uint32_t>(*v);
  }
  return absl::OkStatus();
}

// Which input axes give the symbols an expression reads, for an error text:
// " (s1 is input T4 axis 1, ...)", or "" when it reads none.
std::string SymbolSources(const Manifest& m, const std::string& text) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::vector<std::string> parts;
  for (const ManifestSymbol& s : m.symbols) {
    for (size_t p = text.find(s.name); p != std::string::npos; p = text.find(s.name, p + 1)) {
      const size_t end = p + s.name.size();
      if ((p > 0 && word(text[p - 1])) || (end < text.size() && word(text[end]))) continue;
      parts.push_back(absl::StrCat(s.name, " is input ", m.inputs[s.input].name, " axis ", s.axis));
      break;
    }
  }
  return parts.empty() ? "" : absl::StrCat(" (", absl::StrJoin(parts, ", "), ")");
}

// Every kernel's "requires" at the bound symbols: FailedPrecondition naming
// the first condition that fails and the input axes of its symbols (the
// same text as the Python runtime's).
absl::Status CheckRequirements(const Manifest& m, const SymbolValues& symbols) {
  for (const ManifestKernel& k : m.kernels) {
    for (const KernelRequirement& r : k.requirements) {
      absl::StatusOr<int64_t> v = r.expr.Eval(symbols);
      if (!v.ok()) return v.status();
      if (r.Holds(*v)) continue;
      return absl::FailedPreconditionError(absl::StrCat(
          "kernel ", k.name, " (", k.scheduler, ") was compiled for shapes where ", r.expr.text(),
          " ", r.Describe(), "; these inputs give ", r.expr.text(), " = ", *v,
          SymbolSources(m, r.expr.text()),
          ": compile the fusion for these shapes (fusionc compile --shapes, or a daemon request "
          "with this signature), or with --general for kernels that run every shape"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LaunchPlan> PlanLaunch(const Manifest& m, const std::vector<Shape>& input_shapes) {
  if (input_shapes.size() != m.inputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat("fusion ", m.fusion, " takes ", m.inputs.size(),
                                                   " inputs, got ", input_shapes.size()));
  }
  LaunchPlan plan;
  for (const ManifestSymbol& s : m.symbols) {
    const Shape& shape = input_shapes[s.input];
    if (s.axis >= static_cast<int>(shape.size())) {
      return absl::InvalidArgumentError(absl::StrCat("input ", m.inputs[s.input].name, " (index ",
                                                     s.input, ") has rank ", shape.size(),
                                                     "; symbol ", s.name, " reads axis ", s.axis));
    }
    plan.symbols[s.name] = shape[s.axis];
  }
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const ManifestTensor& t = m.inputs[i];
    if (t.scalar) continue;
    std::string what = absl::StrCat("input ", t.name, " (index ", i, ")");
    absl::StatusOr<Shape> want = EvalShape(t, plan.symbols, what);
    if (!want.ok()) return want.status();
    const Shape& got = input_shapes[i];
    if (got.size() != want->size()) {
      return absl::InvalidArgumentError(absl::StrCat(what, " has shape ", ShapeToString(got),
                                                     ", the manifest wants rank ", want->size()));
    }
    for (size_t a = 0; a < got.size(); ++a) {
      if (got[a] != (*want)[a]) {
        return absl::InvalidArgumentError(absl::StrCat(what, " axis ", a, " is ", got[a],
                                                       " but the manifest wants ",
                                                       t.shape[a].text(), " = ", (*want)[a]));
      }
    }
  }
  // Kernels specialized to a shape class (manifest v2 and later) are never planned,
  // let alone launched, outside it.
  if (absl::Status s = CheckRequirements(m, plan.symbols); !s.ok()) return s;
  for (size_t i = 0; i < m.outputs.size(); ++i) {
    absl::StatusOr<Shape> s = EvalShape(m.outputs[i], plan.symbols, absl::StrCat("output ", i));
    if (!s.ok()) return s.status();
    plan.output_shapes.push_back(*std::move(s));
  }
  for (size_t i = 0; i < m.intermediates.size(); ++i) {
    absl::StatusOr<Shape> s =
        EvalShape(m.intermediates[i], plan.symbols, absl::StrCat("intermediate ", i));
    if (!s.ok()) return s.status();
    plan.intermediate_shapes.push_back(*std::move(s));
  }
  for (size_t i = 0; i < m.workspaces.size(); ++i) {
    absl::StatusOr<int64_t> b = m.workspaces[i].bytes.Eval(plan.symbols);
    if (!b.ok()) return b.status();
    if (*b < 0) {
      return absl::InvalidArgumentError(absl::StrCat("workspace ", i, " size evaluates to ", *b));
    }
    plan.workspace_bytes.push_back(*b);
  }
  static const int64_t kGridLimits[3] = {2147483647, 65535, 65535};
  static const int64_t kBlockLimits[3] = {1024, 1024, 64};
  for (size_t k = 0; k < m.kernels.size(); ++k) {
    const ManifestKernel& mk = m.kernels[k];
    KernelLaunch launch;
    launch.kernel = static_cast<int>(k);
    std::string what = absl::StrCat("kernel ", mk.name);
    if (absl::Status s = EvalDims(mk.grid, plan.symbols, what + " grid", kGridLimits, launch.grid);
        !s.ok()) {
      return s;
    }
    if (absl::Status s =
            EvalDims(mk.block, plan.symbols, what + " block", kBlockLimits, launch.block);
        !s.ok()) {
      return s;
    }
    if (int64_t threads = int64_t{launch.block[0]} * launch.block[1] * launch.block[2];
        threads > 1024) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": ", threads, " threads per block, more than 1024"));
    }
    absl::StatusOr<int64_t> smem = mk.smem_bytes.Eval(plan.symbols);
    if (!smem.ok()) return smem.status();
    if (*smem < 0 || *smem > (int64_t{1} << 30)) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": dynamic shared memory evaluates to ", *smem, " bytes"));
    }
    launch.smem_bytes = static_cast<uint32_t>(*smem);
    plan.launches.push_back(launch);
  }
  return plan;
}

}  // namespace runtime
}  // namespace fusiond
