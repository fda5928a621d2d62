#include "tests/runtime_e2e/gpu_run.h"

#include <cmath>
#include <cstring>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "client/runtime/driver_api.h"
#include "client/runtime/launch_plan.h"
#include "tests/util/half_bits.h"

namespace fusiond {
namespace {

using runtime::Cu;
using runtime::ElementType;

// Host doubles (already rounded to dtype) -> the dtype's bytes.
absl::StatusOr<std::string> Encode(const HostTensor& t, ElementType et) {
  std::string bytes;
  auto put = [&](const void* p, size_t n) { bytes.append(static_cast<const char*>(p), n); };
  for (double d : t.data) {
    switch (et) {
      case ElementType::kBFloat16: {
        float f = static_cast<float>(d);
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        uint16_t h = static_cast<uint16_t>(bits >> 16);  // exact: d is a bf16 value
        put(&h, 2);
        break;
      }
      case ElementType::kFloat16: {
        const uint16_t h = HalfBits(d);
        put(&h, 2);
        break;
      }
      case ElementType::kFloat32: {
        float f = static_cast<float>(d);
        put(&f, 4);
        break;
      }
      case ElementType::kFloat64:
        put(&d, 8);
        break;
      case ElementType::kInt32: {
        int32_t v = static_cast<int32_t>(d);
        put(&v, 4);
        break;
      }
      case ElementType::kInt64: {
        int64_t v = static_cast<int64_t>(d);
        put(&v, 8);
        break;
      }
      case ElementType::kBool: {
        uint8_t v = d != 0;
        put(&v, 1);
        break;
      }
      case ElementType::kFloat8E4M3:
      case ElementType::kFloat8E5M2: {
        absl::StatusOr<uint8_t> v = Float8Bits(d, et);
        if (!v.ok()) return v.status();
        put(&*v, 1);
        break;
      }
      default:
        return absl::UnimplementedError(absl::StrCat("dtype ", runtime::ElementTypeName(et)));
    }
  }
  return bytes;
}

double HalfToDouble(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v = exp == 0    ? std::ldexp(mant, -24)
             : exp == 31 ? (mant ? NAN : INFINITY)
                         : std::ldexp(mant + 1024, exp - 25);
  return sign ? -v : v;
}

std::vector<double> Decode(const std::string& bytes, ElementType t) {
  std::vector<double> out;
  const size_t es = runtime::ElementSize(t);
  for (size_t i = 0; i + es <= bytes.size(); i += es) {
    const char* p = bytes.data() + i;
    switch (t) {
      case ElementType::kBFloat16: {
        uint16_t h;
        std::memcpy(&h, p, 2);
        uint32_t bits = uint32_t{h} << 16;
        float f;
        std::memcpy(&f, &bits, 4);
        out.push_back(f);
        break;
      }
      case ElementType::kFloat16: {
        uint16_t h;
        std::memcpy(&h, p, 2);
        out.push_back(HalfToDouble(h));
        break;
      }
      case ElementType::kFloat32: {
        float f;
        std::memcpy(&f, p, 4);
        out.push_back(f);
        break;
      }
      case ElementType::kFloat64: {
        double d;
        std::memcpy(&d, p, 8);
        out.push_back(d);
        break;
      }
      case ElementType::kInt32: {
        int32_t v;
        std::memcpy(&v, p, 4);
        out.push_back(v);
        break;
      }
      case ElementType::kInt64: {
        int64_t v;
        std::memcpy(&v, p, 8);
        out.push_back(static_cast<double>(v));
        break;
      }
      case ElementType::kBool:
        out.push_back(*p != 0);
        break;
      case ElementType::kFloat8E4M3:
      case ElementType::kFloat8E5M2:
        out.push_back(runtime::Float8Value(static_cast<uint8_t>(*p), t));
        break;
      default:
        out.push_back(NAN);
    }
  }
  return out;
}

absl::Status Check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, " failed: CUDA error ", static_cast<int>(r)));
}

// Frees every pointer it holds when it goes.
struct Allocations {
  std::vector<CUdeviceptr> ptrs;
  ~Allocations() {
    for (CUdeviceptr p : ptrs) Cu().cuMemFree(p);
  }
  absl::StatusOr<CUdeviceptr> Alloc(size_t bytes) {
    CUdeviceptr p = 0;
    absl::Status s = Check(Cu().cuMemAlloc(&p, std::max<size_t>(bytes, 1)), "cuMemAlloc");
    if (!s.ok()) return s;
    ptrs.push_back(p);
    return p;
  }
};

}  // namespace

absl::StatusOr<uint8_t> Float8Bits(double v, ElementType t) {
  if (t != ElementType::kFloat8E4M3 && t != ElementType::kFloat8E5M2) {
    return absl::InvalidArgumentError(
        absl::StrCat(runtime::ElementTypeName(t), " is not an fp8 type"));
  }
  // The codes in value order, once per format: a binary search finds v.
  static const auto* const kCodes = [] {
    auto* codes = new std::map<ElementType, std::map<double, uint8_t>>();
    for (ElementType f : {ElementType::kFloat8E4M3, ElementType::kFloat8E5M2}) {
      for (int b = 0; b < 256; ++b) {
        const double x = runtime::Float8Value(static_cast<uint8_t>(b), f);
        if (!std::isnan(x)) (*codes)[f].emplace(x, static_cast<uint8_t>(b));  // +0 before -0
      }
    }
    return codes;
  }();
  if (std::isnan(v)) return static_cast<uint8_t>(std::signbit(v) ? 0xff : 0x7f);
  const auto& codes = kCodes->at(t);
  auto it = codes.find(v);
  if (it == codes.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(v, " is not a ", runtime::ElementTypeName(t), " value"));
  }
  return static_cast<uint8_t>(std::signbit(v) && v == 0 ? 0x80 : it->second);
}

