#include "compiler/ir/ir_proto.h"

#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "compiler/ir/verifier.h"

namespace fusiond {
namespace {

namespace pb = fusiond::v1;

pb::DataType ToPb(DataType t) { return static_cast<pb::DataType>(static_cast<int>(t)); }

absl::StatusOr<DataType> FromPb(int t, const std::string& where) {
  if (t < static_cast<int>(DataType::kBool) || t > static_cast<int>(DataType::kFloat8E5M2)) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": unknown dtype ", t));
  }
  return static_cast<DataType>(t);
}

}  // namespace

pb::FusionGraph ToProto(const Graph& g) {
  pb::FusionGraph p;
  p.set_version(kFusionGraphVersion);
  std::unordered_map<ValueId, int> ref;
  std::unordered_map<ValueId, int> input_index;
  for (ValueId id : g.inputs) {
    const Value& v = g.value(id);
    input_index[id] = static_cast<int>(ref.size());
    ref[id] = static_cast<int>(ref.size());
    pb::Input* in = p.add_inputs();
    in->set_name(v.name);
    in->set_dtype(ToPb(v.dtype));
    in->set_is_tensor(v.is_tensor);
    if (v.cpu_tensor) in->set_cpu_tensor(true);
    // An axis whose symbol an op bound to a static size is written as that
    // size: the ops that bound it may not be in this graph (a segment's).
    for (const Extent& e : v.shape) {
      const Extent c = g.Canonical(e);
      in->add_sizes(c.is_static() ? c.size : -1);
    }
    for (const auto& c : v.contiguity) in->add_contiguity(!c ? -1 : (*c ? 1 : 0));
    for (int64_t s : v.stride_order) in->add_stride_order(s);
  }
  for (const Value& v : g.values) {
    if (!v.is_constant()) continue;
    ref[v.id] = static_cast<int>(ref.size());
    pb::Constant* c = p.add_constants();
    c->set_name(v.name);
    c->set_dtype(ToPb(v.dtype));
    c->set_value(*v.constant);
  }
  // An attribute's extent is written as the input axis it came from, so the
  // reader rebuilds the same links between extents (written as the static
  // size its symbol was bound to, the links were lost and the inputs' other
  // axes stayed symbolic; found by scripts/fuzz.sh); where that axis is
  // bound, the input's size above says so.
  auto extent = [&](Extent e, pb::Extent* out) {
    if (e.is_static()) {
      out->set_static_size(e.size);
    } else {
      const SizeSymbol& s = g.symbols[e.symbol];
      out->mutable_input_axis()->set_input(input_index[s.input]);
      out->mutable_input_axis()->set_axis(s.axis);
    }
  };
  for (const Node& n : g.nodes) {
    pb::Node* pn = p.add_nodes();
    pn->set_op(static_cast<pb::OpKind>(static_cast<int>(n.op)));
    for (ValueId in : n.inputs) pn->add_operands(ref.at(in));
    for (ValueId out : n.outputs) {
      pn->add_output_names(g.value(out).name);
      ref[out] = static_cast<int>(ref.size());
    }
    const Attrs& a = n.attrs;
    for (int64_t d : a.dims) pn->add_dims(d);
    for (int64_t d : a.broadcast_dims) pn->add_broadcast_dims(d);
    for (const Extent& e : a.shape) extent(e, pn->add_shape());
    for (bool b : a.is_broadcast_dim) pn->add_is_broadcast_dim(b);
    pn->set_keepdim(a.keepdim);
    if (a.dtype) pn->set_dtype(ToPb(*a.dtype));
    pn->set_correction(a.correction);
    pn->set_axis(a.axis);
    for (int64_t o : a.offsets) pn->add_offsets(o);
  }
  for (ValueId o : g.outputs) p.add_outputs(ref.at(o));
  return p;
}

