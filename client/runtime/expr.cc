#include "client/runtime/expr.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "absl/strings/str_cat.h"

namespace fusiond {
namespace runtime {

int64_t CeilDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) == (b < 0))) ++q;
  return q;
}

// Recursive descent:
//   sum     := product (('+' | '-') product)*
//   product := unary (('*' | '/') unary)*
//   unary   := '-' unary | primary
//   primary := INT | NAME | NAME '(' sum ',' sum ')' | '(' sum ')'
class ExprParser {
 public:
  ExprParser(std::string_view text, Expr* out) : text_(text), out_(out) {}

  absl::Status Run() {
    absl::StatusOr<int> root = Sum(0);
    if (!root.ok()) return root.status();
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected trailing characters");
    out_->root_ = *root;
    return absl::OkStatus();
  }

 private:
  static constexpr int kMaxDepth = 100;

  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("expression '", std::string(text_), "' at column ", pos_ + 1, ": ", what));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
  }
  bool Peek(char c) {
    SkipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  int Add(Expr::Node n) {
    out_->nodes_.push_back(std::move(n));
    return static_cast<int>(out_->nodes_.size()) - 1;
  }
  int Binary(Expr::Kind k, int lhs, int rhs) {
    Expr::Node n{k};
    n.lhs = lhs;
    n.rhs = rhs;
    return Add(std::move(n));
  }

  absl::StatusOr<int> Sum(int depth) {
    absl::StatusOr<int> lhs = Product(depth);
    if (!lhs.ok()) return lhs;
    int node = *lhs;
    while (Peek('+') || Peek('-')) {
      Expr::Kind k = text_[pos_] == '+' ? Expr::Kind::kAdd : Expr::Kind::kSub;
      ++pos_;
      absl::StatusOr<int> rhs = Product(depth);
      if (!rhs.ok()) return rhs;
      node = Binary(k, node, *rhs);
    }
    return node;
  }

  absl::StatusOr<int> Product(int depth) {
    absl::StatusOr<int> lhs = Unary(depth);
    if (!lhs.ok()) return lhs;
    int node = *lhs;
    while (Peek('*') || Peek('/')) {
      Expr::Kind k = text_[pos_] == '*' ? Expr::Kind::kMul : Expr::Kind::kDiv;
      ++pos_;
      absl::StatusOr<int> rhs = Unary(depth);
      if (!rhs.ok()) return rhs;
      node = Binary(k, node, *rhs);
    }
    return node;
  }

  absl::StatusOr<int> Unary(int depth) {
    if (depth > kMaxDepth) return Error("nested too deeply");
    if (Peek('-')) {
      ++pos_;
      absl::StatusOr<int> operand = Unary(depth + 1);
      if (!operand.ok()) return operand;
      return Binary(Expr::Kind::kNeg, *operand, -1);
    }
    return Primary(depth);
  }

  absl::StatusOr<int> Primary(int depth) {
    SkipSpace();
    if (pos_ >= text_.size()) return Error("expected a number, a symbol or '('");
    char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      absl::StatusOr<int> inner = Sum(depth + 1);
      if (!inner.ok()) return inner;
      if (!Peek(')')) return Error("expected ')'");
      ++pos_;
      return inner;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t v = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, text_[pos_] - '0', &v)) {
          return Error("integer literal does not fit in int64");
        }
        ++pos_;
      }
      Expr::Node n{Expr::Kind::kConst};
      n.value = v;
      return Add(std::move(n));
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
        ++pos_;
      }
      std::string name(text_.substr(start, pos_ - start));
      if (!Peek('(')) {
        Expr::Node n{Expr::Kind::kSymbol};
        n.name = name;
        return Add(std::move(n));
      }
      Expr::Kind k;
      if (name == "ceil_div")
        k = Expr::Kind::kCeilDiv;
      else if (name == "min")
        k = Expr::Kind::kMin;
      else if (name == "max")
        k = Expr::Kind::kMax;
      else
        return Error(absl::StrCat("unknown function '", name, "' (known: ceil_div, min, max)"));
      ++pos_;  // '('
      absl::StatusOr<int> a = Sum(depth + 1);
      if (!a.ok()) return a;
      if (!Peek(',')) return Error(absl::StrCat("expected ',' in ", name, "(a, b)"));
      ++pos_;
      absl::StatusOr<int> b = Sum(depth + 1);
      if (!b.ok()) return b;
      if (!Peek(')')) return Error(absl::StrCat("expected ')' closing ", name, "("));
      ++pos_;
      return Binary(k, *a, *b);
    }
    return Error(absl::StrCat("unexpected character '", std::string(1, c), "'"));
  }

  std::string_view text_;
  Expr* out_;
  size_t pos_ = 0;
};

