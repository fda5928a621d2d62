#include "compiler/ir/verifier.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/ir/builder.h"
#include "compiler/ir/printer.h"

namespace fusiond {
namespace {

absl::Status NodeError(const Graph& g, const Node& n, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("node ", n.id, " (", OpName(n.op), "): ", why));
}

// Attributes by name, as the wire form and the front end call them.
enum AttrBit : unsigned {
  kDims = 1,
  kBroadcastDims = 2,
  kShape = 4,
  kIsBroadcastDim = 8,
  kKeepdim = 16,
  kDtype = 32,
  kCorrection = 64,
  kAxis = 128,
  kOffsets = 256,
  kAll = 511,
};
constexpr std::pair<AttrBit, const char*> kAttrNames[] = {
    {kDims, "dims"},
    {kBroadcastDims, "broadcast_dims"},
    {kShape, "shape"},
    {kIsBroadcastDim, "is_broadcast_dim"},
    {kKeepdim, "keepdim"},
    {kDtype, "dtype"},
    {kCorrection, "correction"},
    {kAxis, "axis"},
    {kOffsets, "offsets"},
};

// The attributes op reads (GraphBuilder::AddNode); kAll for ops not listed.
unsigned AttrsRead(OpKind op) {
  switch (op) {
    case OpKind::kCast:
      return kDtype;
    case OpKind::kSize:
      return kAxis;
    case OpKind::kSum:
    case OpKind::kMax:
    case OpKind::kMin:
    case OpKind::kProd:
      return kDims | kKeepdim | kDtype;
    case OpKind::kVar:
    case OpKind::kVarMean:
      return kDims | kKeepdim | kDtype | kCorrection;
    case OpKind::kBroadcastInDim:
      return kShape | kBroadcastDims;
    case OpKind::kBroadcast:
      return kIsBroadcastDim;
    case OpKind::kExpand:
    case OpKind::kReshape:
      return kShape;
    case OpKind::kSqueeze:
    case OpKind::kPermute:
      return kDims;
    case OpKind::kUniform:
    case OpKind::kNormal:
    case OpKind::kIota:
      return kShape | kDtype;
    case OpKind::kSlice:
    case OpKind::kPad:
      return kOffsets;
    case OpKind::kCat:
      return kAxis;
    default:
      break;
  }
  switch (CategoryOf(op)) {
    case OpCategory::kUnary:
    case OpCategory::kBinary:
    case OpCategory::kTernary:
      return 0;
    default:
      return kAll;
  }
}

unsigned AttrsSet(const Attrs& a) {
  unsigned set = 0;
  if (!a.dims.empty()) set |= kDims;
  if (!a.broadcast_dims.empty()) set |= kBroadcastDims;
  if (!a.shape.empty()) set |= kShape;
  if (!a.is_broadcast_dim.empty()) set |= kIsBroadcastDim;
  if (a.keepdim) set |= kKeepdim;
  if (a.dtype) set |= kDtype;
  if (a.correction != 0) set |= kCorrection;
  if (a.axis != 0) set |= kAxis;
  if (!a.offsets.empty()) set |= kOffsets;
  return set;
}

std::string AttrList(unsigned bits) {
  std::string out;
  for (const auto& [bit, name] : kAttrNames) {
    if (bits & bit) absl::StrAppend(&out, out.empty() ? "" : ", ", name);
  }
  return out.empty() ? "none" : out;
}

// cpu_tensor (a 0-dim CPU tensor read at launch) marks scalar inputs only.
absl::Status CheckCpuTensorFlags(const Graph& g) {
  for (const Value& v : g.values) {
    if (v.cpu_tensor && (v.is_tensor || !g.IsInput(v.id))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "value ", ValueName(g, v.id), " is marked a CPU tensor but is not a scalar input"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string StrayAttributes(OpKind op, const Attrs& attrs) {
  const unsigned reads = AttrsRead(op);
  const unsigned stray = AttrsSet(attrs) & ~reads;
  if (stray == 0) return "";
  return absl::StrCat("sets ", AttrList(stray), ", which ", OpName(op), " does not read (it reads ",
                      AttrList(reads), ")");
}

absl::Status VerifyGraph(const Graph& g) {
  const int nv = static_cast<int>(g.values.size());
  for (int i = 0; i < nv; ++i) {
    if (g.values[i].id != i) {
      return absl::InvalidArgumentError(
          absl::StrCat("value at index ", i, " has id ", g.values[i].id));
    }
    NodeId d = g.values[i].def;
    if (d != kNone && (d < 0 || d >= static_cast<int>(g.nodes.size()))) {
      return absl::InvalidArgumentError(
          absl::StrCat("value ", ValueName(g, i), " names a missing node ", d));
    }
  }
  for (SymbolId s = 0; s < static_cast<SymbolId>(g.symbols.size()); ++s) {
    const SizeSymbol& sym = g.symbols[s];
    if (sym.input < 0 || sym.input >= nv || sym.parent < kNone ||
        sym.parent >= static_cast<SymbolId>(g.symbols.size())) {
      return absl::InvalidArgumentError(absl::StrCat("size symbol ", s, " is malformed"));
    }
  }
  // Union-find links must end at a root (a cycle would hang every lookup):
  // each chain is walked once, 1 marking the chain being walked.
  std::vector<char> state(g.symbols.size(), 0);
  for (SymbolId s = 0; s < static_cast<SymbolId>(g.symbols.size()); ++s) {
    SymbolId x = s;
    while (x != kNone && state[x] == 0) {
      state[x] = 1;
      x = g.symbols[x].parent;
    }
    if (x != kNone && state[x] == 1) {
      return absl::InvalidArgumentError(absl::StrCat("size symbol ", x, " is its own ancestor"));
    }
    for (x = s; x != kNone && state[x] == 1; x = g.symbols[x].parent) state[x] = 2;
  }
  if (absl::Status s = CheckCpuTensorFlags(g); !s.ok()) return s;
  std::vector<char> defined(nv, 0);
  for (ValueId in : g.inputs) {
    if (in < 0 || in >= nv)
      return absl::InvalidArgumentError(absl::StrCat("input %", in, " is not a value"));
    if (g.values[in].def != kNone) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", ValueName(g, in), " is also defined by a node"));
    }
    defined[in] = 1;
  }
  for (const Value& v : g.values) {
    if (v.is_constant()) {
      if (v.def != kNone)
        return absl::InvalidArgumentError(
            absl::StrCat("constant ", ValueName(g, v.id), " has a defining node"));
      if (std::string why = ConstantValueProblem(*v.constant, v.dtype); !why.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("constant ", ValueName(g, v.id), " (",
                                                       DataTypeName(v.dtype), ") is ", *v.constant,
                                                       ": ", why));
      }
      defined[v.id] = 1;
    }
  }

  // Replay every node through the builder into a scratch graph that shares
  // the value table, and compare what it infers with what the graph says.
  Graph scratch;
  scratch.values = g.values;
  scratch.symbols = g.symbols;
  GraphBuilder builder(&scratch);
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& n = g.nodes[k];
    if (n.id != static_cast<NodeId>(k)) {
      return absl::InvalidArgumentError(absl::StrCat("node at index ", k, " has id ", n.id));
    }
    for (ValueId in : n.inputs) {
      if (in < 0 || in >= nv)
        return NodeError(g, n, absl::StrCat("reads %", in, ", which does not exist"));
      if (!defined[in]) {
        return NodeError(g, n, absl::StrCat("reads ", ValueName(g, in), " before it is defined"));
      }
    }
    if (std::string why = StrayAttributes(n.op, n.attrs); !why.empty()) return NodeError(g, n, why);
    auto outs = builder.AddNode(n.op, n.inputs, n.attrs);
    if (!outs.ok()) return NodeError(g, n, std::string(outs.status().message()));
    if (outs->size() != n.outputs.size()) {
      return NodeError(g, n,
                       absl::StrCat("has ", n.outputs.size(), " outputs, expected ", outs->size()));
    }
    for (size_t j = 0; j < n.outputs.size(); ++j) {
      ValueId o = n.outputs[j];
      if (o < 0 || o >= nv)
        return NodeError(g, n, absl::StrCat("writes %", o, ", which does not exist"));
      if (defined[o]) return NodeError(g, n, absl::StrCat("redefines ", ValueName(g, o)));
      if (g.values[o].def != n.id)
        return NodeError(
            g, n, absl::StrCat(ValueName(g, o), " does not name this node as its definition"));
      const Value& want = scratch.value((*outs)[j]);
      const Value& have = g.value(o);
      bool same = want.is_tensor == have.is_tensor && want.dtype == have.dtype &&
                  want.shape.size() == have.shape.size();
      for (size_t a = 0; same && a < want.shape.size(); ++a) {
        same = scratch.SameExtent(want.shape[a], have.shape[a]);
      }
      if (!same) {
        return NodeError(
            g, n,
            absl::StrCat(ValueName(g, o), " is ", TypeString(g, o), " but its operands make it ",
                         TypeString(scratch, (*outs)[j])));
      }
      defined[o] = 1;
    }
  }
  for (ValueId o : g.outputs) {
    if (o < 0 || o >= nv || !defined[o]) {
      return absl::InvalidArgumentError(absl::StrCat("output %", o, " is not defined"));
    }
    if (!g.values[o].is_tensor) {
      return absl::InvalidArgumentError(absl::StrCat("output ", ValueName(g, o), " is a scalar"));
    }
  }
  if (g.outputs.empty()) return absl::InvalidArgumentError("the fusion has no outputs");
  return absl::OkStatus();
}

}  // namespace fusiond
