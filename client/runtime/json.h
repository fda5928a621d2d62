// A small JSON reader for the kernel manifest (docs/manifest.md). Reads the
// whole RFC 8259 grammar (objects, arrays, strings with escapes, numbers,
// true/false/null); keeps integers exact when they fit in int64. Not a
// general-purpose library: no writer, objects keep their keys in order.
#ifndef FUSIOND_CLIENT_RUNTIME_JSON_H_
#define FUSIOND_CLIENT_RUNTIME_JSON_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace fusiond {
namespace runtime {

class JsonValue {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };

  JsonValue() = default;
  static JsonValue Null() { return JsonValue(); }
  static JsonValue Bool(bool b);
  // `is_integer` when the literal had no fraction or exponent and fits int64.
  static JsonValue Number(double d, bool is_integer, int64_t i);
  static JsonValue String(std::string s);
  static JsonValue Array(std::vector<JsonValue> items);
  static JsonValue Object(std::vector<std::pair<std::string, JsonValue>> members);

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool is_bool() const { return type_ == Type::kBool; }
  bool is_number() const { return type_ == Type::kNumber; }
  bool is_integer() const { return type_ == Type::kNumber && is_integer_; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_object() const { return type_ == Type::kObject; }

  bool bool_value() const { return bool_; }
  double number_value() const { return number_; }
  int64_t int_value() const { return int_; }
  const std::string& string_value() const { return string_; }
  const std::vector<JsonValue>& items() const { return items_; }
  const std::vector<std::pair<std::string, JsonValue>>& members() const { return members_; }
  // The member named `key`, or nullptr (also when this is not an object).
  const JsonValue* Find(std::string_view key) const;

  // "null", "bool", "number", "string", "array", "object".
  static const char* TypeName(Type t);

 private:
  Type type_ = Type::kNull;
  bool bool_ = false;
  bool is_integer_ = false;
  double number_ = 0;
  int64_t int_ = 0;
  std::string string_;
  std::vector<JsonValue> items_;
  std::vector<std::pair<std::string, JsonValue>> members_;
};

// Parses one JSON document (surrounding whitespace allowed). InvalidArgument
// with "line:column: what" on malformed text; nesting deeper than 64 levels
// is refused.
absl::StatusOr<JsonValue> ParseJson(std::string_view text);

}  // namespace runtime
}  // namespace fusiond

#endif  // FUSIOND_CLIENT_RUNTIME_JSON_H_
