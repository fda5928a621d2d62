#include "client/runtime/loaded_fusion.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "client/runtime/cuda_status.h"
#include "client/runtime/driver_api.h"
#include "client/runtime/strided_copy.h"

namespace fusiond {
namespace runtime {
namespace {

// Makes a context current for the scope and restores the previous one.
class ScopedContext {
 public:
  explicit ScopedContext(CUcontext ctx) : ok_(Cu().cuCtxPushCurrent(ctx) == CUDA_SUCCESS) {}
  ~ScopedContext() {
    CUcontext popped;
    if (ok_) Cu().cuCtxPopCurrent(&popped);
  }
  bool ok() const { return ok_; }

 private:
  bool ok_;
};

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return absl::UnavailableError(absl::StrCat("error reading ", path));
  return ss.str();
}

// Frees stream-ordered scratch allocations when the run ends, also on errors.
class ScratchList {
 public:
  explicit ScratchList(CUstream stream) : stream_(stream) {}
  ~ScratchList() {
    for (CUdeviceptr p : ptrs_) Cu().cuMemFreeAsync(p, stream_);
  }
  absl::StatusOr<CUdeviceptr> Alloc(size_t bytes, const std::string& what) {
    if (bytes == 0) return CUdeviceptr{0};
    CUdeviceptr p = 0;
    FUSIOND_CU(Cu().cuMemAllocAsync(&p, bytes, stream_),
               absl::StrCat("allocating ", bytes, " bytes for ", what));
    ptrs_.push_back(p);
    return p;
  }

 private:
  CUstream stream_;
  std::vector<CUdeviceptr> ptrs_;
};

}  // namespace

double ScalarValue(const RunArg& a) {
  if (a.host == nullptr) return a.scalar;
  const unsigned char* p = static_cast<const unsigned char*>(a.host);
  auto read = [p](auto zero) {
    std::memcpy(&zero, p, sizeof(zero));
    return zero;
  };
  switch (a.tensor.dtype) {
    case ElementType::kBool:
      return read(uint8_t{0}) != 0 ? 1.0 : 0.0;
    case ElementType::kInt32:
      return static_cast<double>(read(int32_t{0}));
    case ElementType::kInt64:
      return static_cast<double>(read(int64_t{0}));
    case ElementType::kFloat32:
      return static_cast<double>(read(0.0f));
    case ElementType::kFloat64:
      return read(0.0);
    case ElementType::kBFloat16: {  // the high half of a float32
      const uint32_t bits = static_cast<uint32_t>(read(uint16_t{0})) << 16;
      float f;
      std::memcpy(&f, &bits, sizeof(f));
      return f;
    }
    case ElementType::kFloat16: {
      const uint16_t h = read(uint16_t{0});
      const int exponent = (h >> 10) & 0x1f;
      const int mantissa = h & 0x3ff;
      double v = exponent == 0    ? std::ldexp(mantissa, -24)
                 : exponent == 31 ? (mantissa != 0 ? NAN : INFINITY)
                                  : std::ldexp(1024 + mantissa, exponent - 25);
      return (h & 0x8000) ? -v : v;
    }
    case ElementType::kFloat8E4M3:
    case ElementType::kFloat8E5M2:
      return Float8Value(read(uint8_t{0}), a.tensor.dtype);
  }
  return a.scalar;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_ != 0) Cu().cuMemFree(ptr_);
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.ptr_ = 0;
    o.bytes_ = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != 0) Cu().cuMemFree(ptr_);
}

