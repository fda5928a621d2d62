#include "compiler/codegen/value_emitter.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/shift_emitter.h"

namespace fusiond {

std::string ValueEmitter::Declare(ValueId v, Scope& s, const std::string& expr) {
  const char* prefix = s.kind == Scope::kElem ? "e" : s.kind == Scope::kRow ? "rv" : "cv";
  std::string name = absl::StrCat(prefix, v);
  absl::StrAppend(s.out, s.indent, "const ", ComputeTypeName(g_.value(v).dtype), " ", name, " = ",
                  expr, ";\n");
  (*s.memo)[v] = name;
  return name;
}

absl::StatusOr<std::optional<std::string>> ValueEmitter::BeginScalar(ValueId v, Scope* s,
                                                                     Pending* p) {
  const Value& val = g_.value(v);
  if (val.is_constant()) return Literal(*val.constant, val.dtype);
  const Node* n = g_.def(v);
  if (n == nullptr) {
    if (val.is_tensor)
      return absl::StrCat("Ty<", static_cast<int>(val.dtype), ">::load(in", input_index_.at(v),
                          ")");
    return absl::StrCat("((", ComputeTypeName(val.dtype), ")sc", input_index_.at(v), ")");
  }
  if (n->op == OpKind::kSize) {
    const Value& t = g_.value(n->inputs[0]);
    return absl::StrCat("((i64)", p_.ExtentExpr(t.shape[n->attrs.axis]), ")");
  }
  if (IsShift(n->op)) return Shifted(v, *s, true);
  p->v = v;
  p->s = s;
  p->n = n;
  if (IsShapeOp(n->op)) {
    p->step = Pending::kForward;
    p->operands = {n->inputs[0]};
  } else if (IsReduction(n->op)) {
    p->step = Pending::kScalarTrivial;
    p->operands = {n->inputs[0]};
  } else if (IsPointwise(n->op)) {
    p->step = Pending::kScalarPointwise;
    p->operands = n->inputs;
  } else if (IsIndexed(n->op)) {  // every extent 1: element 0
    p->step = Pending::kPointwise;
    p->operands = n->inputs;
  } else {
    return absl::UnimplementedError(
        absl::StrCat("codegen: ", OpName(n->op), " of a value that varies along nothing"));
  }
  return std::nullopt;
}

absl::StatusOr<std::string> ValueEmitter::Shifted(ValueId v, Scope& s, bool scalar) {
  std::string index = "0";
  if (!scalar) {
    if (!s.index) {
      return absl::UnimplementedError(absl::StrCat("codegen: ", OpName(g_.def(v)->op), " (value ",
                                                   v, ") in a scope without indices"));
    }
    index = s.index(v);
  }
  ShiftLanes lanes;
  if (!scalar && s.chunk_index) {
    lanes.first = s.chunk_index(v);
    lanes.width = s.vector_width;
    lanes.aligned = s.aligned_input;
    lanes.chunk = s.chunk;
    lanes.chunk_indent = s.chunk_indent;
  }
  const char* prefix = s.kind == Scope::kElem ? "x" : s.kind == Scope::kRow ? "rx" : "cx";
  auto e = EmitShifted(p_, opt_, input_index_, v, index, &lanes, absl::StrCat(prefix, v), s.out,
                       s.indent, [&](ValueId x) { return Get(x, s); });
  if (!e.ok()) return e.status();
  return Declare(v, s, *e);
}

absl::StatusOr<std::string> ValueEmitter::Trivial(const Node& n, ValueId out,
                                                  const std::string& x) {
  // count: the number of (equal) elements reduced.
  std::string count = "1";
  for (int64_t dim : n.attrs.dims) {
    Extent e = g_.Canonical(g_.value(n.inputs[0]).shape[dim]);
    if (!e.is_static() || e.size != 1)
      absl::StrAppend(&count, " * (double)(", p_.ExtentExpr(e), ")");
  }
  const DataType rt = g_.value(out).dtype;
  const std::string t = ComputeTypeName(rt);
  const std::string xv = absl::StrCat("((", t, ")", x, ")");
  std::string r;
  switch (n.op) {
    case OpKind::kSum:
      r = count == "1" ? xv : absl::StrCat("((", t, ")((double)", x, " * ", count, "))");
      break;
    case OpKind::kMax:
    case OpKind::kMin:
      r = xv;
      break;
    case OpKind::kProd:
      r = count == "1" ? xv : absl::StrCat("((", t, ")pow((double)", x, ", ", count, "))");
      break;
    case OpKind::kVar:
    case OpKind::kVarMean:
      if (out == n.outputs.back() && n.op == OpKind::kVarMean) {
        r = xv;
        break;
      }  // the mean
      r = absl::StrCat("((", t, ")((", count, ") > ", n.attrs.correction, " ? 0.0 : (0.0 / 0.0)))");
      break;
    default:
      return absl::UnimplementedError(absl::StrCat("codegen: trivial ", OpName(n.op)));
  }
  return RoundTo(rt, r);
}

absl::StatusOr<std::optional<std::string>> ValueEmitter::Begin(ValueId v, Scope* s, Pending* p) {
  while (true) {
    if (auto it = s->memo->find(v); it != s->memo->end()) return it->second;
    const Value& val = g_.value(v);
    const Domain d = val.is_tensor ? p_.domain[v] : Domain::kScalar;
    if (d == Domain::kScalar) return BeginScalar(v, s, p);
    if (d == Domain::kRow && s->kind != Scope::kRow) {
      if (s->row == nullptr) {
        return absl::InternalError(absl::StrCat("codegen: row value ", v, " outside a row"));
      }
      s = s->row;  // a row value read from an element: the row scope's
      continue;
    }
    if (d == Domain::kCol && s->kind != Scope::kCol) {
      return absl::InternalError(
          absl::StrCat("codegen: column value ", v, " outside the epilogue"));
    }
    const Node* n = g_.def(v);
    if (n == nullptr) return Declare(v, *s, s->load(v));
    if (IsShift(n->op)) return Shifted(v, *s, false);
    p->v = v;
    p->s = s;
    p->n = n;
    if (IsShapeOp(n->op)) {
      p->step = Pending::kShapeOp;
      p->operands = {n->inputs[0]};
    } else if (IsReduction(n->op)) {
      if (std::count(p_.trivial_reds.begin(), p_.trivial_reds.end(), n->id) == 0) {
        return absl::InternalError(
            absl::StrCat("codegen: reduction ", n->id, " used before it is computed"));
      }
      // A reduction over axes the value does not vary along.
      p->step = Pending::kReduction;
      p->operands = {n->inputs[0]};
    } else {
      p->step = Pending::kPointwise;
      p->operands = n->inputs;
    }
    return std::nullopt;
  }
}

absl::StatusOr<std::string> ValueEmitter::Finish(Pending& p) {
  const Node& n = *p.n;
  Scope& s = *p.s;
  switch (p.step) {
    case Pending::kForward:
      return p.ops[0];
    case Pending::kShapeOp:
      (*s.memo)[p.v] = p.ops[0];
      return p.ops[0];
    case Pending::kScalarTrivial:
    case Pending::kScalarPointwise: {
      auto e = p.step == Pending::kScalarTrivial ? Trivial(n, p.v, p.ops[0])
                                                 : EmitPointwise(g_, n, p.ops, opt_);
      if (!e.ok()) return e.status();
      // Scalars are inlined; the same expression stands for later uses.
      if (e->size() > kMaxInlineScalarChars) return Declare(p.v, s, *e);
      (*s.memo)[p.v] = *e;
      return e;
    }
    case Pending::kReduction: {
      auto x = Trivial(n, p.v, p.ops[0]);
      if (!x.ok()) return x.status();
      return Declare(p.v, s, *x);
    }
    case Pending::kPointwise:
      break;
  }
  const Value& val = g_.value(p.v);
  if (IsIndexed(n.op)) {
    std::string index = "0";
    if (val.is_tensor && p_.domain[p.v] != Domain::kScalar) {
      if (!s.index) {
        return absl::UnimplementedError(absl::StrCat("codegen: ", OpName(n.op), " (node ", n.id,
                                                     ") in a scope without indices"));
      }
      index = s.index(p.v);
    }
    auto e = EmitIndexed(g_, n, p.ops, index);
    if (!e.ok()) return e.status();
    return Declare(p.v, s, *e);
  }
  // Division of elements by a row value: one reciprocal per row, a multiply
  // per element (within 2 ulp; only where every output is 16-bit).
  if (n.op == OpKind::kDiv && opt_.approx_transcendentals && s.kind == Scope::kElem && s.row &&
      val.dtype == DataType::kFloat && g_.value(n.inputs[1]).is_tensor &&
      p_.domain[n.inputs[1]] == Domain::kRow && g_.value(n.inputs[1]).dtype == DataType::kFloat) {
    const std::string inv = absl::StrCat("rinv", n.inputs[1]);
    if (!s.row->memo->count(-1000 - n.inputs[1])) {
      absl::StrAppend(s.row->out, s.row->indent, "const float ", inv, " = 1.0f / ", p.ops[1],
                      ";\n");
      (*s.row->memo)[-1000 - n.inputs[1]] = inv;
    }
    return Declare(p.v, s, absl::StrCat("(", p.ops[0], " * ", inv, ")"));
  }
  auto expr = EmitPointwise(g_, n, p.ops, opt_);
  if (!expr.ok()) return expr.status();
  return Declare(p.v, s, *expr);
}

absl::StatusOr<std::string> ValueEmitter::Get(ValueId v, Scope& s) {
  // Depth-first over the operands, in order, exactly as a recursive walk
  // would emit them; `stack` holds the nodes waiting for an operand.
  std::vector<Pending> stack;
  Scope* scope = &s;
  while (true) {
    Pending p;
    auto begun = Begin(v, scope, &p);
    if (!begun.ok()) return begun.status();
    std::optional<std::string> done = *std::move(begun);
    if (!done) stack.push_back(std::move(p));
    // Hand finished results up until some node needs another operand.
    while (true) {
      if (done) {
        if (stack.empty()) return *std::move(done);
        stack.back().ops.push_back(*std::move(done));
        done.reset();
      }
      Pending& top = stack.back();
      if (top.ops.size() < top.operands.size()) {
        v = top.operands[top.ops.size()];
        scope = top.s;
        break;
      }
      auto r = Finish(top);
      if (!r.ok()) return r.status();
      stack.pop_back();
      done = *std::move(r);
    }
  }
}

}  // namespace fusiond
