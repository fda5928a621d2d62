// Hand-built graphs and heuristic parameters the code generator's tests
// share (kernel_plan_test.cc, codegen_test.cc, codegen_launch_test.cc).
#ifndef FUSIOND_COMPILER_CODEGEN_CODEGEN_TEST_GRAPHS_H_
#define FUSIOND_COMPILER_CODEGEN_CODEGEN_TEST_GRAPHS_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/codegen/codegen.h"
#include "compiler/ir/binding.h"
#include "compiler/ir/builder.h"
#include "compiler/scheduler/analysis.h"
#include "compiler/scheduler/kernel_heuristics.h"
#include "compiler/scheduler/target.h"

namespace fusiond {
namespace codegen_test {

// The default target with another SM count (launch grids scale with it).
inline Target WithSms(int sm_count) {
  Target t = DefaultTarget();
  t.sm_count = sm_count;
  return t;
}

// How many times `needle` occurs in `text`.
inline size_t Occurrences(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// softmax over the last axis of a symbolic [M, N] bf16 input.
inline Graph Softmax() {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kBFloat16, {-1, -1});
  ValueId xf = *b.Cast(x, DataType::kFloat);
  ValueId m = *b.Reduce(OpKind::kMax, xf, {1}, false);
  ValueId mb = *b.BroadcastInDim(m, g.value(x).shape, {0});
  ValueId e = *b.Unary(OpKind::kExp, *b.Binary(OpKind::kSub, xf, mb));
  ValueId s = *b.Reduce(OpKind::kSum, e, {1}, false);
  ValueId sb = *b.BroadcastInDim(s, g.value(x).shape, {0});
  ValueId y = *b.Cast(*b.Binary(OpKind::kDiv, e, sb), DataType::kBFloat16);
  EXPECT_TRUE(b.AddOutput(y).ok());
  return g;
}

// out = x * w (w broadcast along rows), and colsum = sum(x, rows).
inline Graph ScaleAndColumnSum() {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("x", DataType::kFloat, {64, 256});
  ValueId w = *b.DefineTensor("w", DataType::kFloat, {256});
  ValueId wb = *b.BroadcastInDim(w, g.value(x).shape, {1});
  ValueId rs = *b.Reduce(OpKind::kSum, x, {1}, false);
  ValueId rsb = *b.BroadcastInDim(rs, g.value(x).shape, {0});
  ValueId y = *b.Binary(OpKind::kMul, *b.Binary(OpKind::kMul, x, wb), rsb);
  ValueId cs = *b.Reduce(OpKind::kSum, x, {0}, false);
  EXPECT_TRUE(b.AddOutput(y).ok());
  EXPECT_TRUE(b.AddOutput(cs).ok());
  return g;
}

// layernorm's statistics: var_mean over the last axis of a symbolic [M, N]
// bf16 input, y = (x - mean) * rsqrt(var).
inline Graph Normalize() {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kBFloat16, {-1, -1});
  ValueId xf = *b.Cast(x, DataType::kFloat);
  Attrs a;
  a.dims = {1};
  auto vm = *b.AddNode(OpKind::kVarMean, {xf}, a);
  ValueId vb = *b.BroadcastInDim(vm[0], g.value(x).shape, {0});
  ValueId mb = *b.BroadcastInDim(vm[1], g.value(x).shape, {0});
  ValueId y =
      *b.Binary(OpKind::kMul, *b.Binary(OpKind::kSub, xf, mb), *b.Unary(OpKind::kRsqrt, vb));
  EXPECT_TRUE(b.AddOutput(*b.Cast(y, DataType::kBFloat16)).ok());
  return g;
}

// Softmax at [4096, 16384] bf16 as inner persistent: block_x threads x
// `batch` vectors of 8 per row, grid_x blocks.
inline HeuristicParams SoftmaxParams(int block_x = 128, int batch = 16, int64_t grid_x = 264) {
  HeuristicParams hp;
  hp.kind = SchedulerKind::kInnerPersistent;
  hp.outer_size = 4096;
  hp.inner_size = 16384;
  hp.vectorize = 8;
  hp.block_x = block_x;
  hp.persistent_batch = batch;
  hp.grid_x = grid_x;
  return hp;
}

// The kernel generated with smem_bytes = `budget` (the rest of hp as given).
inline absl::StatusOr<GeneratedKernel> WithSmemBudget(const Graph& g, HeuristicParams hp,
                                                      int64_t budget) {
  hp.smem_bytes = budget;
  return GenerateKernel(g, hp, CodegenOptions{});
}

// x - sum(x) over the channels of a float [n, 4, 64] (reductions over 0
// and 2, batch norm's pattern), and outer persistent parameters with two
// blocks sharing each channel.
inline Graph ChannelCentering(int64_t n = 8) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("x", DataType::kFloat, {n, 4, 64});
  ValueId s = *b.Reduce(OpKind::kSum, x, {0, 2}, false);
  ValueId sb = *b.BroadcastInDim(s, g.value(x).shape, {1});
  EXPECT_TRUE(b.AddOutput(*b.Binary(OpKind::kSub, x, sb)).ok());
  return g;
}

