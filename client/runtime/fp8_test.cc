// fp8 tensors in the C++ runtime (no GPU): the manifest names float8_e4m3fn
// and float8_e5m2, their element size and values, and the checks of run
// arguments and outputs that Run and RunInto make before launching.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "client/runtime/launch_plan.h"
#include "client/runtime/loaded_fusion.h"
#include "client/runtime/manifest.h"

namespace fusiond {
namespace runtime {
namespace {

// Delayed scaling's cast: a bf16 tensor and its fp32 scale in, the fp8
// tensor and the e5m2 copy of a gradient out (tests/frontends'
// fp8_* fusions have this form).
constexpr char kManifest[] = R"json({
  "manifest_version": 3, "fusion": "fp8_cast", "canonical_hash": "ab", "arch": "sm_90",
  "symbols": [{"name": "s0", "input": 0, "axis": 0}, {"name": "s1", "input": 0, "axis": 1}],
  "inputs": [{"name": "T0", "dtype": "bfloat16", "shape": ["s0", "s1"]},
             {"name": "T1", "dtype": "float32", "shape": ["1"]},
             {"name": "T2", "dtype": "Float8_e5m2", "shape": ["s0", "s1"]}],
  "outputs": [{"name": "T3", "dtype": "float8_e4m3fn", "shape": ["s0", "s1"]},
              {"name": "T4", "dtype": "float8_e5m2", "shape": ["s0", "s1"]}],
  "intermediates": [], "workspaces": [],
  "kernels": [{"name": "k0", "binary": "k0.cubin", "scheduler": "pointwise",
               "block": ["128", "1", "1"], "grid": ["ceil_div(s0 * s1, 512)", "1", "1"],
               "smem_bytes": "0",
               "params": [{"kind": "input", "index": 0, "align": 8},
                          {"kind": "input", "index": 1}, {"kind": "input", "index": 2},
                          {"kind": "output", "index": 0, "align": 4},
                          {"kind": "output", "index": 1}, {"kind": "size", "symbol": "s0"},
                          {"kind": "size", "symbol": "s1"}]}]
})json";

TEST(Fp8, ManifestDtypesParse) {
  auto m = ParseManifest(kManifest);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->inputs[2].dtype, ElementType::kFloat8E5M2);  // nvFuser's name
  EXPECT_EQ(m->outputs[0].dtype, ElementType::kFloat8E4M3);
  EXPECT_EQ(m->outputs[1].dtype, ElementType::kFloat8E5M2);
  for (ElementType t : {ElementType::kFloat8E4M3, ElementType::kFloat8E5M2}) {
    EXPECT_EQ(ElementSize(t), 1);
    auto back = ParseElementType(ElementTypeName(t));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, t);
  }
  EXPECT_STREQ(ElementTypeName(ElementType::kFloat8E4M3), "float8_e4m3fn");
  EXPECT_STREQ(ElementTypeName(ElementType::kFloat8E5M2), "float8_e5m2");
  // Names torch and nvFuser do not have stay unknown.
  for (const char* bad : {"float8_e4m3", "float8_e4m3fnuz", "float8_e5m2fnuz", "fp8"}) {
    auto r = ParseManifest(
        absl::StrReplaceAll(kManifest, {{"\"float8_e4m3fn\"", absl::StrCat("\"", bad, "\"")}}));
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(r.status().message(), "outputs[0]: unknown dtype")) << r.status();
  }
}

