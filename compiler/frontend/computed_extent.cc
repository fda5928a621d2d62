// DefinitionLowering::ComputedExtent: sizes computed by scalar arithmetic
// (fd.ops.mul(T0.size(0), T0.size(1)), fd.ops.div(T0.size(1), 32)) used as
// shape entries. The IR's extents are static or one input axis, so such a
// size takes its value from the static sizes or, failing that, from the
// inputs list, and the symbols it reads are bound to that list's sizes: the
// fusion is specialized to them, and other sizes are refused by BindShapes.
#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/frontend/definition.h"
#include "compiler/ir/printer.h"

namespace fusiond {
namespace frontend {
namespace {

constexpr const char* kExpected =
    "an integer, T.size(i), or fd.ops.add / sub / mul / div / minimum / maximum / where / "
    "comparisons of those (with an inputs list when they read symbolic sizes)";

// Integer scalar ops a size may be computed with: arithmetic, and the
// min / max / where / comparisons nvFuser's slice normalization leaves in a
// direct-bindings print (end = max(start, min(extent, stop))).
bool IsSizeArithmetic(OpKind op) {
  switch (op) {
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kDiv:
    case OpKind::kMaximum:
    case OpKind::kMinimum:
    case OpKind::kWhere:
    case OpKind::kLt:
    case OpKind::kLe:
    case OpKind::kGt:
    case OpKind::kGe:
    case OpKind::kEq:
    case OpKind::kNe:
      return true;
    default:
      return false;
  }
}

// One integer scalar op of a size computation into *r; false on overflow or
// a division by zero. div rounds toward zero, as the IR's integer scalar div.
bool SizeOp(OpKind op, int64_t a, int64_t b, int64_t* r) {
  switch (op) {
    case OpKind::kMaximum:
      *r = std::max(a, b);
      return true;
    case OpKind::kMinimum:
      *r = std::min(a, b);
      return true;
    case OpKind::kLt:
      *r = a < b;
      return true;
    case OpKind::kLe:
      *r = a <= b;
      return true;
    case OpKind::kGt:
      *r = a > b;
      return true;
    case OpKind::kGe:
      *r = a >= b;
      return true;
    case OpKind::kEq:
      *r = a == b;
      return true;
    case OpKind::kNe:
      *r = a != b;
      return true;
    case OpKind::kAdd:
      return !__builtin_add_overflow(a, b, r);
    case OpKind::kSub:
      return !__builtin_sub_overflow(a, b, r);
    case OpKind::kMul:
      return !__builtin_mul_overflow(a, b, r);
    default:  // div
      if (b == 0 || (a == INT64_MIN && b == -1)) return false;
      *r = a / b;
      return true;
  }
}

}  // namespace

// The inputs list's size of the input axis a root symbol stands for.
std::optional<int64_t> DefinitionLowering::ConcreteSize(SymbolId root) const {
  for (size_t s = 0; s < g_->symbols.size(); ++s) {
    if (g_->RootSymbol(static_cast<SymbolId>(s)) != root) continue;
    const SizeSymbol& sym = g_->symbols[s];
    auto it = std::find(g_->inputs.begin(), g_->inputs.end(), sym.input);
    const size_t index = static_cast<size_t>(it - g_->inputs.begin());
    if (it == g_->inputs.end() || index >= concrete_.size()) continue;
    const InputSpec& spec = concrete_[index];
    if (spec.generator == "scalar" || sym.axis >= static_cast<int>(spec.shape.size())) continue;
    return spec.shape[sym.axis];
  }
  return std::nullopt;
}

// Printers of static traces (nvFuser's before mid-2023) write a reshape's
// new shape in concrete sizes while the operand's axes are symbolic:
// [s0, s1, s2] -> [8, 12, 512, 512]. The IR relates a reshape's symbols only
// when they appear on both sides or one is split into static factors, so
// when several of x's symbols are missing from the new shape and it has none
// of its own, they are bound to the inputs list's sizes (the fusion is
// specialized to them, as for sizes computed from symbols).
void DefinitionLowering::SpecializeReshapeOperand(ValueId x, const std::vector<Extent>& shape) {
  std::set<SymbolId> in, out;
  for (const Extent& e : g_->value(x).shape) {
    const Extent c = g_->Canonical(e);
    if (!c.is_static()) in.insert(c.symbol);
  }
  for (const Extent& e : shape) {
    const Extent c = g_->Canonical(e);
    if (!c.is_static()) out.insert(c.symbol);
  }
  std::vector<SymbolId> only_in;
  for (SymbolId s : in) {
    if (out.count(s) != 0) continue;
    only_in.push_back(s);
  }
  for (SymbolId s : out) {
    if (in.count(s) == 0) return;  // the builder decides (and explains)
  }
  if (only_in.size() < 2) return;
  std::vector<std::pair<SymbolId, int64_t>> sizes;
  for (SymbolId s : only_in) {
    std::optional<int64_t> n = ConcreteSize(s);
    if (!n) return;
    sizes.push_back({s, *n});
  }
  for (const auto& [s, n] : sizes) g_->UnifyExtents(Extent::Symbolic(s), Extent::Static(n));
}

absl::Status DefinitionLowering::InferReshapeSize(ValueId x, std::vector<Extent>* shape,
                                                  const Expr& at) {
  const std::string kWant =
      "at most one -1 in new_shape, with the operand's sizes static or given by the inputs list";
  int inferred = -1;
  for (size_t i = 0; i < shape->size(); ++i) {
    const Extent& e = (*shape)[i];
    if (e.size != -1 || e.symbol != kNone) continue;
    if (inferred >= 0)
      return errors_.Error(at.loc, "reshape's new_shape has two -1 entries", kWant);
    inferred = static_cast<int>(i);
  }
  if (inferred < 0) return absl::OkStatus();
  // Each extent's value, and the symbols read from the inputs list.
  std::vector<std::pair<SymbolId, int64_t>> bind;
  auto size_of = [&](const Extent& e) -> std::optional<int64_t> {
    const Extent c = g_->Canonical(e);
    if (c.is_static()) return c.size;
    std::optional<int64_t> n = ConcreteSize(c.symbol);
    if (n) bind.push_back({c.symbol, *n});
    return n;
  };
  int64_t numel = 1;
  for (const Extent& e : g_->value(x).shape) {
    std::optional<int64_t> n = size_of(e);
    if (!n) {
      return errors_.Error(at.loc,
                           absl::StrCat("reshape's -1 cannot be inferred: ", ValueName(*g_, x),
                                        " has the symbolic size ", g_->ExtentName(e),
                                        " and no inputs list gives it"),
                           kWant);
    }
    numel *= *n;
  }
  int64_t rest = 1;
  for (size_t i = 0; i < shape->size(); ++i) {
    if (static_cast<int>(i) == inferred) continue;
    std::optional<int64_t> n = size_of((*shape)[i]);
    if (!n) {
      return errors_.Error(at.loc, "reshape's -1 beside a size that is not known", kWant);
    }
    rest *= *n;
  }
  if (rest == 0 || numel % rest != 0) {
    return errors_.Error(at.loc,
                         absl::StrCat("reshape's -1 cannot be inferred: ", numel,
                                      " elements are not a multiple of ", rest),
                         "a new shape with the same number of elements");
  }
  for (const auto& [s, n] : bind) g_->UnifyExtents(Extent::Symbolic(s), Extent::Static(n));
  (*shape)[inferred] = Extent::Static(numel / rest);
  return absl::OkStatus();
}

absl::StatusOr<Extent> DefinitionLowering::ComputedExtent(ValueId v, const Expr& at) {
  // The values v is computed from, gathered without recursion; a node's
  // operands have smaller ids than its results, so ascending ids evaluate
  // operands first.
  std::set<ValueId> needed;
  std::vector<ValueId> stack{v};
  while (!stack.empty()) {
    const ValueId x = stack.back();
    stack.pop_back();
    if (!needed.insert(x).second) continue;
    const Value& val = g_->value(x);
    if (val.is_tensor || !(IsIntegral(val.dtype) || val.dtype == DataType::kBool)) {
      return errors_.Error(at.loc,
                           absl::StrCat(ValueName(*g_, v), " is not a size: it reads ",
                                        ValueName(*g_, x), " (", TypeString(*g_, x), ")"),
                           kExpected);
    }
    if (val.constant) continue;
    const Node* n = g_->def(x);
    if (n == nullptr) {
      return errors_.Error(
          at.loc,
          absl::StrCat(ValueName(*g_, v), " reads the scalar input ", ValueName(*g_, x),
                       ", whose value is known only at run time"),
          kExpected);
    }
    if (n->op == OpKind::kSize) continue;
    if (!IsSizeArithmetic(n->op)) {
      return errors_.Error(
          at.loc, absl::StrCat(ValueName(*g_, v), " is computed with fd.ops.", OpName(n->op)),
          kExpected);
    }
    for (ValueId in : n->inputs) stack.push_back(in);
  }
  auto concrete = [&](SymbolId root) { return ConcreteSize(root); };
  std::map<ValueId, int64_t> value;
  std::map<SymbolId, int64_t> specialized;
  for (ValueId x : needed) {
    const Value& val = g_->value(x);
    if (val.constant) {
      value[x] = static_cast<int64_t>(*val.constant);
      continue;
    }
    const Node& n = *g_->def(x);
    if (n.op == OpKind::kSize) {
      const Extent e = g_->Canonical(g_->value(n.inputs[0]).shape[n.attrs.axis]);
      if (e.is_static()) {
        value[x] = e.size;
        continue;
      }
      std::optional<int64_t> size = concrete(e.symbol);
      if (!size) {
        return errors_.Error(
            at.loc,
            absl::StrCat(ValueName(*g_, v), " is computed from the symbolic size ",
                         g_->ExtentName(e), ", whose value is not known here"),
            "an inputs list giving concrete sizes, or static sizes in define_tensor");
      }
      value[x] = *size;
      specialized[e.symbol] = *size;
      continue;
    }
    if (n.op == OpKind::kWhere) {
      value[x] = value.at(n.inputs[0]) != 0 ? value.at(n.inputs[1]) : value.at(n.inputs[2]);
      continue;
    }
    const int64_t a = value.at(n.inputs[0]), b = value.at(n.inputs[1]);
    int64_t r = 0;
    if (!SizeOp(n.op, a, b, &r)) {
      return errors_.Error(
          at.loc,
          absl::StrCat(ValueName(*g_, v),
                       b == 0 && n.op == OpKind::kDiv ? " divides by zero" : " overflows int64"),
          kExpected);
    }
    value[x] = r;
  }
  const int64_t size = value.at(v);
  if (size < 0) {
    return errors_.Error(at.loc, absl::StrCat(ValueName(*g_, v), " is ", size, ", a negative size"),
                         "a size >= 0");
  }
  for (const auto& [symbol, n] : specialized) {
    g_->UnifyExtents(Extent::Symbolic(symbol), Extent::Static(n));
  }
  return Extent::Static(size);
}

}  // namespace frontend
}  // namespace fusiond
