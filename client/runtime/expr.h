// Launch expressions of the kernel manifest (docs/manifest.md): integer
// literals, symbol names, + - * / (integer division, truncating toward zero),
// unary minus, parentheses, ceil_div(a, b), min(a, b), max(a, b). Parsed once
// when a manifest is loaded, evaluated for every launch.
#ifndef FUSIOND_CLIENT_RUNTIME_EXPR_H_
#define FUSIOND_CLIENT_RUNTIME_EXPR_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace fusiond {
namespace runtime {

// Symbol name -> value.
using SymbolValues = std::map<std::string, int64_t, std::less<>>;

class Expr {
 public:
  // InvalidArgument "expression 'TEXT' at column C: what" on bad syntax.
  static absl::StatusOr<Expr> Parse(std::string_view text);
  // A constant expression.
  static Expr Constant(int64_t v);

  // InvalidArgument for an unbound symbol, a division by zero or an int64
  // overflow.
  absl::StatusOr<int64_t> Eval(const SymbolValues& symbols) const;

  // The symbol names the expression reads, sorted, without repeats.
  std::vector<std::string> Symbols() const;
  const std::string& text() const { return text_; }
  // True when the expression has no symbols.
  bool is_constant() const;

 private:
  enum class Kind { kConst, kSymbol, kAdd, kSub, kMul, kDiv, kNeg, kCeilDiv, kMin, kMax };
  struct Node {
    explicit Node(Kind k) : kind(k) {}
    Kind kind;
    int64_t value = 0;       // kConst
    std::string name;        // kSymbol
    int lhs = -1, rhs = -1;  // operand node indices
  };
  friend class ExprParser;

  absl::StatusOr<int64_t> EvalNode(int n, const SymbolValues& symbols) const;

  std::string text_;
  std::vector<Node> nodes_;
  int root_ = -1;
};

// Parses and evaluates in one go (tests and one-off uses).
absl::StatusOr<int64_t> EvalExpr(std::string_view text, const SymbolValues& symbols);

// ceil(a / b) for b != 0.
int64_t CeilDiv(int64_t a, int64_t b);

}  // namespace runtime
}  // namespace fusiond

#endif  // FUSIOND_CLIENT_RUNTIME_EXPR_H_
