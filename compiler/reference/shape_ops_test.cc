#include <gtest/gtest.h>

#include "compiler/reference/test_util.h"

namespace fusiond {
namespace {

using testing_util::EvalOne;
using testing_util::Tensor;

TEST(ShapeOps, BroadcastInDimOfLowerRank) {
  Graph g;
  GraphBuilder b(&g);
  ValueId w = *b.DefineTensor("T0", DataType::kFloat, {3});
  ValueId r = *b.BroadcastInDim(w, {Extent::Static(2), Extent::Static(3)}, {1});
  ValueId c = *b.BroadcastInDim(w, {Extent::Static(3), Extent::Static(2)}, {0});
  ValueId y = *b.Binary(OpKind::kAdd, r,
                        (*b.AddNode(OpKind::kPermute, {c}, testing_util::WithDims({1, 0})))[0]);
  ASSERT_TRUE(b.AddOutput(r).ok());
  ASSERT_TRUE(b.AddOutput(c).ok());
  ASSERT_TRUE(b.AddOutput(y).ok());
  auto out = Evaluate(g, {Tensor(DataType::kFloat, {3}, {1, 2, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data, (std::vector<double>{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ((*out)[1].shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ((*out)[1].data, (std::vector<double>{1, 1, 2, 2, 3, 3}));
  EXPECT_EQ((*out)[2].data, (std::vector<double>{2, 4, 6, 2, 4, 6}));
}

TEST(ShapeOps, BroadcastInDimExpandsSizeOneAxes) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {2, 1});
  ValueId y = *b.BroadcastInDim(x, {Extent::Static(2), Extent::Static(3)}, {0, 1});
  ASSERT_TRUE(b.AddOutput(y).ok());
  EXPECT_EQ(EvalOne(g, {Tensor(DataType::kFloat, {2, 1}, {7, 8})}).data,
            (std::vector<double>{7, 7, 7, 8, 8, 8}));
}

TEST(ShapeOps, BroadcastExpandSqueezeReshapePermute) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kDouble, {2, 3});
  Attrs bc;
  bc.is_broadcast_dim = {false, true, false};
  ValueId x3 = (*b.AddNode(OpKind::kBroadcast, {x}, bc))[0];  // [2, 1, 3]
  Attrs ex;
  ex.shape = {Extent::Static(2), Extent::Static(2), Extent::Static(3)};
  ValueId e = (*b.AddNode(OpKind::kExpand, {x3}, ex))[0];  // [2, 2, 3]
  ValueId sq = (*b.AddNode(OpKind::kSqueeze, {x3}, testing_util::WithDims({1})))[0];
  ValueId p = (*b.AddNode(OpKind::kPermute, {e}, testing_util::WithDims({2, 0, 1})))[0];
  Attrs rs;
  rs.shape = {Extent::Static(3), Extent::Static(4)};
  ValueId flat = (*b.AddNode(OpKind::kReshape, {p}, rs))[0];  // copies the view
  ASSERT_TRUE(b.AddOutput(e).ok());
  ASSERT_TRUE(b.AddOutput(sq).ok());
  ASSERT_TRUE(b.AddOutput(flat).ok());
  auto out = Evaluate(g, {Tensor(DataType::kDouble, {2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data, (std::vector<double>{1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}));
  EXPECT_EQ((*out)[1].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ((*out)[1].data, (std::vector<double>{1, 2, 3, 4, 5, 6}));
  // p[k][i][j] = e[i][j][k] = x[i][k]
  EXPECT_EQ((*out)[2].data, (std::vector<double>{1, 1, 4, 4, 2, 2, 5, 5, 3, 3, 6, 6}));
}

TEST(ShapeOps, ReshapeIsRowMajor) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {2, 3});
  Attrs rs;
  rs.shape = {Extent::Static(3), Extent::Static(1), Extent::Static(2)};
  ValueId y = (*b.AddNode(OpKind::kReshape, {x}, rs))[0];
  ValueId s = *b.Reduce(OpKind::kSum, y, {2}, false);
  ASSERT_TRUE(b.AddOutput(s).ok());
  HostTensor r = EvalOne(g, {Tensor(DataType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(r.shape, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(r.data, (std::vector<double>{3, 7, 11}));
}

}  // namespace
}  // namespace fusiond