absl::StatusOr<Expr> Expr::Parse(std::string_view text) {
  Expr e;
  e.text_ = std::string(text);
  absl::Status s = ExprParser(text, &e).Run();
  if (!s.ok()) return s;
  return e;
}

Expr Expr::Constant(int64_t v) {
  Expr e;
  e.text_ = absl::StrCat(v);
  Node n{Kind::kConst};
  n.value = v;
  e.nodes_.push_back(n);
  e.root_ = 0;
  return e;
}

std::vector<std::string> Expr::Symbols() const {
  std::set<std::string> names;
  for (const Node& n : nodes_) {
    if (n.kind == Kind::kSymbol) names.insert(n.name);
  }
  return std::vector<std::string>(names.begin(), names.end());
}

bool Expr::is_constant() const {
  return std::none_of(nodes_.begin(), nodes_.end(),
                      [](const Node& n) { return n.kind == Kind::kSymbol; });
}

absl::StatusOr<int64_t> Expr::Eval(const SymbolValues& symbols) const {
  if (root_ < 0) return absl::InvalidArgumentError("empty expression");
  return EvalNode(root_, symbols);
}

absl::StatusOr<int64_t> Expr::EvalNode(int n, const SymbolValues& symbols) const {
  const Node& node = nodes_[n];
  if (node.kind == Kind::kConst) return node.value;
  if (node.kind == Kind::kSymbol) {
    auto it = symbols.find(node.name);
    if (it == symbols.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("expression '", text_, "': unbound symbol '", node.name, "'"));
    }
    return it->second;
  }
  absl::StatusOr<int64_t> a = EvalNode(node.lhs, symbols);
  if (!a.ok()) return a;
  if (node.kind == Kind::kNeg) {
    if (*a == INT64_MIN) return absl::InvalidArgumentError("int64 overflow in negation");
    return -*a;
  }
  absl::StatusOr<int64_t> b = EvalNode(node.rhs, symbols);
  if (!b.ok()) return b;
  int64_t r = 0;
  auto overflow = [&]() {
    return absl::InvalidArgumentError(absl::StrCat("expression '", text_, "': int64 overflow"));
  };
  switch (node.kind) {
    case Kind::kAdd:
      if (__builtin_add_overflow(*a, *b, &r)) return overflow();
      return r;
    case Kind::kSub:
      if (__builtin_sub_overflow(*a, *b, &r)) return overflow();
      return r;
    case Kind::kMul:
      if (__builtin_mul_overflow(*a, *b, &r)) return overflow();
      return r;
    case Kind::kDiv:
    case Kind::kCeilDiv:
      if (*b == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("expression '", text_, "': division by zero"));
      }
      if (*a == INT64_MIN && *b == -1) return overflow();
      return node.kind == Kind::kDiv ? *a / *b : CeilDiv(*a, *b);
    case Kind::kMin:
      return std::min(*a, *b);
    case Kind::kMax:
      return std::max(*a, *b);
    default:
      return absl::InternalError("bad expression node");
  }
}

absl::StatusOr<int64_t> EvalExpr(std::string_view text, const SymbolValues& symbols) {
  absl::StatusOr<Expr> e = Expr::Parse(text);
  if (!e.ok()) return e.status();
  return e->Eval(symbols);
}

}  // namespace runtime
}  // namespace fusiond
