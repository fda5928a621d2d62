// A symbolic definition's manifest against the sizes its kernels were built
// for (no GPU, no NVRTC): the C++ runtime must refuse every launch whose
// sizes the kernels do not compute right, and keep accepting the sizes that
// vary together as the definition says (another batch size).
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "client/runtime/launch_plan.h"
#include "client/runtime/manifest.h"
#include "compiler/codegen/codegen.h"
#include "compiler/codegen/generator.h"
#include "compiler/codegen/manifest.h"
#include "compiler/ir/builder.h"
#include "compiler/ir/printer.h"
#include "compiler/pipeline.h"
#include "tests/random/random_graph.h"
#include "tests/runtime_e2e/manifest_without_binaries.h"

namespace fusiond {
namespace {

template <typename T>
T Must(absl::StatusOr<T> v) {
  EXPECT_TRUE(v.ok()) << v.status();
  return *std::move(v);
}

struct Compiled {
  CompileResult result;
  runtime::Manifest manifest;
  std::string json;
};

Compiled Compile(const Graph& g, const std::vector<std::vector<int64_t>>& shapes) {
  CompileOptions co;
  co.generate_code = false;
  Compiled c;
  c.result = Must(CompileFusion(g, shapes, co));
  c.json = Must(ManifestWithoutBinaries(c.result));
  c.manifest = Must(runtime::ParseManifest(c.json));
  return c;
}

absl::Status Plan(const Compiled& c, std::vector<runtime::Shape> shapes) {
  return runtime::PlanLaunch(c.manifest, shapes).status();
}

// Inputs of their own symbols, equal only at the sizes compiled for: a sum
// over T1's rows broadcast into T0's shape is split into segments of static
// sizes (segmenter_test), so its kernels compute only those sizes. The
// manifest keeps the definition's symbols; the runtime must refuse others.
TEST(SizeClass, StaticSegmentsOfASymbolicDefinitionRunOnlyTheirSizes) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("T0", DataType::kFloat, {-1, -1}));
  ValueId y = Must(b.DefineTensor("T1", DataType::kFloat, {-1, -1}));
  ValueId r = Must(b.Reduce(OpKind::kSum, y, {1}, true));
  ValueId rb = Must(b.BroadcastInDim(r, g.value(x).shape, {0, 1}));
  ASSERT_TRUE(b.AddOutput(Must(b.Binary(OpKind::kAdd, rb, x))).ok());
  Compiled c = Compile(g, {{64, 256}, {64, 256}});
  for (const SegmentResult& s : c.result.segments)
    ASSERT_TRUE(s.graph.symbols.empty()) << PrintGraph(s.graph);  // literal 64 and 256
  ASSERT_FALSE(c.manifest.symbols.empty()) << c.json;             // the definition's
  EXPECT_TRUE(Plan(c, {{64, 256}, {64, 256}}).ok()) << c.json;
  for (const std::vector<runtime::Shape>& other :
       {std::vector<runtime::Shape>{{128, 256}, {128, 256}}, {{64, 256}, {64, 512}}}) {
    absl::Status s = Plan(c, other);
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s << "\n" << c.json;
  }
}

// A symbolic axis of size 1 at the sizes compiled for, reduced: the
// analysis sees no reduction there, so the definition is split into static
// segments; the runtime must refuse a wider row.
TEST(SizeClass, ASymbolicAxisOfSizeOneIsNotABroadcastAtOtherSizes) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("T0", DataType::kFloat, {-1, -1}));
  ValueId s = Must(b.Reduce(OpKind::kSum, x, {1}, false));
  ASSERT_TRUE(b.AddOutput(s).ok());
  Compiled c = Compile(g, {{64, 1}});
  EXPECT_TRUE(Plan(c, {{64, 1}}).ok()) << c.json;
  absl::Status other = Plan(c, {{64, 8}});
  EXPECT_EQ(other.code(), absl::StatusCode::kFailedPrecondition) << other << "\n" << c.json;
}

// An unused input of its own symbols: no scheduler takes the whole graph
// (the analysis places only axes of the space's symbols), so the segment is
// static; a new batch size is refused, not run with 64 rows.
TEST(SizeClass, AnUnusedInputOfItsOwnSymbolsGivesAStaticKernel) {
  Graph g;
  GraphBuilder b(&g);
  Must(b.DefineTensor("T0", DataType::kFloat, {-1, -1}));
  ValueId y = Must(b.DefineTensor("T1", DataType::kFloat, {-1, -1}));
  ASSERT_TRUE(b.AddOutput(Must(b.Unary(OpKind::kNeg, y))).ok());
  Compiled c = Compile(g, {{64, 256}, {64, 256}});
  ASSERT_EQ(c.result.segments.size(), 1u);
  ASSERT_TRUE(c.result.segments[0].graph.symbols.empty()) << PrintGraph(c.result.segments[0].graph);
  // The segment has T1 as its input 0; the manifest passes fusion input 1.
  EXPECT_NE(c.json.find("{\"kind\": \"input\", \"index\": 1"), std::string::npos) << c.json;
  EXPECT_EQ(c.json.find("{\"kind\": \"input\", \"index\": 0"), std::string::npos) << c.json;
  EXPECT_TRUE(Plan(c, {{64, 256}, {64, 256}}).ok()) << c.json;
  absl::Status s = Plan(c, {{128, 256}, {128, 256}});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s << "\n" << c.json;
  EXPECT_NE(s.message().find("where s2 == 64; these inputs give s2 = 128 (s2 is input T1 axis 0)"),
            std::string::npos)
      << s;
}

