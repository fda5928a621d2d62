// The fusions the host emulation check runs: every corpus file
// (tests/corpus/fusions) at its closed-form test's reduced shapes (static
// ones with their sizes shrunk as below), and every front-end definition
// (tests/frontends/fusions) whose `# expect:` line is `compiles` or
// `pending`, at frontends_test's small sizes: each integer literal that is a
// multiple of 16 and at least 128 divided by 16, or the file's
// `# small: A->B, ...` map; a few definitions still large then get smaller
// sizes of their own (emu_cases.cc, EmulationSizes). Every definition of a
// folder of GPU check fusions (tests/ops/fusions, bench/gpu/fusions,
// tests/launch_audit/fusions) likewise, with no `# expect:` line needed,
// and some of them again at odd sizes (`<name>_odd`, emu_cases.cc OddSizes).
#ifndef FUSIOND_TESTS_HOST_EMULATION_EMU_CASES_H_
#define FUSIOND_TESTS_HOST_EMULATION_EMU_CASES_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/frontend/frontend.h"
#include "compiler/reference/reference.h"

namespace fusiond {
namespace host_emulation {

struct EmuCase {
  std::string name;    // a C identifier: "corpus_softmax_fwd_0", "fe_causal_mask_triu_softmax"
  std::string origin;  // the file it comes from
  Graph graph;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<HostTensor> inputs;
  bool pending = false;  // `# expect: pending`: a refusal at compile is no failure
  // Outputs that must equal the reference bit for bit (random values, masks,
  // iota: no tensor input reaches them), as the GPU check of the ops holds
  // them; empty for none.
  std::vector<bool> exact;
};

// The script `stem`.py with its integer literals shrunk (see the file
// comment), or with `sizes` (literal -> size) ahead of the rules when given.
std::string ShrinkLiterals(const std::string& text, const std::string& stem,
                           const std::map<std::string, std::string>* sizes = nullptr);

// Every case (or those whose name `keep` accepts); a file that does not
// parse at its small sizes is an error.
using KeepCase = std::function<bool(const std::string& name)>;
absl::StatusOr<std::vector<EmuCase>> CorpusCases(const std::string& corpus_dir,
                                                 const KeepCase& keep = nullptr);
absl::StatusOr<std::vector<EmuCase>> FrontendCases(const std::string& fusions_dir,
                                                   const KeepCase& keep = nullptr);
// Every definition in `dir` (a GPU check folder), named `prefix` + stem;
// with `exact`, the outputs no tensor input reaches are held bit for bit.
absl::StatusOr<std::vector<EmuCase>> CheckFolderCases(const std::string& dir,
                                                      const std::string& prefix, bool exact,
                                                      const KeepCase& keep = nullptr);
// The outputs of `g` that no tensor input reaches.
std::vector<bool> InputFreeOutputs(const Graph& g);

}  // namespace host_emulation
}  // namespace fusiond

#endif  // FUSIOND_TESTS_HOST_EMULATION_EMU_CASES_H_
