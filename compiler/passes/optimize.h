// The optimization pass list, in order, and the loop that runs it through
// the PassManager until no pass changes the graph (PassOptions::max_rounds
// at most). compiler/pipeline.cc calls RunOptimizationPasses as its
// "passes" stage; tests use the observer to check every pass on its own.
#ifndef FUSIOND_COMPILER_PASSES_OPTIMIZE_H_
#define FUSIOND_COMPILER_PASSES_OPTIMIZE_H_

#include <functional>
#include <vector>

#include "compiler/passes/pass_manager.h"

namespace fusiond {

struct NamedPass {
  const char* name;
  PassFn run;
};

// Every pass in the order it runs.
const std::vector<NamedPass>& OptimizationPasses();

// Called after every pass application that changed the graph.
using PassObserver = std::function<void(const char* pass, const Graph& after)>;

absl::Status RunOptimizationPasses(Graph& g, const PassOptions& options,
                                   std::vector<PassRecord>* records,
                                   const PassObserver& observer = nullptr);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_PASSES_OPTIMIZE_H_
