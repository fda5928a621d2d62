// The check every host emulation test makes of a fusion's emulated
// outputs, and the summaries they print.
#ifndef FUSIOND_TESTS_HOST_EMULATION_EMU_CHECK_H_
#define FUSIOND_TESTS_HOST_EMULATION_EMU_CHECK_H_

#include <chrono>
#include <string>
#include <vector>

#include "compiler/reference/reference.h"
#include "tests/host_emulation/emu_cases.h"
#include "tests/host_emulation/emulate.h"

namespace fusiond {
namespace host_emulation {

// Seconds since t.
double Since(std::chrono::steady_clock::time_point t);
// Host compilers at once: the cores, at most two.
int Jobs();

// Why the emulated outputs of `f` (case `c`'s inputs) disagree with `want`,
// or "". Each fusion runs into outputs of 0xFF bytes (NaN: an unwritten
// float element fails the check), then, when it has integer or bool outputs
// or kept workspaces, again into 0x42 bytes with the first run's kept
// workspaces, where an element still holding the fill was never written.
// Outputs must pass corpus::CheckOutput, except the fusions emu_check.cc
// lists as relaxed (absolute limit, printed by PrintRelaxed).
std::string CheckFusion(const PreparedFusion& f, const HostKernels& kernels, const EmuCase& c,
                        const std::vector<HostTensor>& want);
void PrintRelaxed();

// What EmulateCases found: failures each naming its fusion, "" when none.
struct CaseSetResult {
  int fusions = 0, passed = 0, kernels = 0;
  std::vector<std::string> failures;
  std::string error;  // a case the test cannot run at all (refused reference, no temp dir)
};
// Every case through the pipeline (a refusal fails unless the case is
// pending), built for the host in one go and checked as CheckFusion says;
// prints a line per fusion, the skipped ones, feature and scheduler counts
// and a SUMMARY line starting with `label`. FUSIOND_HOST_EMULATION_FILTER=TEXT
// keeps the cases whose name contains TEXT.
CaseSetResult EmulateCases(std::vector<EmuCase> cases, const std::string& label);

// The GPU features a kernel exercises ("cooperative launch", "cp.async
// staging", ...), and a fusion's schedulers "a,b".
std::vector<std::string> Features(const GeneratedKernel& k);
std::string Schedulers(const PreparedFusion& f);

}  // namespace host_emulation
}  // namespace fusiond

#endif  // FUSIOND_TESTS_HOST_EMULATION_EMU_CHECK_H_
