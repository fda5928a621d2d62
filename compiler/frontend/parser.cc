#include "compiler/frontend/parser.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace fusiond {
namespace frontend {

std::string DottedName(const Expr& e) {
  if (e.kind == Expr::Kind::kName) return e.text;
  if (e.kind == Expr::Kind::kAttribute) {
    std::string base = DottedName(*e.operands[0]);
    return base.empty() ? "" : absl::StrCat(base, ".", e.text);
  }
  return "";
}

namespace {

using Kind = Expr::Kind;

// Calls in repro scripts take a handful of arguments; the bound also keeps
// the repeated-keyword check (quadratic in the keyword count) cheap.
constexpr size_t kMaxCallArguments = 256;

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, const ErrorReporter& errors, const SourceLimits& limits)
      : t_(tokens), errors_(errors), limits_(limits) {}

  absl::StatusOr<Module> Run();

 private:
  const Token& Peek(size_t ahead = 0) const { return t_[std::min(pos_ + ahead, t_.size() - 1)]; }
  bool IsOp(const char* op, size_t ahead = 0) const {
    return Peek(ahead).kind == TokenKind::kOp && Peek(ahead).text == op;
  }
  bool IsName(const char* name) const {
    return Peek().kind == TokenKind::kName && Peek().text == name;
  }
  const Token& Next() {
    const Token& t = Peek();
    if (pos_ + 1 < t_.size()) ++pos_;
    return t;
  }
  absl::Status Unexpected(std::string_view expected) const {
    return errors_.Error(Peek().loc, absl::StrCat("unexpected ", Describe(Peek())), expected);
  }
  absl::Status Expect(const char* op, const std::string& context) {
    if (!IsOp(op)) return Unexpected(absl::StrCat("'", op, "' ", context));
    Next();
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> ExpectName(std::string_view what) {
    if (Peek().kind != TokenKind::kName) return Unexpected(what);
    return Next().text;
  }
  // Wraps up a new node: depth and the bound on it.
  absl::StatusOr<ExprPtr> Finish(ExprPtr e) {
    int d = 0;
    for (const ExprPtr& o : e->operands) d = std::max(d, o->depth);
    for (const Keyword& k : e->keywords) d = std::max(d, k.value->depth);
    e->depth = d + 1;
    if (e->depth > 4 * limits_.max_depth) {
      return errors_.Error(
          e->loc, absl::StrCat("expression nested deeper than ", 4 * limits_.max_depth, " levels"),
          "a simpler expression");
    }
    return e;
  }
  static ExprPtr Node(Kind kind, Location loc) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->loc = loc;
    return e;
  }

  absl::Status Statement(Module* m);
  absl::Status EndOfStatement();
  // `def NAME(params) [-> T]:` after the 'def' (annotations and defaults
  // are parsed and dropped).
  absl::Status DefHeader(Stmt* st);
  // Whether the statement ahead is an assignment: NAME (, NAME)* [,] = expr.
  bool AssignmentAhead() const;
  absl::StatusOr<ExprPtr> Expression();
  absl::StatusOr<ExprPtr> BinaryLevel(int level);
  absl::StatusOr<ExprPtr> Unary();
  absl::StatusOr<ExprPtr> Power();
  absl::StatusOr<ExprPtr> Primary();
  absl::StatusOr<ExprPtr> Atom();
  // Comma-separated expressions up to `close`; sets *trailing_comma.
  absl::Status Sequence(const char* close, Expr* into, bool* trailing_comma);
  absl::Status CallArguments(Expr* call);

  const std::vector<Token>& t_;
  const ErrorReporter& errors_;
  const SourceLimits& limits_;
  size_t pos_ = 0;
  int depth_ = 0;  // recursion depth of Unary/Atom
};

absl::StatusOr<Module> Parser::Run() {
  Module m;
  while (Peek().kind != TokenKind::kEnd) {
    if (Peek().kind == TokenKind::kNewline || IsOp(";")) {
      Next();
      continue;
    }
    if (absl::Status s = Statement(&m); !s.ok()) return s;
  }
  m.end = Peek().loc;
  return m;
}

absl::Status Parser::EndOfStatement() {
  if (Peek().kind == TokenKind::kNewline || Peek().kind == TokenKind::kEnd || IsOp(";")) {
    return absl::OkStatus();
  }
  return Unexpected("the end of the statement (a newline)");
}

