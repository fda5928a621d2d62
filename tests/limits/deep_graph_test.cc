// Deep and wide graphs through every stage (wire form, verifier, CPU
// reference, passes, segmenter, schedulers, code generation; NVRTC is left
// out: it is what the limits keep such graphs from) on a thread with a
// 256 KiB stack, so any recursion over the graph's depth would overflow it.
// And the limits: deep, large and over-sized graphs are refused with
// ResourceExhausted before the expensive stages, quickly.
#include <gtest/gtest.h>
#include <pthread.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/codegen.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/builder.h"
#include "compiler/ir/ir_proto.h"
#include "compiler/ir/limits.h"
#include "compiler/ir/verifier.h"
#include "compiler/pipeline.h"
#include "compiler/reference/reference.h"

namespace fusiond {
namespace {

constexpr size_t kSmallStack = 256 << 10;

// Runs fn on a thread with a `stack`-byte stack and waits for it.
void RunWithStack(size_t stack, const std::function<void()>& fn) {
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, stack), 0);
  pthread_t thread;
  auto body = [](void* arg) -> void* {
    (*static_cast<const std::function<void()>*>(arg))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attr, body, const_cast<std::function<void()>*>(&fn)), 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
}

template <typename T>
T Must(absl::StatusOr<T> v) {
  EXPECT_TRUE(v.ok()) << v.status();
  return *std::move(v);
}

// A chain of n one-input ops over an [8, 32] float input.
Graph Chain(int n) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("T0", DataType::kFloat, {8, 32}));
  const OpKind ops[] = {OpKind::kSin, OpKind::kCos, OpKind::kTanh, OpKind::kAbs};
  for (int i = 0; i < n; ++i) x = Must(b.Unary(ops[i % 4], x));
  EXPECT_TRUE(b.AddOutput(x).ok());
  return g;
}

// n products of the input with distinct constants summed by a balanced tree
// of adds: wide (n leaves) and shallow.
Graph FanIn(int n) {
  Graph g;
  GraphBuilder b(&g);
  const ValueId x = Must(b.DefineTensor("T0", DataType::kFloat, {8, 32}));
  std::vector<ValueId> level;
  for (int i = 0; i < n; ++i) {
    level.push_back(Must(b.Binary(OpKind::kMul, x, b.DefineConstant(1.0 + i, DataType::kFloat))));
  }
  while (level.size() > 1) {
    std::vector<ValueId> next;
    for (size_t i = 0; i + 1 < level.size(); i += 2) {
      next.push_back(Must(b.Binary(OpKind::kAdd, level[i], level[i + 1])));
    }
    if (level.size() % 2) next.push_back(level.back());
    level = std::move(next);
  }
  EXPECT_TRUE(b.AddOutput(level[0]).ok());
  return g;
}

// A scalar DAG s(i+1) = s(i) + s(i) of n levels over a run-time scalar,
// added to a tensor: inlined naively, its expression has 2^n terms.
Graph ScalarDoubling(int n) {
  Graph g;
  GraphBuilder b(&g);
  const ValueId x = Must(b.DefineTensor("T0", DataType::kFloat, {8, 32}));
  ValueId s = b.DefineScalarInput(DataType::kDouble, "s");
  for (int i = 0; i < n; ++i) s = Must(b.Binary(OpKind::kAdd, s, s));
  EXPECT_TRUE(b.AddOutput(Must(b.Binary(OpKind::kAdd, x, s))).ok());
  return g;
}

CompileLimits NoLimits() {
  CompileLimits l;
  l.max_nodes = l.max_depth = l.max_kernel_ops = l.max_partition_nodes = 0;
  return l;
}

