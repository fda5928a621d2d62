// Evaluate: checks the graph and inputs, binds symbolic extents, then runs
// the nodes in order, dropping each value after its last use.
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/binding.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "compiler/reference/eval_internal.h"
#include "compiler/reference/reference.h"

namespace fusiond {

using reference_internal::Shape;
using reference_internal::View;

int64_t HostTensor::numel() const {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

namespace {

absl::Status CheckInputs(const Graph& g, const std::vector<HostTensor>& inputs) {
  if (inputs.size() != g.inputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the fusion takes ", g.inputs.size(), " inputs, got ", inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = g.value(g.inputs[i]);
    const HostTensor& t = inputs[i];
    const std::string where = absl::StrCat("input ", i, " (", ValueName(g, v.id), ")");
    if (t.dtype != v.dtype) {
      return absl::InvalidArgumentError(absl::StrCat(where, " is ", DataTypeName(v.dtype),
                                                     " but was given ", DataTypeName(t.dtype)));
    }
    for (int64_t e : t.shape) {
      if (e < 0) {
        return absl::InvalidArgumentError(absl::StrCat(where, " was given a negative extent in [",
                                                       absl::StrJoin(t.shape, ", "), "]"));
      }
    }
    double n = 1;
    for (int64_t e : t.shape) n *= static_cast<double>(e);
    if (n != static_cast<double>(t.data.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, " has shape [", absl::StrJoin(t.shape, ", "), "] but ", t.data.size(), " values"));
    }
  }
  return absl::OkStatus();
}

// Output type of node output j.
std::vector<DataType> OutputTypes(const Graph& g, const Node& n) {
  std::vector<DataType> t;
  for (ValueId o : n.outputs) t.push_back(g.value(o).dtype);
  return t;
}

// The results of node n on its operands `in` (output types `types`, the
// first output of shape out_shape).
absl::StatusOr<std::vector<View>> EvalNode(const Node& n, const std::vector<const View*>& in,
                                           const std::vector<DataType>& types,
                                           const Shape& out_shape) {
  std::vector<View> outs;
  switch (CategoryOf(n.op)) {
    case OpCategory::kUnary:
    case OpCategory::kBinary:
    case OpCategory::kTernary:
    case OpCategory::kCast: {
      auto v = reference_internal::EvalPointwise(n, in, types[0], out_shape);
      if (!v.ok()) return v.status();
      outs.push_back(std::move(*v));
      break;
    }
    case OpCategory::kShape: {
      auto v = reference_internal::EvalShapeOp(n, *in[0], out_shape);
      if (!v.ok()) return v.status();
      outs.push_back(std::move(*v));
      break;
    }
    case OpCategory::kReduction:
    case OpCategory::kVarMean: {
      auto v = reference_internal::EvalReduction(n, *in[0], types, out_shape);
      if (!v.ok()) return v.status();
      outs = std::move(*v);
      break;
    }
    case OpCategory::kShift: {
      auto v = reference_internal::EvalShift(n, in, out_shape);
      if (!v.ok()) return v.status();
      outs.push_back(std::move(*v));
      break;
    }
    case OpCategory::kIndexed: {
      auto v = reference_internal::EvalIndexed(n, in, types[0], out_shape);
      if (!v.ok()) return v.status();
      outs.push_back(std::move(*v));
      break;
    }
    case OpCategory::kSize: {
      const int64_t axis = n.attrs.axis < 0 ? n.attrs.axis + in[0]->rank() : n.attrs.axis;
      if (axis < 0 || axis >= in[0]->rank()) {
        return absl::InvalidArgumentError(
            absl::StrCat("node ", n.id, " (size): axis ", axis, " is out of range"));
      }
      outs.push_back(reference_internal::ScalarView(
          RoundTo(types[0], static_cast<double>(in[0]->shape[axis])), types[0]));
      break;
    }
  }
  return outs;
}

}  // namespace

absl::StatusOr<std::vector<HostTensor>> Evaluate(const Graph& g,
                                                 const std::vector<HostTensor>& inputs) {
  return Evaluate(g, inputs, EvaluateOptions{});
}

absl::StatusOr<std::vector<HostTensor>> Evaluate(const Graph& g,
                                                 const std::vector<HostTensor>& inputs,
                                                 const EvaluateOptions& options) {
  if (absl::Status s = VerifyGraph(g); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("reference: the graph is not valid: ", s.message()));
  }
  if (absl::Status s = CheckInputs(g, inputs); !s.ok()) return s;
  std::vector<std::vector<int64_t>> shapes;
  for (const HostTensor& t : inputs) shapes.push_back(t.shape);
  absl::StatusOr<SizeBinding> binding = BindShapes(g, shapes);
  if (!binding.ok()) return binding.status();

