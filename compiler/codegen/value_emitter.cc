#include "compiler/codegen/value_emitter.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace fusiond {

std::string ValueEmitter::Declare(ValueId v, Scope& s, const std::string& expr) {
  const char* prefix = s.kind == Scope::kElem ? "e" : s.kind == Scope::kRow ? "rv" : "cv";
  std::string name = absl::StrCat(prefix, v);
  absl::StrAppend(s.out, s.indent, "const ", ComputeTypeName(g_.value(v).dtype), " ",
                  name, " = ", expr, ";\n");
  (*s.memo)[v] = name;
  return name;
}

absl::StatusOr<std::string> ValueEmitter::Scalar(ValueId v, Scope& s) {
  const Value& val = g_.value(v);
  if (val.is_constant()) return Literal(*val.constant, val.dtype);
  const Node* n = g_.def(v);
  if (n == nullptr) {
    if (val.is_tensor) return absl::StrCat("Ty<", static_cast<int>(val.dtype), ">::load(in",
                                           input_index_.at(v), ")");
    return absl::StrCat("((", ComputeTypeName(val.dtype), ")sc", input_index_.at(v), ")");
  }
  if (n->op == OpKind::kSize) {
    const Value& t = g_.value(n->inputs[0]);
    return absl::StrCat("((i64)", p_.ExtentExpr(t.shape[n->attrs.axis]), ")");
  }
  if (IsShapeOp(n->op)) return Get(n->inputs[0], s);
  if (IsReduction(n->op)) {
    auto e = Get(n->inputs[0], s);
    if (!e.ok()) return e.status();
    return Trivial(*n, v, *e);
  }
  if (!IsPointwise(n->op)) {
    return absl::UnimplementedError(absl::StrCat("codegen: ", OpName(n->op),
                                                 " of a value that varies along nothing"));
  }
  std::vector<std::string> ops;
  for (ValueId in : n->inputs) {
    auto e = Get(in, s);
    if (!e.ok()) return e.status();
    ops.push_back(*e);
  }
  return EmitPointwise(g_, *n, ops, opt_);
}

absl::StatusOr<std::string> ValueEmitter::Trivial(const Node& n, ValueId out, const std::string& x) {
  // count: the number of (equal) elements reduced.
  std::string count = "1";
  for (int64_t dim : n.attrs.dims) {
    Extent e = g_.Canonical(g_.value(n.inputs[0]).shape[dim]);
    if (!e.is_static() || e.size != 1) absl::StrAppend(&count, " * (double)(", p_.ExtentExpr(e), ")");
  }
  const DataType rt = g_.value(out).dtype;
  const std::string t = ComputeTypeName(rt);
  const std::string xv = absl::StrCat("((", t, ")", x, ")");
  std::string r;
  switch (n.op) {
    case OpKind::kSum: r = count == "1" ? xv : absl::StrCat("((", t, ")((double)", x, " * ", count, "))"); break;
    case OpKind::kMax: case OpKind::kMin: r = xv; break;
    case OpKind::kProd:
      r = count == "1" ? xv : absl::StrCat("((", t, ")pow((double)", x, ", ", count, "))");
      break;
    case OpKind::kVar: case OpKind::kVarMean:
      if (out == n.outputs.back() && n.op == OpKind::kVarMean) { r = xv; break; }  // the mean
      r = absl::StrCat("((", t, ")((", count, ") > ", n.attrs.correction, " ? 0.0 : (0.0 / 0.0)))");
      break;
    default:
      return absl::UnimplementedError(absl::StrCat("codegen: trivial ", OpName(n.op)));
  }
  return RoundTo(rt, r);
}

absl::StatusOr<std::string> ValueEmitter::Get(ValueId v, Scope& s) {
  if (auto it = s.memo->find(v); it != s.memo->end()) return it->second;
  const Value& val = g_.value(v);
  const Domain d = val.is_tensor ? p_.domain[v] : Domain::kScalar;
  if (d == Domain::kScalar) return Scalar(v, s);
  if (d == Domain::kRow && s.kind != Scope::kRow) {
    if (s.row == nullptr) {
      return absl::InternalError(absl::StrCat("codegen: row value ", v, " outside a row"));
    }
    return Get(v, *s.row);
  }
  if (d == Domain::kCol && s.kind != Scope::kCol) {
    return absl::InternalError(absl::StrCat("codegen: column value ", v, " outside the epilogue"));
  }
  const Node* n = g_.def(v);
  if (n == nullptr) return Declare(v, s, s.load(v));
  if (IsShapeOp(n->op)) {
    auto e = Get(n->inputs[0], s);
    if (e.ok()) (*s.memo)[v] = *e;
    return e;
  }
  if (IsReduction(n->op)) {
    if (std::count(p_.trivial_reds.begin(), p_.trivial_reds.end(), n->id) == 0) {
      return absl::InternalError(absl::StrCat("codegen: reduction ", n->id, " used before it is computed"));
    }
    // A reduction over axes the value does not vary along.
    auto e = Get(n->inputs[0], s);
    if (!e.ok()) return e.status();
    auto x = Trivial(*n, v, *e);
    if (!x.ok()) return x.status();
    return Declare(v, s, *x);
  }
  std::vector<std::string> ops;
  for (ValueId in : n->inputs) {
    auto e = Get(in, s);
    if (!e.ok()) return e.status();
    ops.push_back(*e);
  }
  // Division of elements by a row value: one reciprocal per row, a multiply
  // per element (within 2 ulp; only where every output is 16-bit).
  if (n->op == OpKind::kDiv && opt_.approx_transcendentals && s.kind == Scope::kElem && s.row &&
      val.dtype == DataType::kFloat && g_.value(n->inputs[1]).is_tensor &&
      p_.domain[n->inputs[1]] == Domain::kRow && g_.value(n->inputs[1]).dtype == DataType::kFloat) {
    const std::string inv = absl::StrCat("rinv", n->inputs[1]);
    if (!s.row->memo->count(-1000 - n->inputs[1])) {
      absl::StrAppend(s.row->out, s.row->indent, "const float ", inv, " = 1.0f / ", ops[1], ";\n");
      (*s.row->memo)[-1000 - n->inputs[1]] = inv;
    }
    return Declare(v, s, absl::StrCat("(", ops[0], " * ", inv, ")"));
  }
  auto expr = EmitPointwise(g_, *n, ops, opt_);
  if (!expr.ok()) return expr.status();
  return Declare(v, s, *expr);
}

}  // namespace fusiond
