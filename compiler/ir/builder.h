// GraphBuilder: the one way values and nodes enter a Graph. Every call checks
// its operands (types, ranks, broadcast compatibility, axes) and infers the
// result's dtype and shape, so any graph built through it is well formed.
// Errors are InvalidArgument naming the op and the reason; callers add where
// (file:line:column for the front end, node index for the wire format).
#ifndef FUSIOND_COMPILER_IR_BUILDER_H_
#define FUSIOND_COMPILER_IR_BUILDER_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/ir/graph.h"

namespace fusiond {

// Limits on what a graph may declare; beyond them sizes are "absurd".
struct GraphLimits {
  int max_rank = 8;                         // axes per tensor
  int64_t max_elements = int64_t{1} << 40;  // elements per tensor (kMaxTensorElements)
  int max_nodes = 100000;                   // nodes per graph
};

class GraphBuilder {
 public:
  explicit GraphBuilder(Graph* graph, GraphLimits limits = {}) : g_(graph), limits_(limits) {}

  // A tensor input. sizes[i] == -1 makes axis i symbolic (a new size symbol).
  // contiguity and stride_order may be empty (contiguous, row-major).
  absl::StatusOr<ValueId> DefineTensor(std::string name, DataType dtype,
                                       const std::vector<int64_t>& sizes,
                                       std::vector<std::optional<bool>> contiguity = {},
                                       std::vector<int64_t> stride_order = {});
  // A scalar constant (bool and ints are held exactly as doubles).
  ValueId DefineConstant(double value, DataType dtype, std::string name = "");
  // A scalar input supplied at run time.
  ValueId DefineScalarInput(DataType dtype, std::string name = "");

  // Adds a node computing `op` over `inputs` with `attrs`; returns its
  // outputs (two for var_mean). The typed helpers below call this.
  absl::StatusOr<std::vector<ValueId>> AddNode(OpKind op, std::vector<ValueId> inputs,
                                               Attrs attrs = {});

  absl::StatusOr<ValueId> Unary(OpKind op, ValueId x);
  absl::StatusOr<ValueId> Binary(OpKind op, ValueId a, ValueId b);
  absl::StatusOr<ValueId> Where(ValueId cond, ValueId a, ValueId b);
  absl::StatusOr<ValueId> Cast(ValueId x, DataType dtype);
  absl::StatusOr<ValueId> BroadcastInDim(ValueId x, std::vector<Extent> shape,
                                         std::vector<int64_t> broadcast_dims);
  absl::StatusOr<ValueId> Reduce(OpKind op, ValueId x, std::vector<int64_t> dims, bool keepdim,
                                 std::optional<DataType> dtype = std::nullopt);
  absl::StatusOr<ValueId> Size(ValueId x, int64_t axis);

  // Marks a value as a fusion output (in order).
  absl::Status AddOutput(ValueId v);

  // The extent a scalar stands for when used in a shape: a static constant,
  // or the axis extent read by a `size` node. nullopt otherwise.
  std::optional<Extent> ExtentOfScalar(ValueId v) const;

  Graph* graph() { return g_; }

 private:
  ValueId NewValue(std::string name, bool is_tensor, DataType dtype, std::vector<Extent> shape);
  absl::Status CheckValue(ValueId v, const char* what) const;
  absl::Status CheckShapeSize(const std::vector<Extent>& shape) const;
  absl::StatusOr<std::vector<Extent>> BroadcastShapes(OpKind op,
                                                      const std::vector<ValueId>& operands);
  absl::StatusOr<std::vector<std::pair<bool, std::vector<Extent>>>> InferShape(
      OpKind op, const std::vector<ValueId>& in, Attrs& attrs, std::vector<DataType>& dtypes);
  // uniform / normal: scalar parameters, integer seed and offset, a shape
  // and a floating dtype; iota: scalar start and step, a rank-1 shape and a
  // numeric dtype (builder_random.cc).
  absl::StatusOr<std::vector<std::pair<bool, std::vector<Extent>>>> InferIndexed(
      OpKind op, const std::vector<ValueId>& in, Attrs& attrs, std::vector<DataType>& dtypes);
  absl::StatusOr<std::vector<std::pair<bool, std::vector<Extent>>>> InferIota(
      OpKind op, const std::vector<ValueId>& in, Attrs& attrs, std::vector<DataType>& dtypes);

  // slice, pad, cat: static offsets along the shifted axes (builder_shift.cc).
  absl::StatusOr<std::vector<std::pair<bool, std::vector<Extent>>>> InferShift(
      OpKind op, const std::vector<ValueId>& in, Attrs& attrs, std::vector<DataType>& dtypes);
  Graph* g_;
  GraphLimits limits_;
};

// Normalizes possibly negative axes against `rank`; errors on out-of-range
// or repeated axes. Returns them sorted.
absl::StatusOr<std::vector<int64_t>> NormalizeAxes(std::vector<int64_t> axes, int rank,
                                                   bool allow_repeat = false);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_IR_BUILDER_H_
