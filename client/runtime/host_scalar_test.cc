// Scalar inputs given as 0-dim CPU tensors (the manifest's cpu_tensor):
// the manifest field and the value packed for the kernels (no GPU needed).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "client/runtime/loaded_fusion.h"
#include "client/runtime/manifest.h"

namespace fusiond {
namespace runtime {
namespace {

// One kernel reading a tensor and a float32 step given as a CPU tensor.
constexpr char kManifest[] = R"json({
  "manifest_version": 3, "fusion": "adam", "canonical_hash": "ab", "arch": "sm_90",
  "symbols": [{"name": "s0", "input": 0, "axis": 0}],
  "inputs": [{"name": "T0", "dtype": "float32", "shape": ["s0"]},
             {"name": "T1", "dtype": "float32", "shape": [], "scalar": true, "cpu_tensor": true},
             {"name": "S2", "dtype": "float64", "shape": [], "scalar": true}],
  "outputs": [{"name": "T3", "dtype": "float32", "shape": ["s0"]}],
  "intermediates": [], "workspaces": [],
  "kernels": [{"name": "k0", "binary": "k0.cubin", "scheduler": "pointwise",
               "block": ["128", "1", "1"], "grid": ["ceil_div(s0, 128)", "1", "1"],
               "smem_bytes": "0",
               "params": [{"kind": "input", "index": 0}, {"kind": "scalar", "index": 1},
                          {"kind": "scalar", "index": 2}, {"kind": "output", "index": 0},
                          {"kind": "size", "symbol": "s0"}]}]
})json";

TEST(HostScalar, ManifestSaysWhichScalarIsACpuTensor) {
  auto m = ParseManifest(kManifest);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_FALSE(m->inputs[0].cpu_tensor);
  EXPECT_TRUE(m->inputs[1].scalar);
  EXPECT_TRUE(m->inputs[1].cpu_tensor);
  EXPECT_FALSE(m->inputs[2].cpu_tensor);
}

TEST(HostScalar, CpuTensorOnlyOnScalarInputsAndOnlyABool) {
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {R"("shape": ["s0"]},)", R"("shape": ["s0"], "cpu_tensor": true},)"},
           {R"("cpu_tensor": true)", R"("cpu_tensor": 1)"}}) {
    const std::string bad = absl::StrReplaceAll(kManifest, {{from, to}});
    ASSERT_NE(bad, kManifest);
    auto m = ParseManifest(bad);
    ASSERT_FALSE(m.ok()) << to;
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(m.status().message(), "inputs[")) << m.status();
    EXPECT_TRUE(absl::StrContains(m.status().message(), "cpu_tensor")) << m.status();
  }
}

TEST(HostScalar, ValueReadFromTheHostElementOfEachDtype) {
  const float f = 3.0f;
  const double d = -0.1;
  const int64_t i64 = int64_t{1} << 40;
  const int32_t i32 = -7;
  const uint8_t b = 1;
  const uint16_t bf = 0x3fc0;    // bfloat16 1.5
  const uint16_t half = 0xc100;  // float16 -2.5
  const uint16_t tiny = 0x0001;  // float16 2^-24, subnormal
  const uint16_t inf = 0x7c00;
  EXPECT_EQ(ScalarValue(RunArg::HostScalar(&f, ElementType::kFloat32)), 3.0);
  EXPECT_EQ(ScalarValue(RunArg::HostScalar(&d, ElementType::kFloat64)), -0.1);
  EXPECT_EQ(ScalarValue(RunArg::HostScalar(&i64, ElementType::kInt64)), 1099511627776.0);
  EXPECT_EQ(ScalarValue(RunArg::HostScalar(&i32, ElementType::kInt32)), -7.0);
  EXPECT_EQ(ScalarValue(RunArg::HostScalar(&b, ElementType::kBool)), 1.0);
  EXPECT_EQ(ScalarValue(RunArg::HostScalar(&bf, ElementType::kBFloat16)), 1.5);
  EXPECT_EQ(ScalarValue(RunArg::HostScalar(&half, ElementType::kFloat16)), -2.5);
  EXPECT_EQ(ScalarValue(RunArg::HostScalar(&tiny, ElementType::kFloat16)), std::ldexp(1.0, -24));
  EXPECT_TRUE(std::isinf(ScalarValue(RunArg::HostScalar(&inf, ElementType::kFloat16))));
  // A number stays the number; the element is read when packed, not when made.
  EXPECT_EQ(ScalarValue(RunArg::Scalar(0.25)), 0.25);
  float step = 1.0f;
  const RunArg arg = RunArg::HostScalar(&step, ElementType::kFloat32);
  step = 4.0f;
  EXPECT_EQ(ScalarValue(arg), 4.0);
}

}  // namespace
}  // namespace runtime
}  // namespace fusiond