absl::Status CheckGpuAvailable() {
  if (absl::StatusOr<const DriverApi*> d = Driver(); !d.ok()) return d.status();
  FUSIOND_CU(Cu().cuInit(0), "initializing the CUDA driver");
  int count = 0;
  FUSIOND_CU(Cu().cuDeviceGetCount(&count), "counting CUDA devices");
  if (count == 0) return absl::UnavailableError("no CUDA device");
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<LoadedFusion>> LoadedFusion::Load(const std::string& dir,
                                                                 const LoadOptions& options) {
  absl::StatusOr<std::string> manifest = ReadFile(dir + "/manifest.json");
  if (!manifest.ok()) return manifest.status();
  absl::StatusOr<Manifest> parsed = ParseManifest(*manifest);
  if (!parsed.ok()) return parsed.status();
  std::map<std::string, std::string> binaries;
  for (const ManifestKernel& k : parsed->kernels) {
    if (binaries.count(k.binary)) continue;
    absl::StatusOr<std::string> bytes = ReadFile(dir + "/" + k.binary);
    if (!bytes.ok()) return bytes.status();
    binaries[k.binary] = *std::move(bytes);
  }
  return LoadFromMemory(*manifest, binaries, options);
}

absl::StatusOr<std::unique_ptr<LoadedFusion>> LoadedFusion::LoadFromMemory(
    const std::string& manifest_json, const std::map<std::string, std::string>& binaries,
    const LoadOptions& options) {
  absl::StatusOr<Manifest> manifest = ParseManifest(manifest_json);
  if (!manifest.ok()) return manifest.status();
  for (const ManifestKernel& k : manifest->kernels) {
    if (binaries.count(k.binary) == 0) {
      return absl::NotFoundError(
          absl::StrCat("kernel ", k.name, ": binary ", k.binary, " not given"));
    }
  }
  if (absl::Status s = CheckGpuAvailable(); !s.ok()) return s;
  std::unique_ptr<LoadedFusion> f(new LoadedFusion());
  f->manifest_ = *std::move(manifest);
  f->input_align_ = RequiredAlignments(f->manifest_, KernelParam::Kind::kInput);
  f->output_align_ = RequiredAlignments(f->manifest_, KernelParam::Kind::kOutput);
  FUSIOND_CU(Cu().cuDeviceGet(&f->device_, options.device),
             absl::StrCat("device ", options.device));
  FUSIOND_CU(Cu().cuDevicePrimaryCtxRetain(&f->context_, f->device_),
             "retaining the primary context");
  ScopedContext scope(f->context_);
  if (!scope.ok()) return absl::UnavailableError("cannot make the primary context current");
  for (const ManifestKernel& k : f->manifest_.kernels) {
    std::string image = binaries.at(k.binary);
    image.push_back('\0');  // PTX text must be NUL-terminated; harmless for cubins
    CUmodule module = nullptr;
    FUSIOND_CU(Cu().cuModuleLoadData(&module, image.data()),
               absl::StrCat("loading ", k.binary, " for kernel ", k.name));
    f->modules_.push_back(module);
    CUfunction fn = nullptr;
    FUSIOND_CU(Cu().cuModuleGetFunction(&fn, module, k.name.c_str()),
               absl::StrCat("finding kernel ", k.name, " in ", k.binary));
    f->functions_.push_back(fn);
    // Any dynamic shared memory is opted in once per kernel: the 48 KiB
    // default covers static plus dynamic, so even less than 48 KiB of
    // dynamic memory can need it.
    f->smem_opt_in_.push_back(0);
  }
  return f;
}

absl::StatusOr<CUdeviceptr> LoadedFusion::KeptWorkspace(CUstream stream, size_t index,
                                                        size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  DeviceBuffer& kept = kept_[{stream, index}];
  if (kept.get() != 0 && kept.bytes() >= bytes) return kept.get();
  if (kept.get() != 0) {  // growing: an earlier launch on this stream may still use it
    FUSIOND_CU(Cu().cuStreamSynchronize(stream), "waiting to replace a kept workspace");
  }
  CUdeviceptr p = 0;
  FUSIOND_CU(Cu().cuMemAlloc(&p, std::max<size_t>(bytes, 1)),
             absl::StrCat("allocating ", bytes, " bytes for kept workspace ", index));
  kept = DeviceBuffer(p, std::max<size_t>(bytes, 1));
  FUSIOND_CU(Cu().cuMemsetD8Async(p, 0, kept.bytes(), stream), "zeroing a kept workspace");
  return p;
}

LoadedFusion::~LoadedFusion() {
  if (context_ == nullptr) return;
  {
    ScopedContext scope(context_);
    kept_.clear();
    for (CUmodule m : modules_) Cu().cuModuleUnload(m);
  }
  Cu().cuDevicePrimaryCtxRelease(device_);
}

absl::StatusOr<std::vector<Shape>> CheckRunArgs(const Manifest& m,
                                                const std::vector<RunArg>& args) {
  if (args.size() != m.inputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat("fusion ", m.fusion, " takes ", m.inputs.size(),
                                                   " inputs, got ", args.size()));
  }
  std::vector<Shape> shapes;
  for (size_t i = 0; i < args.size(); ++i) {
    const ManifestTensor& want = m.inputs[i];
    const RunArg& a = args[i];
    if (want.scalar != a.is_scalar) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", want.name, " (index ", i, ") must be a ", want.scalar ? "scalar" : "tensor"));
    }
    if (a.is_scalar) {
      if (a.host != nullptr && a.tensor.dtype != want.dtype) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input ", want.name, " (index ", i, ") is a 0-dim CPU tensor of ",
            ElementTypeName(a.tensor.dtype), ", the fusion wants ", ElementTypeName(want.dtype)));
      }
      shapes.emplace_back();
      continue;
    }
    if (a.tensor.dtype != want.dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", want.name, " (index ", i, ") is ", ElementTypeName(a.tensor.dtype),
                       ", the fusion wants ", ElementTypeName(want.dtype)));
    }
    if (!a.tensor.strides.empty() && a.tensor.strides.size() != a.tensor.shape.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", i, ": strides and shape differ in rank"));
    }
    shapes.push_back(a.tensor.shape);
  }
  return shapes;
}

