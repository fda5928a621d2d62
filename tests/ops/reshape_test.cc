// Reshapes that split or merge axes (compiler/passes/reshape_views.h): the
// GPU check fusions of tests/ops/fusions (groupnorm_*, reshape_*) keep the
// CPU reference's values through the passes, leave only views of inputs and
// outputs, and get the kernels their reductions call for; a reshape with no
// common refinement stays inside the graph with a note and a clear error.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/codegen.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/builder.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/reshape_views.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/optimize.h"
#include "compiler/pipeline.h"
#include "compiler/reference/reference.h"

namespace fusiond {
namespace {

std::string Fusion(const std::string& name) {
  return std::string(FUSIOND_OPS_FUSIONS_DIR) + "/" + name;
}

std::vector<Extent> S(std::initializer_list<int64_t> sizes) {
  std::vector<Extent> s;
  for (int64_t n : sizes) s.push_back(Extent::Static(n));
  return s;
}

// Every reshape left is a view of an input or of an output.
void ExpectOnlyViews(const Graph& g) {
  const auto uses = g.Uses();
  for (const Node& n : g.nodes) {
    if (n.op != OpKind::kReshape) continue;
    EXPECT_TRUE(IsInputView(g, n, uses) || IsOutputView(g, n, uses)) << PrintGraph(g);
  }
}

TEST(Reshape, PassesKeepReferenceValuesAndLeaveViews) {
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(FUSIOND_OPS_FUSIONS_DIR)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("groupnorm", 0) != 0 && name.rfind("reshape", 0) != 0) continue;
    ++seen;
    SCOPED_TRACE(name);
    auto p = ParseReproFile(entry.path().string());
    ASSERT_TRUE(p.ok()) << p.status();
    std::vector<std::vector<int64_t>> small;  // symbolic axes at 8
    for (ValueId in : p->graph.inputs) {
      std::vector<int64_t> shape;
      for (const Extent& e : p->graph.value(in).shape) {
        const Extent c = p->graph.Canonical(e);
        shape.push_back(c.is_static() ? c.size : 8);
      }
      small.push_back(shape);
    }
    Graph opt = p->graph;
    std::vector<PassRecord> records;
    ASSERT_TRUE(RunOptimizationPasses(opt, PassOptions{}, &records).ok());
    ExpectOnlyViews(opt);
    EXPECT_GT(std::count_if(opt.nodes.begin(), opt.nodes.end(),
                            [](const Node& n) { return n.op == OpKind::kReshape; }),
              0);
    const auto inputs = RandomInputs(p->graph, small, 11);
    auto want = Evaluate(p->graph, inputs);
    auto got = Evaluate(opt, inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(want->size(), got->size());
    for (size_t o = 0; o < want->size(); ++o) {
      EXPECT_EQ((*want)[o].shape, (*got)[o].shape) << "output " << o;
      EXPECT_LE(MaxRelativeError((*want)[o], (*got)[o]), 1e-5) << "output " << o;
    }
  }
  EXPECT_GE(seen, 4);
}

CompileResult Schedule(const std::string& file) {
  auto p = ParseReproFile(Fusion(file));
  EXPECT_TRUE(p.ok()) << p.status();
  CompileOptions o;
  o.generate_code = false;
  auto r = CompileFusion(p->graph, p->input_shapes, o);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : CompileResult{};
}

TEST(Reshape, GroupNormForwardIsOneRowReductionOverTheGroups) {
  const CompileResult r = Schedule("groupnorm_fwd_32x256x28x28.py");
  ASSERT_EQ(r.segments.size(), 1u);
  EXPECT_EQ(r.segments[0].kind, SchedulerKind::kInnerPersistent);
  EXPECT_EQ(r.segments[0].params.outer_size, 32 * 32);      // N * G rows
  EXPECT_EQ(r.segments[0].params.inner_size, 8 * 28 * 28);  // C/G * H * W
}

TEST(Reshape, SplitAndMergeFusionsAreOneKernel) {
  const CompileResult heads = Schedule("reshape_split_heads_softmax_4096x2048.py");
  ASSERT_EQ(heads.segments.size(), 1u);
  EXPECT_EQ(heads.segments[0].params.inner_size, 128);
  EXPECT_EQ(heads.segments[0].params.outer_size, 4096 * 16);
  const CompileResult merge = Schedule("reshape_merge_rmsnorm_8x512x4096.py");
  ASSERT_EQ(merge.segments.size(), 1u);
  EXPECT_EQ(merge.segments[0].params.inner_size, 4096);
  EXPECT_EQ(merge.segments[0].params.outer_size, 8 * 512);
}

// The per-channel sums (over N, H, W) and the per-group ones (over C/G, H,
// W) are two kernels; both recompute the normalized x and the scaled
// gradient from the inputs (the segmenter's MarkRecomputed), so no
// full-size intermediate goes through memory.
TEST(Reshape, GroupNormBackwardIsTwoKernelsReadingOnlyInputs) {
  const CompileResult r = Schedule("groupnorm_bwd_32x256x28x28.py");
  ASSERT_EQ(r.segments.size(), 2u);
  for (const SegmentResult& s : r.segments) {
    ExpectOnlyViews(s.graph);
    for (ValueId in : s.source_inputs) EXPECT_TRUE(r.optimized.IsInput(in)) << in;
  }
  EXPECT_EQ(r.segments[1].kind, SchedulerKind::kInnerPersistent);
  EXPECT_EQ(r.segments[1].params.inner_size, 8 * 28 * 28);
}

// The split of a symbolic axis into static factors, keepdim over the
// split axes, and a merge after a permute.
TEST(Reshape, SplitKeepdimAndPermutedMergeKeepValues) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("x", DataType::kFloat, {-1, -1});
  Attrs r1;
  r1.shape = {Extent::Static(8), Extent::Static(16), g.value(x).shape[1]};
  ValueId y = (*b.AddNode(OpKind::kReshape, {x}, r1))[0];  // binds x's axis 0 to 128
  Attrs sum;
  sum.dims = {0};
  sum.keepdim = true;
  ValueId s = (*b.AddNode(OpKind::kSum, {x}, sum))[0];  // [1, s1]
  Attrs perm;
  perm.dims = {2, 0, 1};
  ValueId t = (*b.AddNode(OpKind::kPermute, {y}, perm))[0];  // [s1, 8, 16]
  Attrs r2;
  r2.shape = {g.value(x).shape[1], Extent::Static(128)};
  ValueId m = (*b.AddNode(OpKind::kReshape, {t}, r2))[0];  // [s1, 128]
  ASSERT_TRUE(b.AddOutput(s).ok());
  ASSERT_TRUE(b.AddOutput(m).ok());
  Graph opt = g;
  std::vector<PassRecord> records;
  ASSERT_TRUE(RunOptimizationPasses(opt, PassOptions{}, &records).ok());
  ExpectOnlyViews(opt);
  const auto inputs = RandomInputs(g, {{128, 5}}, 3);
  auto want = Evaluate(g, inputs), got = Evaluate(opt, inputs);
  ASSERT_TRUE(want.ok() && got.ok());
  for (size_t o = 0; o < want->size(); ++o)
    EXPECT_LE(MaxRelativeError((*want)[o], (*got)[o]), 1e-12) << PrintGraph(opt);
}

