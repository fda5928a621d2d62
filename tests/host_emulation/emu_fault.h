// A kernel that faults (SIGSEGV, SIGBUS, SIGFPE) takes the test binary
// down: the report says where first, on a stack of its own (a coroutine's
// may be the one that overflowed).
#ifndef FUSIOND_TESTS_HOST_EMULATION_EMU_FAULT_H_
#define FUSIOND_TESTS_HOST_EMULATION_EMU_FAULT_H_

#include <cstddef>
#include <vector>

namespace fusiond {
namespace host_emulation {

// Writes the report line for signal `sig` into buf (at most n bytes); its length.
using DescribeFaultFn = int (*)(int sig, char* buf, size_t n);

// Installs the handlers once; each prints describe's line, then the signal
// takes its default course.
void InstallFaultReport(DescribeFaultFn describe);

// An alternate signal stack for the calling thread while this lives.
class AltSignalStack {
 public:
  AltSignalStack();
  ~AltSignalStack();
  AltSignalStack(const AltSignalStack&) = delete;
  AltSignalStack& operator=(const AltSignalStack&) = delete;

 private:
  std::vector<char> mem_;
};

}  // namespace host_emulation
}  // namespace fusiond

#endif  // FUSIOND_TESTS_HOST_EMULATION_EMU_FAULT_H_
