// The syntax tree of a repro script: the statements and expressions of the
// Python subset the front end reads. The parser builds it; the definition
// lowering (definition.cc) and the inputs-list reader (input_list.cc) walk it.
#ifndef FUSIOND_COMPILER_FRONTEND_AST_H_
#define FUSIOND_COMPILER_FRONTEND_AST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/frontend/source.h"

namespace fusiond {
namespace frontend {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Keyword {
  std::string name;
  Location loc;
  ExprPtr value;
};

struct Expr {
  enum class Kind {
    kName,    // text
    kInt,     // int_value
    kFloat,   // float_value
    kString,  // text
    kBool,    // int_value is 0 or 1
    kNone,
    kAttribute,  // operands[0].text
    kCall,       // operands[0](operands[1..], keywords)
    kList,       // [operands...]
    kTuple,      // (operands...)
    kUnary,      // text operands[0]; text is "-", "+" or "~"
    kBinary,     // operands[0] text operands[1]; text is "+", "*", "<<", ...
  };
  Kind kind = Kind::kNone;
  Location loc;
  int depth = 1;  // height of this subtree (the parser bounds it)
  std::string text;
  int64_t int_value = 0;
  double float_value = 0;
  std::vector<ExprPtr> operands;
  std::vector<Keyword> keywords;  // kCall only

  // Call helpers.
  const Expr& callee() const { return *operands[0]; }
  size_t num_args() const { return operands.size() - 1; }
  const Expr& arg(size_t i) const { return *operands[i + 1]; }
};

struct Target {
  std::string name;
  Location loc;
};

struct Stmt {
  enum class Kind {
    kIgnored,  // import, from ... import, pass
    kDef,      // def name(params): -- name, params
    kWith,     // with value as name: -- value, name
    kAssign,   // targets = value
    kExpr,     // value (a call)
  };
  Kind kind = Kind::kIgnored;
  Location loc;
  std::string name;                 // kDef: function name; kWith: the `as` name
  std::vector<std::string> params;  // kDef
  std::vector<Target> targets;      // kAssign: one, or several for unpacking
  ExprPtr value;                    // kWith, kAssign, kExpr
};

struct Module {
  std::vector<Stmt> statements;
  Location end;  // where the file ends
};

// "DataType.Float" for an attribute chain of names, "" otherwise.
std::string DottedName(const Expr& e);

}  // namespace frontend
}  // namespace fusiond

#endif  // FUSIOND_COMPILER_FRONTEND_AST_H_
