#include "client/runtime/json.h"

#include <gtest/gtest.h>

namespace fusiond {
namespace runtime {
namespace {

TEST(JsonTest, ParsesNestedDocument) {
  absl::StatusOr<JsonValue> v = ParseJson(R"( {"a": [1, -2.5, 3e2, true, false, null],
      "b": {"c": "x\"y\\n\u00e9\n"}, "big": 9007199254740993} )");
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_TRUE(v->is_object());
  const JsonValue* a = v->Find("a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->items().size(), 6u);
  EXPECT_TRUE(a->items()[0].is_integer());
  EXPECT_EQ(a->items()[0].int_value(), 1);
  EXPECT_FALSE(a->items()[1].is_integer());
  EXPECT_DOUBLE_EQ(a->items()[1].number_value(), -2.5);
  EXPECT_DOUBLE_EQ(a->items()[2].number_value(), 300);
  EXPECT_FALSE(a->items()[2].is_integer());
  EXPECT_TRUE(a->items()[3].bool_value());
  EXPECT_FALSE(a->items()[4].bool_value());
  EXPECT_TRUE(a->items()[5].is_null());
  EXPECT_EQ(v->Find("b")->Find("c")->string_value(), "x\"y\\n\xc3\xa9\n");
  EXPECT_EQ(v->Find("big")->int_value(), 9007199254740993LL);  // exact beyond 2^53
  EXPECT_EQ(v->Find("nope"), nullptr);
}

TEST(JsonTest, EmptyContainers) {
  EXPECT_TRUE(ParseJson("[]")->items().empty());
  EXPECT_TRUE(ParseJson("{}")->members().empty());
}

TEST(JsonTest, ErrorsCarryLineAndColumn) {
  absl::StatusOr<JsonValue> v = ParseJson("{\n  \"a\": [1, 2,]\n}");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(v.status().message()).find("2:"), std::string::npos) << v.status();
  for (const char* bad : {"", "{", "[1 2]", "{\"a\" 1}", "\"abc", "01", "1.", "-", "tru",
                          "{\"a\":1} x", "\"\\q\"", "{1: 2}"}) {
    EXPECT_FALSE(ParseJson(bad).ok()) << bad;
  }
  std::string deep(100, '[');
  EXPECT_FALSE(ParseJson(deep).ok());
}

}  // namespace
}  // namespace runtime
}  // namespace fusiond