// Every stage but NVRTC, limits off, on the calling thread.
void WholePipeline(const Graph& built, bool reference) {
  auto wire = FromProto(ToProto(built));
  ASSERT_TRUE(wire.ok()) << wire.status();
  ASSERT_TRUE(VerifyGraph(*wire).ok());
  if (reference) {
    auto out = Evaluate(*wire, RandomInputs(*wire, {}, 1));
    ASSERT_TRUE(out.ok()) << out.status();
  }
  CompileOptions o;
  o.generate_code = false;
  o.limits = NoLimits();
  auto r = CompileFusion(*wire, {}, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(r->segments.empty());
  for (const SegmentResult& seg : r->segments) {
    auto k = GenerateKernel(seg.graph, seg.params, CodegenOptions{});
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_LT(k->source.size(), size_t{64} << 20);
  }
}

TEST(DeepGraphs, Chain15000ThroughEveryStageOnASmallStack) {
  const Graph g = Chain(15000);
  RunWithStack(kSmallStack, [&] { WholePipeline(g, true); });
}

TEST(DeepGraphs, Chain100000ThroughEveryStageOnASmallStack) {
  const Graph g = Chain(100000);
  RunWithStack(kSmallStack, [&] { WholePipeline(g, true); });
}

TEST(DeepGraphs, FanIn50000ThroughEveryStageOnASmallStack) {
  const Graph g = FanIn(50000);  // 99,999 nodes
  RunWithStack(kSmallStack, [&] { WholePipeline(g, true); });
}

TEST(DeepGraphs, ScalarDoublingStaysSmallInCode) {
  const Graph g = ScalarDoubling(60);
  RunWithStack(kSmallStack, [&] { WholePipeline(g, false); });
}

TEST(DeepGraphs, ReproScriptOf15000StatementsParsesOnASmallStack) {
  std::string text =
      "def f(fd):\n"
      "    T0 = fd.define_tensor(shape=[8, 32], contiguity=[True, True], "
      "dtype=DataType.Float)\n";
  for (int i = 1; i <= 15000; ++i)
    absl::StrAppend(&text, "    T", i, " = fd.ops.sin(T", i - 1, ")\n");
  absl::StrAppend(&text, "    fd.add_output(T15000)\n");
  RunWithStack(kSmallStack, [&] {
    auto parsed = ParseReproScript(text, "chain.py");
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->graph.nodes.size(), 15000u);
  });
}