TEST(Reshape, RegroupStaysWithANoteAndAClearError) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("x", DataType::kFloat, {6, 4});
  ValueId e = (*b.AddNode(OpKind::kExp, {x}, {}))[0];
  Attrs r;
  r.shape = S({4, 6});
  ValueId y = (*b.AddNode(OpKind::kReshape, {e}, r))[0];
  Attrs sum;
  sum.dims = {1};
  ValueId s = (*b.AddNode(OpKind::kSum, {y}, sum))[0];
  ASSERT_TRUE(b.AddOutput(s).ok());
  std::vector<PassRecord> records;
  Graph opt = g;
  ASSERT_TRUE(RunOptimizationPasses(opt, PassOptions{}, &records).ok());
  bool noted = false;
  for (const PassRecord& rec : records) {
    for (const std::string& note : rec.notes)
      noted |= note.find("no common refinement") != std::string::npos;
  }
  EXPECT_TRUE(noted);
  CompileOptions o;
  o.generate_code = false;
  auto c = CompileFusion(g, {}, o);
  if (c.ok()) {
    // Cut at the reshape: the consumer reads the producer's result as a view.
    EXPECT_GE(c->segments.size(), 2u);
    for (const SegmentResult& seg : c->segments) ExpectOnlyViews(seg.graph);
  } else {
    EXPECT_NE(std::string(c.status().message()).find("reshape"), std::string::npos) << c.status();
  }
}

