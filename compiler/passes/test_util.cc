#include "compiler/passes/test_util.h"

#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "gtest/gtest.h"

namespace fusiond {

int CountOps(const Graph& g, OpKind op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op == op;
  return n;
}

bool RunPassForTest(PassFn fn, Graph& g, const PassOptions& options, PassLog* log) {
  PassLog local;
  absl::StatusOr<bool> changed = fn(g, options, log ? *log : local);
  EXPECT_TRUE(changed.ok()) << changed.status();
  absl::Status s = VerifyGraph(g);
  EXPECT_TRUE(s.ok()) << s << "\n" << PrintGraph(g);
  return changed.ok() && *changed;
}

}  // namespace fusiond
