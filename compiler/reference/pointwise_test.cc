#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "compiler/reference/test_util.h"

namespace fusiond {
namespace {

using testing_util::EvalOne;
using testing_util::Tensor;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// Evaluates op(x) over a float64 vector.
std::vector<double> RunUnary(OpKind op, DataType dtype, std::vector<double> x) {
  Graph g;
  GraphBuilder b(&g);
  ValueId in = *b.DefineTensor("T0", dtype, {static_cast<int64_t>(x.size())});
  ValueId y = *b.Unary(op, in);
  EXPECT_TRUE(b.AddOutput(y).ok());
  return EvalOne(g, {Tensor(dtype, {static_cast<int64_t>(x.size())}, x)}).data;
}

std::vector<double> RunBinary(OpKind op, DataType dtype, std::vector<double> x,
                              std::vector<double> y) {
  Graph g;
  GraphBuilder b(&g);
  const int64_t n = static_cast<int64_t>(x.size());
  ValueId a = *b.DefineTensor("T0", dtype, {n});
  ValueId c = *b.DefineTensor("T1", dtype, {n});
  ValueId r = *b.Binary(op, a, c);
  EXPECT_TRUE(b.AddOutput(r).ok());
  return EvalOne(g, {Tensor(dtype, {n}, x), Tensor(dtype, {n}, y)}).data;
}

TEST(Pointwise, UnaryMath) {
  const DataType f64 = DataType::kDouble;
  EXPECT_EQ(RunUnary(OpKind::kRelu, f64, {-2, 0, 3}), (std::vector<double>{0, 0, 3}));
  EXPECT_TRUE(std::isnan(RunUnary(OpKind::kRelu, f64, {kNaN})[0]));
  EXPECT_EQ(RunUnary(OpKind::kAbs, f64, {-2, 1}), (std::vector<double>{2, 1}));
  EXPECT_EQ(RunUnary(OpKind::kNeg, f64, {-2, 1}), (std::vector<double>{2, -1}));
  EXPECT_DOUBLE_EQ(RunUnary(OpKind::kSigmoid, f64, {0})[0], 0.5);
  EXPECT_DOUBLE_EQ(RunUnary(OpKind::kSigmoid, f64, {2})[0], 1 / (1 + std::exp(-2.0)));
  EXPECT_DOUBLE_EQ(RunUnary(OpKind::kErf, f64, {0.5})[0], 0.5204998778130465);
  EXPECT_DOUBLE_EQ(RunUnary(OpKind::kErfc, f64, {0.5})[0], 1 - 0.5204998778130465);
  EXPECT_DOUBLE_EQ(RunUnary(OpKind::kRsqrt, f64, {4})[0], 0.5);
  EXPECT_DOUBLE_EQ(RunUnary(OpKind::kReciprocal, f64, {4})[0], 0.25);
  EXPECT_DOUBLE_EQ(RunUnary(OpKind::kExp2, f64, {3})[0], 8);
  EXPECT_DOUBLE_EQ(RunUnary(OpKind::kLog1p, f64, {1e-20})[0], 1e-20);
  EXPECT_DOUBLE_EQ(RunUnary(OpKind::kExpm1, f64, {1e-20})[0], 1e-20);
  EXPECT_EQ(RunUnary(OpKind::kFloor, f64, {-1.5, 1.5}), (std::vector<double>{-2, 1}));
  EXPECT_EQ(RunUnary(OpKind::kCeil, f64, {-1.5, 1.5}), (std::vector<double>{-1, 2}));
  EXPECT_EQ(RunUnary(OpKind::kLogicalNot, DataType::kBool, {0, 1}), (std::vector<double>{1, 0}));
}

// Every unary op against the C library at a few points (float64, so no
// rounding in between).
TEST(Pointwise, EveryUnaryOpMatchesItsDefinition) {
  const std::vector<double> xs = {-1.75, -0.3, 0.0, 0.4, 2.5};
  const std::vector<std::pair<OpKind, double (*)(double)>> ops = {
      {OpKind::kAbs, [](double v) { return std::fabs(v); }},
      {OpKind::kNeg, [](double v) { return -v; }},
      {OpKind::kExp, [](double v) { return std::exp(v); }},
      {OpKind::kExp2, [](double v) { return std::exp2(v); }},
      {OpKind::kLog, [](double v) { return std::log(v); }},
      {OpKind::kLog1p, [](double v) { return std::log1p(v); }},
      {OpKind::kExpm1, [](double v) { return std::expm1(v); }},
      {OpKind::kSqrt, [](double v) { return std::sqrt(v); }},
      {OpKind::kRsqrt, [](double v) { return 1 / std::sqrt(v); }},
      {OpKind::kReciprocal, [](double v) { return 1 / v; }},
      {OpKind::kSin, [](double v) { return std::sin(v); }},
      {OpKind::kCos, [](double v) { return std::cos(v); }},
      {OpKind::kTanh, [](double v) { return std::tanh(v); }},
      {OpKind::kSigmoid, [](double v) { return 1 / (1 + std::exp(-v)); }},
      {OpKind::kErf, [](double v) { return std::erf(v); }},
      {OpKind::kErfc, [](double v) { return std::erfc(v); }},
      {OpKind::kRelu, [](double v) { return v > 0 ? v : 0.0; }},
      {OpKind::kFloor, [](double v) { return std::floor(v); }},
      {OpKind::kCeil, [](double v) { return std::ceil(v); }},
  };
  for (const auto& [op, f] : ops) {
    std::vector<double> got = RunUnary(op, DataType::kDouble, xs);
    ASSERT_EQ(got.size(), xs.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      const double want = f(xs[i]);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got[i])) << OpName(op) << "(" << xs[i] << ")";
      } else {
        EXPECT_DOUBLE_EQ(got[i], want) << OpName(op) << "(" << xs[i] << ")";
      }
    }
  }
}

