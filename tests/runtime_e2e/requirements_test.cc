// The manifests the compiler writes, read back by the C++ runtime (no GPU,
// no NVRTC): every specialized kernel's requirements hold at the shapes it
// was compiled for (random graphs, each segment at its own sizes), so the
// runtime never refuses the shapes a fusion was compiled for; and a row
// wider than compiled for, or of another width, is refused.
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "client/runtime/launch_plan.h"
#include "client/runtime/manifest.h"
#include "compiler/codegen/codegen.h"
#include "compiler/codegen/manifest.h"
#include "compiler/ir/builder.h"
#include "compiler/pipeline.h"
#include "tests/random/random_graph.h"
#include "tests/runtime_e2e/manifest_without_binaries.h"

namespace fusiond {
namespace {

std::vector<runtime::Shape> Shapes(const std::vector<std::vector<int64_t>>& s) {
  return std::vector<runtime::Shape>(s.begin(), s.end());
}

TEST(Requirements, HoldAtTheShapesCompiledFor) {
  int specialized = 0, cases = 0;
  for (int seed = 3000; seed < 3400; ++seed) {
    RandomGraphCase c = RandomGraphWithShapes(seed);
    CompileOptions co;
    co.generate_code = false;
    auto r = CompileFusion(c.graph, c.input_shapes, co);
    if (!r.ok()) continue;
    auto json = ManifestWithoutBinaries(*r);
    if (!json.ok()) continue;  // a graph the generator refuses (Unimplemented)
    auto m = runtime::ParseManifest(*json);
    ASSERT_TRUE(m.ok()) << "seed " << seed << ": " << m.status() << "\n" << *json;
    for (const runtime::ManifestKernel& k : m->kernels) specialized += !k.requirements.empty();
    auto plan = runtime::PlanLaunch(*m, Shapes(c.input_shapes));
    EXPECT_TRUE(plan.ok()) << "seed " << seed << ": " << plan.status() << "\n" << *json;
    ++cases;
  }
  EXPECT_GT(cases, 300);
  EXPECT_GT(specialized, 10);  // the check is not vacuous
}

// rmsnorm backward's shape as a symbolic [M, N] softmax: compiled at
// 256 x 4096, it runs any M with N = 4096 (its row extent is a literal),
// and refuses the rest before launching.
TEST(Requirements, RefuseRowsOutsideTheClass) {
  RandomGraphCase c;
  {
    GraphBuilder b(&c.graph);
    ValueId x = *b.DefineTensor("x", DataType::kBFloat16, {-1, -1});
    ValueId xf = *b.Cast(x, DataType::kFloat);
    ValueId s = *b.Reduce(OpKind::kSum, xf, {1}, false);
    ValueId sb = *b.BroadcastInDim(s, c.graph.value(x).shape, {0});
    ASSERT_TRUE(b.AddOutput(*b.Cast(*b.Binary(OpKind::kDiv, xf, sb), DataType::kBFloat16)).ok());
  }
  CompileOptions co;
  co.generate_code = false;
  auto r = CompileFusion(c.graph, {{256, 4096}}, co);
  ASSERT_TRUE(r.ok()) << r.status();
  auto json = ManifestWithoutBinaries(*r);
  ASSERT_TRUE(json.ok()) << json.status();
  auto m = runtime::ParseManifest(*json);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->kernels.size(), 1u);
  ASSERT_FALSE(m->kernels[0].requirements.empty()) << *json;
  for (const runtime::Shape& ok :
       {runtime::Shape{256, 4096}, runtime::Shape{7, 4096}, runtime::Shape{100000, 4096}}) {
    EXPECT_TRUE(runtime::PlanLaunch(*m, {ok}).ok()) << ok[0] << "x" << ok[1];
  }
  for (const runtime::Shape& no :
       {runtime::Shape{256, 4100}, runtime::Shape{256, 4097}, runtime::Shape{256, 8192},
        runtime::Shape{256, 4088}, runtime::Shape{7, 8}}) {
    auto plan = runtime::PlanLaunch(*m, {no});
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition) << no[0] << "x" << no[1];
  }
}

}  // namespace
}  // namespace fusiond
