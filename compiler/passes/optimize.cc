#include "compiler/passes/optimize.h"

#include "compiler/passes/algebra.h"
#include "compiler/passes/cast_chains.h"
#include "compiler/passes/constant_folding.h"
#include "compiler/passes/cse.h"
#include "compiler/passes/dce.h"
#include "compiler/passes/index_copies.h"
#include "compiler/passes/output_copies.h"
#include "compiler/passes/pow_constant.h"
#include "compiler/passes/reshape_views.h"
#include "compiler/passes/shape_chains.h"
#include "compiler/passes/trivial_reductions.h"

namespace fusiond {

const std::vector<NamedPass>& OptimizationPasses() {
  static const std::vector<NamedPass>* passes = new std::vector<NamedPass>{
      // First: static sizes and scalar arithmetic become the constants the
      // other passes match (x * (1/8192), pow(x, 3.0)).
      {"constant_folding", RunConstantFolding},
      {"algebra", RunAlgebra},
      {"pow_constant", RunPowConstant},
      // After pow_constant, which adds casts around 16-bit products.
      {"cast_chains", RunCastChains},
      {"trivial_reductions", RunTrivialReductions},
      // After trivial_reductions: composes the squeezes they leave with the
      // broadcasts around them.
      {"shape_chains", RunShapeChains},
      // After shape_chains (broadcast and expand become broadcast_in_dim,
      // reshape chains compose): reshapes inside the graph become views at
      // its edges.
      {"reshape_views", RunReshapeViews},
      {"cse", RunCse},
      {"dce", RunDce},
  };
  return *passes;
}

absl::Status RunOptimizationPasses(Graph& g, const PassOptions& options,
                                   std::vector<PassRecord>* records, const PassObserver& observer) {
  PassManager pm(options, records);
  for (int round = 0; round < options.max_rounds; ++round) {
    bool changed = false;
    for (const NamedPass& p : OptimizationPasses()) {
      if (pm.Run(p.name, p.run, g)) {
        changed = true;
        if (observer) observer(p.name, g);
      }
    }
    if (!pm.status().ok() || !changed) break;
  }
  // Once, after the rounds: their cse would merge index copies again, their
  // cast_chains would undo output copies.
  if (pm.Run("index_copies", RunIndexCopies, g) && observer) observer("index_copies", g);
  if (pm.Run("output_copies", RunOutputCopies, g) && observer) observer("output_copies", g);
  return pm.status();
}

}  // namespace fusiond