TEST(Fp8, PlanGivesFp8OutputShapes) {
  auto m = ParseManifest(kManifest);
  ASSERT_TRUE(m.ok()) << m.status();
  auto plan = PlanLaunch(*m, {{256, 1024}, {1}, {256, 1024}});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->output_shapes[0], (Shape{256, 1024}));
  EXPECT_EQ(plan->launches[0].grid[0], 512u);
  // A bad extent of the fp8 input is refused like any other.
  auto bad = PlanLaunch(*m, {{256, 1024}, {1}, {256, 512}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  // The largest align asked of each tensor (1-byte elements need none of their own).
  EXPECT_EQ(RequiredAlignments(*m, KernelParam::Kind::kOutput)[0].bytes, 4);
  EXPECT_EQ(RequiredAlignments(*m, KernelParam::Kind::kOutput)[1].bytes, 0);
}

TEST(Fp8, ElementValues) {
  const ElementType e4 = ElementType::kFloat8E4M3, e5 = ElementType::kFloat8E5M2;
  EXPECT_EQ(Float8Value(0x38, e4), 1.0);
  EXPECT_EQ(Float8Value(0x7e, e4), 448.0);  // the largest finite: S.1111.110
  EXPECT_EQ(Float8Value(0x78, e4), 256.0);  // the top binade is finite
  EXPECT_TRUE(std::isnan(Float8Value(0x7f, e4)));
  EXPECT_TRUE(std::isnan(Float8Value(0xff, e4)));
  EXPECT_EQ(Float8Value(0x08, e4), std::ldexp(1.0, -6));  // smallest normal
  EXPECT_EQ(Float8Value(0x01, e4), std::ldexp(1.0, -9));  // smallest subnormal
  EXPECT_EQ(Float8Value(0xc4, e4), -3.0);
  EXPECT_TRUE(std::signbit(Float8Value(0x80, e4)));
  EXPECT_EQ(Float8Value(0x80, e4), 0.0);
  EXPECT_EQ(Float8Value(0x3c, e5), 1.0);
  EXPECT_EQ(Float8Value(0x7b, e5), 57344.0);
  EXPECT_EQ(Float8Value(0x7c, e5), INFINITY);
  EXPECT_EQ(Float8Value(0xfc, e5), -INFINITY);
  EXPECT_TRUE(std::isnan(Float8Value(0x7d, e5)));
  EXPECT_EQ(Float8Value(0x04, e5), std::ldexp(1.0, -14));
  EXPECT_EQ(Float8Value(0x01, e5), std::ldexp(1.0, -16));
  EXPECT_EQ(Float8Value(0xc2, e5), -3.0);
  // Every finite code is a distinct value, increasing with the code.
  for (ElementType t : {e4, e5}) {
    double last = -1;
    for (int b = 0; b < 0x80; ++b) {
      const double v = Float8Value(static_cast<uint8_t>(b), t);
      if (!std::isfinite(v)) break;
      EXPECT_GT(v, last) << b;
      EXPECT_EQ(Float8Value(static_cast<uint8_t>(b | 0x80), t), -v) << b;
      last = v;
    }
  }
  EXPECT_TRUE(std::isnan(Float8Value(0x38, ElementType::kBool)));
}

TEST(Fp8, HostScalarOfAnFp8Element) {
  const uint8_t e4 = 0xb0;  // -0.5 in e4m3fn
  const uint8_t e5 = 0x48;  // 8 in e5m2
  EXPECT_EQ(ScalarValue(RunArg::HostScalar(&e4, ElementType::kFloat8E4M3)), -0.5);
  EXPECT_EQ(ScalarValue(RunArg::HostScalar(&e5, ElementType::kFloat8E5M2)), 8.0);
}

std::vector<RunArg> Args(ElementType in2, Shape s2) {
  return {RunArg::Tensor({0x1000, ElementType::kBFloat16, {256, 1024}, {}}),
          RunArg::Tensor({0x2000, ElementType::kFloat32, {1}, {}}),
          RunArg::Tensor({0x3000, in2, std::move(s2), {}})};
}

TEST(Fp8, RunArgumentsAreCheckedByDtype) {
  auto m = ParseManifest(kManifest);
  ASSERT_TRUE(m.ok()) << m.status();
  auto shapes = CheckRunArgs(*m, Args(ElementType::kFloat8E5M2, {256, 1024}));
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[2], (Shape{256, 1024}));
  // The other fp8 format, and other 1-byte types, are refused by name.
  for (ElementType wrong : {ElementType::kFloat8E4M3, ElementType::kBool}) {
    auto r = CheckRunArgs(*m, Args(wrong, {256, 1024}));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(r.status().message(),
                                  absl::StrCat("input T2 (index 2) is ", ElementTypeName(wrong),
                                               ", the fusion wants float8_e5m2")))
        << r.status();
  }
  auto plan = PlanLaunch(*m, *shapes);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const auto out = [](ElementType t0, ElementType t1, Shape s0) {
    return std::vector<TensorArg>{{0x4000, t0, std::move(s0), {}}, {0x5000, t1, {256, 1024}, {}}};
  };
  const ElementType e4 = ElementType::kFloat8E4M3, e5 = ElementType::kFloat8E5M2;
  EXPECT_TRUE(CheckOutputArgs(*m, *plan, out(e4, e5, {256, 1024})).ok());
  absl::Status swapped = CheckOutputArgs(*m, *plan, out(e5, e4, {256, 1024}));
  EXPECT_EQ(swapped.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(swapped.message(),
                                "output 0 must be a dense float8_e4m3fn [256, 1024], got "
                                "float8_e5m2 [256, 1024]"))
      << swapped;
  EXPECT_EQ(CheckOutputArgs(*m, *plan, out(e4, e5, {256, 512})).code(),
            absl::StatusCode::kInvalidArgument);
  std::vector<TensorArg> strided = out(e4, e5, {256, 1024});
  strided[0].strides = {1, 256};
  EXPECT_EQ(CheckOutputArgs(*m, *plan, strided).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace runtime
}  // namespace fusiond
