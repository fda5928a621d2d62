// Graph mutation helpers shared by the passes. A pass adds new nodes at the
// end of the node list (through GraphBuilder, so types and shapes are
// inferred and checked), points uses at them with ReplaceAllUses, and ends
// with Compact, which drops dead nodes and constants, restores the
// topological order of compiler/ir/graph.h and renumbers ids densely.
#ifndef FUSIOND_COMPILER_PASSES_REWRITE_H_
#define FUSIOND_COMPILER_PASSES_REWRITE_H_

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/graph.h"

namespace fusiond {

// Points every use of `from` (node operands and graph outputs) at `to`.
// The caller guarantees both have the same dtype and shape. O(graph size).
void ReplaceAllUses(Graph& g, ValueId from, ValueId to);

// Batched ReplaceAllUses for passes that rewrite many nodes in one sweep:
// Replace is O(1); a pass visiting nodes in order calls ResolveOperands on
// each node before matching it (its operands are defined earlier, so their
// replacements are known), and Apply once at the end.
class UseReplacer {
 public:
  void Replace(ValueId from, ValueId to);
  // The value `v` stands for after the replacements so far.
  ValueId Resolve(ValueId v) const;
  // Rewrites node n's operands to what they stand for now.
  void ResolveOperands(Node& n) const;
  // Rewrites every operand and graph output; true if there was anything.
  bool Apply(Graph& g) const;
  bool empty() const { return count_ == 0; }

 private:
  std::vector<ValueId> to_;
  int count_ = 0;
};

// Removes nodes whose results reach no output and constants nobody reads
// (graph inputs always stay), orders the nodes topologically (keeping the
// existing relative order where it is already valid) and renumbers values
// and nodes densely. Returns true when something was removed.
bool Compact(Graph& g);

// Appends a node and returns its first result.
absl::StatusOr<ValueId> AddOp(Graph& g, OpKind op, std::vector<ValueId> inputs, Attrs attrs = {});
absl::StatusOr<ValueId> AddCast(Graph& g, ValueId x, DataType dtype);

// A scalar constant of `dtype` holding v; reuses an equal existing one.
ValueId MakeConstant(Graph& g, double v, DataType dtype);

// The value of a scalar constant, or nullopt.
std::optional<double> ConstantOf(const Graph& g, ValueId v);

// True when a and b have the same dtype, tensor-ness and (provably) shape.
bool SameType(const Graph& g, ValueId a, ValueId b);

// Field-by-field equality of node attributes (extents compared canonically).
bool SameAttrs(const Graph& g, const Attrs& a, const Attrs& b);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_PASSES_REWRITE_H_
