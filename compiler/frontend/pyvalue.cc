#include "compiler/frontend/pyvalue.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/printer.h"

namespace fusiond {
namespace frontend {

using Kind = PyValue::Kind;

std::string DescribeValue(const Graph& g, const PyValue& v) {
  switch (v.kind) {
    case Kind::kNone:
      return "None";
    case Kind::kInt:
      return absl::StrCat("the integer ", v.i);
    case Kind::kFloat:
      return absl::StrCat("the number ", v.f);
    case Kind::kBool:
      return v.i ? "True" : "False";
    case Kind::kString:
      return "a string";
    case Kind::kValue:
      return absl::StrCat(g.value(v.id).is_tensor ? "the tensor " : "the scalar ",
                          ValueName(g, v.id), " (", TypeString(g, v.id), ")");
    case Kind::kExtents:
      return "a shape vector";
    case Kind::kDType:
      return "a DataType";
    case Kind::kList:
      return "a list";
    case Kind::kTuple:
      return absl::StrCat("a tuple of ", v.items.size());
    case Kind::kFd:
      return "the FusionDefinition";
    case Kind::kFunction:
      return "a function";
  }
  return "a value";
}

namespace {

PyValue Int(int64_t i) {
  PyValue v;
  v.kind = Kind::kInt;
  v.i = i;
  return v;
}

PyValue Float(double f) {
  PyValue v;
  v.kind = Kind::kFloat;
  v.f = f;
  return v;
}

absl::Status NotNumbers(const Expr& e, const Graph& g, const PyValue& a, const PyValue* b,
                        const ErrorReporter& errors) {
  if (a.kind == Kind::kValue || (b && b->kind == Kind::kValue)) {
    return errors.Error(e.loc,
                        absl::StrCat("Python operator '", e.text, "' applied to a fusion value"),
                        "fd.ops.add / sub / mul / div / neg for arithmetic on tensors and scalars");
  }
  return errors.Error(e.loc,
                      absl::StrCat("operator '", e.text, "' applied to ", DescribeValue(g, a),
                                   b ? absl::StrCat(" and ", DescribeValue(g, *b)) : ""),
                      "numbers");
}

}  // namespace

absl::StatusOr<PyValue> FoldUnary(const Expr& e, const PyValue& x, const Graph& g,
                                  const ErrorReporter& errors) {
  if (!x.is_number()) return NotNumbers(e, g, x, nullptr, errors);
  if (e.text == "+") return x.kind == Kind::kFloat ? x : Int(x.i);
  if (e.text == "-") {
    if (x.kind == Kind::kFloat) return Float(-x.f);
    if (x.i == INT64_MIN) return errors.Error(e.loc, "integer overflow", "a smaller number");
    return Int(-x.i);
  }
  if (x.kind == Kind::kFloat) return NotNumbers(e, g, x, nullptr, errors);
  return Int(~x.i);  // '~'
}

absl::StatusOr<PyValue> FoldBinary(const Expr& e, const PyValue& a, const PyValue& b,
                                   const Graph& g, const ErrorReporter& errors) {
  if (!a.is_number() || !b.is_number()) return NotNumbers(e, g, a, &b, errors);
  const std::string& op = e.text;
  auto overflow = [&] {
    return errors.Error(e.loc, absl::StrCat("integer overflow in '", op, "'"),
                        "a result below 2**63");
  };
  if (a.kind != Kind::kFloat && b.kind != Kind::kFloat) {
    const int64_t x = a.i, y = b.i;
    int64_t r = 0;
    if (op == "+") {
      if (__builtin_add_overflow(x, y, &r)) return overflow();
      return Int(r);
    }
    if (op == "-") {
      if (__builtin_sub_overflow(x, y, &r)) return overflow();
      return Int(r);
    }
    if (op == "*") {
      if (__builtin_mul_overflow(x, y, &r)) return overflow();
      return Int(r);
    }
    if (op == "//" || op == "%") {
      if (y == 0) return errors.Error(e.loc, "integer division by zero", "a nonzero divisor");
      if (x == INT64_MIN && y == -1) return overflow();
      int64_t q = x / y, m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) {  // Python floors
        --q;
        m += y;
      }
      return Int(op == "//" ? q : m);
    }
    if (op == "<<" || op == ">>") {
      if (y < 0) return errors.Error(e.loc, "negative shift count", "a shift of 0..62");
      if (op == ">>") return Int(y >= 63 ? (x < 0 ? -1 : 0) : x >> y);
      if (y >= 63 || x > (INT64_MAX >> y) || x < (INT64_MIN >> y)) return overflow();
      return Int(static_cast<int64_t>(static_cast<uint64_t>(x) << y));
    }
    if (op == "&") return Int(x & y);
    if (op == "|") return Int(x | y);
    if (op == "^") return Int(x ^ y);
    if (op == "**" && y >= 0) {
      int64_t result = 1;
      for (int64_t k = 0; k < y; ++k) {
        if (__builtin_mul_overflow(result, x, &result)) return overflow();
        if (result == 0 || result == 1) break;
        if (result == -1) {
          result = (y - k - 1) % 2 == 0 ? -1 : 1;
          break;
        }
      }
      return Int(result);
    }
  }
  const double x = a.number(), y = b.number();
  if (op == "+") return Float(x + y);
  if (op == "-") return Float(x - y);
  if (op == "*") return Float(x * y);
  if (op == "/") {
    if (y == 0) return errors.Error(e.loc, "division by zero", "a nonzero divisor");
    return Float(x / y);
  }
  if (op == "**") return Float(std::pow(x, y));
  if (op == "//" || op == "%") {
    if (y == 0) return errors.Error(e.loc, "division by zero", "a nonzero divisor");
    const double q = std::floor(x / y);
    return Float(op == "//" ? q : x - q * y);
  }
  return NotNumbers(e, g, a, &b, errors);
}

bool IsPythonFloatCall(const Expr& e) {
  return e.kind == Expr::Kind::kCall && e.callee().kind == Expr::Kind::kName &&
         e.callee().text == "float";
}

absl::StatusOr<double> PythonFloatCall(const Expr& call, const ErrorReporter& errors) {
  constexpr const char* kExpected =
      "float(\"inf\"), float(\"-inf\"), float(\"nan\") or float(<number>)";
  if (call.num_args() != 1 || !call.keywords.empty()) {
    return errors.Error(call.loc, "float() takes exactly one argument", kExpected);
  }
  const Expr& x = call.arg(0);
  if (x.kind == Expr::Kind::kInt || x.kind == Expr::Kind::kBool)
    return static_cast<double>(x.int_value);
  if (x.kind == Expr::Kind::kFloat) return x.float_value;
  if (x.kind == Expr::Kind::kUnary && (x.text == "-" || x.text == "+")) {
    const Expr& y = *x.operands[0];
    if (y.kind == Expr::Kind::kInt || y.kind == Expr::Kind::kFloat) {
      const double v =
          y.kind == Expr::Kind::kInt ? static_cast<double>(y.int_value) : y.float_value;
      return x.text == "-" ? -v : v;
    }
  }
  if (x.kind != Expr::Kind::kString) {
    return errors.Error(x.loc, "float() of something other than a number or a string", kExpected);
  }
  std::string t;
  for (char c : x.text) {
    if (c != ' ' && c != '\t' && c != '\n')
      t.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  double sign = 1;
  std::string body = t;
  if (!body.empty() && (body[0] == '-' || body[0] == '+')) {
    sign = body[0] == '-' ? -1 : 1;
    body = body.substr(1);
  }
  if (body == "inf" || body == "infinity") return sign * std::numeric_limits<double>::infinity();
  if (body == "nan") return std::numeric_limits<double>::quiet_NaN();
  // A decimal number: digits, one '.', an exponent (no hex, no "1_000").
  const bool plain = !body.empty() &&
                     body.find_first_not_of("0123456789.e+-") == std::string::npos &&
                     body.find_first_of("0123456789") != std::string::npos;
  if (plain) {
    char* end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    if (end == t.c_str() + t.size()) return v;
  }
  return errors.Error(
      x.loc,
      absl::StrCat("float() of the string \"", x.text.substr(0, 40), "\", which is not a number"),
      kExpected);
}

absl::StatusOr<std::vector<const Expr*>> BindArguments(const Expr& call,
                                                       const std::string& function,
                                                       const std::vector<std::string>& params,
                                                       size_t required,
                                                       const ErrorReporter& errors) {
  std::vector<const Expr*> slots(params.size(), nullptr);
  const std::string names = absl::StrJoin(params, ", ");
  if (call.num_args() > params.size()) {
    return errors.Error(call.arg(params.size()).loc,
                        absl::StrCat(function, " takes at most ", params.size(),
                                     " positional argument(s), got ", call.num_args()),
                        absl::StrCat(function, "(", names, ")"));
  }
  for (size_t i = 0; i < call.num_args(); ++i) slots[i] = &call.arg(i);
  for (const Keyword& k : call.keywords) {
    size_t p = 0;
    while (p < params.size() && params[p] != k.name) ++p;
    // Keyword names of nvFuser's front end before its 2023 renames, which
    // repro scripts of that time print, and keep_dim (keepdim as the first
    // nvfuser_direct repro printer wrote it).
    static const std::pair<const char*, const char*> kRenamed[] = {{"symbolic_sizes", "shape"},
                                                                   {"contiguous", "contiguity"},
                                                                   {"axes", "dims"},
                                                                   {"output_shape", "shape"},
                                                                   {"keep_dim", "keepdim"}};
    for (const auto& [old_name, name] : kRenamed) {
      if (p < params.size() || k.name != old_name) continue;
      p = 0;
      while (p < params.size() && params[p] != name) ++p;
    }
    if (p == params.size()) {
      return errors.Error(k.loc,
                          absl::StrCat("unexpected keyword argument '", k.name, "' for ", function),
                          absl::StrCat("one of: ", names));
    }
    if (slots[p] != nullptr) {
      return errors.Error(k.loc,
                          absl::StrCat("argument '", k.name, "' of ", function, " is given twice"),
                          "each argument once");
    }
    slots[p] = k.value.get();
  }
  for (size_t p = 0; p < required; ++p) {
    if (slots[p] == nullptr) {
      return errors.Error(call.loc,
                          absl::StrCat(function, " is missing argument '", params[p], "'"),
                          absl::StrCat(function, "(", names, ")"));
    }
  }
  return slots;
}

}  // namespace frontend
}  // namespace fusiond
