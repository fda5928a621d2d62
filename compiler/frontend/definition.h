// Internal to the front end: the evaluator of a fusion definition's
// statements. It keeps the name table (rebinding a name gives the new value a
// fresh printable name: T4, then T4_1) and turns each fd.* call into
// GraphBuilder calls; every builder error is reported at the call's location.
#ifndef FUSIOND_COMPILER_FRONTEND_DEFINITION_H_
#define FUSIOND_COMPILER_FRONTEND_DEFINITION_H_

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/frontend/ast.h"
#include "compiler/frontend/frontend.h"
#include "compiler/frontend/pyvalue.h"
#include "compiler/frontend/source.h"
#include "compiler/ir/builder.h"

namespace fusiond {
namespace frontend {

// True when order holds each of 0..rank-1 once (stride_order arguments).
bool IsPermutation(const std::vector<int64_t>& order, int rank);

class DefinitionLowering {
 public:
  DefinitionLowering(Graph* graph, const ErrorReporter& errors, const GraphLimits& limits)
      : g_(graph), b_(graph, limits), errors_(errors) {}

  // The inputs list's entries, when the script has one: the values of sizes
  // computed by scalar arithmetic, which specialize the symbols they read.
  void SetConcreteInputs(std::vector<InputSpec> inputs) { concrete_ = std::move(inputs); }
  // Runs one statement other than the inputs list.
  absl::Status Statement(const Stmt& st);
  // Names every value still unnamed (results of nested calls).
  void NameRemainingValues();

  // True once any fd.define_* or fd.ops.* call has run.
  bool saw_definition() const { return saw_definition_; }
  // Where the definition starts (the `def` line, else the first fd call).
  Location definition_loc() const { return definition_loc_; }

 private:
  absl::StatusOr<PyValue> Eval(const Expr& e);
  absl::StatusOr<PyValue> EvalCall(const Expr& call);
  absl::StatusOr<PyValue> FdMethod(const Expr& call, const std::string& method);
  // fd.define_tensor / define_scalar / define_vector / add_output.
  absl::StatusOr<PyValue> DefineTensorCall(const Expr& call);
  absl::StatusOr<PyValue> DefineScalarCall(const Expr& call);
  absl::StatusOr<PyValue> DefineVectorCall(const Expr& call);
  absl::StatusOr<PyValue> AddOutputCall(const Expr& call);
  absl::StatusOr<PyValue> OpCall(const Expr& call, const Expr& op_name);
  // OpCall's attributes of a reduction or shape op from its arguments `a`.
  absl::Status ReductionAttrs(OpKind op, const std::vector<const Expr*>& a, Attrs* attrs);
  absl::Status ShapeAttrs(OpKind op, const std::vector<const Expr*>& a, Attrs* attrs);
  // reshape / squeeze in the spelling with original_shape, and its check.
  bool IsLegacyShapeCall(OpKind op, const Expr& call) const;
  absl::Status CheckOriginalShape(const std::string& fname, const Expr& x, const Expr& original);
  // fd.ops.full / zeros / ones (a broadcast of the fill value), and a clear
  // error for the tensor factories not supported; nullopt for other names.
  std::optional<absl::StatusOr<PyValue>> FactoryOp(const Expr& call, const Expr& op_name);
  // fd.ops.set / segment_set / lerp / addcmul / threshold lowered to IR ops,
  // and the refusal of out-of-scope ops (composite_calls.cc); nullopt for
  // other names. CompositeValue builds one from its evaluated operands.
  std::optional<absl::StatusOr<PyValue>> CompositeOp(const Expr& call, const Expr& op_name);
  absl::StatusOr<ValueId> CompositeValue(const std::string& name, std::vector<ValueId> x);
  // fd.ops.silu / atan / tan / sinh / cosh / asin / acos / atanh written with
  // IR ops (math_calls.cc); nullopt for other names.
  std::optional<absl::StatusOr<PyValue>> MathOp(const Expr& call, const Expr& op_name);
  // fd.ops.div (integers: truncating), truediv, signbit and the direct
  // printer's names (isneginf, isposinf, mod, fmax, fmin, frac) in
  // arith_calls.cc; nullopt for other names.
  std::optional<absl::StatusOr<PyValue>> ArithmeticOp(const Expr& call, const Expr& op_name);
  absl::StatusOr<ValueId> TruncatingDivide(ValueId a, ValueId b);
  absl::StatusOr<ValueId> SignBit(ValueId x);
  absl::StatusOr<ValueId> NanIgnoringExtreme(OpKind op, ValueId a, ValueId b);
  // fd.ops.welford(x, dims): (mean, var_sum, count) from the IR's var_mean
  // (welford_calls.cc); nullopt for other names.
  std::optional<absl::StatusOr<PyValue>> WelfordOp(const Expr& call, const Expr& op_name);
  absl::StatusOr<ValueId> MathValue(const std::string& name, ValueId x);
  // fd.ops.triu / tril(x, diagonal): x where the column index minus the row
  // index of its last two axes is >= (<=) diagonal, else 0 (triangle_calls.cc).
  absl::StatusOr<PyValue> TriangleOp(const Expr& call, const std::string& name);
  absl::StatusOr<PyValue> ShapeQuery(const Expr& call, const std::string& name);
  // fd.ops.uniform / normal / rand_like / randn_like, fd.ops.iota.
  absl::StatusOr<PyValue> RandomOp(const Expr& call, const Expr& op_name);
  absl::StatusOr<PyValue> IotaOp(const Expr& call, const Expr& op_name);
  // fd.ops.slice / pad / cat (shift_calls.cc).
  absl::StatusOr<PyValue> ShiftOp(const Expr& call, const Expr& op_name);
  void SpecializeAxis(ValueId x, int axis);
  absl::StatusOr<std::vector<int64_t>> ShiftIndexList(const Expr& e, const char* what);
  absl::StatusOr<std::vector<int64_t>> ShiftSliceOffsets(ValueId x,
                                                         const std::vector<const Expr*>& a,
                                                         const char* expect);
  absl::StatusOr<PyValue> TensorMethod(const Expr& call, const std::string& method);
  absl::StatusOr<PyValue> SizeOf(const Expr& at, ValueId tensor, const Expr* axis);
  // The size of axis a (in range) of tensor: one size node per (tensor, axis).
  absl::StatusOr<PyValue> SizeAt(const Expr& at, ValueId tensor, int64_t a);