  reference_internal::BufferPool pool;
  reference_internal::ScopedBufferPool use_pool(&pool);
  const int nv = static_cast<int>(g.values.size());
  std::vector<std::optional<View>> vals(nv);
  // Last node reading each value; outputs live to the end.
  std::vector<int> last_use(nv, -1);
  for (const Node& n : g.nodes) {
    for (ValueId in : n.inputs) last_use[in] = n.id;
  }
  for (ValueId o : g.outputs) last_use[o] = static_cast<int>(g.nodes.size());

  for (size_t i = 0; i < inputs.size(); ++i) {
    const HostTensor& t = inputs[i];
    View v = reference_internal::NewView(t.shape, t.dtype);
    std::copy(t.data.begin(), t.data.end(), v.buf->data());
    reference_internal::RoundBuffer(t.dtype, v.buf->data(), v.numel());
    vals[g.inputs[i]] = std::move(v);
  }
  for (const Value& v : g.values) {
    if (v.is_constant()) {
      vals[v.id] = reference_internal::ScalarView(RoundTo(v.dtype, *v.constant), v.dtype);
    }
  }

  for (const Node& n : g.nodes) {
    std::vector<const View*> in;
    for (ValueId id : n.inputs) {
      if (!vals[id]) {
        return absl::InternalError(
            absl::StrCat("reference: node ", n.id, " reads a value that is gone"));
      }
      in.push_back(&*vals[id]);
    }
    const Shape out_shape = binding->Shape(g, n.outputs[0]);
    double elements = 1;
    for (int64_t e : out_shape) elements *= static_cast<double>(e);
    if (elements > static_cast<double>(options.max_elements)) {
      return absl::ResourceExhaustedError(
          absl::StrCat("reference: node ", n.id, " (", OpName(n.op), ") would make ", elements,
                       " elements; the limit is ", options.max_elements));
    }
    const std::vector<DataType> types = OutputTypes(g, n);
    auto evaluated = EvalNode(n, in, types, out_shape);
    if (!evaluated.ok()) return evaluated.status();
    std::vector<View> outs = *std::move(evaluated);
    if (outs.size() != n.outputs.size()) {
      return absl::InternalError(
          absl::StrCat("reference: node ", n.id, " made ", outs.size(), " outputs"));
    }
    for (size_t j = 0; j < outs.size(); ++j) {
      outs[j].dtype = types[j];
      // A result nothing reads (e.g. the unused half of var_mean) is
      // dropped at once.
      if (last_use[n.outputs[j]] == -1) {
        pool.Put(std::move(outs[j].buf));
        continue;
      }
      vals[n.outputs[j]] = std::move(outs[j]);
    }
    for (ValueId id : n.inputs) {
      if (last_use[id] != n.id || !vals[id]) continue;
      std::shared_ptr<reference_internal::Buffer> buf = std::move(vals[id]->buf);
      vals[id].reset();
      pool.Put(std::move(buf));
    }
  }

  std::vector<HostTensor> result;
  for (ValueId o : g.outputs) {
    if (!vals[o]) return absl::InternalError("reference: an output was not computed");
    result.push_back(reference_internal::ToHostTensor(*vals[o]));
  }
  return result;
}

}  // namespace fusiond
