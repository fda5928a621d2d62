// A 0-dim CPU tensor input (is_cpu=True) through the pipeline: the same
// values as a define_scalar input, its own canonical hash (the manifest
// differs), and the manifest naming it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "compiler/codegen/manifest.h"
#include "compiler/frontend/frontend.h"
#include "compiler/pipeline.h"
#include "compiler/reference/reference.h"

namespace fusiond {
namespace {

// param - lr / (1 - beta1 ** step) * grad, the step as `decl`.
std::string Script(const std::string& decl) {
  return absl::StrCat(
      "import torch\nfrom nvfuser import FusionDefinition, DataType\n\n"
      "def fusion(fd: FusionDefinition) -> None:\n"
      "    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], "
      "dtype=DataType.Float)\n"
      "    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], "
      "dtype=DataType.Float)\n"
      "    T2 = ",
      decl,
      "\n"
      "    S3 = fd.define_scalar(0.900000, dtype=DataType.Double)\n"
      "    S4 = fd.ops.pow(S3, T2)\n"
      "    S5 = fd.ops.sub(1.0, S4)\n"
      "    S6 = fd.ops.div(0.001, S5)\n"
      "    T7 = fd.ops.mul(T1, S6)\n"
      "    T8 = fd.ops.sub(T0, T7)\n"
      "    fd.add_output(T8)\n\n"
      "with FusionDefinition() as fd:\n    fusion(fd)\n");
}

constexpr char kCpu[] =
    "fd.define_tensor(shape=[], contiguity=[], dtype=DataType.Float, is_cpu=True, "
    "stride_order=[])";
constexpr char kScalar[] = "fd.define_scalar(None, dtype=DataType.Float)";

TEST(CpuScalarPipeline, SameValuesOwnHashManifestNamesIt) {
  auto cpu = ParseReproScript(Script(kCpu), "cpu.py");
  auto scalar = ParseReproScript(Script(kScalar), "scalar.py");
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  const std::vector<std::vector<int64_t>> shapes = {{16, 24}, {16, 24}, {}};
  std::vector<HostTensor> in = RandomInputs(cpu->graph, shapes, 5);
  in[2].data = {3.0};
  auto a = Evaluate(cpu->graph, in);
  auto b = Evaluate(scalar->graph, in);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ((*a)[0].data, (*b)[0].data);
  // param - 0.001 / (1 - 0.9^3) * grad, in float64 then rounded to float32.
  EXPECT_EQ(
      (*a)[0].data[7],
      RoundTo(DataType::kFloat, in[0].data[7] - 0.001 / (1 - 0.9 * 0.9 * 0.9) * in[1].data[7]));

  CompileOptions options;
  options.generate_code = false;
  auto ca = CompileFusion(cpu->graph, shapes, options);
  auto cb = CompileFusion(scalar->graph, shapes, options);
  ASSERT_TRUE(ca.ok()) << ca.status();
  ASSERT_TRUE(cb.ok()) << cb.status();
  EXPECT_NE(ca->canonical_hash, cb->canonical_hash);
  EXPECT_EQ(ca->segments.size(), 1u);
  const std::string ma = FusionManifestJson(*ca, "cpu");
  const std::string mb = FusionManifestJson(*cb, "scalar");
  EXPECT_TRUE(absl::StrContains(
      ma, R"({"name": "T2", "dtype": "float32", "shape": [], "scalar": true, "cpu_tensor": true})"))
      << ma;
  EXPECT_FALSE(absl::StrContains(mb, "cpu_tensor")) << mb;
}

}  // namespace
}  // namespace fusiond
