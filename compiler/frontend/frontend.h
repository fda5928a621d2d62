// The repro-script front end: parses the text form that PyTorch front ends
// and nvFuser print as repro scripts (see tests/corpus/fusions/*.py) into a
// Graph, plus the concrete input shapes from the trailing `inputs = [...]`.
// Hand-written recursive descent over a small Python subset; no Python is
// embedded. Errors are InvalidArgument "file:line:column: what; expected".
//
// Accepted: comments, docstrings, imports, the `def name(fd: ...) -> None:`
// wrapper and its call, `with FusionDefinition() as fd:`, print(...),
// torch.manual_seed(...) and fd.execute(...) (all ignored);
// fd.define_tensor(shape, contiguity, dtype, is_cpu=False, stride_order),
// fd.define_scalar(value | None, dtype), fd.define_vector([...], dtype=Int),
// fd.ops.<op> for every op of compiler/ir/op.h (kwargs dims, keepdim, dtype
// (DataType.Null = default), shape, broadcast_dims, correction,
// is_broadcast_dim, new_shape), fd.ops.full / zeros / ones, fd.ops.iota,
// fd.ops.uniform / normal / rand_like / randn_like (rng_seed and rng_offset
// integer scalars; without them seed 0 and, per such op, its position
// among them as offset: the same numbers at every launch), T.size(i),
// T.shape(), Python numbers and float("inf" / "-inf" / "nan") as scalar
// operands, integer arithmetic in sizes (1 << 20), sizes computed with
// fd.ops.add / sub / mul / div as shape entries (valued from static sizes or
// the inputs list, whose sizes they then specialize), rebinding a name
// (the new value prints as T4_1), `a, b = fd.ops.var_mean(...)`,
// fd.add_output(T), and `inputs = [...]` (see InputSpec). Limits: 16 MiB of
// text, 64 levels of brackets, 256 levels of expression nesting, rank 8,
// 2**40 elements per tensor.
#ifndef FUSIOND_COMPILER_FRONTEND_FRONTEND_H_
#define FUSIOND_COMPILER_FRONTEND_FRONTEND_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/graph.h"

namespace fusiond {

// One entry of the `inputs = [...]` list.
struct InputSpec {
  std::vector<int64_t> shape;
  DataType dtype = DataType::kFloat;
  // How the script makes it: "randn", "rand", "zeros", "ones", "full",
  // "make_tensor" (also torch.randint), "softmax", or "scalar" for a Python
  // number (float("nan") too).
  // "softmax": torch.softmax(torch.randn(...), dim) -- a softmax over axis
  // softmax_dim of a standard normal tensor.
  std::string generator = "randn";
  // value = base * scale + offset: `torch.rand(...) * k` / `+ k` adjustments
  // (make_tensor's low/high also land here: base uniform [0, 1)).
  double scale = 1.0;
  double offset = 0.0;
  double value = 0.0;        // "full": the fill value; "scalar": the number
  int64_t softmax_dim = -1;  // "softmax": the axis it normalizes
  // `.as_strided(sizes, strides)`: the view's strides (elements); empty for
  // a contiguous tensor. The fusion sees `shape`; runtimes copy such inputs.
  std::vector<int64_t> strides;
};

struct ParsedFusion {
  Graph graph;
  // Empty when the script has no `inputs = [...]` list.
  std::vector<InputSpec> inputs;
  // Concrete shapes, one per graph input: from `inputs`, else the static
  // sizes of the definition. Empty when neither gives concrete sizes.
  std::vector<std::vector<int64_t>> input_shapes;
};

absl::StatusOr<ParsedFusion> ParseReproScript(std::string_view text, std::string_view filename);
absl::StatusOr<ParsedFusion> ParseReproFile(const std::string& path);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_FRONTEND_FRONTEND_H_