absl::StatusOr<Graph> FromProto(const pb::FusionGraph& p, GraphLimits limits) {
  if (p.version() == 0 || p.version() > kFusionGraphVersion) {
    return absl::InvalidArgumentError(absl::StrCat("FusionGraph version ", p.version(),
                                                   " is not supported (this build reads 1..",
                                                   kFusionGraphVersion, ")"));
  }
  if (p.nodes_size() > limits.max_nodes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the graph has ", p.nodes_size(), " nodes; the limit is ", limits.max_nodes));
  }
  Graph g;
  GraphBuilder b(&g, limits);
  std::vector<ValueId> refs;
  for (int i = 0; i < p.inputs_size(); ++i) {
    const pb::Input& in = p.inputs(i);
    std::string where = absl::StrCat("input ", i, " (", in.name(), ")");
    auto dtype = FromPb(in.dtype(), where);
    if (!dtype.ok()) return dtype.status();
    if (!in.is_tensor()) {
      refs.push_back(b.DefineScalarInput(*dtype, in.name()));
      g.value(refs.back()).cpu_tensor = in.cpu_tensor();
      continue;
    }
    if (in.cpu_tensor()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where,
                       " is a tensor with cpu_tensor set; only a scalar input (a 0-dim "
                       "CPU tensor) may set it"));
    }
    std::vector<std::optional<bool>> contiguity;
    for (int a = 0; a < in.contiguity_size(); ++a) {
      const int c = in.contiguity(a);
      if (c < -1 || c > 1) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": contiguity[", a, "] is ", c,
                         "; each is 1 (contiguous), 0 (not contiguous) or -1 (broadcast axis)"));
      }
      contiguity.push_back(c < 0 ? std::nullopt : std::optional<bool>(c > 0));
    }
    auto id = b.DefineTensor(in.name(), *dtype, {in.sizes().begin(), in.sizes().end()}, contiguity,
                             {in.stride_order().begin(), in.stride_order().end()});
    if (!id.ok())
      return absl::InvalidArgumentError(absl::StrCat(where, ": ", id.status().message()));
    refs.push_back(*id);
  }
  for (int i = 0; i < p.constants_size(); ++i) {
    const pb::Constant& c = p.constants(i);
    auto dtype = FromPb(c.dtype(), absl::StrCat("constant ", i));
    if (!dtype.ok()) return dtype.status();
    if (std::string why = ConstantValueProblem(c.value(), *dtype); !why.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("constant ", i, " (", DataTypeName(*dtype), ") is ", c.value(), ": ", why));
    }
    refs.push_back(b.DefineConstant(c.value(), *dtype, c.name()));
  }
  for (int k = 0; k < p.nodes_size(); ++k) {
    const pb::Node& pn = p.nodes(k);
    const OpKind op = static_cast<OpKind>(static_cast<int>(pn.op()));
    auto fail = [&](const std::string& why) {
      return absl::InvalidArgumentError(absl::StrCat("node ", k, " (", OpName(op), "): ", why));
    };
    std::vector<ValueId> operands;
    for (int r : pn.operands()) {
      if (r < 0 || r >= static_cast<int>(refs.size())) {
        return fail(absl::StrCat("operand reference ", r, " is not defined before this node"));
      }
      operands.push_back(refs[r]);
    }
    Attrs a;
    a.dims.assign(pn.dims().begin(), pn.dims().end());
    a.broadcast_dims.assign(pn.broadcast_dims().begin(), pn.broadcast_dims().end());
    for (int i = 0; i < pn.shape_size(); ++i) {
      const pb::Extent& e = pn.shape(i);
      if (e.kind_case() == pb::Extent::KIND_NOT_SET) {
        return fail(absl::StrCat("shape extent ", i,
                                 " sets neither static_size nor input_axis; an extent is one of "
                                 "them"));
      }
      if (e.has_input_axis()) {
        int in = e.input_axis().input(), axis = e.input_axis().axis();
        if (in < 0 || in >= p.inputs_size() || !g.value(refs[in]).is_tensor || axis < 0 ||
            axis >= g.value(refs[in]).rank()) {
          return fail(
              absl::StrCat("shape names axis ", axis, " of input ", in, ", which does not exist"));
        }
        a.shape.push_back(g.value(refs[in]).shape[axis]);
      } else {
        if (e.static_size() < 0)
          return fail(absl::StrCat("shape has negative extent ", e.static_size()));
        a.shape.push_back(Extent::Static(e.static_size()));
      }
    }
    a.is_broadcast_dim.assign(pn.is_broadcast_dim().begin(), pn.is_broadcast_dim().end());
    a.keepdim = pn.keepdim();
    if (pn.dtype() != pb::DATA_TYPE_UNSPECIFIED) {
      auto dtype = FromPb(pn.dtype(), absl::StrCat("node ", k));
      if (!dtype.ok()) return dtype.status();
      a.dtype = *dtype;
    }
    a.correction = pn.correction();
    a.axis = pn.axis();
    a.offsets.assign(pn.offsets().begin(), pn.offsets().end());
    auto outs = b.AddNode(op, operands, a);
    if (!outs.ok()) return fail(std::string(outs.status().message()));
    if (std::string why = StrayAttributes(op, a); !why.empty()) return fail(why);
    for (size_t j = 0; j < outs->size(); ++j) {
      if (static_cast<int>(j) < pn.output_names_size())
        g.value((*outs)[j]).name = pn.output_names(j);
      refs.push_back((*outs)[j]);
    }
  }
  for (int r : p.outputs()) {
    if (r < 0 || r >= static_cast<int>(refs.size())) {
      return absl::InvalidArgumentError(absl::StrCat("output reference ", r, " is not defined"));
    }
    if (absl::Status s = b.AddOutput(refs[r]); !s.ok()) return s;
  }
  if (g.outputs.empty()) return absl::InvalidArgumentError("the fusion has no outputs");
  return g;
}

}  // namespace fusiond