absl::Status CheckOutputArgs(const Manifest& m, const LaunchPlan& plan,
                             const std::vector<TensorArg>& outputs) {
  if (outputs.size() != m.outputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat("fusion ", m.fusion, " has ", m.outputs.size(),
                                                   " outputs, got ", outputs.size()));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TensorArg& o = outputs[i];
    if (o.dtype != m.outputs[i].dtype || o.shape != plan.output_shapes[i] ||
        !IsDense(o.shape, o.strides)) {
      return absl::InvalidArgumentError(
          absl::StrCat("output ", i, " must be a dense ", ElementTypeName(m.outputs[i].dtype), " ",
                       ShapeToString(plan.output_shapes[i]), ", got ", ElementTypeName(o.dtype),
                       " ", ShapeToString(o.shape)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<LaunchPlan> LoadedFusion::Plan(const std::vector<RunArg>& args) const {
  absl::StatusOr<std::vector<Shape>> shapes = CheckRunArgs(manifest_, args);
  if (!shapes.ok()) return shapes.status();
  return PlanLaunch(manifest_, *shapes);
}

absl::StatusOr<std::vector<OutputTensor>> LoadedFusion::Run(const std::vector<RunArg>& args,
                                                            const RunOptions& options) {
  absl::StatusOr<LaunchPlan> plan = Plan(args);
  if (!plan.ok()) return plan.status();
  ScopedContext scope(context_);
  std::vector<OutputTensor> outputs;
  std::vector<CUdeviceptr> ptrs;
  for (size_t i = 0; i < manifest_.outputs.size(); ++i) {
    OutputTensor out;
    out.dtype = manifest_.outputs[i].dtype;
    out.shape = plan->output_shapes[i];
    size_t bytes = NumElements(out.shape) * ElementSize(out.dtype);
    if (bytes > 0) {
      CUdeviceptr p = 0;
      FUSIOND_CU(Cu().cuMemAlloc(&p, bytes),
                 absl::StrCat("allocating output ", i, " (", bytes, " bytes)"));
      out.buffer = DeviceBuffer(p, bytes);
    }
    ptrs.push_back(out.buffer.get());
    outputs.push_back(std::move(out));
  }
  if (absl::Status s = Launch(*plan, args, ptrs, options); !s.ok()) return s;
  return outputs;
}

absl::Status LoadedFusion::RunInto(const std::vector<RunArg>& args,
                                   const std::vector<TensorArg>& outputs,
                                   const RunOptions& options) {
  absl::StatusOr<LaunchPlan> plan = Plan(args);
  if (!plan.ok()) return plan.status();
  if (absl::Status s = CheckOutputArgs(manifest_, *plan, outputs); !s.ok()) return s;
  std::vector<CUdeviceptr> ptrs;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TensorArg& o = outputs[i];
    const RequiredAlignment& align = output_align_[i];
    if (align.bytes > 0 && NumElements(o.shape) > 0 && o.data % align.bytes != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "output ", i, " at 0x", absl::Hex(o.data), " is not ", align.bytes,
          "-byte aligned, which kernel ", manifest_.kernels[align.kernel].name, " needs"));
    }
    ptrs.push_back(o.data);
  }
  ScopedContext scope(context_);
  return Launch(*plan, args, ptrs, options);
}

absl::Status LoadedFusion::Launch(const LaunchPlan& plan, const std::vector<RunArg>& args,
                                  const std::vector<CUdeviceptr>& outputs,
                                  const RunOptions& options) {
  CUstream stream = options.stream;
  ScratchList scratch(stream);
  // Dense, aligned input pointers: a non-contiguous input, or a dense one
  // whose pointer is not the multiple some kernel's "align" asks for, is
  // copied to a scratch buffer (allocated, so aligned) on the run's stream.
  std::vector<CUdeviceptr> inputs(args.size(), 0);
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].is_scalar) continue;
    const TensorArg& t = args[i].tensor;
    const bool dense = IsDense(t.shape, t.strides);
    const int align = input_align_[i].bytes;
    const size_t bytes = NumElements(t.shape) * ElementSize(t.dtype);
    if (dense && (align == 0 || bytes == 0 || t.data % align == 0)) {
      inputs[i] = t.data;
      continue;
    }
    absl::StatusOr<CUdeviceptr> copy =
        scratch.Alloc(bytes, absl::StrCat(dense ? "an aligned" : "a dense", " copy of input ", i));
    if (!copy.ok()) return copy.status();
    if (dense) {
      FUSIOND_CU(Cu().cuMemcpyAsync(*copy, t.data, bytes, stream),
                 absl::StrCat("copying input ", i, " to a ", align, "-byte aligned buffer"));
    } else if (absl::Status s =
                   CopyToDense(t.data, t.shape, t.strides, ElementSize(t.dtype), *copy, stream);
               !s.ok()) {
      return s;
    }
    inputs[i] = *copy;
  }
  std::vector<CUdeviceptr> intermediates;
  for (size_t i = 0; i < plan.intermediate_shapes.size(); ++i) {
    absl::StatusOr<CUdeviceptr> p = scratch.Alloc(
        NumElements(plan.intermediate_shapes[i]) * ElementSize(manifest_.intermediates[i].dtype),
        absl::StrCat("intermediate ", i));
    if (!p.ok()) return p.status();
    intermediates.push_back(*p);
  }
  std::vector<CUdeviceptr> workspaces;
  for (size_t i = 0; i < plan.workspace_bytes.size(); ++i) {
    if (manifest_.workspaces[i].zero && manifest_.workspaces[i].keep) {
      absl::StatusOr<CUdeviceptr> p = KeptWorkspace(stream, i, plan.workspace_bytes[i]);
      if (!p.ok()) return p.status();
      workspaces.push_back(*p);
      continue;
    }
    absl::StatusOr<CUdeviceptr> p =
        scratch.Alloc(plan.workspace_bytes[i], absl::StrCat("workspace ", i));
    if (!p.ok()) return p.status();
    if (manifest_.workspaces[i].zero && plan.workspace_bytes[i] > 0) {
      FUSIOND_CU(Cu().cuMemsetD8Async(*p, 0, plan.workspace_bytes[i], stream),
                 "zeroing a workspace");
    }
    workspaces.push_back(*p);
  }
  for (const KernelLaunch& launch : plan.launches) {
    const ManifestKernel& k = manifest_.kernels[launch.kernel];
    CUfunction fn = functions_[launch.kernel];
    // Every parameter is 8 bytes: a device pointer, a double or an int64.
    std::vector<uint64_t> slots(k.params.size());
    std::vector<void*> param_ptrs(k.params.size());
    for (size_t p = 0; p < k.params.size(); ++p) {
      const KernelParam& param = k.params[p];
      switch (param.kind) {
        case KernelParam::Kind::kInput:
          slots[p] = inputs[param.index];
          break;
        case KernelParam::Kind::kOutput:
          slots[p] = outputs[param.index];
          break;
        case KernelParam::Kind::kIntermediate:
          slots[p] = intermediates[param.index];
          break;
        case KernelParam::Kind::kWorkspace:
          slots[p] = workspaces[param.index];
          break;
        case KernelParam::Kind::kScalar: {
          double v = ScalarValue(args[param.index]);
          static_assert(sizeof(v) == sizeof(uint64_t), "double is 8 bytes");
          std::memcpy(&slots[p], &v, sizeof(v));
          break;
        }
        case KernelParam::Kind::kSize: {
          int64_t v = plan.symbols.at(param.symbol);
          std::memcpy(&slots[p], &v, sizeof(v));
          break;
        }
      }
      param_ptrs[p] = &slots[p];
    }
    std::unique_lock<std::mutex> lock(mu_);
    if (launch.smem_bytes > smem_opt_in_[launch.kernel]) {
      FUSIOND_CU(Cu().cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         static_cast<int>(launch.smem_bytes)),
                 absl::StrCat("kernel ", k.name, " asks for ", launch.smem_bytes,
                              " bytes of dynamic shared memory"));
      smem_opt_in_[launch.kernel] = launch.smem_bytes;
    }
    lock.unlock();
    std::string what =
        absl::StrCat("kernel ", k.name, " grid [", launch.grid[0], ", ", launch.grid[1], ", ",
                     launch.grid[2], "] block [", launch.block[0], ", ", launch.block[1], ", ",
                     launch.block[2], "] smem ", launch.smem_bytes);
    if (k.cooperative) {
      int per_sm = 0, sms = 0;
      int threads = launch.block[0] * launch.block[1] * launch.block[2];
      FUSIOND_CU(
          Cu().cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, threads, launch.smem_bytes),
          what);
      FUSIOND_CU(Cu().cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device_),
                 what);
      int64_t blocks = int64_t{launch.grid[0]} * launch.grid[1] * launch.grid[2];
      if (blocks > int64_t{per_sm} * sms) {
        return absl::ResourceExhaustedError(absl::StrCat(what, ": a cooperative launch of ", blocks,
                                                         " blocks exceeds the ", per_sm, " x ", sms,
                                                         " blocks that can be resident at once"));
      }
      FUSIOND_CU(Cu().cuLaunchCooperativeKernel(fn, launch.grid[0], launch.grid[1], launch.grid[2],
                                                launch.block[0], launch.block[1], launch.block[2],
                                                launch.smem_bytes, stream, param_ptrs.data()),
                 what);
    } else {
      FUSIOND_CU(Cu().cuLaunchKernel(fn, launch.grid[0], launch.grid[1], launch.grid[2],
                                     launch.block[0], launch.block[1], launch.block[2],
                                     launch.smem_bytes, stream, param_ptrs.data(), nullptr),
                 what);
    }
  }
  if (options.synchronize) {
    FUSIOND_CU(Cu().cuStreamSynchronize(stream), absl::StrCat("running fusion ", manifest_.fusion));
  }
  return absl::OkStatus();
}

}  // namespace runtime
}  // namespace fusiond
