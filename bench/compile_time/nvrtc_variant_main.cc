// fusiond_nvrtc_variant: compiled artifacts compiled again with extra NVRTC
// options, to measure what the options save here and to check on the GPU
// that they cost no kernel speed (bench/compile_time/option_check.sh).
//
//   fusiond_nvrtc_variant [--repeat N] [--replace FROM TO]... [--whole-prelude] ARTIFACTS OUT
//                         [-- OPTION...]
//
// For every ARTIFACTS/<stem>/manifest.json (fusionc compile --out, e.g.
// scripts/device_bundle.sh's .devcarry/artifacts), OUT/<stem>/ becomes a
// copy whose cubins are compiled from the kernels' .cu with the pipeline's
// options plus OPTION..., after every FROM in the .cu is replaced by TO (a
// code generation idea tried on the corpus kernels; the edited .cu is
// written beside the cubin). --whole-prelude: the variant's .cu has the whole
// device prelude again instead of the pieces the kernel uses (what the
// trimmed prelude saves; prelude.h TrimDevicePrelude). Per kernel it prints ptxas' registers,
// static shared memory and stack frame (local memory) both ways, whether the code differs (any
// cubin section but ptxas' note of its own command line), and the median process CPU time of N
// compiles both ways (CPU time: other work on the machine inflates wall time far more). The
// baseline compiled here must have the code of the artifact's cubin (else an error: other flags
// built it). Each way's compiles run in a child process of their own: NVRTC 13.0 keeps state across
// programs, so after a compile with --Ofast-compile=mid a later one without it in the same process
// gets other code (NVVM's PTX differs). The manifests are copied unchanged: a kernel whose
// registers changed keeps the grid sized for the baseline's (a cooperative grid that no longer fits
// fails its launch on the GPU, which fails the check). Exit status 1 when an artifact cannot be
// read or compiled.
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "client/runtime/json.h"
#include "compiler/codegen/prelude.h"
#include "compiler/nvrtc/nvrtc_compiler.h"

namespace fusiond {
namespace {

namespace fs = std::filesystem;

double CpuMillis() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// An ELF64 file's sections by name (NOBITS ones by size only); empty when
// `elf` is not a little-endian ELF64 file.
std::map<std::string, std::string> ElfSections(const std::string& elf) {
  std::map<std::string, std::string> out;
  auto u16 = [&](size_t o) { return o + 2 <= elf.size() ? *(const uint16_t*)(elf.data() + o) : 0; };
  auto u32 = [&](size_t o) {
    return o + 4 <= elf.size() ? *(const uint32_t*)(elf.data() + o) : 0u;
  };
  auto u64 = [&](size_t o) {
    return o + 8 <= elf.size() ? *(const uint64_t*)(elf.data() + o) : uint64_t{0};
  };
  if (elf.size() < 64 ||
      elf.compare(0, 4,
                  "\x7f"
                  "ELF") != 0 ||
      elf[4] != 2)
    return out;
  const uint64_t shoff = u64(0x28);
  const uint16_t shentsize = u16(0x3a), shnum = u16(0x3c), shstrndx = u16(0x3e);
  if (shentsize < 64 || shoff + uint64_t{shnum} * shentsize > elf.size() || shstrndx >= shnum) {
    return out;
  }
  auto sh = [&](int i) { return shoff + uint64_t(i) * shentsize; };
  const uint64_t strtab = u64(sh(shstrndx) + 0x18);
  for (int i = 0; i < shnum; ++i) {
    const uint64_t name_at = strtab + u32(sh(i));
    if (name_at >= elf.size()) continue;
    const std::string name(elf.c_str() + name_at);
    const uint32_t type = u32(sh(i) + 4);
    const uint64_t off = u64(sh(i) + 0x18), size = u64(sh(i) + 0x20);
    if (type == 8) {  // SHT_NOBITS: no bytes in the file
      out[name] = "nobits:" + std::to_string(size);
    } else if (off + size <= elf.size()) {
      out[name] = elf.substr(off, size);
    }
  }
  return out;
}

// The sections in which two cubins differ (.text ones first), ptxas' note of
// its own command line (.note.nv.tkinfo) left out: empty when the code is the same.
std::vector<std::string> CodeDifferences(const std::string& a, const std::string& b) {
  std::map<std::string, std::string> sa = ElfSections(a), sb = ElfSections(b);
  if (sa.empty() || sb.empty()) return {"(not ELF)"};
  std::vector<std::string> diff;
  for (const auto& [name, bytes] : sa) {
    if (name == ".note.nv.tkinfo") continue;
    auto it = sb.find(name);
    if (it == sb.end() || it->second != bytes) diff.push_back(name);
  }
  for (const auto& [name, bytes] : sb) {
    if (name != ".note.nv.tkinfo" && !sa.count(name)) diff.push_back(name);
  }
  // The instructions first: the sections that say most.
  std::stable_partition(diff.begin(), diff.end(),
                        [](const std::string& n) { return n.rfind(".text", 0) == 0; });
  return diff;
}

struct Timed {
  NvrtcOutput out;
  double cpu_ms = 0;    // median over the repeats
  int stack_bytes = 0;  // ptxas: the kernel's stack frame (arrays NVVM left in local memory)
};

int StackFrameBytes(const std::string& log, const std::string& kernel) {
  const size_t from = log.find("Compiling entry function '" + kernel + "'");
  const size_t at = log.find(" bytes stack frame", from == std::string::npos ? 0 : from);
  if (at == std::string::npos) return 0;
  size_t begin = at;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(log[begin - 1]))) --begin;
  return std::atoi(log.c_str() + begin);
}

