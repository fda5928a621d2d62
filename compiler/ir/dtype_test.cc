#include "compiler/ir/dtype.h"

#include <gtest/gtest.h>

namespace fusiond {
namespace {

TEST(DataType, LosslessCasts) {
  EXPECT_TRUE(IsLosslessCast(DataType::kBFloat16, DataType::kFloat));
  EXPECT_TRUE(IsLosslessCast(DataType::kHalf, DataType::kFloat));
  EXPECT_FALSE(IsLosslessCast(DataType::kFloat, DataType::kBFloat16));
  EXPECT_FALSE(IsLosslessCast(DataType::kHalf, DataType::kBFloat16));
  EXPECT_FALSE(IsLosslessCast(DataType::kBFloat16, DataType::kHalf));
  EXPECT_TRUE(IsLosslessCast(DataType::kInt32, DataType::kDouble));
  EXPECT_FALSE(IsLosslessCast(DataType::kInt32, DataType::kFloat));
}

TEST(DataType, Promotion) {
  EXPECT_EQ(PromoteTypes(DataType::kBFloat16, DataType::kFloat), DataType::kFloat);
  EXPECT_EQ(PromoteTypes(DataType::kBFloat16, DataType::kHalf), DataType::kFloat);
  EXPECT_EQ(PromoteTypes(DataType::kInt32, DataType::kBFloat16), DataType::kBFloat16);
  EXPECT_EQ(PromoteTypes(DataType::kBool, DataType::kInt64), DataType::kInt64);
}

TEST(DataType, NamesRoundTrip) {
  for (int t = 1; t <= 7; ++t) {
    DataType d = static_cast<DataType>(t);
    EXPECT_EQ(ParseDataType(DataTypeName(d)), d);
  }
  EXPECT_EQ(ParseDataType("BFloat16"), DataType::kBFloat16);
  EXPECT_EQ(ParseDataType("nope"), std::nullopt);
}

}  // namespace
}  // namespace fusiond
