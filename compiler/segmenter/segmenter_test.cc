#include "compiler/segmenter/segmenter.h"

#include "compiler/ir/builder.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "gtest/gtest.h"

namespace fusiond {
namespace {

template <typename T>
T Must(absl::StatusOr<T> v) {
  EXPECT_TRUE(v.ok()) << v.status();
  return *std::move(v);
}

std::vector<Segment> Segments(const Graph& g, const std::vector<std::vector<int64_t>>& shapes) {
  SizeBinding b = Must(BindShapes(g, shapes));
  return Must(SegmentFusion(g, b, Must(LookupTarget("sm_90"))));
}

TEST(Segmenter, SchedulableGraphIsOneSegment) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {-1, -1}));
  ValueId r = Must(b.Reduce(OpKind::kSum, x, {1}, true));
  ASSERT_TRUE(b.AddOutput(Must(b.Binary(OpKind::kDiv, x, r))).ok());
  auto segs = Segments(g, {{64, 256}});
  ASSERT_EQ(segs.size(), 1u);
  EXPECT_EQ(segs[0].kind, SchedulerKind::kInnerPersistent);
  EXPECT_TRUE(segs[0].boundary_reason.empty());
  EXPECT_EQ(segs[0].graph.symbols.size(), g.symbols.size());  // the fusion itself
}

// A row reduction, then a reduction over a different axis of its result:
// no single kernel pattern covers both.
TEST(Segmenter, ReductionOfAReductionNeedsTwoSegments) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {64, 128}));
  ValueId y = Must(b.DefineTensor("y", DataType::kFloat, {64, 128}));
  ValueId xy = Must(b.Binary(OpKind::kMul, x, y));
  ValueId r = Must(b.Reduce(OpKind::kSum, xy, {1}, false));
  ValueId e = Must(b.Unary(OpKind::kExp, r));
  ValueId total = Must(b.Reduce(OpKind::kSum, e, {0}, false));
  ASSERT_TRUE(b.AddOutput(total).ok());
  ASSERT_TRUE(b.AddOutput(e).ok());
  auto segs = Segments(g, {{64, 128}, {64, 128}});
  ASSERT_EQ(segs.size(), 2u);
  EXPECT_EQ(segs[0].kind, SchedulerKind::kInnerPersistent);
  EXPECT_EQ(segs[1].kind, SchedulerKind::kInnerPersistent);  // a [64] row
  EXPECT_TRUE(segs[0].boundary_reason.empty());
  EXPECT_NE(segs[1].boundary_reason.find("from segment 0"), std::string::npos)
      << segs[1].boundary_reason;
  EXPECT_NE(segs[1].boundary_reason.find("refused"), std::string::npos);
  // The cut moves the [64] result (256 bytes), not the [64, 128] product.
  EXPECT_NE(segs[1].boundary_reason.find("256 bytes"), std::string::npos)
      << segs[1].boundary_reason;
  for (const Segment& s : segs) {
    EXPECT_TRUE(VerifyGraph(s.graph).ok()) << PrintGraph(s.graph);
  }
  // Every graph output is produced by some segment.
  int produced = 0;
  for (const Segment& s : segs) {
    for (ValueId o : s.source_outputs) produced += g.IsOutput(o);
  }
  EXPECT_EQ(produced, 2);
}

TEST(Segmenter, ShapeOpsStayWithTheirConsumers) {
  // Two row reductions over different axes sets of one input: the
  // broadcast feeding the second is recomputed inside its segment.
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {32, 16}));
  ValueId w = Must(b.DefineTensor("w", DataType::kFloat, {16}));
  ValueId r = Must(b.Reduce(OpKind::kSum, x, {1}, false));
  ValueId rr = Must(b.Reduce(OpKind::kMax, r, {0}, true));
  ValueId wb = Must(b.BroadcastInDim(w, {Extent::Static(32), Extent::Static(16)}, {1}));
  ValueId rb = Must(b.BroadcastInDim(rr, {Extent::Static(32), Extent::Static(16)}, {0}));
  ASSERT_TRUE(
      b.AddOutput(Must(b.Binary(OpKind::kMul, Must(b.Binary(OpKind::kMul, x, wb)), rb))).ok());
  auto segs = Segments(g, {{32, 16}, {16}});
  ASSERT_GE(segs.size(), 2u);
  for (const Segment& s : segs) {
    for (const Node& n : s.graph.nodes) {
      // No segment consists of metadata ops only.
      (void)n;
    }
    bool has_compute = false;
    for (const Node& n : s.graph.nodes) has_compute |= !IsShapeOp(n.op);
    EXPECT_TRUE(has_compute) << PrintGraph(s.graph);
  }
}

