// Seeded inputs for corpus fusions that follow each file's `inputs = [...]`
// list: torch.randn -> standard normal, torch.rand -> uniform [0, 1), then
// `* scale + offset` (so `torch.rand(...) + 0.5` stays positive), zeros and
// ones as such; a softmax input is a real softmax of standard normals over
// its last axis. Values are rounded to each input's dtype.
#ifndef FUSIOND_TESTS_CORPUS_CORPUS_INPUTS_H_
#define FUSIOND_TESTS_CORPUS_CORPUS_INPUTS_H_

#include <cstdint>
#include <vector>

#include "compiler/frontend/frontend.h"
#include "compiler/reference/reference.h"

namespace fusiond {
namespace corpus {

// One tensor per graph input at `shapes` (which may be smaller than the
// file's). specs[i] describes input i (missing specs mean randn);
// softmax_inputs lists inputs to make softmax rows whatever the spec says.
std::vector<HostTensor> MakeCorpusInputs(const Graph& g, const std::vector<InputSpec>& specs,
                                         const std::vector<std::vector<int64_t>>& shapes,
                                         uint64_t seed,
                                         const std::vector<int>& softmax_inputs = {});

}  // namespace corpus
}  // namespace fusiond

#endif  // FUSIOND_TESTS_CORPUS_CORPUS_INPUTS_H_
