#include "compiler/nvrtc/nvrtc_compiler.h"

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <regex>
#include <vector>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "absl/strings/str_cat.h"

#ifdef FUSIOND_HAVE_NVRTC
#include <nvrtc.h>
#endif

namespace fusiond {

void ParsePtxasReport(const std::string& log, const std::string& kernel_name, NvrtcOutput* out) {
  // ptxas info    : Compiling entry function 'k' for 'sm_90'
  // ptxas info    : Function properties for k
  //     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  // ptxas info    : Used 40 registers, used 1 barriers, 2048 bytes smem, 400 bytes cmem[0]
  size_t start = 0;
  if (!kernel_name.empty()) {
    size_t p = log.find("Compiling entry function '" + kernel_name + "'");
    if (p != std::string::npos) start = p;
  }
  const std::string tail = log.substr(start);
  std::smatch m;
  static const std::regex kRegs("Used ([0-9]+) registers");
  static const std::regex kSpill("([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads");
  static const std::regex kSmem("([0-9]+) bytes smem");
  if (std::regex_search(tail, m, kRegs)) out->registers = std::atoi(m[1].str().c_str());
  if (std::regex_search(tail, m, kSpill)) {
    out->spill_bytes = std::atoi(m[1].str().c_str()) + std::atoi(m[2].str().c_str());
  }
  if (std::regex_search(tail, m, kSmem)) out->static_smem_bytes = std::atoi(m[1].str().c_str());
}

std::string FastCompileLevel() {
  const char* v = std::getenv("FUSIOND_NVRTC_FAST_COMPILE");
  return v == nullptr ? "" : v;
}

bool FastCompileLevelValid(const std::string& level) {
  return level.empty() || level == "0" || level == "min" || level == "mid" || level == "max";
}

double KeepNvrtcHeap(size_t prefault_bytes) {
  const auto t0 = std::chrono::steady_clock::now();
#ifdef __GLIBC__
  static std::once_flag settings;
  std::call_once(settings, [] {
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest; 8 MiB blocks below come from the heap
  });
  // Blocks touched page by page (volatile: the stores, and so the blocks,
  // stay), then freed: they join the heap top, which is now kept.
  constexpr size_t kBlock = size_t{8} << 20;
  std::vector<void*> blocks;
  for (size_t done = 0; done < prefault_bytes; done += kBlock) {
    void* p = std::malloc(kBlock);
    if (p == nullptr) break;
    for (size_t at = 0; at < kBlock; at += 4096) static_cast<volatile char*>(p)[at] = 0;
    blocks.push_back(p);
  }
  for (void* p : blocks) std::free(p);
#else
  (void)prefault_bytes;
#endif
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

#ifdef FUSIOND_HAVE_NVRTC

namespace {

// "sm_90" -> 90; 0 when malformed.
int ArchNumber(const std::string& arch) {
  if (arch.rfind("sm_", 0) != 0) return 0;
  return std::atoi(arch.c_str() + 3);
}

bool NvrtcKnowsArch(int sm) {
  int n = 0;
  if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0) return false;
  std::vector<int> archs(n);
  if (nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS) return false;
  for (int a : archs)
    if (a == sm) return true;
  return false;
}

std::string ProgramLog(nvrtcProgram prog) {
  size_t n = 0;
  nvrtcGetProgramLogSize(prog, &n);
  std::string log(n, '\0');
  if (n > 0) nvrtcGetProgramLog(prog, log.data());
  while (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

}  // namespace

std::vector<std::string> NvrtcFlags() {
  // --minimal: NVRTC leaves out the runtime API's types, texture functions
  // and device-side launch, which generated kernels never use: its front end
  // 24 -> 16 ms for rmsnorm_bwd_manual on the dev machine, every corpus
  // cubin byte-identical.
  std::vector<std::string> flags = {"-std=c++17", "--ptxas-options=-v", "-default-device",
                                    "--restrict", "--minimal"};
  const std::string level = FastCompileLevel();
  if (FastCompileLevelValid(level) && !level.empty()) {
    flags.push_back("--Ofast-compile=" + level);
  }
  return flags;
}

absl::StatusOr<NvrtcOutput> CompileWithNvrtc(const std::string& source,
                                             const std::string& kernel_name,
                                             const NvrtcOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const int sm = ArchNumber(options.arch);
  if (sm < 50) {
    return absl::InvalidArgumentError(
        absl::StrCat("nvrtc: bad arch '", options.arch, "'; expected sm_XX"));
  }
  if (!FastCompileLevelValid(FastCompileLevel())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "nvrtc: FUSIOND_NVRTC_FAST_COMPILE='", FastCompileLevel(),
        "' in the environment; expected 0, min, mid or max (NVRTC's --Ofast-compile), or unset"));
  }
  NvrtcOutput out;
  const bool cubin = NvrtcKnowsArch(sm);
  out.is_ptx = !cubin;
  // A newer arch than this NVRTC knows: PTX for the newest virtual arch it
  // supports is not attempted; compute_XX of the request is, and the driver
  // JIT-compiles it.
  out.arch = cubin ? options.arch : absl::StrCat("compute_", sm);
  out.options = {absl::StrCat("--gpu-architecture=", out.arch)};
  for (const std::string& f : NvrtcFlags()) out.options.push_back(f);
  for (const std::string& e : options.extra) out.options.push_back(e);
  nvrtcProgram prog;
  const std::string file = kernel_name + ".cu";
  if (nvrtcCreateProgram(&prog, source.c_str(), file.c_str(), 0, nullptr, nullptr) !=
      NVRTC_SUCCESS) {
    return absl::UnavailableError("nvrtc: nvrtcCreateProgram failed");
  }
  std::vector<const char*> argv;
  for (const std::string& o : out.options) argv.push_back(o.c_str());
  const nvrtcResult rc = nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  out.log = ProgramLog(prog);
  if (rc != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&prog);
    return absl::InternalError(absl::StrCat("nvrtc: compiling kernel ", kernel_name, " failed (",
                                            nvrtcGetErrorString(rc), "):\n", out.log));
  }
  size_t n = 0;
  nvrtcResult got;
  if (cubin) {
    got = nvrtcGetCUBINSize(prog, &n);
    out.binary.resize(n);
    if (got == NVRTC_SUCCESS) got = nvrtcGetCUBIN(prog, out.binary.data());
  } else {
    got = nvrtcGetPTXSize(prog, &n);
    out.binary.resize(n);
    if (got == NVRTC_SUCCESS) got = nvrtcGetPTX(prog, out.binary.data());
    while (!out.binary.empty() && out.binary.back() == '\0') out.binary.pop_back();
  }
  nvrtcDestroyProgram(&prog);
  if (got != NVRTC_SUCCESS) {
    return absl::InternalError(absl::StrCat("nvrtc: reading the binary of kernel ", kernel_name,
                                            " failed: ", nvrtcGetErrorString(got)));
  }
  ParsePtxasReport(out.log, kernel_name, &out);
  out.micros =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

std::string NvrtcVersion() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return absl::StrCat(major, ".", minor);
}

#else  // !FUSIOND_HAVE_NVRTC

absl::StatusOr<NvrtcOutput> CompileWithNvrtc(const std::string&, const std::string& kernel_name,
                                             const NvrtcOptions&) {
  return absl::UnavailableError(
      absl::StrCat("nvrtc: this build has no NVRTC (kernel ", kernel_name, ")"));
}

std::string NvrtcVersion() { return "none"; }

std::vector<std::string> NvrtcFlags() { return {}; }

#endif  // FUSIOND_HAVE_NVRTC

}  // namespace fusiond
