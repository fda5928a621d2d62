// The kernel manifest (launch recipe, docs/manifest.md) as plain structs,
// parsed from manifest.json and checked for internal consistency: every
// index in range, every expression parses and reads only declared symbols.
// Reads manifest versions 1 to 3 (2 adds kernel "requires" and param
// "align", 3 the "equals" condition of "requires").
#ifndef FUSIOND_CLIENT_RUNTIME_MANIFEST_H_
#define FUSIOND_CLIENT_RUNTIME_MANIFEST_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "client/runtime/expr.h"

namespace fusiond {
namespace runtime {

// Element types the runtime knows, by their manifest names.
enum class ElementType {
  kBool,
  kInt32,
  kInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  kFloat8E4M3,  // float8_e4m3fn: no infinities, NaN is S.1111.111
  kFloat8E5M2,  // float8_e5m2: IEEE-like, with infinities
};
// "bool", "int32", "int64", "float16", "bfloat16", "float32", "float64",
// "float8_e4m3fn", "float8_e5m2".
const char* ElementTypeName(ElementType t);
int ElementSize(ElementType t);
// Manifest names, plus nvFuser's ("Float", "BFloat16", "Half", "Double",
// "Int", "Int32", "Bool", "Float8_e4m3fn", "Float8_e5m2").
absl::StatusOr<ElementType> ParseElementType(std::string_view name);
// The value of one fp8 element's bits (`t` is kFloat8E4M3 or kFloat8E5M2;
// NaN for any other type).
double Float8Value(uint8_t bits, ElementType t);

struct ManifestSymbol {
  std::string name;  // "s0"
  int input = 0;     // bound from inputs[input].shape[axis]
  int axis = 0;
};

// An input, output or intermediate tensor (or a scalar input: `scalar`).
struct ManifestTensor {
  std::string name;
  ElementType dtype = ElementType::kFloat32;
  std::vector<Expr> shape;
  // A scalar input (a number, not a tensor), passed to kernels as double.
  bool scalar = false;
  // Scalar inputs only: the caller passes a 0-dim CPU tensor (nvFuser's
  // is_cpu=True; RunArg::HostScalar) whose value the runtime reads at launch.
  bool cpu_tensor = false;
};

struct ManifestWorkspace {
  Expr bytes;
  bool zero = false;  // cuMemsetD8Async to 0 before the first kernel
  // With zero: the kernel leaves it fit for the next launch (the grid
  // barrier's words), so it is zeroed once and kept per stream.
  bool keep = false;
};

struct KernelParam {
  enum class Kind { kInput, kOutput, kIntermediate, kWorkspace, kScalar, kSize };
  Kind kind = Kind::kInput;
  int index = 0;       // all but kSize
  std::string symbol;  // kSize: the symbol whose int64 value is passed
  // kInput/kOutput: bytes the pointer must be a multiple of (a power of two,
  // 1..256). Default: 0, not given (the element's natural alignment, no check).
  int align = 0;
};

// One condition of a kernel's "requires" (manifest v2; "equals" since v3): the kernel was
// compiled for shapes where `expr` satisfies it and is never launched where
// it does not.
struct KernelRequirement {
  enum class Kind { kMultipleOf, kAtMost, kEquals };
  Expr expr;
  Kind kind = Kind::kMultipleOf;
  // kMultipleOf: N > 0, holds when value % N == 0; kAtMost: holds when
  // value <= N; kEquals (version 3): holds when value == N. Default: 1.
  int64_t bound = 1;

  bool Holds(int64_t value) const;
  // "is a multiple of 8", "<= 8192", "== 2048".
  std::string Describe() const;
};

struct ManifestKernel {
  std::string name;       // the kernel's (extern "C") function name
  std::string binary;     // file name beside manifest.json
  std::string scheduler;  // informational
  bool cooperative = false;
  Expr block[3];
  Expr grid[3];
  Expr smem_bytes;
  std::vector<KernelParam> params;
  // "requires": every condition must hold for the planned shapes. Default:
  // empty (no conditions).
  std::vector<KernelRequirement> requirements;
};

struct Manifest {
  int version = 1;
  std::string fusion;
  std::string canonical_hash;
  std::string arch;
  std::vector<ManifestSymbol> symbols;
  std::vector<ManifestTensor> inputs;
  std::vector<ManifestTensor> outputs;
  std::vector<ManifestTensor> intermediates;
  std::vector<ManifestWorkspace> workspaces;
  std::vector<ManifestKernel> kernels;
};

// InvalidArgument "manifest: <where>: <what>" for malformed or inconsistent
// manifests; Unimplemented for a manifest_version other than 1, 2 and 3.
absl::StatusOr<Manifest> ParseManifest(std::string_view json_text);

// What a tensor's device pointer must be a multiple of: the largest "align"
// over every kernel param bound to it.
struct RequiredAlignment {
  int bytes = 0;    // 0: no param gives "align" (no check)
  int kernel = -1;  // the first kernel (index into Manifest::kernels) asking for `bytes`
};
// One entry per manifest input (kind kInput) or output (kind kOutput).
std::vector<RequiredAlignment> RequiredAlignments(const Manifest& m, KernelParam::Kind kind);

}  // namespace runtime
}  // namespace fusiond

#endif  // FUSIOND_CLIENT_RUNTIME_MANIFEST_H_