inline HeuristicParams OuterParams(int64_t channels, int64_t per_channel, int vectorize,
                                   int block_x) {
  HeuristicParams hp;
  hp.kind = SchedulerKind::kOuterPersistent;
  hp.outer_size = channels;
  hp.inner_size = per_channel;
  hp.vectorize = vectorize;
  hp.block_x = block_x;
  hp.grid_x = 2;
  hp.grid_y = channels;
  hp.grid_reduction = true;
  return hp;
}
inline HeuristicParams ChannelParams(int64_t n = 8) { return OuterParams(4, n * 64, 4, 64); }

// bf16 x - sum(x) over the channels of an [N, C, H, W] `shape` (-1:
// symbolic), reductions over 0, 2 and 3.
inline Graph ImageChannelCentering(const std::vector<int64_t>& shape) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("x", DataType::kBFloat16, shape);
  ValueId xf = *b.Cast(x, DataType::kFloat);
  ValueId s = *b.Reduce(OpKind::kSum, xf, {0, 2, 3}, false);
  ValueId sb = *b.BroadcastInDim(s, g.value(x).shape, {1});
  EXPECT_TRUE(b.AddOutput(*b.Cast(*b.Binary(OpKind::kSub, xf, sb), DataType::kBFloat16)).ok());
  return g;
}

// ScaleAndColumnSum as an inner-outer persistent kernel of 64-thread
// blocks, float4 vectors.
inline HeuristicParams InnerOuterParams(int64_t grid_x) {
  HeuristicParams hp;
  hp.kind = SchedulerKind::kInnerOuterPersistent;
  hp.vectorize = 4;
  hp.block_x = 64;
  hp.grid_x = grid_x;
  return hp;
}

// hp with code generation's choices (one_pass_variance, streaming_stores,
// blocks_per_sm, ...) decided as the heuristics decide them for g at
// `shapes` (one per input; empty: a static graph's own), as the pipeline does.
inline HeuristicParams Decided(const Graph& g, HeuristicParams hp,
                               std::vector<std::vector<int64_t>> shapes = {},
                               const Target& target = DefaultTarget()) {
  if (shapes.empty()) {
    for (ValueId in : g.inputs) {
      std::vector<int64_t> shape;
      for (const Extent& e : g.value(in).shape) shape.push_back(g.Canonical(e).size);
      shapes.push_back(shape);
    }
  }
  auto sizes = BindShapes(g, shapes);
  EXPECT_TRUE(sizes.ok()) << sizes.status();
  if (sizes.ok()) DecideKernelForm(AnalyzeFusion(g, *sizes), target, &hp);
  return hp;
}

}  // namespace codegen_test
}  // namespace fusiond

#endif  // FUSIOND_COMPILER_CODEGEN_CODEGEN_TEST_GRAPHS_H_
