#include "compiler/ir/printer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fusiond {
namespace {

std::string Shape(const Graph& g, const std::vector<Extent>& shape) {
  std::vector<std::string> parts;
  for (const Extent& e : shape) parts.push_back(g.ExtentName(e));
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

std::string Number(double v) {
  std::string s = absl::StrCat(v);
  return s;
}

std::string AttrString(const Graph& g, const Node& n) {
  const Attrs& a = n.attrs;
  std::vector<std::string> parts;
  switch (CategoryOf(n.op)) {
    case OpCategory::kCast:
      parts.push_back(absl::StrCat("dtype=", DataTypeName(*a.dtype)));
      break;
    case OpCategory::kReduction:
    case OpCategory::kVarMean:
      parts.push_back(absl::StrCat("dims=[", absl::StrJoin(a.dims, ", "), "]"));
      if (a.keepdim) parts.push_back("keepdim=true");
      if (n.op == OpKind::kVar || n.op == OpKind::kVarMean) {
        parts.push_back(absl::StrCat("correction=", a.correction));
      }
      if (a.dtype) parts.push_back(absl::StrCat("dtype=", DataTypeName(*a.dtype)));
      break;
    case OpCategory::kSize:
      parts.push_back(absl::StrCat("axis=", a.axis));
      break;
    case OpCategory::kShift:
      if (n.op == OpKind::kCat) parts.push_back(absl::StrCat("axis=", a.axis));
      if (n.op != OpKind::kCat)
        parts.push_back(absl::StrCat("offsets=[", absl::StrJoin(a.offsets, ", "), "]"));
      break;
    case OpCategory::kIndexed:
      parts.push_back(absl::StrCat("shape=", Shape(g, a.shape)));
      parts.push_back(absl::StrCat("dtype=", DataTypeName(*a.dtype)));
      break;
    case OpCategory::kShape:
      switch (n.op) {
        case OpKind::kBroadcastInDim:
          parts.push_back(absl::StrCat("shape=", Shape(g, a.shape)));
          parts.push_back(
              absl::StrCat("broadcast_dims=[", absl::StrJoin(a.broadcast_dims, ", "), "]"));
          break;
        case OpKind::kBroadcast: {
          std::vector<std::string> b;
          for (bool x : a.is_broadcast_dim) b.push_back(x ? "true" : "false");
          parts.push_back(absl::StrCat("is_broadcast_dim=[", absl::StrJoin(b, ", "), "]"));
          break;
        }
        case OpKind::kExpand:
        case OpKind::kReshape:
          parts.push_back(absl::StrCat("shape=", Shape(g, a.shape)));
          break;
        case OpKind::kSqueeze:
        case OpKind::kPermute:
          parts.push_back(absl::StrCat("dims=[", absl::StrJoin(a.dims, ", "), "]"));
          break;
        default:
          break;
      }
      break;
    default:
      break;
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace

std::string ValueName(const Graph& g, ValueId id) {
  const Value& v = g.value(id);
  return v.name.empty() ? absl::StrCat("%", id) : v.name;
}

std::string TypeString(const Graph& g, ValueId id) {
  const Value& v = g.value(id);
  if (!v.is_tensor) return std::string(DataTypeName(v.dtype));
  return absl::StrCat(DataTypeName(v.dtype), Shape(g, v.shape));
}

std::string NodeString(const Graph& g, const Node& n) {
  std::vector<std::string> outs, args;
  for (ValueId o : n.outputs) outs.push_back(ValueName(g, o));
  for (ValueId i : n.inputs) args.push_back(ValueName(g, i));
  std::string attrs = AttrString(g, n);
  if (!attrs.empty()) args.push_back(attrs);
  std::vector<std::string> types;
  for (ValueId o : n.outputs) types.push_back(TypeString(g, o));
  return absl::StrCat(absl::StrJoin(outs, ", "), " = ", OpName(n.op), "(",
                      absl::StrJoin(args, ", "), ") : ", absl::StrJoin(types, ", "));
}

std::string PrintGraph(const Graph& g) {
  std::string out = "fusion {\n";
  for (ValueId id : g.inputs) {
    const Value& v = g.value(id);
    absl::StrAppend(&out, "  input ", ValueName(g, id), " : ", TypeString(g, id));
    if (!v.contiguity.empty()) {
      std::vector<std::string> c;
      for (const auto& x : v.contiguity) c.push_back(!x ? "none" : (*x ? "true" : "false"));
      absl::StrAppend(&out, " contiguity=[", absl::StrJoin(c, ", "), "]");
    }
    if (!v.stride_order.empty()) {
      absl::StrAppend(&out, " stride_order=[", absl::StrJoin(v.stride_order, ", "), "]");
    }
    absl::StrAppend(&out, "\n");
  }
  for (const Value& v : g.values) {
    if (v.is_constant()) {
      absl::StrAppend(&out, "  const ", ValueName(g, v.id), " : ", DataTypeName(v.dtype), " = ",
                      Number(*v.constant), "\n");
    }
  }
  for (const Node& n : g.nodes) absl::StrAppend(&out, "  ", NodeString(g, n), "\n");
  std::vector<std::string> outs;
  for (ValueId o : g.outputs) outs.push_back(ValueName(g, o));
  absl::StrAppend(&out, "  return ", absl::StrJoin(outs, ", "), "\n}\n");
  return out;
}

}  // namespace fusiond
