#include "client/runtime/expr.h"

#include <gtest/gtest.h>

namespace fusiond {
namespace runtime {
namespace {

int64_t Eval(const char* text, const SymbolValues& s = {}) {
  absl::StatusOr<int64_t> v = EvalExpr(text, s);
  EXPECT_TRUE(v.ok()) << text << ": " << v.status();
  return v.ok() ? *v : -999999;
}

TEST(ExprTest, Literals) {
  EXPECT_EQ(Eval("0"), 0);
  EXPECT_EQ(Eval("  42 "), 42);
  EXPECT_EQ(Eval("9223372036854775807"), INT64_MAX);
}

TEST(ExprTest, PrecedenceAndAssociativity) {
  EXPECT_EQ(Eval("2 + 3 * 4"), 14);
  EXPECT_EQ(Eval("(2 + 3) * 4"), 20);
  EXPECT_EQ(Eval("10 - 3 - 2"), 5);    // left to right
  EXPECT_EQ(Eval("100 / 10 / 5"), 2);  // left to right
  EXPECT_EQ(Eval("7 / 2 * 2"), 6);
  EXPECT_EQ(Eval("-3 + 5"), 2);
  EXPECT_EQ(Eval("2 * -3"), -6);
}

TEST(ExprTest, DivisionTruncates) {
  EXPECT_EQ(Eval("7 / 2"), 3);
  EXPECT_EQ(Eval("-7 / 2"), -3);
}

TEST(ExprTest, Functions) {
  EXPECT_EQ(Eval("ceil_div(7, 2)"), 4);
  EXPECT_EQ(Eval("ceil_div(8, 2)"), 4);
  EXPECT_EQ(Eval("ceil_div(0, 5)"), 0);
  EXPECT_EQ(Eval("ceil_div(-7, 2)"), -3);
  EXPECT_EQ(Eval("min(3, 9)"), 3);
  EXPECT_EQ(Eval("max(3, 9)"), 9);
  EXPECT_EQ(Eval("min(264, max(1, ceil_div(2048 * 8192, 1024)))"), 264);
  // A looping grid balanced over its rounds (LaunchGrid): 2048 rows on at
  // most 264 blocks take 256 blocks of 8; 100 rows one block each.
  const char* balanced =
      "ceil_div(max(1, ceil_div(s0, 1)), ceil_div(max(1, ceil_div(s0, 1)), 264))";
  EXPECT_EQ(Eval(balanced, {{"s0", 2048}}), 256);
  EXPECT_EQ(Eval(balanced, {{"s0", 100}}), 100);
  EXPECT_EQ(Eval(balanced, {{"s0", 264 * 5 + 1}}), 221);
}

TEST(ExprTest, Symbols) {
  SymbolValues s = {{"s0", 2048}, {"s1", 8192}, {"rows_2", 5}};
  EXPECT_EQ(Eval("s1 * 4 * 264 + 64", s), 8192 * 4 * 264 + 64);
  EXPECT_EQ(Eval("min(264, s0)", s), 264);
  EXPECT_EQ(Eval("ceil_div(s0 * s1, 256 * 8)", s), 8192);
  EXPECT_EQ(Eval("rows_2*rows_2", s), 25);
  absl::StatusOr<Expr> e = Expr::Parse("ceil_div(s1, 8) + s0 - s1");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->Symbols(), (std::vector<std::string>{"s0", "s1"}));
  EXPECT_FALSE(e->is_constant());
  EXPECT_TRUE(Expr::Parse("3 * (4 + 1)")->is_constant());
}

TEST(ExprTest, ParseOnceEvalMany) {
  absl::StatusOr<Expr> e = Expr::Parse("ceil_div(s0, 4)");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(*e->Eval({{"s0", 5}}), 2);
  EXPECT_EQ(*e->Eval({{"s0", 1000}}), 250);
  EXPECT_EQ(*e->Eval({{"s0", 3}}), 1);
}

void ExpectError(const char* text, const char* fragment, const SymbolValues& s = {}) {
  absl::StatusOr<int64_t> v = EvalExpr(text, s);
  ASSERT_FALSE(v.ok()) << text << " evaluated to " << *v;
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument) << v.status();
  EXPECT_NE(std::string(v.status().message()).find(fragment), std::string::npos)
      << text << ": " << v.status();
}

TEST(ExprTest, Errors) {
  ExpectError("", "expected a number");
  ExpectError("1 +", "expected a number");
  ExpectError("(1 + 2", "expected ')'");
  ExpectError("1 2", "trailing");
  ExpectError("foo(1, 2)", "unknown function 'foo'");
  ExpectError("min(1)", "expected ','");
  ExpectError("s9 + 1", "unbound symbol 's9'");
  ExpectError("4 / (2 - 2)", "division by zero");
  ExpectError("ceil_div(4, 0)", "division by zero");
  ExpectError("9223372036854775807 + 1", "overflow");
  ExpectError("99999999999999999999", "does not fit");
  ExpectError("3 % 2", "trailing");
  std::string deep(500, '(');
  ExpectError(deep.c_str(), "nested too deeply");
}

}  // namespace
}  // namespace runtime
}  // namespace fusiond
