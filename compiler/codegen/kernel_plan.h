// Kernel planning: how the values of one segment map onto the iteration
// space of one generated kernel.
//
// Every tensor value is placed in a reference domain (the extents of the
// segment's widest tensor, e.g. [M, N] or [N, C, L]). For each value we know
// which reference axes it varies along. The reduction axes of the segment's
// row reductions form the row domain R (for a softmax [M, N]: {1}; for a batch
// norm [N, C, L]: {0, 2}); the other axes form the rows I. Values then fall in
// four domains:
//   kElem   varies along R: computed per element, inside the element loops;
//   kRow    varies along I only: computed once per row (reduction results,
//           [M, 1] inputs);
//   kCol    depends on a column reduction (a sum over I): computed after the
//           grid-wide step, per column;
//   kScalar varies along nothing.
// Row reductions are ordered in stages: a stage's reductions read only row
// values of earlier stages. A pointwise segment has no reductions; all its axes
// are R and there is a single row.
//
// Assumes a graph built by GraphBuilder (shapes consistent); reshape is not
// supported (Unimplemented).
#ifndef FUSIOND_COMPILER_CODEGEN_KERNEL_PLAN_H_
#define FUSIOND_COMPILER_CODEGEN_KERNEL_PLAN_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/graph.h"

namespace fusiond {

enum class Domain { kScalar, kElem, kRow, kCol };

// One accumulation slot of a row or column reduction. var / var_mean use two
// slots: the sum (for the mean) and, one stage later, the sum of squared
// deviations; or, `one_pass`, the mean and the sum of squared deviations in
// the same stage, merged from per-chunk statistics (Chan et al.'s pairwise
// update), which saves a block reduction per row.
struct ReductionSlot {
  NodeId node = kNone;
  bool second_moment = false;  // var/var_mean: the squared-deviation slot
  int stage = 0;               // row reductions only
  bool one_pass = false;       // var/var_mean in one stage (both slots)
  // Online softmax (online_softmax.h): a max and the sum of exp(x - max) in
  // the max's stage; `partner` is the other node of the pair.
  bool online = false;
  bool online_exp2 = false;  // the sum's exponential is exp2
  NodeId partner = kNone;
};

struct KernelPlan {
  const Graph* graph = nullptr;
  int rank = 0;
  std::vector<Extent> ref;  // reference extents (canonical)
  // Per value (tensors): the reference axis of each own axis, -1 for an own
  // axis of static extent 1.
  std::vector<std::vector<int>> axis_map;
  std::vector<uint32_t> vary;            // per value: reference axes it varies along
  std::vector<uint32_t> shape_mask;      // per value: reference axes of its non-1 axes
  std::vector<Domain> domain;            // per value
  std::vector<bool> needed;              // per value: reaches an output
  uint32_t r_mask = 0;                   // row-domain (reduced) axes
  std::vector<int> r_axes, i_axes;       // ascending
  std::vector<ReductionSlot> row_slots;  // in stage order
  std::vector<NodeId> col_reds;          // column reductions, topological order
  std::vector<NodeId> trivial_reds;      // reductions over axes the value does not vary along
  int num_stages = 0;                    // stages of row reductions
  // Per value: the number of row stages that must complete before it can be
  // computed (0 for inputs).
  std::vector<int> avail;
  // Symbolic size names: root symbol -> "s<k>", in the order of the inputs.
  std::map<SymbolId, std::string> symbol_names;
  std::vector<SymbolId> symbol_order;
  // Per value: read only at shifted indices (slice/pad/cat operands,
  // compiler/ir/shift_view.h): outside the iteration space, never needed.
  std::vector<bool> shifted_only;

  // The extent as an expression: a number or a symbol name ("s1").
  std::string ExtentExpr(Extent e) const;
  // Product of the extents of `axes` of the reference ("1" when empty).
  std::string ProductExpr(const std::vector<int>& axes) const;
  // True when every extent of the reference is static.
  bool IsStatic() const;
  // The reference axes reduced by node n's dims.
  uint32_t ReducedAxes(const Node& n) const;
  // How many equal copies of each element reduction n sees along the reduced
  // axes its input does not vary along and its loop does not walk (a sum over
  // both axes of a row broadcast to [rows, n] loops over n only), as a product
  // of "(double)(extent)" factors; "" when none: sum/prod/var scale by it.
  std::string HiddenCount(const Graph& g, const Node& n) const;
};

// Builds the plan. `pointwise`: the segment must have no (non-trivial)
// reductions, and R is every axis. Unimplemented for graph shapes the
// generator does not handle (reshape, mixed reductions).
// `one_pass_var`: var/var_mean in one stage (ReductionSlot::one_pass); the
// generator supports it where no row is split over blocks.
// `reduced_rows`: a segment of outer reductions only takes the reduced axes
// as the row domain even when no result comes back (column sums reduced as
// rows by a lanes kernel, generator_lanes.cc).
// `online_softmax`: a row sum of exp(x - max(x)) joins its max's stage
// (ReductionSlot::online, online_softmax.h).
absl::StatusOr<KernelPlan> PlanKernel(const Graph& g, bool pointwise, bool one_pass_var = false,
                                      bool reduced_rows = false, bool online_softmax = false);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_CODEGEN_KERNEL_PLAN_H_