// The segment as the schedulers see it: no reshape, the input in the
// reshaped shape, the output the value itself, the size symbols those of
// the caller's axes.
TEST(Reshape, ResolvedViewsKeepTheCallersSymbols) {
  const CompileResult r = Schedule("groupnorm_fwd_32x256x28x28.py");
  ASSERT_EQ(r.segments.size(), 1u);
  const Graph& g = r.segments[0].graph;
  const Graph v = ResolveReshapeViews(g);
  EXPECT_EQ(std::count_if(v.nodes.begin(), v.nodes.end(),
                          [](const Node& n) { return n.op == OpKind::kReshape; }),
            0)
      << PrintGraph(v);
  EXPECT_EQ(v.value(v.inputs[0]).rank(), 5);
  EXPECT_EQ(v.value(v.inputs[1]).rank(), 2);  // the weight [G, C/G]
  EXPECT_EQ(v.value(v.outputs[0]).rank(), 5);
  ASSERT_EQ(v.symbols.size(), g.symbols.size());
  for (size_t s = 0; s < g.symbols.size(); ++s) {
    EXPECT_EQ(v.symbols[s].axis, g.symbols[s].axis);
    EXPECT_EQ(v.value(v.symbols[s].input).name, g.value(g.symbols[s].input).name);
  }
}

// W = 28 is no multiple of the vector width 8, the row C/G * H * W = 6272
// is: the x and y rows are contiguous, so the kernel vectorizes by the row.
TEST(Reshape, GroupNormRowsVectorizeWhenOnlyTheRowIsAMultiple) {
  const CompileResult r = Schedule("groupnorm_fwd_32x256x28x28.py");
  ASSERT_EQ(r.segments.size(), 1u);
  ASSERT_EQ(r.segments[0].params.vectorize, 8);
  CodegenOptions co;
  co.symbol_sizes = r.segments[0].symbol_sizes;
  auto k = GenerateKernel(r.segments[0].graph, r.segments[0].params, co);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_NE(k->source.find("const bool vec_ok = (rlen) % 8 == 0"), std::string::npos) << k->source;
  // Backward's per-channel sums over [N, H, W]: vectors within H * W.
  const CompileResult bwd = Schedule("groupnorm_bwd_32x256x28x28.py");
  ASSERT_EQ(bwd.segments.size(), 2u);
  co.symbol_sizes = bwd.segments[0].symbol_sizes;
  auto sums = GenerateKernel(bwd.segments[0].graph, bwd.segments[0].params, co);
  ASSERT_TRUE(sums.ok()) << sums.status();
  EXPECT_NE(sums->source.find("const bool vec_ok = (784) % 8 == 0"), std::string::npos)
      << sums->source;
}

