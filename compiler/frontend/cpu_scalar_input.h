// The inputs list's side of 0-dim CPU tensor inputs (define_tensor(shape=[],
// is_cpu=True), scalar inputs the runtime reads at launch): the
// torch.tensor(x) entry that gives their value, and the check of an entry.
#ifndef FUSIOND_COMPILER_FRONTEND_CPU_SCALAR_INPUT_H_
#define FUSIOND_COMPILER_FRONTEND_CPU_SCALAR_INPUT_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/frontend/ast.h"
#include "compiler/frontend/frontend.h"
#include "compiler/frontend/source.h"

namespace fusiond {
namespace frontend {

// torch.tensor(x, dtype=..., device=...): a 0-dim tensor ("full", shape {})
// of the number x, as nvFuser's repro printer writes a CPU scalar's value;
// torch's default dtypes (int64 for an int literal, float32 for a float one).
// number and dtype read a number and a torch dtype with located errors.
absl::StatusOr<InputSpec> TorchTensorEntry(
    const Expr& call, const ErrorReporter& errors,
    const std::function<absl::StatusOr<double>(const Expr&)>& number,
    const std::function<absl::StatusOr<DataType>(const Expr&)>& dtype);

// The entry `s` for CPU scalar input `who` of type t: a 0-dim factory of t
// (not a Python number, a softmax or a strided view); InvalidArgument at
// `at` otherwise.
absl::Status CheckCpuScalarEntry(DataType t, const InputSpec& s, Location at,
                                 const std::string& who, const ErrorReporter& errors);

}  // namespace frontend
}  // namespace fusiond

#endif  // FUSIOND_COMPILER_FRONTEND_CPU_SCALAR_INPUT_H_