absl::StatusOr<Timed> CompileTimed(const std::string& src, const std::string& kernel,
                                   const NvrtcOptions& options, int repeat) {
  std::vector<double> ms;
  Timed t;
  for (int i = 0; i < std::max(1, repeat); ++i) {
    const double c0 = CpuMillis();
    absl::StatusOr<NvrtcOutput> out = CompileWithNvrtc(src, kernel, options);
    ms.push_back(CpuMillis() - c0);
    if (!out.ok()) return out.status();
    if (i > 0 && !CodeDifferences(t.out.binary, out->binary).empty()) {
      return absl::InternalError("NVRTC gave other code on a repeated compile");
    }
    t.out = *std::move(out);
  }
  std::sort(ms.begin(), ms.end());
  t.cpu_ms = ms[ms.size() / 2];
  t.stack_bytes = StackFrameBytes(t.out.log, kernel);
  return t;
}

bool WriteAll(int fd, const std::string& bytes) {
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) return false;
    done += n;
  }
  return true;
}

// CompileTimed in a child process, so that no earlier compile of this
// process (another option's) can change the code. The child sends one line
// "ok REGISTERS SMEM STACK IS_PTX CPU_MS" and the binary, or "error MESSAGE".
absl::StatusOr<Timed> CompileTimedApart(const std::string& src, const std::string& kernel,
                                        const NvrtcOptions& options, int repeat) {
  int fds[2];
  if (pipe(fds) != 0) return absl::InternalError("pipe failed");
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    close(fds[0]);
    absl::StatusOr<Timed> t = CompileTimed(src, kernel, options, repeat);
    const std::string head = t.ok() ? absl::StrFormat("ok %d %d %d %d %.3f\n", t->out.registers,
                                                      t->out.static_smem_bytes, t->stack_bytes,
                                                      t->out.is_ptx ? 1 : 0, t->cpu_ms)
                                    : "error " + std::string(t.status().message());
    _exit(WriteAll(fds[1], head) && (!t.ok() || WriteAll(fds[1], t->out.binary)) ? 0 : 1);
  }
  close(fds[1]);
  std::string got;
  char buf[1 << 16];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) got.append(buf, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got.rfind("error ", 0) == 0) return absl::InternalError(got.substr(6));
  Timed t;
  int is_ptx = 0;
  const size_t eol = got.find('\n');
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || eol == std::string::npos ||
      std::sscanf(got.c_str(), "ok %d %d %d %d %lf", &t.out.registers, &t.out.static_smem_bytes,
                  &t.stack_bytes, &is_ptx, &t.cpu_ms) != 5) {
    return absl::InternalError("the compiling child process failed");
  }
  t.out.is_ptx = is_ptx != 0;
  t.out.binary = got.substr(eol + 1);
  return t;
}

