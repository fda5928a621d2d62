// Helpers shared by builder.cc and builder_infer.cc; not part of the API.
#ifndef FUSIOND_COMPILER_IR_BUILDER_INTERNAL_H_
#define FUSIOND_COMPILER_IR_BUILDER_INTERNAL_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/ir/dtype.h"
#include "compiler/ir/op.h"

namespace fusiond {
namespace builder_internal {

// InvalidArgument "<op>: <why>".
inline absl::Status Bad(OpKind op, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(OpName(op), ": ", why));
}

// Float > int > bool: a scalar operand widens a tensor only across categories.
inline int Category(DataType t) {
  if (IsFloatingPoint(t)) return 2;
  if (IsIntegral(t)) return 1;
  return 0;
}

}  // namespace builder_internal
}  // namespace fusiond

#endif  // FUSIOND_COMPILER_IR_BUILDER_INTERNAL_H_
