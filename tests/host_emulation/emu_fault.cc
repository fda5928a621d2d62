#include "tests/host_emulation/emu_fault.h"

#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <mutex>

namespace fusiond {
namespace host_emulation {
namespace {

DescribeFaultFn g_describe = nullptr;

void OnFatalSignal(int sig) {
  char buf[512];
  const int n = g_describe != nullptr ? g_describe(sig, buf, sizeof(buf)) : 0;
  if (n > 0) (void)!write(2, buf, static_cast<size_t>(n) < sizeof(buf) ? n : sizeof(buf) - 1);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

void InstallFaultReport(DescribeFaultFn describe) {
  static std::once_flag once;
  std::call_once(once, [describe] {
    g_describe = describe;
    struct sigaction sa;
    std::memset(&sa, 0, sizeof(sa));
    sa.sa_handler = OnFatalSignal;
    sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE}) sigaction(sig, &sa, nullptr);
  });
}

AltSignalStack::AltSignalStack() : mem_(64 * 1024) {
  stack_t st{};
  st.ss_sp = mem_.data();
  st.ss_size = mem_.size();
  sigaltstack(&st, nullptr);
}

AltSignalStack::~AltSignalStack() {
  stack_t st{};
  st.ss_flags = SS_DISABLE;
  sigaltstack(&st, nullptr);
}

}  // namespace host_emulation
}  // namespace fusiond