struct Args {
  int repeat = 3;
  fs::path in_dir, out_dir;
  std::vector<std::string> extra;                                 // NVRTC options
  std::vector<std::pair<std::string, std::string>> replacements;  // in the variant's .cu
  bool whole_prelude = false;                                     // in the variant's .cu
};

struct Totals {
  int failed = 0, kernels = 0, changed = 0, edited = 0, more_stack = 0;
  double base_ms = 0, variant_ms = 0;
};

// One kernel of an artifact: compiled both ways, the variant's cubin (and
// edited .cu) written into `dst`, one row printed.
void VariantKernel(const Args& args, const fs::path& stem_dir, const fs::path& dst,
                   const runtime::JsonValue& k, const NvrtcOptions& base,
                   const NvrtcOptions& variant, Totals* t) {
  const runtime::JsonValue* name = k.Find("name");
  if (name == nullptr || !name->is_string()) return;
  const std::string stem = stem_dir.filename().string(), kernel = name->string_value();
  const std::string src = ReadFile(stem_dir / (kernel + ".cu"));
  std::string edited = src;
  for (const auto& [from, to] : args.replacements) {
    for (size_t at = edited.find(from); at != std::string::npos;
         at = edited.find(from, at + to.size())) {
      edited.replace(at, from.size(), to);
    }
  }
  if (args.whole_prelude) edited = UntrimDevicePrelude(edited);
  absl::StatusOr<Timed> a = CompileTimedApart(src, kernel, base, args.repeat);
  absl::StatusOr<Timed> b = a.ok() ? CompileTimedApart(edited, kernel, variant, args.repeat) : a;
  if (src.empty() || !a.ok() || !b.ok() || b->out.is_ptx) {
    std::printf("%-24s %-24s ERROR: %s\n", stem.c_str(), kernel.c_str(),
                src.empty() ? "no .cu"
                : !b.ok()   ? std::string(b.status().message()).substr(0, 200).c_str()
                            : "PTX, not a cubin");
    ++t->failed;
    return;
  }
  // The baseline compiled here must be the artifact's own cubin, or the
  // flags here are not the ones that built it.
  const runtime::JsonValue* file = k.Find("binary");
  const std::string stored =
      file != nullptr && file->is_string() ? ReadFile(stem_dir / file->string_value()) : "";
  if (!CodeDifferences(stored, a->out.binary).empty()) {
    std::printf(
        "%-24s %-24s ERROR: compiled here without the option, the code differs from "
        "the artifact's cubin (other NVRTC flags or version?)\n",
        stem.c_str(), kernel.c_str());
    ++t->failed;
    return;
  }
  std::ofstream(dst / (kernel + ".cubin"), std::ios::binary) << b->out.binary;
  if (edited != src) std::ofstream(dst / (kernel + ".cu"), std::ios::binary) << edited;
  const std::vector<std::string> diff = CodeDifferences(a->out.binary, b->out.binary);
  std::string diff_text = diff.empty() ? "same" : "DIFFERS:";
  for (size_t i = 0; i < diff.size() && i < 3; ++i) diff_text += " " + diff[i];
  if (diff.size() > 3) diff_text += " and " + std::to_string(diff.size() - 3) + " more sections";
  std::printf("%-24s %-24s %4d->%-4d %5d->%-5d %4d->%-4d %10.1f %10.1f  %s%s\n", stem.c_str(),
              kernel.c_str(), a->out.registers, b->out.registers, a->out.static_smem_bytes,
              b->out.static_smem_bytes, a->stack_bytes, b->stack_bytes, a->cpu_ms, b->cpu_ms,
              edited != src ? "(.cu edited) " : "", diff_text.c_str());
  t->more_stack += b->stack_bytes > a->stack_bytes;
  ++t->kernels;
  t->changed += !diff.empty();
  t->edited += edited != src;
  t->base_ms += a->cpu_ms;
  t->variant_ms += b->cpu_ms;
}

