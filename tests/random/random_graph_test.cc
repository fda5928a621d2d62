#include "tests/random/random_graph.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <map>

#include "compiler/ir/binding.h"
#include "compiler/ir/builder.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "compiler/reference/reference.h"

namespace fusiond {
namespace {

TEST(RandomGraph, SeedsZeroTo999VerifyAndEvaluate) {
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t seed = 0; seed < 1000; ++seed) {
    RandomGraphCase c = RandomGraphWithShapes(seed);
    ASSERT_TRUE(c.status.ok()) << "seed " << seed << ": " << c.status;
    absl::Status v = VerifyGraph(c.graph);
    ASSERT_TRUE(v.ok()) << "seed " << seed << ": " << v << "\n" << PrintGraph(c.graph);
    ASSERT_EQ(c.input_shapes.size(), c.graph.inputs.size());
    auto out = Evaluate(c.graph, RandomInputs(c.graph, c.input_shapes, seed));
    ASSERT_TRUE(out.ok()) << "seed " << seed << ": " << out.status() << "\n" << PrintGraph(c.graph);
    ASSERT_EQ(out->size(), c.graph.outputs.size());
    for (const HostTensor& t : *out) EXPECT_LE(t.numel(), 512);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "1000 random graphs generated, verified and evaluated in " << s << " s\n";
}

// Wrong inputs never crash the reference: a changed extent, a dropped
// input or a wrong dtype is InvalidArgument (or, for an extent the graph
// does not constrain, a normal result).
TEST(RandomGraph, ReferenceRejectsWrongInputsCleanly) {
  for (uint64_t seed = 0; seed < 300; ++seed) {
    RandomGraphCase c = RandomGraphWithShapes(seed);
    auto in = RandomInputs(c.graph, c.input_shapes, seed);
    for (size_t i = 0; i < in.size(); ++i) {
      if (in[i].shape.empty()) continue;
      auto bad = in;
      bad[i].shape[seed % bad[i].shape.size()] += 1;
      bad[i].data.assign(bad[i].numel(), 0.5);
      auto r = Evaluate(c.graph, bad);
      if (!r.ok()) {
        EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
      }
      bad = in;
      bad[i].dtype = bad[i].dtype == DataType::kFloat ? DataType::kHalf : DataType::kFloat;
      r = Evaluate(c.graph, bad);
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    }
    auto fewer = in;
    fewer.pop_back();
    auto r = Evaluate(c.graph, fewer);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(RandomGraph, AbsurdOptionsGiveAnErrorNotACrash) {
  RandomGraphOptions o;
  o.max_rank = 20;  // beyond the builder's rank limit of 8
  o.max_extent = 2;
  bool refused = false;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    RandomGraphCase c = RandomGraphWithShapes(seed, o);
    if (!c.status.ok()) refused = true;
    if (c.status.ok()) {
      EXPECT_TRUE(VerifyGraph(c.graph).ok());
    }
  }
  EXPECT_TRUE(refused);
}

TEST(RandomGraph, SameSeedSameGraph) {
  EXPECT_EQ(PrintGraph(RandomGraph(42)), PrintGraph(RandomGraph(42)));
  EXPECT_NE(PrintGraph(RandomGraph(42)), PrintGraph(RandomGraph(43)));
}

TEST(RandomGraph, OptionsBoundSizes) {
  RandomGraphOptions o;
  o.max_rank = 1;
  o.max_extent = 2;
  o.num_ops = 3;
  o.max_outputs = 1;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    RandomGraphCase c = RandomGraphWithShapes(seed, o);
    ASSERT_TRUE(VerifyGraph(c.graph).ok());
    EXPECT_EQ(c.graph.outputs.size(), 1u);
    for (const auto& s : c.input_shapes) {
      ASSERT_LE(s.size(), 1u);
      for (int64_t e : s) EXPECT_LE(e, 2);
    }
  }
}

// Counts the patterns the generator promises across seeds 0..999.
TEST(RandomGraph, CoversThePatterns) {
  std::map<std::string, int> seen;
  for (uint64_t seed = 0; seed < 1000; ++seed) {
    RandomGraphCase c = RandomGraphWithShapes(seed);
    const Graph& g = c.graph;
    auto bind = BindShapes(g, c.input_shapes);
    ASSERT_TRUE(bind.ok()) << bind.status();
    bool symbolic = false;
    for (ValueId in : g.inputs) {
      for (const Extent& e : g.value(in).shape) symbolic |= !e.is_static();
    }
    if (symbolic) ++seen["symbolic"];
    for (const Node& n : g.nodes) {
      // The value of constant operand i, or NaN (equal to nothing).
      auto constant = [&](int i) {
        const Value& v = g.value(n.inputs[i]);
        return v.constant.value_or(std::numeric_limits<double>::quiet_NaN());
      };
      const Node* d0 = g.def(n.inputs[0]);
      switch (n.op) {
        case OpKind::kPow:
          if (const double e = constant(1); !std::isnan(e)) {
            if (e == static_cast<int>(e) && e < 0) ++seen["pow negative int"];
            if (e == 0) ++seen["pow 0"];
            if (e == 0.5 || e == -0.5) ++seen["pow +-0.5"];
            if (e == 2 || e == 3) ++seen["pow 2 or 3"];
            if (e != static_cast<int>(e) && e != 0.5 && e != -0.5) ++seen["pow fraction"];
            if (IsIntegral(g.value(n.inputs[1]).dtype)) ++seen["pow int exponent"];
          }
          break;
        case OpKind::kCast:
          if (d0 && d0->op == OpKind::kCast && g.def(d0->inputs[0]) &&
              g.def(d0->inputs[0])->op == OpKind::kCast) {
            ++seen["cast round trip"];
          }
          break;
        case OpKind::kMul:
          if (constant(1) == 1.0 || constant(0) == 1.0) ++seen["x*1"];
          break;
        case OpKind::kAdd:
          if (constant(1) == 0.0 || constant(0) == 0.0) ++seen["x+0"];
          break;
        case OpKind::kNeg:
          if (d0 && d0->op == OpKind::kNeg) ++seen["neg(neg)"];
          break;
        case OpKind::kReciprocal:
          if (d0 && d0->op == OpKind::kReciprocal) ++seen["reciprocal(reciprocal)"];
          break;
        case OpKind::kSum:
        case OpKind::kMax: {
          ++seen[n.attrs.keepdim ? "reduce keepdim" : "reduce"];
          auto shape = bind->Shape(g, n.inputs[0]);
          for (int64_t d : n.attrs.dims) {
            if (shape[d] == 1) ++seen["reduce size-1 axis"];
          }
          break;
        }
        case OpKind::kBroadcastInDim:
          if (g.value(n.inputs[0]).rank() < g.value(n.outputs[0]).rank()) {
            ++seen["broadcast lower rank"];
          } else {
            ++seen["broadcast size-1 axes"];
          }
          break;
        case OpKind::kWhere:
          ++seen["where"];
          break;
        default:
          break;
      }
    }
  }
  for (const char* k :
       {"symbolic", "pow negative int", "pow 0", "pow +-0.5", "pow 2 or 3", "pow fraction",
        "pow int exponent", "cast round trip", "x*1", "x+0", "neg(neg)", "reciprocal(reciprocal)",
        "reduce", "reduce keepdim", "reduce size-1 axis", "broadcast lower rank",
        "broadcast size-1 axes", "where"}) {
    EXPECT_GE(seen[k], 5) << k;
  }
}

bool HasOp(const Graph& g, OpKind op) {
  for (const Node& n : g.nodes) {
    if (n.op == op) return true;
  }
  return false;
}

TEST(ShrinkGraph, ShrinksToTheFailingPart) {
  int checked = 0;
  for (uint64_t seed = 0; seed < 200 && checked < 20; ++seed) {
    Graph g = RandomGraph(seed);
    if (!HasOp(g, OpKind::kPow) || g.nodes.size() < 8) continue;
    ++checked;
    auto fails = [](const Graph& h) { return HasOp(h, OpKind::kPow); };
    Graph s = ShrinkGraph(g, fails);
    ASSERT_TRUE(VerifyGraph(s).ok()) << PrintGraph(s);
    EXPECT_TRUE(fails(s));
    EXPECT_EQ(s.outputs.size(), 1u) << PrintGraph(s);
    // What is left is the pow and the short chain that feeds it (a node is
    // bypassed only where an operand has the result's type and shape).
    EXPECT_LE(s.nodes.size(), 6u) << "seed " << seed << "\n"
                                  << PrintGraph(g) << "\n"
                                  << PrintGraph(s);
    EXPECT_EQ(s.inputs.size(), g.inputs.size());
  }
  EXPECT_GT(checked, 5);
}

TEST(ShrinkGraph, KeepsAGraphThatDoesNotFail) {
  Graph g = RandomGraph(3);
  Graph s = ShrinkGraph(g, [](const Graph&) { return false; });
  EXPECT_EQ(PrintGraph(s), PrintGraph(g));
}

// A predicate that evaluates: "some output has a value above 2". The
// shrunk graph keeps failing on the same inputs.
TEST(ShrinkGraph, WorksWithEvaluatingPredicates) {
  int checked = 0;
  for (uint64_t seed = 0; seed < 100 && checked < 10; ++seed) {
    RandomGraphCase c = RandomGraphWithShapes(seed);
    auto inputs = RandomInputs(c.graph, c.input_shapes, seed);
    auto fails = [&](const Graph& h) {
      auto out = Evaluate(h, inputs);
      if (!out.ok()) return false;
      for (const HostTensor& t : *out) {
        for (double v : t.data) {
          if (v > 2) return true;
        }
      }
      return false;
    };
    if (!fails(c.graph)) continue;
    ++checked;
    Graph s = ShrinkGraph(c.graph, fails);
    EXPECT_TRUE(fails(s));
    EXPECT_LE(s.nodes.size(), c.graph.nodes.size());
  }
  EXPECT_GT(checked, 3);
}

TEST(RemoveDeadCode, DropsUnusedNodesAndKeepsResults) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {-1, 4});
  ValueId dead = *b.Unary(OpKind::kExp, x);
  (void)*b.Binary(OpKind::kMul, dead, b.DefineConstant(2.0, DataType::kDouble));
  ValueId y = *b.Unary(OpKind::kNeg, x);
  ASSERT_TRUE(b.AddOutput(y).ok());
  Graph r = RemoveDeadCode(g);
  ASSERT_TRUE(VerifyGraph(r).ok()) << VerifyGraph(r);
  EXPECT_EQ(r.nodes.size(), 1u);
  EXPECT_EQ(r.values.size(), 2u);
  auto in = RandomInputs(g, {{3, 4}}, 1);
  auto a = Evaluate(g, in), c = Evaluate(r, in);
  ASSERT_TRUE(a.ok() && c.ok());
  EXPECT_EQ((*a)[0].data, (*c)[0].data);
}

}  // namespace
}  // namespace fusiond