absl::StatusOr<std::vector<HostTensor>> RunOnGpu(runtime::LoadedFusion& fusion,
                                                 const std::vector<HostTensor>& inputs,
                                                 uint8_t fill, bool misalign) {
  const runtime::Manifest& m = fusion.manifest();
  if (inputs.size() != m.inputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(inputs.size(), " inputs for a manifest of ", m.inputs.size()));
  }
  // The primary context of device 0 (the one LoadedFusion launches in) is
  // current for the allocations and copies below, whoever called.
  CUdevice device = 0;
  CUcontext context = nullptr;
  if (Cu().cuDeviceGet(&device, 0) != CUDA_SUCCESS ||
      Cu().cuDevicePrimaryCtxRetain(&context, device) != CUDA_SUCCESS ||
      Cu().cuCtxSetCurrent(context) != CUDA_SUCCESS) {
    return absl::UnavailableError("cannot make device 0's primary context current");
  }
  struct ReleaseContext {
    CUdevice device;
    ~ReleaseContext() { Cu().cuDevicePrimaryCtxRelease(device); }
  } release{device};
  Allocations mem;
  std::vector<runtime::RunArg> args;
  std::vector<runtime::Shape> shapes;
  bool shifted = false;
  std::vector<std::string> host_scalars(inputs.size());  // cpu_tensor inputs' elements
  for (size_t i = 0; i < inputs.size(); ++i) {
    const HostTensor& t = inputs[i];
    shapes.push_back(t.shape);
    if (m.inputs[i].scalar && m.inputs[i].cpu_tensor && t.data.size() == 1) {
      // As a 0-dim CPU tensor: the runtime reads the host element when it packs.
      absl::StatusOr<std::string> bytes = Encode(t, m.inputs[i].dtype);
      if (!bytes.ok()) return bytes.status();
      host_scalars[i] = *std::move(bytes);
      args.push_back(runtime::RunArg::HostScalar(host_scalars[i].data(), m.inputs[i].dtype));
      continue;
    }
    if (m.inputs[i].scalar) {
      args.push_back(runtime::RunArg::Scalar(t.data.empty() ? 0.0 : t.data[0]));
      continue;
    }
    const ElementType et = m.inputs[i].dtype;
    absl::StatusOr<std::string> bytes = Encode(t, et);
    if (!bytes.ok()) return bytes.status();
    const size_t shift = misalign && !shifted && !t.shape.empty() ? runtime::ElementSize(et) : 0;
    shifted |= shift > 0;
    absl::StatusOr<CUdeviceptr> p = mem.Alloc(bytes->size() + shift);
    if (!p.ok()) return p.status();
    if (absl::Status s =
            Check(Cu().cuMemcpyHtoD(*p + shift, bytes->data(), bytes->size()), "cuMemcpyHtoD");
        !s.ok()) {
      return s;
    }
    args.push_back(runtime::RunArg::Tensor({*p + shift, et, t.shape, {}}));
  }
  absl::StatusOr<runtime::LaunchPlan> plan = runtime::PlanLaunch(m, shapes);
  if (!plan.ok()) return plan.status();
  std::vector<runtime::TensorArg> outs;
  for (size_t i = 0; i < plan->output_shapes.size(); ++i) {
    const ElementType et = m.outputs[i].dtype;
    const size_t bytes = runtime::NumElements(plan->output_shapes[i]) * runtime::ElementSize(et);
    absl::StatusOr<CUdeviceptr> p = mem.Alloc(bytes);
    if (!p.ok()) return p.status();
    if (absl::Status s = Check(Cu().cuMemsetD8Async(*p, fill, bytes, nullptr), "cuMemsetD8Async");
        !s.ok()) {
      return s;
    }
    outs.push_back({*p, et, plan->output_shapes[i], {}});
  }
  if (absl::Status s = fusion.RunInto(args, outs, runtime::RunOptions{nullptr, true}); !s.ok())
    return s;
  std::vector<HostTensor> result;
  for (const runtime::TensorArg& o : outs) {
    std::string bytes(runtime::NumElements(o.shape) * runtime::ElementSize(o.dtype), '\0');
    if (absl::Status s =
            Check(Cu().cuMemcpyDtoH(bytes.data(), o.data, bytes.size()), "cuMemcpyDtoH");
        !s.ok()) {
      return s;
    }
    std::optional<DataType> dtype = ParseDataType(runtime::ElementTypeName(o.dtype));
    if (!dtype.has_value()) {
      return absl::InternalError(absl::StrCat("no dtype ", runtime::ElementTypeName(o.dtype)));
    }
    result.push_back(HostTensor{*dtype, o.shape, Decode(bytes, o.dtype)});
  }
  return result;
}

double FilledValue(DataType dtype, uint8_t fill) {
  absl::StatusOr<ElementType> et = runtime::ParseElementType(DataTypeName(dtype));
  if (!et.ok()) return NAN;
  const std::string bytes(runtime::ElementSize(*et), static_cast<char>(fill));
  return Decode(bytes, *et)[0];
}

}  // namespace fusiond
