// The tokenizer of the repro-script front end: a small subset of Python's
// lexical rules. Comments are dropped; a newline inside brackets, or after a
// backslash, joins lines; blank lines produce no token. Indentation is not
// significant here (the scripts' only blocks are the `def` and `with`
// wrappers, whose bodies the parser reads as a flat statement list).
#ifndef FUSIOND_COMPILER_FRONTEND_LEXER_H_
#define FUSIOND_COMPILER_FRONTEND_LEXER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/frontend/source.h"

namespace fusiond {
namespace frontend {

enum class TokenKind {
  kName,     // identifiers and keywords (def, import, True, None, ...)
  kInt,      // integer literal; int_value holds it
  kFloat,    // float literal; float_value holds it
  kString,   // string literal; text holds the contents (escapes kept raw)
  kOp,       // punctuation: ( ) [ ] , . : ; = -> + - * / ** << ...
  kNewline,  // end of a logical line
  kEnd,      // end of input
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;  // the source text (contents for strings)
  Location loc;
  int64_t int_value = 0;
  double float_value = 0;
};

// "name 'foo'", "number 3", "')'", "end of line", ...: for error messages.
std::string Describe(const Token& t);

// Splits text into tokens; the last token is kEnd. Errors (unterminated
// strings or brackets, stray bytes, oversized literals, nesting beyond
// limits.max_depth) are located InvalidArgument.
absl::StatusOr<std::vector<Token>> Tokenize(std::string_view text, const ErrorReporter& errors,
                                            const SourceLimits& limits = {});

}  // namespace frontend
}  // namespace fusiond

#endif  // FUSIOND_COMPILER_FRONTEND_LEXER_H_