// A sum of a [768] input kept as [1] and broadcast to a [3, 768] graph
// output (random GPU seed 1457): no scheduler takes the sum with that output
// (the sum reads part of the space), so the broadcast becomes a kernel of its
// own instead of "cannot be scheduled even alone".
TEST(Segmenter, AReductionBroadcastToAnOutputOfAnotherShapeGetsAKernel) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {3, 768}));
  ValueId v = Must(b.DefineTensor("v", DataType::kHalf, {768}));
  ValueId s = Must(b.Reduce(OpKind::kSum, v, {0}, true));
  ValueId sb = Must(b.BroadcastInDim(s, g.value(x).shape, {1}));
  ASSERT_TRUE(b.AddOutput(sb).ok());
  ASSERT_TRUE(b.AddOutput(Must(b.Binary(OpKind::kSub, x, sb))).ok());
  auto segs = Segments(g, {{3, 768}, {768}});
  ASSERT_GE(segs.size(), 2u);
  int produced = 0;
  for (const Segment& seg : segs) {
    EXPECT_TRUE(VerifyGraph(seg.graph).ok()) << PrintGraph(seg.graph);
    for (ValueId o : seg.source_outputs) produced += g.IsOutput(o);
  }
  EXPECT_EQ(produced, 2);
}

// Inputs of their own symbols equal only at the sizes compiled for: a sum
// over T1's second axis broadcast into T0's shape is not a kernel for every
// size (code generation would read T1 with T0's extent), so the definition
// goes through the partitioner, whose segments have static sizes.
TEST(Segmenter, AxesOfDifferentSymbolsAreNotOneIterationAxis) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("T0", DataType::kFloat, {-1, -1}));
  ValueId y = Must(b.DefineTensor("T1", DataType::kFloat, {-1, -1}));
  ValueId r = Must(b.Reduce(OpKind::kSum, y, {1}, true));
  ValueId rb = Must(b.BroadcastInDim(r, g.value(x).shape, {0, 1}));
  ASSERT_TRUE(b.AddOutput(Must(b.Binary(OpKind::kAdd, rb, x))).ok());
  auto segs = Segments(g, {{64, 256}, {64, 256}});
  ASSERT_FALSE(segs.empty());
  for (const Segment& seg : segs) EXPECT_TRUE(seg.graph.symbols.empty()) << PrintGraph(seg.graph);
}

// A symbolic axis of size 1 at the sizes compiled for: the analysis sees no
// reduction there, a kernel for every size would have to reduce it (code
// generation refused the pointwise segment), so the segments get static
// sizes.
TEST(Segmenter, ASymbolicAxisOfSizeOneIsReducedInStaticSegments) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("T0", DataType::kFloat, {-1, -1}));
  ValueId r = Must(b.Reduce(OpKind::kSum, x, {0}, true));
  ValueId rb = Must(b.BroadcastInDim(r, g.value(x).shape, {0, 1}));
  ASSERT_TRUE(b.AddOutput(Must(b.Binary(OpKind::kSub, x, rb))).ok());
  auto segs = Segments(g, {{1, 256}});
  ASSERT_FALSE(segs.empty());
  for (const Segment& seg : segs) EXPECT_TRUE(seg.graph.symbols.empty()) << PrintGraph(seg.graph);
  EXPECT_FALSE(Segments(g, {{8, 256}})[0].graph.symbols.empty());  // one kernel for every size
}

}  // namespace
}  // namespace fusiond
