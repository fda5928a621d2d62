// Emits the scalar code of graph values inside one scope of a generated
// kernel (an element lane, a row, or a column of the epilogue), memoizing each
// value's variable. Internal to the code generator.
#ifndef FUSIOND_COMPILER_CODEGEN_VALUE_EMITTER_H_
#define FUSIOND_COMPILER_CODEGEN_VALUE_EMITTER_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/codegen/expr_emitter.h"
#include "compiler/codegen/kernel_plan.h"

namespace fusiond {

struct Scope {
  enum Kind { kElem, kRow, kCol };
  Kind kind = kElem;
  std::string* out = nullptr;  // statements are appended here
  std::string indent;
  std::map<ValueId, std::string>* memo = nullptr;
  // The expression loading an input tensor in this scope (compute type).
  std::function<std::string(ValueId)> load;
  // The linear (row-major) index of this scope's element in a random op's
  // output (an i64 expression); random ops are refused where it is unset.
  std::function<std::string(ValueId)> index;
  // Element scopes whose lanes l < VV are consecutive elements from a chunk
  // at j (j a multiple of vector_width where VV == vector_width): a shift op
  // result's linear index at j ("" where its lanes are not consecutive), and
  // the inputs whose pointers vec_ok aligns (shift_emitter.h, ShiftLanes).
  std::function<std::string(ValueId)> chunk_index;
  int vector_width = 1;
  std::function<bool(ValueId)> aligned_input;
  // Where lane-invariant statements go (before the lane loop), at chunk_indent.
  std::string* chunk = nullptr;
  std::string chunk_indent;
  // Row scope used for row values referenced from an element scope.
  Scope* row = nullptr;

  // A scope appending to `out` at `indent`, memoizing in `memo`; its load
  // is set by the caller.
  static Scope Of(Kind kind, std::string* out, std::string indent,
                  std::map<ValueId, std::string>* memo) {
    Scope s;
    s.kind = kind;
    s.out = out;
    s.indent = std::move(indent);
    s.memo = memo;
    return s;
  }
};

class ValueEmitter {
 public:
  ValueEmitter(const KernelPlan& plan, ExprOptions options, std::map<ValueId, int> input_index)
      : p_(plan), g_(*plan.graph), opt_(options), input_index_(std::move(input_index)) {}

  // The name (or inline expression) of v's value in scope s, emitting the
  // statements it needs. Iterative (an explicit stack of pending nodes), so
  // a graph of any depth is emitted without deep recursion.
  absl::StatusOr<std::string> Get(ValueId v, Scope& s);

  // An inline scalar expression longer than this becomes a variable of its
  // scope, so scalar DAGs (s2 = s1 + s1, ...) cannot grow the code
  // exponentially. Far above any expression of the corpus.
  static constexpr size_t kMaxInlineScalarChars = 1024;

 private:
  // A node whose result waits for its operands (Get's stack).
  struct Pending {
    enum Step { kForward, kScalarTrivial, kScalarPointwise, kShapeOp, kReduction, kPointwise };
    Step step = kForward;
    ValueId v = kNone;
    Scope* s = nullptr;
    const Node* n = nullptr;
    std::vector<ValueId> operands;  // evaluated in order, in scope s
    std::vector<std::string> ops;   // their results so far
  };
  // Starts v in *s: its result when no operand is needed, else nullopt with
  // *p filled in.
  absl::StatusOr<std::optional<std::string>> Begin(ValueId v, Scope* s, Pending* p);
  absl::StatusOr<std::optional<std::string>> BeginScalar(ValueId v, Scope* s, Pending* p);
  // The result of p once all its operands are in p.ops.
  absl::StatusOr<std::string> Finish(Pending& p);
  // A reduction over axes its operand does not vary along, as an expression.
  absl::StatusOr<std::string> Trivial(const Node& n, ValueId out, const std::string& x);
  std::string Declare(ValueId v, Scope& s, const std::string& expr);
  // A slice / pad / cat result (shift_emitter.h) at this scope's element, or
  // at element 0 when it varies along nothing.
  absl::StatusOr<std::string> Shifted(ValueId v, Scope& s, bool scalar);

  const KernelPlan& p_;
  const Graph& g_;
  ExprOptions opt_;
  std::map<ValueId, int> input_index_;  // graph input value -> its index
};

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_CODEGEN_VALUE_EMITTER_H_