TEST(Pointwise, ResultIsRoundedToDtype) {
  // exp(1) in bf16 is 2.71875, in fp16 2.71875, in fp32 the float nearest e.
  EXPECT_EQ(RunUnary(OpKind::kExp, DataType::kBFloat16, {1})[0], 2.71875);
  EXPECT_EQ(RunUnary(OpKind::kExp, DataType::kHalf, {1})[0], 2.71875);
  EXPECT_EQ(RunUnary(OpKind::kExp, DataType::kFloat, {1})[0],
            static_cast<double>(static_cast<float>(std::exp(1.0))));
  // 1 + 2^-9 is not a bf16: the sum rounds back to 1.
  EXPECT_EQ(RunBinary(OpKind::kAdd, DataType::kBFloat16, {1}, {std::ldexp(1, -9)})[0], 1.0);
  // An int input to a float-only op gives float32.
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kInt32, {1});
  ValueId y = *b.Unary(OpKind::kSqrt, x);
  ASSERT_TRUE(b.AddOutput(y).ok());
  HostTensor r = EvalOne(g, {Tensor(DataType::kInt32, {1}, {2})});
  EXPECT_EQ(r.dtype, DataType::kFloat);
  EXPECT_EQ(r.data[0], static_cast<double>(std::sqrt(2.0f)));
}

