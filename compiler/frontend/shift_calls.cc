// DefinitionLowering::ShiftOp: nvFuser's ops that read their operands at
// shifted indices, lowered to the IR's slice / pad / cat (static offsets):
//   fd.ops.slice(T, start_indices, end_indices, strides=None,
//                manual_normalization=0)
//   fd.ops.pad(T, pad_widths, value=None)   (pairs from the last axis back)
//   fd.ops.cat(tensors, dim, manual_padding=0)
// A symbolic axis one of them moves takes the inputs list's size for it
// (SpecializeAxis); slice indices may be sizes.
#include <cstdint>
#include <optional>

#include "absl/strings/str_cat.h"
#include "compiler/frontend/definition.h"
#include "compiler/ir/printer.h"

namespace fusiond {
namespace frontend {
namespace {

PyValue Result(ValueId id) {
  PyValue v;
  v.kind = PyValue::Kind::kValue;
  v.id = id;
  return v;
}

}  // namespace

absl::StatusOr<PyValue> DefinitionLowering::ShiftOp(const Expr& call, const Expr& op_name) {
  const std::string& name = op_name.text;
  const std::string fname = absl::StrCat("fd.ops.", name);
  std::vector<std::string> params =
      name == "slice" ? std::vector<std::string>{"arg", "start_indices", "end_indices", "strides",
                                                 "manual_normalization"}
      : name == "pad" ? std::vector<std::string>{"arg", "pad_widths", "value"}
                      : std::vector<std::string>{"tensors", "dim", "manual_padding"};
  auto args = BindArguments(call, fname, params,
                            name == "pad"   ? 2
                            : name == "cat" ? 1
                                            : 3,
                            errors_);
  if (!args.ok()) return args.status();
  const std::vector<const Expr*>& a = *args;
  const char* expect =
      name == "slice" ? "a tensor and integer lists start_indices, end_indices, strides (one "
                        "entry per axis; moved axes static)"
      : name == "pad" ? "a tensor, [low, high] width pairs from the last axis back, a scalar value"
                      : "a list of tensors of one dtype, equal but along dim (static there)";
  std::vector<ValueId> operands;
  Attrs attrs;
  if (name == "cat") {
    auto list = Eval(*a[0]);
    if (!list.ok()) return list.status();
    if (list->kind != PyValue::Kind::kList && list->kind != PyValue::Kind::kTuple) {
      return errors_.Error(a[0]->loc, absl::StrCat("tensors is ", DescribeValue(*g_, *list)),
                           expect);
    }
    for (const PyValue& item : list->items) {
      if (item.kind != PyValue::Kind::kValue || !g_->value(item.id).is_tensor) {
        return errors_.Error(a[0]->loc, absl::StrCat("tensors holds ", DescribeValue(*g_, item)),
                             expect);
      }
      operands.push_back(item.id);
    }
    if (a[1] != nullptr) {
      auto dim = IntArg(*a[1], "dim");
      if (!dim.ok()) return dim.status();
      attrs.axis = *dim;
    }
    for (ValueId t : operands) {
      const int rank = g_->value(t).rank();
      if (attrs.axis >= -rank && attrs.axis < rank) {
        SpecializeAxis(t, static_cast<int>(attrs.axis < 0 ? attrs.axis + rank : attrs.axis));
      }
    }
    if (a[2] != nullptr) {
      auto padding = FlagArg(*a[2], "manual_padding");  // a scheduling hint: read, not used
      if (!padding.ok()) return padding.status();
    }
  } else {
    auto x = Operand(*a[0]);
    if (!x.ok()) return x.status();
    operands.push_back(*x);
    const Value& xv = g_->value(*x);
    if (!xv.is_tensor) {
      return errors_.Error(a[0]->loc, absl::StrCat("arg is ", ValueName(*g_, *x), ", a scalar"),
                           expect);
    }
    const int rank = xv.rank();
    if (name == "slice") {
      auto s = ShiftSliceOffsets(*x, a, expect);
      if (!s.ok()) return s.status();
      attrs.offsets = *s;
    } else {
      auto widths = IntList(*a[1], "pad_widths", false);
      if (!widths.ok()) return widths.status();
      if (widths->size() % 2 != 0 || static_cast<int>(widths->size()) > 2 * rank) {
        return errors_.Error(a[1]->loc,
                             absl::StrCat("pad_widths has ", widths->size(),
                                          " entries; it takes pairs, at most one per axis (",
                                          2 * rank, " for rank ", rank, ")"),
                             expect);
      }
      attrs.offsets.assign(2 * rank, 0);
      for (size_t k = 0; k < widths->size() / 2; ++k) {
        const int axis = rank - 1 - static_cast<int>(k);
        attrs.offsets[2 * axis] = (*widths)[2 * k];
        attrs.offsets[2 * axis + 1] = (*widths)[2 * k + 1];
        if ((*widths)[2 * k] != 0 || (*widths)[2 * k + 1] != 0) SpecializeAxis(*x, axis);
      }
      ValueId value;
      if (a[2] != nullptr) {
        auto v = Operand(*a[2]);
        if (!v.ok()) return v.status();
        value = *v;
      } else {
        value = b_.DefineConstant(0, xv.dtype);
      }
      operands.push_back(value);
    }
  }
  auto outs = b_.AddNode(name == "slice" ? OpKind::kSlice
                         : name == "pad" ? OpKind::kPad
                                         : OpKind::kCat,
                         operands, attrs);
  if (!outs.ok()) return errors_.At(call.loc, outs.status(), expect);
  return Result((*outs)[0]);
}

// Printers of static traces (Thunder's default) write define_tensor with
// symbolic sizes but slice indices, pad widths and cat extents in the
// trace's concrete sizes. An axis such an op moves is bound to the inputs
// list's size for it (the fusion is specialized to it, as for sizes
// computed from symbols); without a list it stays symbolic and the builder
// says what it takes.
void DefinitionLowering::SpecializeAxis(ValueId x, int axis) {
  const Extent e = g_->Canonical(g_->value(x).shape[axis]);
  if (e.is_static()) return;
  if (std::optional<int64_t> n = ConcreteSize(e.symbol)) {
    g_->UnifyExtents(Extent::Symbolic(e.symbol), Extent::Static(*n));
  }
}

// A slice index list: integers, or sizes (T.size(i), fd.ops.size, and
// arithmetic on them: their values, specializing the symbols they read).
absl::StatusOr<std::vector<int64_t>> DefinitionLowering::ShiftIndexList(const Expr& e,
                                                                        const char* what) {
  auto v = Eval(e);
  if (!v.ok()) return v.status();
  if (v->kind != PyValue::Kind::kList && v->kind != PyValue::Kind::kTuple) {
    return IntList(e, what, false);
  }
  std::vector<int64_t> out;
  for (size_t k = 0; k < v->items.size(); ++k) {
    const PyValue& item = v->items[k];
    const Expr& at = e.operands.size() == v->items.size() ? *e.operands[k] : e;
    if (item.kind == PyValue::Kind::kValue && !g_->value(item.id).is_tensor) {
      auto size = ComputedExtent(item.id, at);
      if (!size.ok()) return size.status();
      out.push_back(size->size);
    } else if (item.kind == PyValue::Kind::kInt) {
      out.push_back(item.i);
    } else {
      return errors_.Error(at.loc,
                           absl::StrCat(what, " entry ", k, " is ", DescribeValue(*g_, item)),
                           "an integer or a size");
    }
  }
  return out;
}

// manual_normalization / manual_padding: 0 or 1 (the legacy printer), or
// True / False (nvfuser_direct's printer).
absl::StatusOr<bool> DefinitionLowering::FlagArg(const Expr& e, const char* what) {
  auto v = Eval(e);
  if (!v.ok()) return v.status();
  if (v->kind != PyValue::Kind::kInt && v->kind != PyValue::Kind::kBool) {
    return errors_.Error(e.loc, absl::StrCat(what, " is ", DescribeValue(*g_, *v)),
                         "0, 1, True or False");
  }
  return v->i != 0;
}

// slice's offsets (starts, ends, strides per axis). Unless
// manual_normalization is 1, indices are normalized as Python's slices on
// static axes: a negative index counts from the end, and both clamp to
// [0, extent].
absl::StatusOr<std::vector<int64_t>> DefinitionLowering::ShiftSliceOffsets(
    ValueId x, const std::vector<const Expr*>& a, const char* expect) {
  // Sizes in the index lists add values: x is looked up by id, not held.
  const int rank = g_->value(x).rank();
  std::vector<std::vector<int64_t>> lists;
  const char* names[3] = {"start_indices", "end_indices", "strides"};
  for (int k = 0; k < 3; ++k) {
    std::vector<int64_t> l(rank, 1);
    if (a[k + 1] != nullptr) {
      auto v = ShiftIndexList(*a[k + 1], names[k]);
      if (!v.ok()) return v.status();
      l = *v;
    }
    if (static_cast<int>(l.size()) != rank) {
      return errors_.Error(a[k + 1]->loc,
                           absl::StrCat(names[k], " has ", l.size(), " entries for rank ", rank),
                           expect);
    }
    lists.push_back(l);
  }
  bool normalize = true;
  if (a[4] != nullptr) {
    auto m = FlagArg(*a[4], "manual_normalization");
    if (!m.ok()) return m.status();
    normalize = !*m;
  }
  for (int i = 0; i < rank; ++i) {
    const bool whole = lists[0][i] == 0 && lists[1][i] == INT64_MAX && lists[2][i] == 1;
    if (!whole) SpecializeAxis(x, i);
  }
  std::vector<int64_t> out;
  for (int k = 0; k < 2; ++k) {
    for (int i = 0; i < rank; ++i) {
      int64_t v = lists[k][i];
      const Extent e = g_->Canonical(g_->value(x).shape[i]);
      if (normalize && e.is_static()) {
        if (v < 0) v += e.size;
        v = v < 0 ? 0 : v > e.size ? e.size : v;
      }
      out.push_back(v);
    }
  }
  for (int i = 0; i < rank; ++i) {
    // A start past the clamped end is an empty slice, as in Python.
    if (normalize && out[i] > out[rank + i]) out[i] = out[rank + i];
  }
  out.insert(out.end(), lists[2].begin(), lists[2].end());
  return out;
}

}  // namespace frontend
}  // namespace fusiond
