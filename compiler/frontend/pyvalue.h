// Internal to the front end: the values a definition's expressions evaluate
// to (numbers, graph values, extent lists, dtypes, lists), and binding a
// call's positional and keyword arguments to named parameters.
#ifndef FUSIOND_COMPILER_FRONTEND_PYVALUE_H_
#define FUSIOND_COMPILER_FRONTEND_PYVALUE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/frontend/ast.h"
#include "compiler/frontend/source.h"
#include "compiler/ir/graph.h"

namespace fusiond {
namespace frontend {

struct PyValue {
  enum class Kind {
    kNone,
    kInt,       // i
    kFloat,     // f
    kBool,      // i is 0 or 1
    kString,    // s
    kValue,     // id: a graph value (tensor or scalar)
    kExtents,   // extents: T.shape() or fd.define_vector(...)
    kDType,     // dtype; nullopt for DataType.Null
    kList,      // items
    kTuple,     // items (also the results of var_mean)
    kFd,        // the FusionDefinition object
    kFunction,  // a function defined with `def`
  };
  Kind kind = Kind::kNone;
  int64_t i = 0;
  double f = 0;
  std::string s;
  ValueId id = kNone;
  std::vector<Extent> extents;
  std::optional<DataType> dtype;
  std::vector<PyValue> items;

  bool is_number() const {
    return kind == Kind::kInt || kind == Kind::kFloat || kind == Kind::kBool;
  }
  double number() const { return kind == Kind::kFloat ? f : static_cast<double>(i); }
};

// A graph value (tensor or scalar) as a PyValue.
inline PyValue ValueOf(ValueId id) {
  PyValue v;
  v.kind = PyValue::Kind::kValue;
  v.id = id;
  return v;
}

// "a tensor", "the number 3", "a list", ... for error messages.
std::string DescribeValue(const Graph& g, const PyValue& v);

// Folds Python arithmetic on numbers (+ - * / // % ** << >> & | ^ and unary
// - + ~). InvalidArgument on overflow, division by zero or non-numbers.
absl::StatusOr<PyValue> FoldUnary(const Expr& e, const PyValue& x, const Graph& g,
                                  const ErrorReporter& errors);
absl::StatusOr<PyValue> FoldBinary(const Expr& e, const PyValue& a, const PyValue& b,
                                   const Graph& g, const ErrorReporter& errors);

// True for a call `float(...)`.
bool IsPythonFloatCall(const Expr& e);
// The value of `float(x)`: x a number, or a string Python's float() reads
// ("inf", "-inf", "nan", "1e-05"; case and surrounding blanks ignored), as
// front ends print infinities and NaN. InvalidArgument otherwise.
absl::StatusOr<double> PythonFloatCall(const Expr& call, const ErrorReporter& errors);

// Matches a call's arguments to parameters (positional first, then by
// keyword). Returns one slot per parameter, nullptr where not given.
// Errors: too many arguments, unknown or repeated keywords, and missing
// arguments among the first `required` parameters.
absl::StatusOr<std::vector<const Expr*>> BindArguments(const Expr& call,
                                                       const std::string& function,
                                                       const std::vector<std::string>& params,
                                                       size_t required,
                                                       const ErrorReporter& errors);

}  // namespace frontend
}  // namespace fusiond

#endif  // FUSIOND_COMPILER_FRONTEND_PYVALUE_H_
