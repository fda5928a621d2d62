// Scalar C++ for one pointwise node: the generated kernels evaluate the
// graph's math element by element in the compute type of each result (float
// for float16/bfloat16/float32, double, long long, int, bool), rounding
// explicitly wherever a result is declared float16/bfloat16, so a
// float -> bf16 -> float round trip rounds as the CPU reference does.
#ifndef FUSIOND_COMPILER_CODEGEN_EXPR_EMITTER_H_
#define FUSIOND_COMPILER_CODEGEN_EXPR_EMITTER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/graph.h"

namespace fusiond {

struct ExprOptions {
  // Use hardware approximations for exp/tanh (fine when every floating
  // output is 16-bit). Default: false.
  bool approx_transcendentals = false;
};

// "float", "double", "i64", "int", "bool".
const char* ComputeTypeName(DataType t);
// A literal of compute type `t` ("0.5f", "3", "true", "__int_as_float(0x7f800000)")
// holding v rounded to t as the CPU reference rounds constants (RoundTo in
// compiler/reference/reference.h): valid CUDA C++ for every double v.
std::string Literal(double v, DataType t);
// Rounds an expression of compute type to the storage precision of t
// (identity except for float16/bfloat16).
std::string RoundTo(DataType t, const std::string& expr);

// The expression computing node n's (single) output from operand expressions
// (each already in its operand's compute type). Unimplemented for ops that
// are not pointwise.
absl::StatusOr<std::string> EmitPointwise(const Graph& g, const Node& n,
                                          const std::vector<std::string>& operands,
                                          const ExprOptions& options);

// The expression of the element at linear index `index` of the output of n,
// an op computed from indices (IsIndexed: uniform, normal, iota), from its
// scalar operands (compiler/ir/philox.h; the prelude of a kernel with random
// ops holds RandomPrelude()).
absl::StatusOr<std::string> EmitIndexed(const Graph& g, const Node& n,
                                        const std::vector<std::string>& operands,
                                        const std::string& index);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_CODEGEN_EXPR_EMITTER_H_
