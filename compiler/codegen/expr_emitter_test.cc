#include "compiler/codegen/expr_emitter.h"

#include <gtest/gtest.h>

#include <cmath>

#include "compiler/ir/builder.h"

namespace fusiond {
namespace {

TEST(ExprEmitter, LiteralsAreTypedAndExact) {
  EXPECT_EQ(Literal(0.5, DataType::kFloat), "(5.000000000e-01f)");
  EXPECT_EQ(Literal(0.1, DataType::kDouble), "(1.00000000000000006e-01)");
  EXPECT_EQ(Literal(3, DataType::kInt64), "((i64)3LL)");
  EXPECT_EQ(Literal(1, DataType::kBool), "true");
  EXPECT_EQ(Literal(INFINITY, DataType::kFloat), "__int_as_float(0x7f800000)");
  EXPECT_EQ(Literal(-INFINITY, DataType::kFloat), "(-__int_as_float(0x7f800000))");
}

TEST(ExprEmitter, SixteenBitResultsAreRounded) {
  EXPECT_EQ(RoundTo(DataType::kBFloat16, "x"), "Ty<5>::round(x)");
  EXPECT_EQ(RoundTo(DataType::kHalf, "x"), "Ty<4>::round(x)");
  EXPECT_EQ(RoundTo(DataType::kFloat, "x"), "x");
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("x", DataType::kFloat, {4});
  ValueId c = *b.Cast(x, DataType::kBFloat16);
  auto e = EmitPointwise(g, *g.def(c), {"a"}, ExprOptions{});
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(*e, "Ty<5>::round(a)");
}

TEST(ExprEmitter, PowWithSmallConstantExponentsIsMultiplication) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("x", DataType::kFloat, {4});
  ValueId three = b.DefineConstant(3.0, DataType::kDouble);
  ValueId half = b.DefineConstant(0.5, DataType::kDouble);
  ValueId odd = b.DefineConstant(1.7, DataType::kDouble);
  ValueId p3 = *b.Binary(OpKind::kPow, x, three);
  ValueId ph = *b.Binary(OpKind::kPow, x, half);
  ValueId po = *b.Binary(OpKind::kPow, x, odd);
  EXPECT_EQ(*EmitPointwise(g, *g.def(p3), {"a", "3"}, {}), "(a * a * a)");
  EXPECT_EQ(*EmitPointwise(g, *g.def(ph), {"a", "h"}, {}), "sqrtf(a)");
  EXPECT_EQ(*EmitPointwise(g, *g.def(po), {"a", "e"}, {}), "powf(a, ((float)(e)))");
}

TEST(ExprEmitter, ApproximationsOnlyWhenAllowed) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("x", DataType::kFloat, {4});
  ValueId t = *b.Unary(OpKind::kTanh, x);
  ExprOptions precise, fast;
  fast.approx_transcendentals = true;
  EXPECT_EQ(*EmitPointwise(g, *g.def(t), {"a"}, precise), "tanhf(a)");
  EXPECT_EQ(*EmitPointwise(g, *g.def(t), {"a"}, fast), "fz_tanh_approx(a)");
  ValueId xd = *b.DefineTensor("xd", DataType::kDouble, {4});
  ValueId td = *b.Unary(OpKind::kTanh, xd);
  EXPECT_EQ(*EmitPointwise(g, *g.def(td), {"a"}, fast), "tanh(a)");  // never for double
}

TEST(ExprEmitter, ReductionIsNotPointwise) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("x", DataType::kFloat, {4});
  ValueId s = *b.Reduce(OpKind::kSum, x, {0}, false);
  EXPECT_EQ(EmitPointwise(g, *g.def(s), {"a"}, {}).status().code(),
            absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace fusiond