// 0 when parsed; else the exit status (2: usage).
int ParseArgs(int argc, char** argv, Args* args) {
  std::vector<std::string> pos;
  bool after_dashes = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (after_dashes) {
      args->extra.push_back(a);
    } else if (a == "--") {
      after_dashes = true;
    } else if (a == "--repeat" && i + 1 < argc) {
      args->repeat = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--replace" && i + 2 < argc && argv[i + 1][0] != '\0') {
      args->replacements.emplace_back(argv[i + 1], argv[i + 2]);
      i += 2;
    } else if (a == "--whole-prelude") {
      args->whole_prelude = true;
    } else {
      pos.push_back(a);
    }
  }
  if (pos.size() != 2 ||
      (args->extra.empty() && args->replacements.empty() && !args->whole_prelude)) {
    std::fprintf(stderr,
                 "usage: %s [--repeat N] [--replace FROM TO]... [--whole-prelude] ARTIFACTS OUT "
                 "[-- NVRTC_OPTION...]\n(at least one option, replacement or --whole-prelude)\n",
                 argv[0]);
    return 2;
  }
  args->in_dir = pos[0];
  args->out_dir = pos[1];
  return 0;
}

int Main(int argc, char** argv) {
  Args args;
  if (int rc = ParseArgs(argc, argv, &args); rc != 0) return rc;
  std::vector<fs::path> stems;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(args.in_dir, ec)) {
    if (fs::exists(e.path() / "manifest.json")) stems.push_back(e.path());
  }
  if (ec || stems.empty()) {
    std::fprintf(stderr, "no ARTIFACTS/<stem>/manifest.json under %s\n", args.in_dir.c_str());
    return 1;
  }
  std::sort(stems.begin(), stems.end());
  fs::create_directories(args.out_dir);
  std::string what;  // the variant, as OPTIONS records it and the summary prints it
  for (const std::string& o : args.extra) what += o + "\n";
  for (const auto& [from, to] : args.replacements) {
    what += "replace '" + from + "' with '" + to + "' in the .cu\n";
  }
  if (args.whole_prelude) what += "the whole device prelude in the .cu\n";
  std::ofstream(args.out_dir / "OPTIONS") << what;
  NvrtcOptions base, variant;
  variant.extra = args.extra;
  // NVRTC's one-time start-up here, which the children then inherit, so
  // that it stays out of every compile's CPU time (the daemon pays it at start).
  (void)CompileWithNvrtc("extern \"C\" __global__ void fz_w() {}", "fz_w", base);
  Totals t;
  std::printf("%-24s %-24s %9s %11s %9s %10s %10s  %s\n", "fusion", "kernel", "registers",
              "static smem", "stack", "base ms", "option ms", "code");
  for (const fs::path& stem_dir : stems) {
    const std::string stem = stem_dir.filename().string();
    const fs::path dst = args.out_dir / stem;
    fs::remove_all(dst, ec);
    fs::copy(stem_dir, dst, fs::copy_options::recursive, ec);
    absl::StatusOr<runtime::JsonValue> m = runtime::ParseJson(ReadFile(stem_dir / "manifest.json"));
    const runtime::JsonValue* list = m.ok() ? m->Find("kernels") : nullptr;
    if (ec || list == nullptr || !list->is_array()) {
      std::printf("%-24s ERROR: cannot copy it or read its manifest's kernels\n", stem.c_str());
      ++t.failed;
      continue;
    }
    const runtime::JsonValue* arch = m->Find("arch");
    if (arch != nullptr && arch->is_string()) base.arch = variant.arch = arch->string_value();
    for (const runtime::JsonValue& k : list->items()) {
      VariantKernel(args, stem_dir, dst, k, base, variant, &t);
    }
  }
  std::replace(what.begin(), what.end(), '\n', ' ');
  std::printf(
      "variant %s: %d kernels, %d with other code, %d with an edited .cu, %d with a larger stack "
      "frame; NVRTC CPU time %.1f -> %.1f ms (%+.1f%%; medians of %d compiles each); cubins in "
      "%s\n",
      what.c_str(), t.kernels, t.changed, t.edited, t.more_stack, t.base_ms, t.variant_ms,
      t.base_ms > 0 ? 100.0 * (t.variant_ms - t.base_ms) / t.base_ms : 0.0, args.repeat,
      args.out_dir.c_str());
  return t.failed ? 1 : 0;
}

}  // namespace
}  // namespace fusiond

int main(int argc, char** argv) { return fusiond::Main(argc, argv); }
