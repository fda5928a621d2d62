// Math ops of nvFuser's front end written with IR ops beyond math_calls.cc's
// simple forms: asinh, acosh, lgamma, erfinv (special_math.cc documents
// their accuracy), and is_neginf / is_posinf.
#ifndef FUSIOND_COMPILER_FRONTEND_SPECIAL_MATH_H_
#define FUSIOND_COMPILER_FRONTEND_SPECIAL_MATH_H_

#include <string>

#include "absl/status/statusor.h"
#include "compiler/ir/builder.h"

namespace fusiond {
namespace frontend {

// asinh, acosh, lgamma or erfinv.
bool IsSpecialMathOp(const std::string& name);

// fd.ops.<name>(x) of x already in the compute type t (float32 or double).
absl::StatusOr<ValueId> SpecialMathValue(GraphBuilder& b, const std::string& name, ValueId x,
                                         DataType t);

// is_neginf / is_posinf: isinf(x) and the sign test, a bool of x's shape.
absl::StatusOr<ValueId> InfSignValue(GraphBuilder& b, const std::string& name, ValueId x);

}  // namespace frontend
}  // namespace fusiond

#endif  // FUSIOND_COMPILER_FRONTEND_SPECIAL_MATH_H_
