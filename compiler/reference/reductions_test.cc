#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "compiler/ir/verifier.h"
#include "compiler/reference/test_util.h"

namespace fusiond {
namespace {

using testing_util::EvalOne;
using testing_util::Tensor;

// x = [[1, 2, 3], [4, 5, 6]] as float64, reduced by op over dims.
HostTensor Reduce2x3(OpKind op, std::vector<int64_t> dims, bool keepdim,
                     std::vector<double> data = {1, 2, 3, 4, 5, 6}) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kDouble, {2, 3});
  ValueId r = *b.Reduce(op, x, dims, keepdim);
  EXPECT_TRUE(b.AddOutput(r).ok());
  return EvalOne(g, {Tensor(DataType::kDouble, {2, 3}, data)});
}

TEST(Reductions, SumMaxMinProdOverEachAxis) {
  EXPECT_EQ(Reduce2x3(OpKind::kSum, {1}, false).data, (std::vector<double>{6, 15}));
  EXPECT_EQ(Reduce2x3(OpKind::kSum, {0}, false).data, (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(Reduce2x3(OpKind::kSum, {0, 1}, false).data, (std::vector<double>{21}));
  EXPECT_EQ(Reduce2x3(OpKind::kMax, {1}, false).data, (std::vector<double>{3, 6}));
  EXPECT_EQ(Reduce2x3(OpKind::kMin, {0}, false).data, (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(Reduce2x3(OpKind::kProd, {1}, false).data, (std::vector<double>{6, 120}));
  HostTensor all = Reduce2x3(OpKind::kSum, {0, 1}, false);
  EXPECT_TRUE(all.shape.empty());
}

TEST(Reductions, KeepDim) {
  HostTensor r = Reduce2x3(OpKind::kSum, {1}, true);
  EXPECT_EQ(r.shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(r.data, (std::vector<double>{6, 15}));
  r = Reduce2x3(OpKind::kMax, {-2}, true);
  EXPECT_EQ(r.shape, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(r.data, (std::vector<double>{4, 5, 6}));
}

TEST(Reductions, MaxPropagatesNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  HostTensor r = Reduce2x3(OpKind::kMax, {1}, false, {1, nan, 3, 4, 5, 6});
  EXPECT_TRUE(std::isnan(r.data[0]));
  EXPECT_EQ(r.data[1], 6);
}

TEST(Reductions, VarCorrectionAndVarMean) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kDouble, {2, 4});
  Attrs a;
  a.dims = {1};
  a.correction = 1;
  ValueId v1 = (*b.AddNode(OpKind::kVar, {x}, a))[0];
  a.correction = 0;
  a.keepdim = true;
  auto vm = *b.AddNode(OpKind::kVarMean, {x}, a);
  ASSERT_TRUE(b.AddOutput(v1).ok());
  ASSERT_TRUE(b.AddOutput(vm[0]).ok());
  ASSERT_TRUE(b.AddOutput(vm[1]).ok());
  auto r = Evaluate(g, {Tensor(DataType::kDouble, {2, 4}, {1, 2, 3, 4, 2, 2, 2, 10})});
  ASSERT_TRUE(r.ok()) << r.status();
  // Row 0: mean 2.5, squared deviations sum 5; row 1: mean 4, sum 48.
  EXPECT_EQ((*r)[0].data, (std::vector<double>{5.0 / 3, 16}));
  EXPECT_EQ((*r)[1].shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ((*r)[1].data, (std::vector<double>{1.25, 12}));
  EXPECT_EQ((*r)[2].data, (std::vector<double>{2.5, 4}));
}

TEST(Reductions, AccumulatesInDoubleThenRounds) {
  // 4096 copies of 1 + 2^-7 in bf16: a bf16 running sum would stall at 512
  // (the increment is below half an ulp there); double accumulation gives
  // 4128, which rounds to the bf16 4128.
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kBFloat16, {4096});
  ValueId s = *b.Reduce(OpKind::kSum, x, {0}, false);
  ASSERT_TRUE(b.AddOutput(s).ok());
  HostTensor r = EvalOne(
      g, {Tensor(DataType::kBFloat16, {4096}, std::vector<double>(4096, 1 + std::ldexp(1, -7)))});
  EXPECT_EQ(r.dtype, DataType::kBFloat16);
  EXPECT_EQ(r.data[0], 4128);
}

TEST(Reductions, ReducesAPermutedView) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kDouble, {2, 3});
  ValueId p = (*b.AddNode(OpKind::kPermute, {x}, testing_util::WithDims({1, 0})))[0];
  ValueId s = *b.Reduce(OpKind::kSum, p, {1}, false);
  ASSERT_TRUE(b.AddOutput(s).ok());
  HostTensor r = EvalOne(g, {Tensor(DataType::kDouble, {2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(r.data, (std::vector<double>{5, 7, 9}));
}

TEST(Reductions, IntegerSumIsInt64) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kInt32, {3});
  ValueId s = *b.Reduce(OpKind::kSum, x, {0}, false);
  ASSERT_TRUE(b.AddOutput(s).ok());
  HostTensor r = EvalOne(g, {Tensor(DataType::kInt32, {3}, {2147483647, 1, 1})});
  EXPECT_EQ(r.dtype, DataType::kInt64);
  EXPECT_EQ(r.data[0], 2147483649.0);
}

}  // namespace
}  // namespace fusiond

namespace fusiond {
namespace {

// Passes and the wire format may leave axes as written (negative); the
// builder normalizes its own copy only.
TEST(Reductions, NegativeAxesInStoredAttrs) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kDouble, {2, 3});
  ValueId s = *b.Reduce(OpKind::kSum, x, {1}, false);
  ASSERT_TRUE(b.AddOutput(s).ok());
  g.nodes[0].attrs.dims = {-1};
  ASSERT_TRUE(VerifyGraph(g).ok());
  HostTensor r = testing_util::EvalOne(
      g, {testing_util::Tensor(DataType::kDouble, {2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(r.data, (std::vector<double>{6, 15}));
}

TEST(Reductions, VarMeanWithOnlyTheMeanRead) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {2, 2});
  Attrs a;
  a.dims = {1};
  auto vm = *b.AddNode(OpKind::kVarMean, {x}, a);
  ValueId y = *b.Unary(OpKind::kNeg, vm[1]);
  ASSERT_TRUE(b.AddOutput(y).ok());
  HostTensor r =
      testing_util::EvalOne(g, {testing_util::Tensor(DataType::kFloat, {2, 2}, {1, 2, 3, 5})});
  EXPECT_EQ(r.data, (std::vector<double>{-1.5, -4}));
}

TEST(Reductions, EmptyExtents) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {-1, -1});
  ValueId s = *b.Reduce(OpKind::kSum, x, {1}, false);
  ValueId m = *b.Reduce(OpKind::kMax, x, {1}, false);
  ValueId e = *b.Unary(OpKind::kExp, x);
  ASSERT_TRUE(b.AddOutput(s).ok());
  ASSERT_TRUE(b.AddOutput(m).ok());
  ASSERT_TRUE(b.AddOutput(e).ok());
  auto r = Evaluate(g, {testing_util::Tensor(DataType::kFloat, {2, 0}, {})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].data, (std::vector<double>{0, 0}));
  EXPECT_EQ((*r)[1].data[0], -std::numeric_limits<double>::infinity());
  EXPECT_EQ((*r)[2].shape, (std::vector<int64_t>{2, 0}));
  EXPECT_TRUE((*r)[2].data.empty());
}

}  // namespace
}  // namespace fusiond