// Expressions nested as deep as the front end allows, and far deeper:
// parsed or refused with a located InvalidArgument, never a stack overflow.
TEST(DeepGraphs, NestedExpressionsOnASmallStack) {
  auto script = [](const std::string& expr) {
    return absl::StrCat("def f(fd):\n    T0 = ", expr, "\n");
  };
  auto repeat = [](const std::string& s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  const std::vector<std::string> exprs = {
      repeat("(", 63) + "1" + repeat(")", 63),
      repeat("[", 63) + "1" + repeat("]", 63),
      repeat("(", 100000) + "1" + repeat(")", 100000),
      repeat("[", 100000),
      repeat("-", 100000) + "1",
      "1" + repeat(" + 1", 100000),
      "1" + repeat(" ** 1", 100000),
      "x" + repeat(".a", 100000),
      "f" + repeat("()", 100000),
      repeat("f(", 63) + "1" + repeat(")", 63),
      repeat("(-1 + ", 63) + "1" + repeat(")", 63),
  };
  for (const std::string& e : exprs) {
    RunWithStack(kSmallStack, [&] {
      auto parsed = ParseReproScript(script(e), "nested.py");
      if (!parsed.ok()) {
        EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << parsed.status();
        EXPECT_NE(parsed.status().message().find("nested.py:"), std::string::npos);
      }
    });
  }
}

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(Limits, DeepChainRefusedBeforeThePasses) {
  const Graph g = Chain(15000);
  const auto start = std::chrono::steady_clock::now();
  auto r = CompileFusion(g, {}, CompileOptions{});
  ASSERT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_NE(r.status().message().find("depth"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("15000"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("CompileLimits::max_depth"), std::string::npos);
  EXPECT_LT(Seconds(start), 2.0);
}

TEST(Limits, LongKernelRefusedBeforeCodeGeneration) {
  const Graph g = Chain(1000);  // within the depth limit
  CompileOptions o;             // generate_code: NVRTC would take minutes
  const auto start = std::chrono::steady_clock::now();
  auto r = CompileFusion(g, {}, o);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_NE(r.status().message().find("kernel 0"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("CompileLimits::max_kernel_ops"), std::string::npos);
  EXPECT_LT(Seconds(start), 2.0);
  o.generate_code = false;
  o.limits.max_kernel_ops = 1000;
  EXPECT_TRUE(CompileFusion(g, {}, o).ok());
}

// One neg listed as 1,000 outputs, and 700 unused inputs: one kernel each,
// whose parameters NVRTC would take ~45 s over.
TEST(Limits, KernelWithManyParametersRefusedBeforeCodeGeneration) {
  Graph outs;
  GraphBuilder b(&outs);
  ValueId x = Must(b.DefineTensor("T0", DataType::kFloat, {-1}));
  ValueId y = Must(b.Unary(OpKind::kNeg, x));
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(b.AddOutput(y).ok());
  const KernelParamCount c = CountKernelParams(outs);
  EXPECT_EQ(c.inputs, 1);
  EXPECT_EQ(c.outputs, 1000);
  EXPECT_EQ(c.sizes, 1);
  const auto start = std::chrono::steady_clock::now();
  auto r = CompileFusion(outs, {{8}}, CompileOptions{});
  ASSERT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_NE(r.status().message().find("the parameter count of kernel 0 (1 inputs, 1000 outputs, 1 "
                                      "symbolic sizes) is 1002, over the limit of 640 "
                                      "(CompileLimits::max_kernel_params"),
            std::string::npos)
      << r.status();
  EXPECT_LT(Seconds(start), 2.0);
  CompileOptions o;
  o.generate_code = false;
  o.limits.max_kernel_params = 1002;
  EXPECT_TRUE(CompileFusion(outs, {{8}}, o).ok());

  Graph ins;
  GraphBuilder bi(&ins);
  ValueId last = kNone;
  for (int i = 0; i < 700; ++i) last = Must(bi.DefineTensor("", DataType::kFloat, {8}));
  ASSERT_TRUE(bi.AddOutput(Must(bi.Unary(OpKind::kNeg, last))).ok());
  r = CompileFusion(ins, {}, CompileOptions{});
  ASSERT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_NE(r.status().message().find("(700 inputs, 1 outputs, 0 symbolic sizes) is 701"),
            std::string::npos)
      << r.status();
}

TEST(Limits, NodeCountRefused) {
  const Graph g = FanIn(2000);  // 3,999 nodes, depth 12
  CompileOptions o;
  o.limits.max_nodes = 3000;
  auto r = CompileFusion(g, {}, o);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_NE(r.status().message().find("3999"), std::string::npos) << r.status();
  EXPECT_EQ(GraphDepth(g), 12);
}

// Alternating row and column sums: no scheduler takes the whole graph, so
// the segmenter would search over every compute node.
TEST(Limits, LargePartitionRefusedBeforeTheSearch) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("T0", DataType::kFloat, {64, 64}));
  for (int i = 0; i < 200; ++i) {
    const int64_t d = i % 2;
    ValueId s = Must(b.Reduce(OpKind::kSum, x, {d}, false));
    ValueId back = Must(b.BroadcastInDim(s, {Extent::Static(64), Extent::Static(64)}, {1 - d}));
    x = Must(b.Binary(OpKind::kAdd, back, x));
  }
  ASSERT_TRUE(b.AddOutput(x).ok());
  CompileOptions o;
  o.generate_code = false;
  o.limits.max_partition_nodes = 100;
  const auto start = std::chrono::steady_clock::now();
  auto r = CompileFusion(g, {}, o);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_NE(r.status().message().find("CompileLimits::max_partition_nodes"), std::string::npos);
  EXPECT_LT(Seconds(start), 2.0);
}

// A million-node chain in the wire form is refused by its node count before
// a graph is built.
TEST(Limits, MillionNodeWireGraphRefusedQuickly) {
  fusiond::v1::FusionGraph p;
  p.set_version(1);
  fusiond::v1::Input* in = p.add_inputs();
  in->set_name("T0");
  in->set_dtype(fusiond::v1::DataType(static_cast<int>(DataType::kFloat)));
  in->set_is_tensor(true);
  in->add_sizes(8);
  for (int i = 0; i < 1000000; ++i) {
    fusiond::v1::Node* n = p.add_nodes();
    n->set_op(fusiond::v1::OpKind(static_cast<int>(OpKind::kSin)));
    n->add_operands(i);
  }
  p.add_outputs(1000000);
  const auto start = std::chrono::steady_clock::now();
  auto g = FromProto(p);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("the limit is 100000"), std::string::npos) << g.status();
  EXPECT_LT(Seconds(start), 1.0);
}

}  // namespace
}  // namespace fusiond