TEST(Pointwise, BinaryMath) {
  const DataType f64 = DataType::kDouble;
  EXPECT_EQ(RunBinary(OpKind::kPow, f64, {2, 4, -2}, {3, 0.5, 2}), (std::vector<double>{8, 2, 4}));
  EXPECT_EQ(RunBinary(OpKind::kFmod, f64, {5.5, -5.5}, {2, 2}), (std::vector<double>{1.5, -1.5}));
  EXPECT_EQ(RunBinary(OpKind::kDiv, f64, {1}, {4}), (std::vector<double>{0.25}));
  auto mx = RunBinary(OpKind::kMaximum, f64, {1, kNaN, 3}, {2, 0, kNaN});
  EXPECT_EQ(mx[0], 2);
  EXPECT_TRUE(std::isnan(mx[1]));
  EXPECT_TRUE(std::isnan(mx[2]));
  auto mn = RunBinary(OpKind::kMinimum, f64, {1, kNaN}, {2, 0});
  EXPECT_EQ(mn[0], 1);
  EXPECT_TRUE(std::isnan(mn[1]));
  EXPECT_EQ(RunBinary(OpKind::kLt, f64, {1, 2, kNaN}, {2, 2, 0}), (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(RunBinary(OpKind::kGe, f64, {1, 2}, {2, 2}), (std::vector<double>{0, 1}));
  EXPECT_EQ(RunBinary(OpKind::kNe, f64, {1, kNaN}, {1, kNaN}), (std::vector<double>{0, 1}));
  EXPECT_EQ(RunBinary(OpKind::kLogicalAnd, DataType::kBool, {1, 1, 0}, {1, 0, 0}),
            (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(RunBinary(OpKind::kLogicalOr, DataType::kBool, {1, 0, 0}, {0, 0, 1}),
            (std::vector<double>{1, 0, 1}));
}

TEST(Pointwise, IntegerDivisionIsTrueDivisionAndIntsWrap) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kInt32, {2});
  ValueId y = *b.DefineTensor("T1", DataType::kInt32, {2});
  ValueId q = *b.Binary(OpKind::kDiv, x, y);
  ValueId p = *b.Binary(OpKind::kMul, x, y);
  ASSERT_TRUE(b.AddOutput(q).ok());
  ASSERT_TRUE(b.AddOutput(p).ok());
  auto r = Evaluate(
      g, {Tensor(DataType::kInt32, {2}, {7, 65536}), Tensor(DataType::kInt32, {2}, {2, 65536})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].dtype, DataType::kFloat);
  EXPECT_EQ((*r)[0].data, (std::vector<double>{3.5, 1}));
  EXPECT_EQ((*r)[1].data, (std::vector<double>{14, 0}));  // 2^32 wraps to 0
}

TEST(Pointwise, BroadcastsSizeOneAxesAndScalars) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {2, 3});
  ValueId col = *b.DefineTensor("T1", DataType::kFloat, {2, 1});
  ValueId row = *b.DefineTensor("T2", DataType::kFloat, {1, 3});
  ValueId s = b.DefineConstant(10.0, DataType::kDouble);
  ValueId t = *b.Binary(OpKind::kAdd, x, col);
  t = *b.Binary(OpKind::kMul, t, row);
  t = *b.Binary(OpKind::kAdd, t, s);
  ASSERT_TRUE(b.AddOutput(t).ok());
  HostTensor r = EvalOne(g, {Tensor(DataType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6}),
                             Tensor(DataType::kFloat, {2, 1}, {100, 200}),
                             Tensor(DataType::kFloat, {1, 3}, {1, 2, 3})});
  EXPECT_EQ(r.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.data, (std::vector<double>{111, 214, 319, 214, 420, 628}));
}

TEST(Pointwise, WhereAndCast) {
  Graph g;
  GraphBuilder b(&g);
  ValueId c = *b.DefineTensor("T0", DataType::kBool, {3});
  ValueId x = *b.DefineTensor("T1", DataType::kBFloat16, {3});
  ValueId zero = b.DefineConstant(0.1, DataType::kDouble);
  ValueId w = *b.Where(c, x, zero);
  ValueId i = *b.Cast(x, DataType::kInt32);
  ASSERT_TRUE(b.AddOutput(w).ok());
  ASSERT_TRUE(b.AddOutput(i).ok());
  auto r = Evaluate(g, {Tensor(DataType::kBool, {3}, {1, 0, 1}),
                        Tensor(DataType::kBFloat16, {3}, {1.5, 2, -2.75})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].dtype, DataType::kBFloat16);
  EXPECT_EQ((*r)[0].data, (std::vector<double>{1.5, 0.10009765625, -2.75}));
  EXPECT_EQ((*r)[1].data, (std::vector<double>{1, 2, -2}));
}

TEST(Pointwise, ScalarOps) {
  // reciprocal(size(x, 1)) is a float64 scalar; x * it divides by N.
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {-1, -1});
  ValueId n = *b.Size(x, 1);
  ValueId inv = *b.Unary(OpKind::kReciprocal, n);
  ValueId y = *b.Binary(OpKind::kMul, x, inv);
  ValueId s = b.DefineScalarInput(DataType::kDouble, "s");
  y = *b.Binary(OpKind::kAdd, y, s);
  ASSERT_TRUE(b.AddOutput(y).ok());
  HostTensor r = EvalOne(
      g, {Tensor(DataType::kFloat, {1, 4}, {4, 8, 12, 16}), Tensor(DataType::kDouble, {}, {0.5})});
  EXPECT_EQ(r.data, (std::vector<double>{1.5, 2.5, 3.5, 4.5}));
}

}  // namespace
}  // namespace fusiond