  // Conversions of evaluated arguments, each with a located error.
  absl::StatusOr<ValueId> Operand(const Expr& e);  // tensor, scalar or number
  absl::StatusOr<std::vector<int64_t>> IntList(const Expr& e, const char* what, bool allow_single);
  absl::StatusOr<int64_t> IntArg(const Expr& e, const char* what);
  absl::StatusOr<bool> BoolArg(const Expr& e, const char* what);
  absl::StatusOr<bool> FlagArg(const Expr& e, const char* what);  // 0 / 1 or a bool
  absl::StatusOr<std::optional<DataType>> DTypeArg(const Expr& e, bool allow_null);
  // allow_keep: -1 entries mean "keep this axis" (expand).
  absl::StatusOr<std::vector<Extent>> ShapeArg(const Expr& e, bool allow_keep);
  absl::StatusOr<Extent> ExtentArg(const PyValue& v, const Expr& at, bool allow_keep);
  // The extent an integer scalar computed from sizes and constants (add, sub,
  // mul, div) stands for: its value from the static sizes, else from the
  // inputs list, binding each symbol it reads to that list's size.
  absl::StatusOr<Extent> ComputedExtent(ValueId v, const Expr& at);
  // The inputs list's size for a root symbol, when the list gives it.
  std::optional<int64_t> ConcreteSize(SymbolId root) const;
  // A reshape from symbolic axes to concrete sizes (static-trace printers):
  // binds x's symbols the new shape lacks to the inputs list's sizes.
  void SpecializeReshapeOperand(ValueId x, const std::vector<Extent>& shape);
  // A reshape's -1 entry (at most one) as the element count of x over the
  // other entries, from static sizes or the inputs list's (whose symbols
  // are then bound to them, as for computed sizes).
  absl::Status InferReshapeSize(ValueId x, std::vector<Extent>* shape, const Expr& at);

  void Bind(const std::string& name, const PyValue& v);
  std::string FreshName(const std::string& base);
  ValueId Constant(const PyValue& number);
  void NoteDefinition(Location at);

  Graph* g_;
  GraphBuilder b_;
  const ErrorReporter& errors_;
  std::unordered_map<std::string, PyValue> names_;
  std::unordered_set<std::string> used_names_;
  std::unordered_map<std::string, int> next_suffix_;
  std::map<std::pair<ValueId, int64_t>, ValueId> size_nodes_;  // (tensor, axis) -> size
  std::vector<InputSpec> concrete_;                            // the inputs list, when there is one
  int literal_count_ = 0;
  int unseeded_random_ops_ = 0;  // random ops without rng_seed / rng_offset so far
  bool saw_definition_ = false;
  bool saw_def_ = false;
  Location definition_loc_;
};

}  // namespace frontend
}  // namespace fusiond

#endif  // FUSIOND_COMPILER_FRONTEND_DEFINITION_H_
