#include "compiler/ir/builder.h"

#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"

namespace fusiond {
namespace {

// Attrs with only the axes (and keepdim) set.
Attrs DimsAttrs(std::vector<int64_t> dims, bool keepdim = false) {
  Attrs a;
  a.dims = std::move(dims);
  a.keepdim = keepdim;
  return a;
}

TEST(Builder, SymbolicBroadcastUnifiesExtents) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kBFloat16, {-1, -1});
  ValueId w = *b.DefineTensor("T1", DataType::kBFloat16, {-1});
  ValueId xf = *b.Cast(x, DataType::kFloat);
  ValueId wb = *b.BroadcastInDim(w, g.value(x).shape, {1});
  ValueId y = *b.Binary(OpKind::kMul, xf, wb);
  EXPECT_EQ(g.value(y).dtype, DataType::kFloat);
  EXPECT_TRUE(g.SameExtent(g.value(w).shape[0], g.value(x).shape[1]));
  EXPECT_EQ(g.ExtentName(g.value(w).shape[0]), "T0.size(1)");
  ASSERT_TRUE(b.AddOutput(y).ok());
  EXPECT_TRUE(VerifyGraph(g).ok()) << VerifyGraph(g);
}

TEST(Builder, RejectsStaticMismatch) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {4, 8});
  ValueId y = *b.DefineTensor("T1", DataType::kFloat, {4, 6});
  auto r = b.Binary(OpKind::kAdd, x, y);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("axis 1"), std::string::npos) << r.status();
}

TEST(Builder, ReductionShapesAndTypes) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {16, 128, 768});
  ValueId s = *b.Reduce(OpKind::kSum, x, {0, -1}, false);
  EXPECT_EQ(g.value(s).rank(), 1);
  EXPECT_EQ(g.value(s).shape[0].size, 128);
  auto vm = b.AddNode(OpKind::kVarMean, {x}, DimsAttrs({2}, /*keepdim=*/true));
  ASSERT_TRUE(vm.ok());
  EXPECT_EQ(vm->size(), 2u);
  EXPECT_EQ(g.value((*vm)[0]).shape[2].size, 1);
  EXPECT_FALSE(b.Reduce(OpKind::kSum, x, {3}, false).ok());
  EXPECT_FALSE(b.Reduce(OpKind::kSum, x, {1, 1}, false).ok());
}

TEST(Builder, ScalarPromotion) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kBFloat16, {4});
  ValueId c = b.DefineConstant(0.5, DataType::kDouble);
  EXPECT_EQ(g.value(*b.Binary(OpKind::kMul, x, c)).dtype, DataType::kBFloat16);
  ValueId i = *b.DefineTensor("T1", DataType::kInt32, {4});
  EXPECT_EQ(g.value(*b.Binary(OpKind::kMul, i, c)).dtype, DataType::kFloat);
  EXPECT_EQ(g.value(*b.Binary(OpKind::kLt, x, c)).dtype, DataType::kBool);
  ValueId n = *b.Size(x, 0);
  EXPECT_EQ(g.value(*b.Unary(OpKind::kReciprocal, n)).dtype, DataType::kDouble);
}

TEST(Builder, ShapeOps) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {4, 1, 6});
  auto sq = b.AddNode(OpKind::kSqueeze, {x}, DimsAttrs({1}));
  ASSERT_TRUE(sq.ok());
  EXPECT_EQ(g.value((*sq)[0]).rank(), 2);
  EXPECT_FALSE(b.AddNode(OpKind::kSqueeze, {x}, DimsAttrs({0})).ok());
  auto p = b.AddNode(OpKind::kPermute, {x}, DimsAttrs({2, 0, 1}));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(g.value((*p)[0]).shape[0].size, 6);
  Attrs r;
  r.shape = {Extent::Static(24)};
  EXPECT_TRUE(b.AddNode(OpKind::kReshape, {x}, r).ok());
  r.shape = {Extent::Static(25)};
  EXPECT_FALSE(b.AddNode(OpKind::kReshape, {x}, r).ok());
  EXPECT_FALSE(b.DefineTensor("T9", DataType::kFloat, {1 << 30, 1 << 30}).ok());
}

}  // namespace
}  // namespace fusiond