// A random op's axes are never split: the pass keeps the reshape with a
// note and the segmenter cuts after the random values, which the next
// kernel reads as a view.
TEST(Reshape, RandomValuesAreNotSplit) {
  Graph g;
  GraphBuilder b(&g);
  ValueId seed = b.DefineScalarInput(DataType::kInt64, "seed");
  ValueId lo = b.DefineConstant(0.0, DataType::kDouble);
  ValueId hi = b.DefineConstant(1.0, DataType::kDouble);
  Attrs u;
  u.shape = S({64, 256});
  u.dtype = DataType::kFloat;
  ValueId x = (*b.AddNode(OpKind::kUniform, {lo, hi, seed, seed}, u))[0];
  Attrs r;
  r.shape = S({64, 2, 128});
  ValueId y = (*b.AddNode(OpKind::kReshape, {x}, r))[0];
  Attrs sum;
  sum.dims = {2};
  ASSERT_TRUE(b.AddOutput((*b.AddNode(OpKind::kSum, {y}, sum))[0]).ok());
  std::vector<PassRecord> records;
  Graph opt = g;
  ASSERT_TRUE(RunOptimizationPasses(opt, PassOptions{}, &records).ok());
  bool noted = false;
  for (const PassRecord& rec : records) {
    for (const std::string& note : rec.notes) noted |= note.find("uniform") != std::string::npos;
  }
  EXPECT_TRUE(noted);
  CompileOptions o;
  o.generate_code = false;
  auto c = CompileFusion(g, {{}}, o);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->segments.size(), 2u);
  for (const SegmentResult& seg : c->segments) ExpectOnlyViews(seg.graph);
}

// Random chains over a tensor whose axes are groupings of a few static
// factors: reshapes regroup them, permutes reorder the groups, pointwise ops
// read other inputs (whole or broadcast), and sums with or without keepdim
// are broadcast back. Through the passes the CPU reference's values stay
// (the reshapes become views, or stay with a note), and every segment gets
// a kernel from code generation.
class RandomReshapes {
 public:
  explicit RandomReshapes(int seed) : rng_(seed) {}
  Graph Make();

 private:
  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  // A random grouping of factors into consecutive axes.
  std::vector<std::vector<int64_t>> Group(const std::vector<int64_t>& f) {
    std::vector<std::vector<int64_t>> g{{f[0]}};
    for (size_t i = 1; i < f.size(); ++i) {
      if (Pick(2))
        g.back().push_back(f[i]);
      else
        g.push_back({f[i]});
    }
    return g;
  }
  static std::vector<int64_t> Sizes(const std::vector<Extent>& s) {
    std::vector<int64_t> out;
    for (const Extent& e : s) out.push_back(e.size);
    return out;
  }
  static std::vector<Extent> Shape(const std::vector<std::vector<int64_t>>& groups) {
    std::vector<Extent> s;
    for (const auto& grp : groups) {
      int64_t p = 1;
      for (int64_t f : grp) p *= f;
      s.push_back(Extent::Static(p));
    }
    return s;
  }
  std::mt19937 rng_;
};

