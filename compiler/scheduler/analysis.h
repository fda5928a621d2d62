// The scheduling view of a fusion at concrete sizes. After the passes every
// tensor of a fusion lives in one iteration space (the largest tensor's
// shape, e.g. [M, N] or [N, C, L]); each tensor axis maps to an axis of it
// (or is a broadcast 1). Reductions are classified by the axes they reduce:
// the innermost axes (row reductions), the outermost axes (column
// reductions) or axes on both sides of a kept one (batch norm). From that
// the analysis names the fusion's pattern, which decides the scheduler, and
// summarizes the inputs and outputs for the heuristics. Heuristics read
// only the pattern, the sizes and the sorted tensor summaries, never the
// graph, so two definitions of one function get the same parameters.
#ifndef FUSIOND_COMPILER_SCHEDULER_ANALYSIS_H_
#define FUSIOND_COMPILER_SCHEDULER_ANALYSIS_H_

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "compiler/ir/binding.h"
#include "compiler/ir/graph.h"

namespace fusiond {

enum class FusionPattern {
  kPointwise,        // no reductions
  kInner,            // row reductions only (same axes), results may broadcast back
  kInnerOuter,       // row reductions plus column reductions of the rows' complement
  kOuter,            // column reductions only, results not broadcast back
  kOuterPersistent,  // reductions keeping a middle axis, or column reductions broadcast back
  kUnsupported,      // no single kernel pattern (see `reason`)
};

const char* PatternName(FusionPattern p);

// One graph input or output tensor as the heuristics see it.
struct TensorSummary {
  DataType dtype = DataType::kFloat;
  int64_t numel = 0;
  bool varies_inner = false;  // indexed by the reduced (row) axes or the innermost axis
  bool full = false;          // spans the whole iteration space
  bool column = false;        // an output of the column reductions
  bool varies_outer = false;  // indexed by a space axis of extent > 1 besides the inner ones

  auto Key() const {
    return std::make_tuple(static_cast<int>(dtype), numel, varies_inner, full, column,
                           varies_outer);
  }
  bool operator<(const TensorSummary& o) const { return Key() < o.Key(); }
  bool operator==(const TensorSummary& o) const { return Key() == o.Key(); }
};

struct FusionAnalysis {
  FusionPattern pattern = FusionPattern::kUnsupported;
  // Why the pattern is unsupported, or how it was recognized.
  std::string reason;
  std::vector<int64_t> space;  // the iteration space
  // [outer, inner] view: see HeuristicParams in heuristics.h.
  int64_t outer_size = 1;
  int64_t inner_size = 1;
  // Outer persistent: the reduced elements per kept element, split into the
  // reduced axes after the last kept axis (contiguous) and the others.
  int64_t reduced_contiguous = 1;
  int64_t reduced_strided = 1;
  int num_reductions = 0;
  std::vector<TensorSummary> inputs;   // tensor inputs, sorted
  std::vector<TensorSummary> outputs;  // sorted

  // One line with everything heuristics read.
  std::string ToString() const;
};

FusionAnalysis AnalyzeFusion(const Graph& g, const SizeBinding& sizes);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_SCHEDULER_ANALYSIS_H_
