#include "tests/host_emulation/emulate.h"

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "client/runtime/launch_plan.h"
#include "compiler/codegen/manifest.h"
#include "compiler/pipeline.h"
#include "tests/host_emulation/translate.h"
#include "tests/util/half_bits.h"

namespace fusiond {
namespace host_emulation {
namespace {

using runtime::ElementType;

constexpr size_t kAlign = 256;  // cudaMalloc's alignment
constexpr size_t kPad = 256;    // canary bytes after every buffer a kernel writes
constexpr unsigned char kPadByte = 0xA5;

double HalfValue(uint16_t h) {
  const int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  const double v = exp == 0    ? std::ldexp(mant, -24)
                   : exp == 31 ? (mant ? NAN : INFINITY)
                               : std::ldexp(mant + 1024, exp - 25);
  return (h >> 15) ? -v : v;
}

uint8_t Fp8Bits(double v, ElementType t) {
  if (std::isnan(v)) return 0x7f;
  for (int b = 0; b < 256; ++b) {
    const double x = runtime::Float8Value(static_cast<uint8_t>(b), t);
    if (x == v && std::signbit(x) == std::signbit(v)) return static_cast<uint8_t>(b);
  }
  return 0x7f;
}

// One element of type t from d (a value of that type already).
void Put(double d, ElementType t, unsigned char* p) {
  switch (t) {
    case ElementType::kBFloat16: {
      const float f = static_cast<float>(d);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      const uint16_t h = static_cast<uint16_t>(bits >> 16);
      std::memcpy(p, &h, 2);
      return;
    }
    case ElementType::kFloat16: {
      const uint16_t h = HalfBits(d);
      std::memcpy(p, &h, 2);
      return;
    }
    case ElementType::kFloat32: {
      const float f = static_cast<float>(d);
      std::memcpy(p, &f, 4);
      return;
    }
    case ElementType::kFloat64:
      std::memcpy(p, &d, 8);
      return;
    case ElementType::kInt32: {
      const int32_t v = static_cast<int32_t>(d);
      std::memcpy(p, &v, 4);
      return;
    }
    case ElementType::kInt64: {
      const int64_t v = static_cast<int64_t>(d);
      std::memcpy(p, &v, 8);
      return;
    }
    case ElementType::kBool:
      *p = d != 0;
      return;
    case ElementType::kFloat8E4M3:
    case ElementType::kFloat8E5M2:
      *p = Fp8Bits(d, t);
      return;
  }
}

double Get(const unsigned char* p, ElementType t) {
  switch (t) {
    case ElementType::kBFloat16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      const uint32_t bits = uint32_t{h} << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case ElementType::kFloat16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return HalfValue(h);
    }
    case ElementType::kFloat32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case ElementType::kFloat64: {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    case ElementType::kInt32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case ElementType::kInt64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    case ElementType::kBool:
      return *p != 0;
    case ElementType::kFloat8E4M3:
    case ElementType::kFloat8E5M2:
      return runtime::Float8Value(*p, t);
  }
  return NAN;
}

// A device-like buffer: kAlign-aligned, followed by kPad canary bytes.
struct Buffer {
  std::vector<unsigned char> storage;
  size_t bytes = 0;
  unsigned char* data() {
    const uintptr_t a = reinterpret_cast<uintptr_t>(storage.data());
    return storage.data() + (kAlign - a % kAlign) % kAlign;
  }
  void Allocate(size_t n, unsigned char fill) {
    bytes = n;
    storage.assign(n + kPad + kAlign, kPadByte);
    std::memset(data(), fill, n);
  }
  bool PadIntact() {
    for (size_t i = 0; i < kPad; ++i) {
      if (data()[bytes + i] != kPadByte) return false;
    }
    return true;
  }
};

// FUSIOND_HOST_EMULATION_FLAGS replaces the optimization flags (default -O1).
std::string OptFlags() {
  const char* env = std::getenv("FUSIOND_HOST_EMULATION_FLAGS");
  return env != nullptr && *env != '\0' ? env : "-O1";
}

std::string CompilerPath() {
  const char* env = std::getenv("FUSIOND_HOST_CXX");
  return env != nullptr && *env != '\0' ? env : FUSIOND_HOST_CXX;
}

// Runs `cmd` (output to `log`); its exit status.
int Shell(const std::string& cmd) { return std::system(cmd.c_str()); }

constexpr size_t kFusionsPerUnit = 6;

// Compiles `text` to `stem`.so; the compiler's output on failure, else "".
std::string CompileText(const std::string& stem, const std::string& text) {
  std::ofstream(stem + ".cc") << "#include \"cuda_host.h\"\n" << text;
  const std::string cmd =
      absl::StrCat(CompilerPath(), " -std=c++17 ", OptFlags(), " -fPIC -shared -w",
                   " -ffp-contract=off -fno-strict-aliasing -I", FUSIOND_HOST_EMULATION_DIR, " ",
                   stem, ".cc -o ", stem, ".so > ", stem, ".log 2>&1");
  if (Shell(cmd) == 0) return "";
  std::ifstream log(stem + ".log");
  std::stringstream out;
  out << log.rdbuf();
  return absl::StrCat("the host compiler refused its kernels:\n", out.str().substr(0, 3000));
}

// The fusions `members` (indices into texts) in one unit, or one by one
// when that fails: (fusions, shared object path or error) pairs.
std::vector<std::pair<std::vector<size_t>, std::string>> CompileUnits(
    const std::string& dir, const std::string& unit, const std::vector<size_t>& members,
    const std::vector<std::string>& texts) {
  const std::string stem = absl::StrCat(dir, "/", unit);
  std::string all;
  for (size_t i : members) all += texts[i];
  std::string error = CompileText(stem, all);
  if (error.empty()) return {{members, stem + ".so"}};
  if (members.size() == 1) return {{members, error}};
  std::vector<std::pair<std::vector<size_t>, std::string>> out;
  for (size_t i : members) {
    const std::string one = absl::StrCat(stem, "_", i);
    error = CompileText(one, texts[i]);
    out.push_back({{i}, error.empty() ? one + ".so" : error});
  }
  return out;
}

absl::Status Launch(const PreparedFusion& f, const HostKernels& kernels, size_t k,
                    const runtime::KernelLaunch& launch, std::vector<uint64_t>& slot_values) {
  const PreparedKernel& pk = f.kernels[k];
  KernelEntry entry = kernels.Find(pk.kernel.name);
  if (entry == nullptr) return absl::InternalError(absl::StrCat("no host kernel ", pk.kernel.name));
  std::vector<void*> slots(slot_values.size());
  for (size_t i = 0; i < slots.size(); ++i) slots[i] = &slot_values[i];
  GridLaunch g;
  for (int d = 0; d < 3; ++d) {
    g.grid[d] = launch.grid[d];
    g.block[d] = launch.block[d];
  }
  g.dynamic_smem_bytes = launch.smem_bytes;
  g.cooperative = f.manifest.kernels[k].cooperative;
  g.kernel = pk.kernel.name;
  // The cluster shape the GPU launches with: the kernel's __cluster_dims__.
  static const std::regex kDims(R"(__cluster_dims__\((\d+),\s*(\d+),\s*(\d+)\))");
  std::smatch m;
  if (std::regex_search(pk.kernel.source, m, kDims)) {
    for (int d = 0; d < 3; ++d) g.cluster[d] = static_cast<uint32_t>(std::stoul(m[d + 1].str()));
  }
  absl::Status s = RunGrid(entry, slots.data(), g);
  if (!s.ok()) {
    return absl::Status(s.code(), absl::StrCat("kernel ", pk.kernel.name, " (", pk.kernel.scheduler,
                                               ", grid ", g.grid[0], "x", g.grid[1], ", block ",
                                               g.block[0], "x", g.block[1], "): ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace

double FillValue(DataType dtype, uint8_t fill) {
  absl::StatusOr<ElementType> et = runtime::ParseElementType(DataTypeName(dtype));
  if (!et.ok()) return NAN;
  const std::vector<unsigned char> bytes(8, fill);
  return Get(bytes.data(), *et);
}

absl::StatusOr<PreparedFusion> PrepareFusion(const Graph& g,
                                             const std::vector<std::vector<int64_t>>& input_shapes,
                                             const std::string& name, const AdjustParams& adjust) {
  PreparedFusion f;
  f.name = name;
  f.input_shapes = input_shapes;
  CompileOptions options;
  options.generate_code = false;
  auto compiled = CompileFusion(g, input_shapes, options);
  if (!compiled.ok()) return compiled.status();
  f.compiled = *std::move(compiled);
  for (size_t i = 0; i < f.compiled.segments.size(); ++i) {
    SegmentResult& seg = f.compiled.segments[i];
    if (adjust) adjust(seg, &seg.params);
    CodegenOptions o;
    o.kernel_name = absl::StrCat(name, "_k", i);
    o.symbol_sizes = seg.symbol_sizes;
    auto k = GenerateKernel(seg.graph, seg.params, o);
    if (!k.ok()) return k.status();
    KernelArtifact a;
    a.kernel_name = k->name;
    a.arch = "sm_90";
    // 64 registers and no static shared memory: the cooperative grid bound
    // without ptxas's figures (tiny shapes stay under it).
    a.manifest_json = KernelManifestJson(*k, k->name + ".cubin", 64, 0, DefaultTarget());
    seg.kernel = a;
    f.kernels.push_back(PreparedKernel{*std::move(k), ""});
  }
  auto m = runtime::ParseManifest(FusionManifestJson(f.compiled, name));
  if (!m.ok()) return m.status();
  f.manifest = *std::move(m);
  auto plan = runtime::PlanLaunch(f.manifest, input_shapes);
  if (!plan.ok()) return plan.status();
  for (const runtime::KernelLaunch& l : plan->launches) {
    const int64_t threads = int64_t{l.block[0]} * l.block[1] * l.block[2];
    const int64_t blocks = int64_t{l.grid[0]} * l.grid[1] * l.grid[2];
    if (threads > kMaxEmulatedThreads || blocks > kMaxEmulatedBlocks) {
      f.kernels[l.kernel].skip =
          absl::StrCat(blocks, " blocks of ", threads, " threads: past the emulation's range");
    }
  }
  return f;
}

HostKernels::~HostKernels() {
  for (void* h : handles_) dlclose(h);
  // FUSIOND_HOST_EMULATION_KEEP=1 keeps the translated sources for a look.
  const char* keep = std::getenv("FUSIOND_HOST_EMULATION_KEEP");
  if (keep != nullptr && *keep == '1') {
    std::fprintf(stderr, "host emulation sources kept in %s\n", dir_.c_str());
  } else if (!dir_.empty()) {
    std::filesystem::remove_all(dir_);
  }
}

absl::StatusOr<std::unique_ptr<HostKernels>> HostKernels::Build(
    const std::vector<const PreparedFusion*>& fusions, int jobs) {
  std::unique_ptr<HostKernels> h(new HostKernels());
  // Under TMPDIR when set (the shared objects are loaded from there).
  std::string tmpl = (std::filesystem::temp_directory_path() / "fusiond_host_emulation_XXXXXX");
  if (mkdtemp(tmpl.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp ", tmpl, ": ", std::strerror(errno)));
  }
  h->dir_ = tmpl;
  // Each fusion's kernels, each kernel in its own namespace.
  std::vector<std::string> names, texts;
  for (const PreparedFusion* f : fusions) {
    std::string text;
    std::string error;
    for (const PreparedKernel& k : f->kernels) {
      if (!k.skip.empty()) continue;
      auto host = TranslateKernel(k.kernel.source, k.kernel.name, "ns_" + k.kernel.name);
      if (!host.ok()) {
        error = absl::StrCat("kernel ", k.kernel.name, ": ", host.status().message());
        break;
      }
      text += *host;
    }
    if (!error.empty()) {
      h->errors_[f->name] = error;
    } else if (!text.empty()) {
      names.push_back(f->name);
      texts.push_back(std::move(text));
    }
  }
  // A few fusions per translation unit (each compiler run costs ~0.25 s
  // before any kernel); a unit that fails is compiled again fusion by
  // fusion, so an error names its fusion.
  const size_t per_unit =
      std::max<size_t>(1, std::min<size_t>(kFusionsPerUnit, names.size() / std::max(1, 2 * jobs)));
  std::vector<std::vector<size_t>> units;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i % per_unit == 0) units.emplace_back();
    units.back().push_back(i);
  }
  std::vector<std::vector<std::pair<std::vector<size_t>, std::string>>> built(units.size());
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (int j = 0; j < std::max(1, jobs); ++j) {
    pool.emplace_back([&] {
      for (size_t u = next++; u < units.size(); u = next++) {
        built[u] = CompileUnits(h->dir_, absl::StrCat("u", u), units[u], texts);
      }
    });
  }
  for (std::thread& t : pool) t.join();
  for (const auto& unit : built) {
    for (const auto& [members, outcome] : unit) {
      // outcome: the shared object's path, or the compiler's complaint.
      void* handle =
          outcome.rfind("/", 0) == 0 ? dlopen(outcome.c_str(), RTLD_NOW | RTLD_LOCAL) : nullptr;
      const std::string error = outcome.rfind("/", 0) != 0 ? outcome
                                : handle == nullptr        ? dlerror()
                                                           : "";
      if (handle != nullptr) h->handles_.push_back(handle);
      for (size_t i : members) {
        if (!error.empty()) h->errors_[names[i]] = error;
      }
    }
  }
  return h;
}

std::string HostKernels::Error(const std::string& fusion) const {
  auto it = errors_.find(fusion);
  return it == errors_.end() ? "" : it->second;
}

KernelEntry HostKernels::Find(const std::string& name) const {
  const std::string symbol = "fz_emu_entry_" + name;
  for (void* handle : handles_) {
    if (void* p = dlsym(handle, symbol.c_str())) return reinterpret_cast<KernelEntry>(p);
  }
  return nullptr;
}

absl::StatusOr<std::vector<HostTensor>> RunOnHost(const PreparedFusion& f,
                                                  const HostKernels& kernels,
                                                  const std::vector<HostTensor>& inputs,
                                                  uint8_t fill,
                                                  std::vector<std::vector<unsigned char>>* kept) {
  const runtime::Manifest& m = f.manifest;
  if (inputs.size() != m.inputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(inputs.size(), " inputs for a manifest of ", m.inputs.size()));
  }
  auto plan = runtime::PlanLaunch(m, f.input_shapes);
  if (!plan.ok()) return plan.status();
  std::vector<Buffer> in(inputs.size()), out(m.outputs.size()), mid(m.intermediates.size()),
      ws(m.workspaces.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (m.inputs[i].scalar) continue;
    const size_t es = runtime::ElementSize(m.inputs[i].dtype);
    in[i].Allocate(inputs[i].data.size() * es, 0);
    for (size_t e = 0; e < inputs[i].data.size(); ++e)
      Put(inputs[i].data[e], m.inputs[i].dtype, in[i].data() + e * es);
  }
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].Allocate(
        runtime::NumElements(plan->output_shapes[i]) * runtime::ElementSize(m.outputs[i].dtype),
        fill);
  }
  for (size_t i = 0; i < mid.size(); ++i) {
    mid[i].Allocate(runtime::NumElements(plan->intermediate_shapes[i]) *
                        runtime::ElementSize(m.intermediates[i].dtype),
                    fill);
  }
  kept->resize(ws.size());
  for (size_t i = 0; i < ws.size(); ++i) {
    const size_t bytes = static_cast<size_t>(plan->workspace_bytes[i]);
    ws[i].Allocate(bytes, m.workspaces[i].zero ? 0 : fill);
    if (m.workspaces[i].keep && (*kept)[i].size() == bytes)
      std::memcpy(ws[i].data(), (*kept)[i].data(), bytes);
  }
  for (const runtime::KernelLaunch& launch : plan->launches) {
    const runtime::ManifestKernel& k = m.kernels[launch.kernel];
    if (!f.kernels[launch.kernel].skip.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("kernel ", k.name, " is not emulated: ", f.kernels[launch.kernel].skip));
    }
    std::vector<uint64_t> slots(k.params.size());
    for (size_t p = 0; p < k.params.size(); ++p) {
      const runtime::KernelParam& param = k.params[p];
      auto ptr = [](Buffer& b) {
        return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(b.data()));
      };
      switch (param.kind) {
        case runtime::KernelParam::Kind::kInput:
          slots[p] = ptr(in[param.index]);
          break;
        case runtime::KernelParam::Kind::kOutput:
          slots[p] = ptr(out[param.index]);
          break;
        case runtime::KernelParam::Kind::kIntermediate:
          slots[p] = ptr(mid[param.index]);
          break;
        case runtime::KernelParam::Kind::kWorkspace:
          slots[p] = ptr(ws[param.index]);
          break;
        case runtime::KernelParam::Kind::kScalar: {
          const std::vector<double>& d = inputs[param.index].data;
          const double v = d.empty() ? 0.0 : d[0];
          std::memcpy(&slots[p], &v, 8);
          break;
        }
        case runtime::KernelParam::Kind::kSize: {
          const int64_t v = plan->symbols.at(param.symbol);
          std::memcpy(&slots[p], &v, 8);
          break;
        }
      }
    }
    if (absl::Status s = Launch(f, kernels, launch.kernel, launch, slots); !s.ok()) return s;
  }
  auto overrun = [](std::vector<Buffer>& bufs, const char* what) -> absl::Status {
    for (size_t i = 0; i < bufs.size(); ++i) {
      if (!bufs[i].PadIntact())
        return absl::InternalError(absl::StrCat("a kernel wrote past ", what, " ", i));
    }
    return absl::OkStatus();
  };
  for (auto s : {overrun(out, "output"), overrun(mid, "intermediate"), overrun(ws, "workspace")}) {
    if (!s.ok()) return s;
  }
  for (size_t i = 0; i < ws.size(); ++i) {
    if (m.workspaces[i].keep) (*kept)[i].assign(ws[i].data(), ws[i].data() + ws[i].bytes);
  }
  std::vector<HostTensor> result;
  for (size_t i = 0; i < out.size(); ++i) {
    const ElementType et = m.outputs[i].dtype;
    std::optional<DataType> dtype = ParseDataType(runtime::ElementTypeName(et));
    if (!dtype.has_value())
      return absl::InternalError(absl::StrCat("no dtype ", runtime::ElementTypeName(et)));
    HostTensor t{*dtype, plan->output_shapes[i], {}};
    const size_t es = runtime::ElementSize(et);
    for (size_t e = 0; e * es < out[i].bytes; ++e)
      t.data.push_back(Get(out[i].data() + e * es, et));
    result.push_back(std::move(t));
  }
  return result;
}

}  // namespace host_emulation
}  // namespace fusiond
