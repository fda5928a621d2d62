#include "tests/passes/pass_check.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "compiler/ir/printer.h"
#include "compiler/passes/optimize.h"
#include "compiler/passes/rewrite.h"

namespace fusiond {

double OutputTolerance(DataType t) {
  switch (t) {
    case DataType::kBFloat16:
      return 1.6e-2;  // two bf16 ulps
    case DataType::kHalf:
      return 2e-3;
    case DataType::kFloat:
      return 1e-5;
    case DataType::kDouble:
      return 1e-12;
    default:
      return 0;  // bool and integers: exact
  }
}

namespace {

// Per output: the tolerance of the least precise float type it depends on
// (an ulp change there reaches the output scaled by at most its condition).
std::vector<double> OutputTolerances(const Graph& g) {
  std::vector<double> tol(g.values.size(), 0);
  auto widen = [&](ValueId v, DataType t) { tol[v] = std::max(tol[v], OutputTolerance(t)); };
  for (const Value& v : g.values) widen(v.id, v.dtype);
  for (const Node& n : g.nodes) {
    for (ValueId o : n.outputs) {
      for (ValueId in : n.inputs) tol[o] = std::max(tol[o], tol[in]);
    }
  }
  std::vector<double> out;
  for (ValueId o : g.outputs) {
    out.push_back(IsFloatingPoint(g.value(o).dtype) ? tol[o] : OutputTolerance(g.value(o).dtype));
  }
  return out;
}

}  // namespace

std::string CheckPassesPreserve(const Graph& g, const std::vector<HostTensor>& inputs,
                                const PassOptions& options) {
  auto before = Evaluate(g, inputs);
  if (!before.ok())
    return absl::StrCat("the reference rejects the graph: ", before.status().message());
  const std::vector<double> tolerance = OutputTolerances(g);
  std::string failure;
  auto check = [&](const char* pass, const Graph& after) {
    if (!failure.empty()) return;
    auto out = Evaluate(after, inputs);
    if (!out.ok()) {
      failure =
          absl::StrCat("after ", pass, " the reference rejects the graph: ", out.status().message(),
                       "\n", PrintGraph(after));
      return;
    }
    for (size_t i = 0; i < before->size(); ++i) {
      const HostTensor& want = (*before)[i];
      const HostTensor& have = (*out)[i];
      if (have.dtype != want.dtype || have.shape != want.shape) {
        failure = absl::StrCat("after ", pass, " output ", i, " changed type or shape");
        return;
      }
      double err = MaxRelativeError(have, want);
      if (err > tolerance[i]) {
        failure = absl::StrCat("after ", pass, " output ", i, " (", DataTypeName(want.dtype),
                               ") differs: max relative error ", err, "\n", PrintGraph(after));
        return;
      }
    }
  };
  Graph work = g;
  PassOptions opts = options;
  opts.verify = true;  // always in tests
  std::vector<PassRecord> records;
  absl::Status s = RunOptimizationPasses(work, opts, &records, check);
  if (!s.ok()) return absl::StrCat("passes failed: ", s.message());
  return failure;
}

std::vector<std::string> ForbiddenPatterns(const Graph& g) {
  std::vector<std::string> found;
  for (const Node& n : g.nodes) {
    if (n.op == OpKind::kPow) {
      auto e = ConstantOf(g, n.inputs[1]);
      if (e && *e == std::floor(*e))
        found.push_back(absl::StrCat("integer pow: ", NodeString(g, n)));
    }
    if (n.op != OpKind::kCast) continue;
    const DataType mid = g.value(n.inputs[0]).dtype;
    if (mid == *n.attrs.dtype) found.push_back(absl::StrCat("no-op cast: ", NodeString(g, n)));
    const Node* inner = g.def(n.inputs[0]);
    if (inner && inner->op == OpKind::kCast &&
        IsLosslessCast(g.value(inner->inputs[0]).dtype, mid)) {
      found.push_back(
          absl::StrCat("lossless cast chain: ", NodeString(g, *inner), " ; ", NodeString(g, n)));
    }
  }
  return found;
}

}  // namespace fusiond