Graph RandomReshapes::Make() {
  Graph g;
  GraphBuilder b(&g);
  std::vector<int64_t> fine;
  for (int i = 0, n = 3 + Pick(3); i < n; ++i) fine.push_back(2 + Pick(4));
  auto groups = Group(fine);
  ValueId v = *b.DefineTensor("x", DataType::kFloat, Sizes(Shape(groups)));
  for (int step = 0, n = 3 + Pick(4); step < n; ++step) {
    const int rank = static_cast<int>(groups.size());
    const std::vector<Extent> shape = Shape(groups);
    // Permutes rarely: chains of them are refused whether or not reshapes
    // are around (no scheduler places them).
    const int op = Pick(9);
    switch (op < 2 ? 0 : op == 2 ? 1 : op < 5 ? 2 : op < 7 ? 3 : 4) {
      case 0: {  // regroup
        std::vector<int64_t> flat;
        for (const auto& grp : groups) flat.insert(flat.end(), grp.begin(), grp.end());
        groups = Group(flat);
        Attrs a;
        a.shape = Shape(groups);
        v = (*b.AddNode(OpKind::kReshape, {v}, a))[0];
        break;
      }
      case 1: {  // permute the groups
        std::vector<int64_t> dims(rank);
        for (int i = 0; i < rank; ++i) dims[i] = i;
        std::shuffle(dims.begin(), dims.end(), rng_);
        std::vector<std::vector<int64_t>> next;
        for (int64_t d : dims) next.push_back(groups[d]);
        groups = next;
        Attrs a;
        a.dims = dims;
        v = (*b.AddNode(OpKind::kPermute, {v}, a))[0];
        break;
      }
      case 2: {  // times another input, whole or broadcast along some axes
        std::vector<Extent> sub;
        std::vector<int64_t> dims;
        for (int i = 0; i < rank; ++i) {
          if (Pick(3) == 0) continue;
          sub.push_back(shape[i]);
          dims.push_back(i);
        }
        ValueId w = *b.DefineTensor(absl::StrCat("w", step), DataType::kFloat, Sizes(sub));
        if (sub.size() != shape.size()) w = *b.BroadcastInDim(w, shape, dims);
        v = (*b.AddNode(OpKind::kMul, {v, w}, {}))[0];
        break;
      }
      case 3: {  // x - sum(x) over some axes, broadcast back
        Attrs a;
        std::vector<int64_t> kept;
        for (int i = 0; i < rank; ++i) (Pick(2) ? a.dims : kept).push_back(i);
        if (a.dims.empty()) break;
        a.keepdim = Pick(2);
        ValueId s = (*b.AddNode(OpKind::kSum, {v}, a))[0];
        std::vector<int64_t> dims = kept;
        if (a.keepdim) {
          dims.clear();
          for (int i = 0; i < rank; ++i) dims.push_back(i);
        }
        s = *b.BroadcastInDim(s, shape, dims);
        v = (*b.AddNode(OpKind::kSub, {v, s}, {}))[0];
        break;
      }
      default:
        v = (*b.AddNode(OpKind::kSin, {v}, {}))[0];
        break;
    }
  }
  EXPECT_TRUE(b.AddOutput(v).ok());
  return g;
}

TEST(Reshape, RandomSplitsAndMergesKeepValuesAndGenerateCode) {
  int viewed = 0, split = 0, refused = 0;
  for (int seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE(seed);
    Graph g = RandomReshapes(seed).Make();
    if (!VerifyGraph(g).ok()) continue;  // a shape the builder refused
    std::vector<std::vector<int64_t>> shapes;
    for (ValueId in : g.inputs) {
      std::vector<int64_t> s;
      for (const Extent& e : g.value(in).shape) s.push_back(e.size);
      shapes.push_back(s);
    }
    std::vector<PassRecord> records;
    Graph opt = g;
    ASSERT_TRUE(RunOptimizationPasses(opt, PassOptions{}, &records).ok()) << PrintGraph(g);
    const auto inputs = RandomInputs(g, shapes, seed);
    auto want = Evaluate(g, inputs), got = Evaluate(opt, inputs);
    ASSERT_TRUE(want.ok() && got.ok()) << PrintGraph(opt);
    EXPECT_LE(MaxRelativeError((*want)[0], (*got)[0]), 1e-9) << PrintGraph(g) << PrintGraph(opt);
    CompileOptions o;
    o.generate_code = false;
    auto c = CompileFusion(g, shapes, o);
    if (!c.ok()) {
      EXPECT_NE(c.status().code(), absl::StatusCode::kInternal) << c.status();
      ++refused;
      continue;
    }
    for (const SegmentResult& seg : c->segments) {
      ExpectOnlyViews(seg.graph);
      CodegenOptions co;
      co.symbol_sizes = seg.symbol_sizes;
      auto k = GenerateKernel(seg.graph, seg.params, co);
      EXPECT_TRUE(k.ok()) << k.status() << PrintGraph(seg.graph);
    }
    viewed += c->segments.size() == 1;
    split += c->segments.size() > 1;
  }
  std::cout << "random reshape graphs: " << viewed << " one kernel, " << split << " split, "
            << refused << " refused\n";
  EXPECT_GT(viewed, 100);
}

}  // namespace
}  // namespace fusiond