absl::Status Parser::DefHeader(Stmt* st) {
  Next();
  st->kind = Stmt::Kind::kDef;
  auto name = ExpectName("a function name after 'def'");
  if (!name.ok()) return name.status();
  st->name = *name;
  if (absl::Status s = Expect("(", "after the function name"); !s.ok()) return s;
  while (!IsOp(")")) {
    auto param = ExpectName("a parameter name");
    if (!param.ok()) return param.status();
    st->params.push_back(*param);
    if (IsOp(":")) {  // annotation
      Next();
      if (auto e = Expression(); !e.ok()) return e.status();
    }
    if (IsOp("=")) {  // default value
      Next();
      if (auto e = Expression(); !e.ok()) return e.status();
    }
    if (!IsOp(",")) break;
    Next();
  }
  if (absl::Status s = Expect(")", "to close the parameter list"); !s.ok()) return s;
  if (IsOp("->")) {
    Next();
    if (auto e = Expression(); !e.ok()) return e.status();
  }
  return Expect(":", "to end the 'def' line");
}

bool Parser::AssignmentAhead() const {
  size_t ahead = 0;
  while (Peek(ahead).kind == TokenKind::kName) {
    if (IsOp("=", ahead + 1)) return true;
    if (!IsOp(",", ahead + 1)) break;
    ahead += 2;
    if (IsOp("=", ahead)) return true;
  }
  return false;
}

absl::Status Parser::Statement(Module* m) {
  Stmt st;
  st.loc = Peek().loc;
  if (IsName("import") || IsName("from")) {
    // Imports only bring in names the script uses (torch, nvfuser); skip.
    while (Peek().kind != TokenKind::kNewline && Peek().kind != TokenKind::kEnd && !IsOp(";")) {
      if (Peek().kind != TokenKind::kName && !IsOp(".") && !IsOp(",") && !IsOp("*") && !IsOp("(") &&
          !IsOp(")")) {
        return Unexpected("a module or name in the import statement");
      }
      Next();
    }
    m->statements.push_back(std::move(st));
    return absl::OkStatus();
  }
  if (IsName("pass")) {
    Next();
    m->statements.push_back(std::move(st));
    return EndOfStatement();
  }
  if (IsName("def")) {
    if (absl::Status s = DefHeader(&st); !s.ok()) return s;
    m->statements.push_back(std::move(st));
    return absl::OkStatus();  // the body follows (same line or next lines)
  }
  if (IsName("with")) {
    Next();
    st.kind = Stmt::Kind::kWith;
    auto e = Expression();
    if (!e.ok()) return e.status();
    st.value = std::move(*e);
    if (!IsName("as")) return Unexpected("'as NAME' after the 'with' expression");
    Next();
    auto name = ExpectName("a name after 'as'");
    if (!name.ok()) return name.status();
    st.name = *name;
    if (absl::Status s = Expect(":", "to end the 'with' line"); !s.ok()) return s;
    m->statements.push_back(std::move(st));
    return absl::OkStatus();
  }
  static const char* kUnsupported[] = {"if",     "for",    "while",  "class",  "return", "try",
                                       "lambda", "del",    "global", "assert", "raise",  "elif",
                                       "else",   "except", "yield",  "async"};
  for (const char* kw : kUnsupported) {
    if (IsName(kw)) {
      return errors_.Error(Peek().loc, absl::StrCat("'", kw, "' statements are not supported"),
                           "only definition statements (fd.define_*, fd.ops.*, fd.add_output), "
                           "the def/with wrappers and the inputs list");
    }
  }
  if (AssignmentAhead()) {
    st.kind = Stmt::Kind::kAssign;
    while (!IsOp("=")) {
      const Token& name = Next();
      st.targets.push_back(Target{name.text, name.loc});
      if (IsOp(",")) Next();
    }
    Next();  // '='
    auto e = Expression();
    if (!e.ok()) return e.status();
    if (IsOp("=")) {
      return errors_.Error(Peek().loc, "chained assignment is not supported",
                           "one assignment per statement");
    }
    st.value = std::move(*e);
    m->statements.push_back(std::move(st));
    return EndOfStatement();
  }
  st.kind = Stmt::Kind::kExpr;
  auto e = Expression();
  if (!e.ok()) return e.status();
  if (Peek().kind == TokenKind::kOp && Peek().text.size() >= 2 && Peek().text.back() == '=' &&
      Peek().text != "==" && Peek().text != "<=" && Peek().text != ">=" && Peek().text != "!=") {
    return errors_.Error(Peek().loc,
                         absl::StrCat("augmented assignment '", Peek().text, "' is not supported"),
                         "NAME = fd.ops.<op>(...)");
  }
  if (IsOp("=")) {
    return errors_.Error(Peek().loc, "cannot assign to this expression",
                         "a plain name or names separated by commas left of '='");
  }
  st.value = std::move(*e);
  m->statements.push_back(std::move(st));
  return EndOfStatement();
}