// Two inputs of their own symbols that meet only through a sum over all of
// T1: the builder never unifies their symbols, the analysis refuses the
// whole graph (T1's axes are not the space's), and the segment is static.
// Neither a new batch size nor another T1 runs that kernel.
TEST(SizeClass, InputsMeetingOnlyThroughAFullSumGetAStaticKernel) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("T0", DataType::kFloat, {-1, -1}));
  ValueId y = Must(b.DefineTensor("T1", DataType::kFloat, {-1, -1}));
  ValueId r = Must(b.Reduce(OpKind::kSum, y, {0, 1}, true));
  ValueId rb = Must(b.BroadcastInDim(r, g.value(x).shape, {0, 1}));
  ASSERT_TRUE(b.AddOutput(Must(b.Binary(OpKind::kAdd, rb, x))).ok());
  Compiled c = Compile(g, {{64, 256}, {64, 256}});
  for (const SegmentResult& s : c.result.segments)
    ASSERT_TRUE(s.graph.symbols.empty()) << PrintGraph(s.graph);
  EXPECT_TRUE(Plan(c, {{64, 256}, {64, 256}}).ok()) << c.json;
  for (const std::vector<runtime::Shape>& other :
       {std::vector<runtime::Shape>{{128, 256}, {128, 256}}, {{64, 256}, {32, 256}}}) {
    absl::Status s = Plan(c, other);
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s << "\n" << c.json;
  }
}

// The kernel plan alone (the analysis keeps such graphs from it, see above):
// an unused input declared first gives the loop extents, and the used one
// is placed on them by position. The manifest then requires the extents
// equal, so a launch where they differ (which would walk T0's 16 elements
// for T1's 16384) is refused, and one where both change together runs.
TEST(SizeClass, PlacementByPositionIsRequiredInTheManifest) {
  CompileResult r;
  GraphBuilder b(&r.optimized);
  Must(b.DefineTensor("T0", DataType::kFloat, {-1, -1}));
  ValueId y = Must(b.DefineTensor("T1", DataType::kFloat, {-1, -1}));
  ASSERT_TRUE(b.AddOutput(Must(b.Unary(OpKind::kNeg, y))).ok());
  SegmentResult seg;
  seg.graph = r.optimized;
  seg.kind = seg.params.kind = SchedulerKind::kPointwise;
  seg.source_inputs = r.optimized.inputs;
  seg.source_outputs = r.optimized.outputs;
  seg.symbol_sizes = {64, 256, 64, 256};
  r.segments.push_back(seg);
  auto plan = Must(codegen_internal::PlanKernelFor(seg.graph, seg.params));
  const ValueId out = seg.graph.outputs[0];
  ASSERT_EQ(plan.ExtentExpr(plan.ref[0]), "s0");  // T0's
  EXPECT_EQ(plan.ExtentExpr(seg.graph.value(out).shape[0]), "s2");
  EXPECT_EQ(plan.axis_map[out], (std::vector<int>{0, 1}));
  Compiled c;
  c.json = Must(ManifestWithoutBinaries(r));
  c.manifest = Must(runtime::ParseManifest(c.json));
  EXPECT_NE(c.json.find("{\"expr\": \"s2 - s0\", \"equals\": 0}"), std::string::npos) << c.json;
  EXPECT_TRUE(Plan(c, {{64, 256}, {64, 256}}).ok()) << c.json;
  EXPECT_TRUE(Plan(c, {{128, 256}, {128, 256}}).ok()) << c.json;
  absl::Status s = Plan(c, {{4, 4}, {64, 256}});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s << "\n" << c.json;
}

// Random graphs, symbolic ones among them: the conditions hold at the sizes
// each was compiled for, so the runtime accepts those; some split fusions
// and some placements by position get them (the check is not vacuous).
TEST(SizeClass, RandomGraphsKeepTheSizesCompiledFor) {
  int conditioned = 0, by_position = 0, cases = 0;
  for (int seed = 0; seed < 400; ++seed) {
    RandomGraphCase c = RandomGraphWithShapes(seed);
    CompileOptions co;
    co.generate_code = false;
    auto r = CompileFusion(c.graph, c.input_shapes, co);
    if (!r.ok()) continue;
    auto json = ManifestWithoutBinaries(*r);
    if (!json.ok()) continue;  // a graph the generator refuses (Unimplemented)
    auto m = runtime::ParseManifest(*json);
    ASSERT_TRUE(m.ok()) << "seed " << seed << ": " << m.status() << "\n" << *json;
    bool static_segment = false;
    for (const SegmentResult& seg : r->segments) static_segment |= seg.graph.symbols.empty();
    if (!r->optimized.symbols.empty() && static_segment) {
      ++conditioned;
      EXPECT_NE(json->find("\"equals\""), std::string::npos) << "seed " << seed << "\n" << *json;
    }
    by_position += json->find(" - s") != std::string::npos;
    std::vector<runtime::Shape> shapes(c.input_shapes.begin(), c.input_shapes.end());
    auto plan = runtime::PlanLaunch(*m, shapes);
    EXPECT_TRUE(plan.ok()) << "seed " << seed << ": " << plan.status() << "\n" << *json;
    ++cases;
  }
  std::cerr << cases << " cases, " << conditioned
            << " symbolic with static segments (literal conditions), " << by_position
            << " placed by position\n";
  EXPECT_GT(cases, 300);
  EXPECT_GT(conditioned, 0);
}

}  // namespace
}  // namespace fusiond
