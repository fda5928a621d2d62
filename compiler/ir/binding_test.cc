// Element counts of static, bound and computed shapes: every product of
// sizes is overflow-safe and bounded by the same limit.
#include "compiler/ir/binding.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "compiler/ir/builder.h"

namespace fusiond {
namespace {

constexpr int64_t k2p62 = int64_t{1} << 62;

void ExpectRefused(const absl::Status& s, const std::string& part) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find(part), std::string::npos) << s;
}

TEST(ElementCount, OverflowSafeForAnySizes) {
  EXPECT_TRUE(CheckElementCount({}, kMaxTensorElements).ok());
  EXPECT_TRUE(CheckElementCount({1 << 20, 1 << 20}, kMaxTensorElements).ok());  // 2^40 exactly
  ExpectRefused(CheckElementCount({(1 << 20) + 1, 1 << 20}, kMaxTensorElements),
                "exceeds the limit of 1099511627776");
  // 2^96 and 2^65 wrap an int64 (to 0 and 0): still refused.
  ExpectRefused(
      CheckElementCount({int64_t{1} << 32, int64_t{1} << 32, int64_t{1} << 32}, kMaxTensorElements),
      "a tensor of 7.92282e+28 elements");
  ExpectRefused(CheckElementCount({k2p62, 8}, kMaxTensorElements), "a tensor of 3.68935e+19");
  ExpectRefused(CheckElementCount({INT64_MAX, INT64_MAX}, kMaxTensorElements), "elements");
  // A zero-size tensor's other extents still bound its strides.
  EXPECT_TRUE(CheckElementCount({0, 1 << 20}, kMaxTensorElements).ok());
  ExpectRefused(CheckElementCount({k2p62, 0, k2p62}, kMaxTensorElements),
                "a tensor of 0 elements whose other extents make 2.12676e+37");
}

TEST(ElementCount, StaticShapesAreRefusedWhenBuilt) {
  Graph g;
  GraphBuilder b(&g);
  ExpectRefused(b.DefineTensor("T0", DataType::kFloat, {k2p62, 8}).status(),
                "a tensor of 3.68935e+19 elements exceeds the limit of 1099511627776");
  ExpectRefused(b.DefineTensor("T1", DataType::kFloat, {0, k2p62}).status(),
                "a tensor of 0 elements");
  ValueId x = *b.DefineTensor("T2", DataType::kFloat, {0});
  Attrs a;  // [0] -> [2^62, 2^62, 0]: the static product overflows int64
  a.shape = {Extent::Static(k2p62), Extent::Static(k2p62), Extent::Static(0)};
  ExpectRefused(b.AddNode(OpKind::kReshape, {x}, a).status(), "multiply past the int64 range");
}

// The static path's message for a symbolic definition bound to the same sizes.
TEST(ElementCount, BoundSymbolicInputsMeetTheStaticLimit) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {-1, 8});
  ASSERT_TRUE(b.AddOutput(*b.Unary(OpKind::kNeg, x)).ok());
  EXPECT_TRUE(BindShapes(g, {{int64_t{1} << 37, 8}}).ok());
  ExpectRefused(BindShapes(g, {{k2p62, 8}}).status(),
                "input T0 is [4611686018427387904, 8]: a tensor of 3.68935e+19 elements exceeds "
                "the limit of 1099511627776");
  ExpectRefused(BindShapes(g, {{int64_t{1} << 40, 8}}).status(), "a tensor of 8.79609e+12");
  ExpectRefused(BindShapes(g, {{int64_t{1} << 37, 8}}, int64_t{1} << 30).status(),
                "exceeds the limit of 1073741824");
}

// [s0, 1] + [1, s1] is s0 * s1 elements, more than either input.
TEST(ElementCount, ComputedValuesAreBoundedToo) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {-1, 1});
  ValueId y = *b.DefineTensor("T1", DataType::kFloat, {1, -1});
  ValueId z = *b.Binary(OpKind::kAdd, x, y);
  ASSERT_TRUE(b.AddOutput(z).ok());
  EXPECT_TRUE(BindShapes(g, {{1 << 20, 1}, {1, 1 << 20}}).ok());
  ExpectRefused(BindShapes(g, {{1 << 21, 1}, {1, 1 << 20}}).status(),
                "%2 (add) is [2097152, 1048576] at these sizes: a tensor of 2.19902e+12");
  ExpectRefused(BindShapes(g, {{k2p62, 1}, {1, 4}}).status(), "input T0");
}

}  // namespace
}  // namespace fusiond