absl::StatusOr<ExprPtr> Parser::Expression() {
  // A bare tuple `a, b` is only allowed inside brackets; statements take one
  // expression.
  return BinaryLevel(0);
}

// Binary precedence levels, lowest first (Python's order).
absl::StatusOr<ExprPtr> Parser::BinaryLevel(int level) {
  static const std::vector<std::vector<const char*>> kLevels = {
      {"|"}, {"^"}, {"&"}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "//", "%", "@"}};
  if (level == static_cast<int>(kLevels.size())) return Unary();
  auto lhs = BinaryLevel(level + 1);
  if (!lhs.ok()) return lhs;
  ExprPtr left = std::move(*lhs);
  while (true) {
    const char* op = nullptr;
    for (const char* o : kLevels[level]) {
      if (IsOp(o)) op = o;
    }
    if (op == nullptr) return left;
    const Location loc = Peek().loc;
    Next();
    auto rhs = BinaryLevel(level + 1);
    if (!rhs.ok()) return rhs;
    ExprPtr e = Node(Kind::kBinary, loc);
    e->text = op;
    e->operands.push_back(std::move(left));
    e->operands.push_back(std::move(*rhs));
    auto done = Finish(std::move(e));
    if (!done.ok()) return done;
    left = std::move(*done);
  }
}

absl::StatusOr<ExprPtr> Parser::Unary() {
  if (IsOp("-") || IsOp("+") || IsOp("~")) {
    if (++depth_ > 4 * limits_.max_depth) {
      return errors_.Error(Peek().loc, "too many nested unary operators", "a simpler expression");
    }
    ExprPtr e = Node(Kind::kUnary, Peek().loc);
    e->text = Next().text;
    auto operand = Unary();
    --depth_;
    if (!operand.ok()) return operand;
    e->operands.push_back(std::move(*operand));
    return Finish(std::move(e));
  }
  return Power();
}

absl::StatusOr<ExprPtr> Parser::Power() {
  auto base = Primary();
  if (!base.ok() || !IsOp("**")) return base;
  ExprPtr e = Node(Kind::kBinary, Peek().loc);
  e->text = Next().text;
  if (++depth_ > 4 * limits_.max_depth) {
    return errors_.Error(e->loc, "too many chained '**' operators", "a simpler expression");
  }
  auto exponent = Unary();  // right associative, binds a unary minus
  --depth_;
  if (!exponent.ok()) return exponent;
  e->operands.push_back(std::move(*base));
  e->operands.push_back(std::move(*exponent));
  return Finish(std::move(e));
}

absl::StatusOr<ExprPtr> Parser::Primary() {
  const Location start = Peek().loc;
  auto atom = Atom();
  if (!atom.ok()) return atom;
  ExprPtr e = std::move(*atom);
  while (true) {
    if (IsOp(".")) {
      Next();
      const Location loc = Peek().loc;  // attributes point at their name
      auto name = ExpectName("an attribute name after '.'");
      if (!name.ok()) return name.status();
      ExprPtr a = Node(Kind::kAttribute, loc);
      a->text = *name;
      a->operands.push_back(std::move(e));
      auto done = Finish(std::move(a));
      if (!done.ok()) return done;
      e = std::move(*done);
    } else if (IsOp("(")) {
      ExprPtr c = Node(Kind::kCall, start);  // calls point at their callee's start
      Next();
      c->operands.push_back(std::move(e));
      if (absl::Status s = CallArguments(c.get()); !s.ok()) return s;
      auto done = Finish(std::move(c));
      if (!done.ok()) return done;
      e = std::move(*done);
    } else if (IsOp("[")) {
      return errors_.Error(Peek().loc, "subscripts (x[i]) are not supported",
                           "a name, call or attribute");
    } else {
      return e;
    }
  }
}

