// A seeded generator of small random *valid* fusion graphs, and a shrinker
// that reduces a failing graph to a small one that still fails.
//
// Every graph lives in one "universe" of axes: a rank R in 1..max_rank and
// extents in 1..max_extent. Full tensors have all R axes; partial tensors
// (lower-rank inputs, reduction results) are broadcast back with
// broadcast_in_dim, or, when reduced with keepdim, combine with full tensors
// through their size-1 axes. The generator emits the patterns an optimizer
// must handle: pointwise chains, broadcasts of lower-rank tensors, casts
// among bf16/fp16/fp32/fp64 and cast round trips (bf16->f32->bf16,
// f32->bf16->f32), pow with integer / half-integer / non-integer exponents,
// identities (x*1, x+0, 1*x, reciprocal(reciprocal(x)), neg(neg(x))), and
// sum/max reductions over random axes (size-1 axes included) with and
// without keepdim. Graphs are small (at most 512 elements per tensor) so a
// thousand of them evaluate on the reference in well under a second.
#ifndef FUSIOND_TESTS_RANDOM_RANDOM_GRAPH_H_
#define FUSIOND_TESTS_RANDOM_RANDOM_GRAPH_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "compiler/ir/graph.h"

namespace fusiond {

struct RandomGraphOptions {
  // Largest rank of the universe (ranks min_rank..max_rank are drawn). Default: 3.
  int max_rank = 3;
  // Smallest rank of the universe. Default: 1.
  int min_rank = 1;
  // Largest axis extent (extents 1..max_extent are drawn). Default: 8.
  int max_extent = 8;
  // Extents to draw axes from instead of 1..max_extent (a GPU check's
  // realistic sizes: 1, odd, wide rows). Default: empty.
  std::vector<int64_t> extent_choices;
  // Largest number of elements of the universe (all axes at full extent);
  // extents are redrawn while over it. 0: no bound. Default: 0.
  int64_t max_elements = 0;
  // Reductions weigh 2 of 12 op draws; this adds as many more reduction
  // draws (norm-backward-like graphs: row and column reductions). Default: 0.
  int extra_reductions = 0;
  // Number of ops to add (each may be a short pattern of several nodes).
  // Default: 12.
  int num_ops = 12;
  // Largest number of outputs (1..max_outputs are drawn). Default: 3.
  int max_outputs = 3;
  // Probability that the tensor inputs declare their axes symbolic (-1).
  // Default: 0.3.
  double symbolic_probability = 0.3;
  // Allow a run-time float64 scalar input besides tensor inputs. Default: true.
  bool allow_scalar_inputs = true;
  // Allow comparisons feeding where(). Default: true.
  bool allow_where = true;
};

// A generated graph and the concrete input shapes it was generated for
// (one per graph input, empty for a scalar input).
struct RandomGraphCase {
  Graph graph;
  std::vector<std::vector<int64_t>> input_shapes;
  // OK unless a builder call failed while generating (a generator bug; the
  // graph is then still valid but lacks the failed op).
  absl::Status status;
};

// The same seed and options always give the same graph. The graph passes
// VerifyGraph and evaluates on the reference at `input_shapes`.
RandomGraphCase RandomGraphWithShapes(uint64_t seed, const RandomGraphOptions& opts = {});
Graph RandomGraph(uint64_t seed, const RandomGraphOptions& opts = {});

// Greedily shrinks g while still_fails(g') holds: drops outputs, moves an
// output to an operand of its definition, bypasses nodes whose operand has
// the result's type and shape, and makes nodes read a graph input instead
// of a computed operand of the same type and shape; dead nodes and constants are removed
// after every accepted step. Graph inputs are kept (same order and types),
// so the inputs that made g fail still apply to the result. Candidates that
// fail VerifyGraph are never passed to still_fails. Returns g itself when
// still_fails(g) is false. At most `max_attempts` calls to still_fails.
Graph ShrinkGraph(const Graph& g, const std::function<bool(const Graph&)>& still_fails,
                  int max_attempts = 2000);

// Removes nodes and constants that no output depends on, renumbering values
// and nodes; inputs are kept.
Graph RemoveDeadCode(const Graph& g);

}  // namespace fusiond

#endif  // FUSIOND_TESTS_RANDOM_RANDOM_GRAPH_H_
