// Recursive-descent parser from tokens to the syntax tree (ast.h).
//
// Statements: `import ...`, `from ... import ...`, `pass`,
// `def name(params) [-> type]:`, `with expr as name:`, `a[, b...] = expr`
// and expression statements. A statement after a `def`/`with` header on the
// same line is read as the next statement. Expressions: names, numbers,
// strings, True/False/None, attribute access, calls with keyword arguments,
// lists, tuples, unary + - ~, and the binary operators + - * / // % ** << >>.
// Nesting is bounded by SourceLimits::max_depth.
#ifndef FUSIOND_COMPILER_FRONTEND_PARSER_H_
#define FUSIOND_COMPILER_FRONTEND_PARSER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "compiler/frontend/ast.h"
#include "compiler/frontend/lexer.h"

namespace fusiond {
namespace frontend {

absl::StatusOr<Module> ParseModule(const std::vector<Token>& tokens, const ErrorReporter& errors,
                                   const SourceLimits& limits = {});

}  // namespace frontend
}  // namespace fusiond

#endif  // FUSIOND_COMPILER_FRONTEND_PARSER_H_
