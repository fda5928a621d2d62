#include "compiler/frontend/lexer.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fusiond {
namespace frontend {
namespace {

bool IsNameStart(unsigned char c) { return std::isalpha(c) || c == '_'; }
bool IsNameChar(unsigned char c) { return std::isalnum(c) || c == '_'; }

// Multi-character operators, longest first within a shared prefix.
constexpr const char* kLongOps[] = {"**=", "//=", "<<=", ">>=", "->", "**", "//", "<<",
                                    ">>",  "==",  "!=",  "<=",  ">=", "+=", "-=", "*=",
                                    "/=",  "%=",  "&=",  "|=",  "^=", "@=", ":="};
constexpr std::string_view kShortOps = "()[]{},.:;=+-*/%@<>&|^~";

char Closer(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }

// A literal as an error quotes it: whole up to 40 characters, else its first
// 32, an ellipsis and its length.
std::string QuoteLiteral(std::string_view text) {
  if (text.size() <= 40) return absl::StrCat("'", std::string(text), "'");
  return absl::StrCat("'", std::string(text.substr(0, 32)), "...' (", text.size(), " characters)");
}

class Lexer {
 public:
  Lexer(std::string_view text, const ErrorReporter& errors, const SourceLimits& limits)
      : s_(text), errors_(errors), limits_(limits) {}

  absl::StatusOr<std::vector<Token>> Run();

 private:
  Location Here() const { return Location{line_, static_cast<int>(pos_ - line_start_) + 1}; }
  void Push(TokenKind kind, std::string text, Location loc) {
    Token t;
    t.kind = kind;
    t.text = std::move(text);
    t.loc = loc;
    out_.push_back(std::move(t));
  }
  void NewLine() {  // pos_ is just past a '\n'
    ++line_;
    line_start_ = pos_;
  }
  absl::Status Number();
  absl::Status String(size_t prefix_len);
  // An operator or bracket at pos_ (brackets_ tracks the open ones), else
  // the error for an unexpected character c.
  absl::Status Operator(unsigned char c);

