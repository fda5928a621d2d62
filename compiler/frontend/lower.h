// Internal to the front end: turning the syntax tree into a ParsedFusion.
//
// LowerDefinition walks the statements in order, keeping a table of names:
// `fd.define_*` and `fd.ops.*` build the Graph through GraphBuilder (which
// checks types, ranks, broadcasts and axes); `T.size(i)` becomes a size node
// and `T.shape()` the tensor's extent list. The `def`/`with` wrappers, imports,
// the wrapper's call and `fd.execute(...)` are accepted and ignored. The
// `inputs = [...]` list is handed to ReadInputList, then checked against the
// graph by CheckInputList.
#ifndef FUSIOND_COMPILER_FRONTEND_LOWER_H_
#define FUSIOND_COMPILER_FRONTEND_LOWER_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/frontend/ast.h"
#include "compiler/frontend/frontend.h"
#include "compiler/frontend/source.h"
#include "compiler/ir/builder.h"

namespace fusiond {
namespace frontend {

// Builds out->graph from the definition; fills out->inputs and
// out->input_shapes from the inputs list (or the static sizes).
absl::Status LowerModule(const Module& module, const ErrorReporter& errors,
                         const GraphLimits& limits, ParsedFusion* out);

// One entry of the inputs list and where it is written.
struct LocatedInput {
  InputSpec spec;
  Location loc;
};

// Reads the elements of the `inputs = [...]` list expression.
absl::StatusOr<std::vector<LocatedInput>> ReadInputList(const Expr& list,
                                                        const ErrorReporter& errors);

// Checks count, rank, dtype, static sizes and size-symbol consistency of the
// list against the graph's inputs. list_loc locates count errors.
absl::Status CheckInputList(const Graph& g, const std::vector<LocatedInput>& inputs,
                            Location list_loc, const ErrorReporter& errors,
                            const GraphLimits& limits);

}  // namespace frontend
}  // namespace fusiond

#endif  // FUSIOND_COMPILER_FRONTEND_LOWER_H_
