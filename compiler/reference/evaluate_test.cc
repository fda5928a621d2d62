#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "compiler/reference/test_util.h"

namespace fusiond {
namespace {

using testing_util::Tensor;

// y = x * w (w broadcast over rows), symbolic [M, N] and [N].
Graph ScaleRows(DataType dtype) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", dtype, {-1, -1});
  ValueId w = *b.DefineTensor("T1", dtype, {-1});
  ValueId wb = *b.BroadcastInDim(w, g.value(x).shape, {1});
  ValueId y = *b.Binary(OpKind::kMul, x, wb);
  EXPECT_TRUE(b.AddOutput(y).ok());
  return g;
}

TEST(Evaluate, BindsSymbolicShapes) {
  Graph g = ScaleRows(DataType::kFloat);
  auto r = Evaluate(g, {Tensor(DataType::kFloat, {2, 2}, {1, 2, 3, 4}),
                        Tensor(DataType::kFloat, {2}, {10, 100})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].data, (std::vector<double>{10, 200, 30, 400}));
}

TEST(Evaluate, RejectsBadInputs) {
  Graph g = ScaleRows(DataType::kFloat);
  auto expect_invalid = [&](const std::vector<HostTensor>& in, const char* what) {
    auto r = Evaluate(g, in);
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << what;
    EXPECT_FALSE(r.status().message().empty());
  };
  HostTensor x = Tensor(DataType::kFloat, {2, 2}, {1, 2, 3, 4});
  HostTensor w = Tensor(DataType::kFloat, {2}, {1, 2});
  expect_invalid({x}, "one input missing");
  expect_invalid({x, Tensor(DataType::kFloat, {3}, {1, 2, 3})}, "symbol mismatch");
  expect_invalid({x, Tensor(DataType::kBFloat16, {2}, {1, 2})}, "dtype mismatch");
  expect_invalid({x, Tensor(DataType::kFloat, {2, 1}, {1, 2})}, "rank mismatch");
  expect_invalid({x, Tensor(DataType::kFloat, {2}, {1})}, "data size mismatch");
  expect_invalid({x, Tensor(DataType::kFloat, {-2}, {})}, "negative extent");
}

TEST(Evaluate, RejectsStaticExtentMismatch) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {2, 3});
  ASSERT_TRUE(b.AddOutput(*b.Unary(OpKind::kNeg, x)).ok());
  auto r = Evaluate(g, {Tensor(DataType::kFloat, {3, 2}, {1, 2, 3, 4, 5, 6})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(Evaluate, RejectsInvalidGraph) {
  Graph g = ScaleRows(DataType::kFloat);
  g.outputs.push_back(999);
  auto r = Evaluate(g, {Tensor(DataType::kFloat, {1, 1}, {1}), Tensor(DataType::kFloat, {1}, {1})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(Evaluate, ElementLimitIsResourceExhausted) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {-1});
  ValueId y = *b.DefineTensor("T1", DataType::kFloat, {-1});
  ValueId xb = *b.BroadcastInDim(x, {g.value(x).shape[0], g.value(y).shape[0]}, {0});
  ValueId yb = *b.BroadcastInDim(y, {g.value(x).shape[0], g.value(y).shape[0]}, {1});
  ASSERT_TRUE(b.AddOutput(*b.Binary(OpKind::kAdd, xb, yb)).ok());
  EvaluateOptions opts;
  opts.max_elements = 100;
  std::vector<HostTensor> in = {Tensor(DataType::kFloat, {20}, std::vector<double>(20)),
                                Tensor(DataType::kFloat, {20}, std::vector<double>(20))};
  auto r = Evaluate(g, in, opts);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  opts.max_elements = 400;
  EXPECT_TRUE(Evaluate(g, in, opts).ok());
}

TEST(Evaluate, InputsAreRoundedAndOutputsMayBeInputs) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kBFloat16, {1});
  ASSERT_TRUE(b.AddOutput(x).ok());
  auto r = Evaluate(g, {Tensor(DataType::kBFloat16, {1}, {0.1})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].data[0], 0.10009765625);
}

TEST(RandomInputs, SeededAndRounded) {
  Graph g = ScaleRows(DataType::kBFloat16);
  auto a = RandomInputs(g, {{64, 32}, {32}}, 5);
  auto b = RandomInputs(g, {{64, 32}, {32}}, 5);
  auto c = RandomInputs(g, {{64, 32}, {32}}, 6);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].data, b[0].data);
  EXPECT_NE(a[0].data, c[0].data);
  double sum = 0, sq = 0;
  for (double v : a[0].data) {
    EXPECT_EQ(v, RoundTo(DataType::kBFloat16, v));
    sum += v;
    sq += v * v;
  }
  const double n = a[0].data.size();
  EXPECT_NEAR(sum / n, 0.0, 0.15);  // standard normal: mean 0
  EXPECT_NEAR(sq / n, 1.0, 0.15);   // and variance 1
  EXPECT_TRUE(Evaluate(g, a).ok());
}

TEST(MaxRelativeError, Definition) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  HostTensor ref = Tensor(DataType::kFloat, {3}, {100, -2, 0});
  EXPECT_EQ(MaxRelativeError(ref, ref), 0.0);
  // Relative per element: 1% off on the -2.
  EXPECT_NEAR(MaxRelativeError(Tensor(DataType::kFloat, {3}, {100, -2.02, 0}), ref), 0.01, 1e-12);
  // An error on the 0 is measured against floor * max|b| = 0.1.
  EXPECT_NEAR(MaxRelativeError(Tensor(DataType::kFloat, {3}, {100, -2, 0.001}), ref), 0.01, 1e-12);
  EXPECT_EQ(MaxRelativeError(Tensor(DataType::kFloat, {3}, {100, nan, 0}), ref), inf);
  EXPECT_EQ(MaxRelativeError(Tensor(DataType::kFloat, {2}, {100, -2}), ref), inf);
  HostTensor special = Tensor(DataType::kFloat, {3}, {nan, inf, 1});
  EXPECT_EQ(MaxRelativeError(special, special), 0.0);
  EXPECT_EQ(MaxRelativeError(Tensor(DataType::kFloat, {3}, {nan, -inf, 1}), special), inf);
  // Scale invariance.
  HostTensor small = Tensor(DataType::kFloat, {2}, {1e-6, 2e-6});
  HostTensor small_off = Tensor(DataType::kFloat, {2}, {1.01e-6, 2e-6});
  EXPECT_NEAR(MaxRelativeError(small_off, small), 0.01, 1e-9);
}

}  // namespace
}  // namespace fusiond