  std::string_view s_;
  const ErrorReporter& errors_;
  const SourceLimits& limits_;
  size_t pos_ = 0;
  size_t line_start_ = 0;
  int line_ = 1;
  std::vector<std::pair<char, Location>> brackets_;
  std::vector<Token> out_;
};

absl::Status Lexer::Number() {
  const Location loc = Here();
  const size_t start = pos_;
  bool is_float = false;
  std::string digits;  // without underscores
  if (s_[pos_] == '0' && pos_ + 1 < s_.size() &&
      (s_[pos_ + 1] == 'x' || s_[pos_ + 1] == 'X' || s_[pos_ + 1] == 'o' || s_[pos_ + 1] == 'O' ||
       s_[pos_ + 1] == 'b' || s_[pos_ + 1] == 'B')) {
    const char kind = static_cast<char>(std::tolower(s_[pos_ + 1]));
    const int base = kind == 'x' ? 16 : kind == 'o' ? 8 : 2;
    pos_ += 2;
    while (pos_ < s_.size() &&
           (std::isxdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) {
      if (s_[pos_] != '_') digits.push_back(s_[pos_]);
      ++pos_;
    }
    errno = 0;
    char* end = nullptr;
    unsigned long long v = digits.empty() ? 0 : std::strtoull(digits.c_str(), &end, base);
    if (digits.empty() || *end != '\0' || errno == ERANGE || v > INT64_MAX) {
      return errors_.Error(loc,
                           absl::StrCat("bad or oversized integer literal ",
                                        QuoteLiteral(s_.substr(start, pos_ - start))),
                           "an integer that fits in 64 bits");
    }
    Push(TokenKind::kInt, std::string(s_.substr(start, pos_ - start)), loc);
    out_.back().int_value = static_cast<int64_t>(v);
    return absl::OkStatus();
  }
  auto digit_run = [&] {
    while (pos_ < s_.size() &&
           (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) {
      if (s_[pos_] != '_') digits.push_back(s_[pos_]);
      ++pos_;
    }
  };
  digit_run();
  if (pos_ < s_.size() && s_[pos_] == '.') {
    is_float = true;
    digits.push_back('.');
    ++pos_;
    digit_run();
  }
  if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
    size_t save = pos_;
    std::string save_digits = digits;
    digits.push_back('e');
    ++pos_;
    if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) digits.push_back(s_[pos_++]);
    if (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      is_float = true;
      digit_run();
    } else {
      pos_ = save;
      digits = save_digits;
    }
  }
  const std::string text(s_.substr(start, pos_ - start));
  if (pos_ < s_.size() && (IsNameChar(static_cast<unsigned char>(s_[pos_])))) {
    return errors_.Error(loc, absl::StrCat("malformed number ", QuoteLiteral(text + s_[pos_])),
                         "a decimal integer or float literal");
  }
  if (is_float) {
    errno = 0;
    double v = std::strtod(digits.c_str(), nullptr);
    if (errno == ERANGE && (v > 1 || v < -1)) {
      return errors_.Error(loc,
                           absl::StrCat("float literal ", QuoteLiteral(text), " is out of range"),
                           "a finite float");
    }
    Push(TokenKind::kFloat, text, loc);
    out_.back().float_value = v;
    return absl::OkStatus();
  }
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(digits.c_str(), &end, 10);
  if (errno == ERANGE || v > INT64_MAX) {
    return errors_.Error(
        loc, absl::StrCat("integer literal ", QuoteLiteral(text), " does not fit in 64 bits"),
        "an integer below 2**63");
  }
  Push(TokenKind::kInt, text, loc);
  out_.back().int_value = static_cast<int64_t>(v);
  return absl::OkStatus();
}

absl::Status Lexer::String(size_t prefix_len) {
  const Location loc = Here();
  pos_ += prefix_len;
  const char quote = s_[pos_];
  const bool triple = pos_ + 2 < s_.size() && s_[pos_ + 1] == quote && s_[pos_ + 2] == quote;
  pos_ += triple ? 3 : 1;
  std::string contents;
  while (true) {
    if (pos_ >= s_.size() || (!triple && s_[pos_] == '\n')) {
      return errors_.Error(
          loc, "unterminated string literal",
          absl::StrCat("a closing ", triple ? std::string(3, quote) : std::string(1, quote),
                       triple ? "" : " on the same line"));
    }
    const char c = s_[pos_];
    if (c == '\\' && pos_ + 1 < s_.size()) {
      contents.push_back(c);
      contents.push_back(s_[pos_ + 1]);
      pos_ += 2;
      if (s_[pos_ - 1] == '\n') NewLine();
      continue;
    }
    if (c == quote &&
        (!triple || (pos_ + 2 < s_.size() && s_[pos_ + 1] == quote && s_[pos_ + 2] == quote))) {
      pos_ += triple ? 3 : 1;
      break;
    }
    contents.push_back(c);
    ++pos_;
    if (c == '\n') NewLine();
  }
  Push(TokenKind::kString, std::move(contents), loc);
  return absl::OkStatus();
}

absl::Status Lexer::Operator(unsigned char c) {
  const Location loc = Here();
  bool matched = false;
  for (const char* op : kLongOps) {
    std::string_view o(op);
    if (s_.substr(pos_, o.size()) == o) {
      Push(TokenKind::kOp, std::string(o), loc);
      pos_ += o.size();
      matched = true;
      break;
    }
  }
  if (matched) return absl::OkStatus();
  if (c != 0 && kShortOps.find(static_cast<char>(c)) != std::string_view::npos) {
    if (c == '(' || c == '[' || c == '{') {
      if (static_cast<int>(brackets_.size()) >= limits_.max_depth) {
        return errors_.Error(
            loc, absl::StrCat("brackets nested deeper than ", limits_.max_depth, " levels"),
            "a shallower expression");
      }
      brackets_.push_back({static_cast<char>(c), loc});
    } else if (c == ')' || c == ']' || c == '}') {
      if (brackets_.empty()) {
        return errors_.Error(loc, absl::StrCat("unmatched '", std::string(1, c), "'"),
                             "no closing bracket without an opening one");
      }
      const auto [open, at] = brackets_.back();
      if (Closer(open) != static_cast<char>(c)) {
        return errors_.Error(
            loc,
            absl::StrCat("'", std::string(1, c), "' does not match '", std::string(1, open),
                         "' opened at line ", at.line, ", column ", at.column),
            absl::StrCat("'", std::string(1, Closer(open)), "'"));
      }
      brackets_.pop_back();
    }
    Push(TokenKind::kOp, std::string(1, static_cast<char>(c)), loc);
    ++pos_;
    return absl::OkStatus();
  }
  if (c >= 0x80 || c < 0x20 || c == 0x7f) {
    return errors_.Error(loc, absl::StrFormat("unexpected byte 0x%02x", c),
                         "Python source text (non-ASCII is allowed only in comments and strings)");
  }
  return errors_.Error(loc, absl::StrCat("unexpected character '", std::string(1, c), "'"),
                       "a name, number, string or operator");
}

absl::StatusOr<std::vector<Token>> Lexer::Run() {
  if (s_.size() > limits_.max_bytes) {
    return errors_.Error(Location{}, absl::StrCat("the script is ", s_.size(), " bytes"),
                         absl::StrCat("at most ", limits_.max_bytes, " bytes"));
  }
  // Skip a UTF-8 byte order mark.
  if (s_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = line_start_ = 3;
  bool line_has_tokens = false;
  while (pos_ < s_.size()) {
    const unsigned char c = static_cast<unsigned char>(s_[pos_]);
    if (c == '\n') {
      if (brackets_.empty() && line_has_tokens) {
        Push(TokenKind::kNewline, "", Here());
        line_has_tokens = false;
      }
      ++pos_;
      NewLine();
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++pos_;
      continue;
    }
    if (c == '#') {
      while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      continue;
    }
    if (c == '\\') {
      size_t p = pos_ + 1;
      if (p < s_.size() && s_[p] == '\r') ++p;
      if (p < s_.size() && s_[p] == '\n') {
        pos_ = p + 1;
        NewLine();
        continue;
      }
      return errors_.Error(Here(), "a backslash outside a string that does not end the line",
                           "a line continuation (backslash then newline)");
    }
    line_has_tokens = true;
    if (out_.size() >= 64u * 1024 * 1024) {
      return errors_.Error(Here(), "too many tokens", "a smaller script");
    }
    // String prefixes: r, b, u, f and two-letter combinations.
    size_t prefix = 0;
    while (prefix < 2 && pos_ + prefix < s_.size() && s_[pos_ + prefix] != '\0' &&
           std::strchr("rRbBuUfF", s_[pos_ + prefix]) != nullptr) {
      ++prefix;
    }
    if (pos_ + prefix < s_.size() && (s_[pos_ + prefix] == '"' || s_[pos_ + prefix] == '\'')) {
      if (absl::Status st = String(prefix); !st.ok()) return st;
      continue;
    }
    if (IsNameStart(c)) {
      const Location loc = Here();
      const size_t start = pos_;
      while (pos_ < s_.size() && IsNameChar(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      Push(TokenKind::kName, std::string(s_.substr(start, pos_ - start)), loc);
      continue;
    }
    if (std::isdigit(c) || (c == '.' && pos_ + 1 < s_.size() &&
                            std::isdigit(static_cast<unsigned char>(s_[pos_ + 1])))) {
      if (absl::Status st = Number(); !st.ok()) return st;
      continue;
    }
    if (absl::Status st = Operator(c); !st.ok()) return st;
  }
  if (!brackets_.empty()) {
    const auto [open, at] = brackets_.back();
    return errors_.Error(
        at, absl::StrCat("'", std::string(1, open), "' is never closed"),
        absl::StrCat("'", std::string(1, Closer(open)), "' before the end of the file"));
  }
  if (line_has_tokens) Push(TokenKind::kNewline, "", Here());
  Push(TokenKind::kEnd, "", Here());
  return std::move(out_);
}

}  // namespace

std::string Describe(const Token& t) {
  switch (t.kind) {
    case TokenKind::kName:
      return absl::StrCat("name '", t.text, "'");
    case TokenKind::kInt:
    case TokenKind::kFloat:
      return absl::StrCat("number ", t.text);
    case TokenKind::kString:
      return "a string";
    case TokenKind::kOp:
      return absl::StrCat("'", t.text, "'");
    case TokenKind::kNewline:
      return "end of line";
    case TokenKind::kEnd:
      return "end of file";
  }
  return "token";
}

absl::StatusOr<std::vector<Token>> Tokenize(std::string_view text, const ErrorReporter& errors,
                                            const SourceLimits& limits) {
  return Lexer(text, errors, limits).Run();
}

}  // namespace frontend
}  // namespace fusiond