absl::Status Parser::CallArguments(Expr* call) {
  // After '('.
  bool seen_keyword = false;
  while (!IsOp(")")) {
    if (IsOp("*") || IsOp("**")) {
      return errors_.Error(Peek().loc, "argument unpacking (*args, **kwargs) is not supported",
                           "plain arguments");
    }
    if (Peek().kind == TokenKind::kName && IsOp("=", 1)) {
      Keyword k;
      k.loc = Peek().loc;
      k.name = Next().text;
      Next();  // '='
      for (const Keyword& other : call->keywords) {
        if (other.name == k.name) {
          return errors_.Error(k.loc, absl::StrCat("keyword argument '", k.name, "' repeated"),
                               "each keyword once");
        }
      }
      auto v = Expression();
      if (!v.ok()) return v.status();
      k.value = std::move(*v);
      call->keywords.push_back(std::move(k));
      seen_keyword = true;
    } else {
      if (seen_keyword) {
        return errors_.Error(Peek().loc, "positional argument after keyword arguments",
                             "positional arguments first");
      }
      auto v = Expression();
      if (!v.ok()) return v.status();
      call->operands.push_back(std::move(*v));
    }
    if (call->operands.size() + call->keywords.size() > kMaxCallArguments) {
      return errors_.Error(Peek().loc,
                           absl::StrCat("more than ", kMaxCallArguments, " arguments in one call"),
                           "a shorter argument list");
    }
    if (IsOp(",")) {
      Next();
      continue;
    }
    if (!IsOp(")")) return Unexpected("',' or ')' in the argument list");
  }
  Next();  // ')'
  return absl::OkStatus();
}

absl::Status Parser::Sequence(const char* close, Expr* into, bool* trailing_comma) {
  *trailing_comma = false;
  while (!IsOp(close)) {
    auto v = Expression();
    if (!v.ok()) return v.status();
    into->operands.push_back(std::move(*v));
    if (static_cast<int>(into->operands.size()) > limits_.max_list_elements) {
      return errors_.Error(
          Peek().loc,
          absl::StrCat("more than ", limits_.max_list_elements, " elements in one list"),
          "a shorter list");
    }
    *trailing_comma = false;
    if (IsOp(",")) {
      Next();
      *trailing_comma = true;
      continue;
    }
    if (!IsOp(close)) return Unexpected(absl::StrCat("',' or '", close, "'"));
  }
  Next();
  return absl::OkStatus();
}

absl::StatusOr<ExprPtr> Parser::Atom() {
  const Token& t = Peek();
  switch (t.kind) {
    case TokenKind::kName: {
      if (t.text == "True" || t.text == "False") {
        ExprPtr e = Node(Kind::kBool, t.loc);
        e->int_value = t.text == "True";
        Next();
        return e;
      }
      if (t.text == "None") {
        ExprPtr e = Node(Kind::kNone, t.loc);
        Next();
        return e;
      }
      static const char* kKeywords[] = {"def",    "with",   "import", "from",  "as",   "pass", "if",
                                        "else",   "for",    "in",     "is",    "not",  "and",  "or",
                                        "lambda", "return", "while",  "class", "yield"};
      for (const char* kw : kKeywords) {
        if (t.text == kw) return Unexpected("an expression (a name, number, call or list)");
      }
      ExprPtr e = Node(Kind::kName, t.loc);
      e->text = t.text;
      Next();
      return e;
    }
    case TokenKind::kInt: {
      ExprPtr e = Node(Kind::kInt, t.loc);
      e->int_value = t.int_value;
      e->text = t.text;
      Next();
      return e;
    }
    case TokenKind::kFloat: {
      ExprPtr e = Node(Kind::kFloat, t.loc);
      e->float_value = t.float_value;
      e->text = t.text;
      Next();
      return e;
    }
    case TokenKind::kString: {
      ExprPtr e = Node(Kind::kString, t.loc);
      while (Peek().kind == TokenKind::kString) e->text += Next().text;  // "a" "b"
      return e;
    }
    case TokenKind::kOp:
      if (t.text == "(" || t.text == "[") {
        const bool is_list = t.text == "[";
        ExprPtr e = Node(is_list ? Kind::kList : Kind::kTuple, t.loc);
        Next();
        bool trailing_comma = false;
        if (absl::Status s = Sequence(is_list ? "]" : ")", e.get(), &trailing_comma); !s.ok()) {
          return s;
        }
        if (!is_list && e->operands.size() == 1 && !trailing_comma) {
          return std::move(e->operands[0]);  // (x) is x
        }
        return Finish(std::move(e));
      }
      if (t.text == "{") {
        return errors_.Error(t.loc, "dicts and sets are not supported", "a list or tuple");
      }
      break;
    default:
      break;
  }
  return Unexpected("an expression (a name, number, call or list)");
}

}  // namespace

absl::StatusOr<Module> ParseModule(const std::vector<Token>& tokens, const ErrorReporter& errors,
                                   const SourceLimits& limits) {
  if (tokens.empty() || tokens.back().kind != TokenKind::kEnd) {
    return absl::InternalError("ParseModule: token list does not end with kEnd");
  }
  return Parser(tokens, errors, limits).Run();
}

}  // namespace frontend
}  // namespace fusiond
