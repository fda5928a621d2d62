// The IR verifier: checks that a Graph is well formed. Every id is in range;
// every node reads only values defined before it (so the graph is acyclic);
// each value has at most one definition and its `def` link agrees; outputs
// are tensors; and every node's result types and shapes are what the
// builder infers from its operands (types, ranks, broadcast dims, axes).
// Passes run it after every rewrite in debug builds and in tests.
#ifndef FUSIOND_COMPILER_IR_VERIFIER_H_
#define FUSIOND_COMPILER_IR_VERIFIER_H_

#include <string>

#include "absl/status/status.h"
#include "compiler/ir/graph.h"

namespace fusiond {

// OK, or InvalidArgument naming the first offending node and the reason.
absl::Status VerifyGraph(const Graph& g);

// "" when `op` reads every attribute `attrs` sets (differs from its
// default in), else which attributes are stray and what the op reads, e.g.
// "sets dims, which add does not read (it reads none)". Ops this check
// does not know yet pass.
std::string StrayAttributes(OpKind op, const Attrs& attrs);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_IR_VERIFIER_H_
