// DefinitionLowering: fd.define_* / fd.add_output and fd.ops.<op> calls.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/frontend/definition.h"
#include "compiler/ir/printer.h"

namespace fusiond {
namespace frontend {
namespace {

using K = PyValue::Kind;

// What a valid call of op looks like, for the "; expected" part of errors.
const char* OpRules(OpKind op) {
  switch (op) {
    case OpKind::kBroadcastInDim:
      return "broadcast_dims mapping each operand axis, in increasing order, to an output "
             "axis of the same extent (or an operand extent of 1)";
    case OpKind::kBroadcast:
      return "one False per operand axis in is_broadcast_dim";
    case OpKind::kExpand:
      return "a shape of the operand's rank that only grows extent-1 axes";
    case OpKind::kReshape:
      return "a new shape with the same number of elements";
    case OpKind::kSqueeze:
      return "dims naming axes of extent 1";
    case OpKind::kPermute:
      return "dims holding a permutation of the operand's axes";
    case OpKind::kCast:
      return "a tensor or scalar operand and a dtype";
    default:
      break;
  }
  switch (CategoryOf(op)) {
    case OpCategory::kBinary:
    case OpCategory::kTernary:
      return "operands of equal rank (or scalars) whose extents match or are 1";
    case OpCategory::kReduction:
    case OpCategory::kVarMean:
      return "a tensor operand and distinct dims within its rank";
    default:
      return "operands of a type and shape this op accepts";
  }
}

// The parameter names of fd.ops.<op> and how many of them a call must pass.
void OpParameters(OpKind op, std::vector<std::string>* params, size_t* required) {
  *required = 1;
  switch (CategoryOf(op)) {
    case OpCategory::kUnary:
      *params = {"x"};
      break;
    case OpCategory::kBinary:
      *params = {"lhs", "rhs"};
      *required = 2;
      break;
    case OpCategory::kTernary:
      *params = op == OpKind::kClamp ? std::vector<std::string>{"x", "min", "max"}
                                     : std::vector<std::string>{"pred", "lhs", "rhs"};
      *required = 3;
      break;
    case OpCategory::kCast:
      *params = {"x", "dtype"};
      *required = 2;
      break;
    case OpCategory::kSize:
      *params = {"x", "dim"};
      *required = 2;
      break;
    case OpCategory::kReduction:
    case OpCategory::kVarMean:
      if (op == OpKind::kVar || op == OpKind::kVarMean) {
        *params = {"x", "dims", "correction", "keepdim"};
      } else {
        *params = {"x", "dims", "keepdim", "dtype"};
      }
      *required = 2;
      break;
    case OpCategory::kShape:
      *required = 2;
      switch (op) {
        case OpKind::kBroadcastInDim:
          *params = {"x", "shape", "broadcast_dims"};
          *required = 3;
          break;
        case OpKind::kBroadcast:
          *params = {"x", "is_broadcast_dim"};
          break;
        case OpKind::kExpand:
          *params = {"x", "shape"};
          break;
        case OpKind::kReshape:
          *params = {"x", "new_shape"};
          break;
        case OpKind::kSqueeze:  // squeeze_expanded: accepted, extents must be 1 here
          *params = {"x", "dims", "squeeze_expanded"};
          break;
        default:
          *params = {"x", "dims"};
          break;  // permute
      }
      break;
    case OpCategory::kIndexed:  // handled by FactoryOp
    case OpCategory::kShift:
      break;
  }
}

}  // namespace

absl::StatusOr<PyValue> DefinitionLowering::DefineTensorCall(const Expr& call) {
  NoteDefinition(call.loc);
  auto args = BindArguments(call, "define_tensor",
                            {"shape", "contiguity", "dtype", "is_cpu", "stride_order"}, 1, errors_);
  if (!args.ok()) return args.status();
  auto sizes = IntList(*(*args)[0], "shape", false);
  if (!sizes.ok()) return sizes.status();
  std::vector<std::optional<bool>> contiguity;
  if (const Expr* c = (*args)[1]) {
    auto v = Eval(*c);
    if (!v.ok()) return v.status();
    if (v->kind == K::kBool || v->kind == K::kNone) {
      std::optional<bool> one;
      if (v->kind == K::kBool) one = v->i != 0;
      contiguity.assign(sizes->size(), one);
    } else if (v->kind == K::kList || v->kind == K::kTuple) {
      for (size_t k = 0; k < v->items.size(); ++k) {
        const PyValue& item = v->items[k];
        if (item.kind == K::kNone) {
          contiguity.push_back(std::nullopt);
        } else if (item.kind == K::kBool) {
          contiguity.push_back(item.i != 0);
        } else {
          const Expr& at = c->operands.size() == v->items.size() ? *c->operands[k] : *c;
          return errors_.Error(
              at.loc, absl::StrCat("contiguity entry ", k, " is ", DescribeValue(*g_, item)),
              "True, False or None");
        }
      }
    } else {
      return errors_.Error(c->loc, absl::StrCat("contiguity is ", DescribeValue(*g_, *v)),
                           "a list of True/False/None");
    }
  }
  DataType dtype = DataType::kFloat;
  if (const Expr* d = (*args)[2]) {
    auto t = DTypeArg(*d, false);
    if (!t.ok()) return t.status();
    dtype = **t;
  }
  bool is_cpu = false;
  if (const Expr* cpu = (*args)[3]) {
    auto flag = BoolArg(*cpu, "is_cpu");
    if (!flag.ok()) return flag.status();
    is_cpu = *flag;
  }
  std::vector<int64_t> stride_order;
  if (const Expr* s = (*args)[4]) {
    auto order = IntList(*s, "stride_order", false);
    if (!order.ok()) return order.status();
    stride_order = *order;
  }
  if (is_cpu) {
    // A 0-dim CPU tensor is a scalar the runtime reads at launch (as nvFuser
    // passes it by value); larger CPU tensors would need a copy to the GPU.
    if (!sizes->empty()) {
      return errors_.Error(
          (*args)[3]->loc,
          absl::StrCat("input ", g_->inputs.size(), " is a CPU tensor (is_cpu=True) of rank ",
                       sizes->size(), "; only 0-dim CPU tensors (scalars) are supported"),
          "shape=[] with is_cpu=True, or is_cpu=False");
    }
    const ValueId id = b_.DefineScalarInput(dtype);
    g_->value(id).cpu_tensor = true;
    return ValueOf(id);
  }
  auto id = b_.DefineTensor("", dtype, *sizes, contiguity, stride_order);
  if (!id.ok()) return errors_.At(call.loc, id.status());
  return ValueOf(*id);
}

absl::StatusOr<PyValue> DefinitionLowering::DefineScalarCall(const Expr& call) {
  NoteDefinition(call.loc);
  auto args = BindArguments(call, "define_scalar", {"value", "dtype"}, 0, errors_);
  if (!args.ok()) return args.status();
  PyValue value;
  if (const Expr* e = (*args)[0]) {
    auto v = Eval(*e);
    if (!v.ok()) return v.status();
    value = *v;
    if (!value.is_number() && value.kind != K::kNone) {
      return errors_.Error(e->loc,
                           absl::StrCat("define_scalar value is ", DescribeValue(*g_, value)),
                           "a number, True/False, or None for a scalar input");
    }
  }
  std::optional<DataType> dtype;
  if (const Expr* d = (*args)[1]) {
    auto t = DTypeArg(*d, false);
    if (!t.ok()) return t.status();
    dtype = *t;
  }
  if (value.kind == K::kNone)
    return ValueOf(b_.DefineScalarInput(dtype.value_or(DataType::kDouble)));
  const DataType t = dtype.value_or(value.kind == K::kFloat  ? DataType::kDouble
                                    : value.kind == K::kBool ? DataType::kBool
                                                             : DataType::kInt64);
  const double x = value.number();
  const Expr& at = *(*args)[0];
  if (IsIntegral(t) && (value.kind == K::kFloat && x != std::floor(x))) {
    return errors_.Error(at.loc,
                         absl::StrCat("define_scalar value ", x,
                                      " is not an integer but the dtype is ", DataTypeName(t)),
                         "an integer value or a floating dtype");
  }
  if (t == DataType::kBool && x != 0 && x != 1) {
    return errors_.Error(at.loc, absl::StrCat("define_scalar value ", x, " is not a bool"),
                         "True or False for DataType.Bool");
  }
  if (std::string why = ConstantValueProblem(x, t); !why.empty()) {
    return errors_.Error(
        at.loc, absl::StrCat("define_scalar value ", x, " for ", DataTypeName(t), ": ", why),
        "an integer within the int64 range or a floating dtype");
  }
  PyValue c;
  c.kind = K::kValue;
  c.id = b_.DefineConstant(x, t, "");
  return c;
}

absl::StatusOr<PyValue> DefinitionLowering::DefineVectorCall(const Expr& call) {
  NoteDefinition(call.loc);
  auto args = BindArguments(call, "define_vector", {"values", "dtype"}, 1, errors_);
  if (!args.ok()) return args.status();
  if (const Expr* d = (*args)[1]) {
    auto t = DTypeArg(*d, false);
    if (!t.ok()) return t.status();
    if (!IsIntegral(**t)) {
      return errors_.Error(d->loc, absl::StrCat("define_vector dtype is ", DataTypeName(**t)),
                           "DataType.Int");
    }
  }
  auto v = Eval(*(*args)[0]);
  if (!v.ok()) return v.status();
  if (v->kind != K::kList && v->kind != K::kTuple) {
    return errors_.Error((*args)[0]->loc,
                         absl::StrCat("define_vector values is ", DescribeValue(*g_, *v)),
                         "a list of sizes such as [T0.size(0), 1]");
  }
  auto shape = ShapeArg(*(*args)[0], false);
  if (!shape.ok()) return shape.status();
  PyValue out;
  out.kind = K::kExtents;
  out.extents = *shape;
  return out;
}

absl::StatusOr<PyValue> DefinitionLowering::AddOutputCall(const Expr& call) {
  auto args =
      BindArguments(call, "add_output", {"output", "alias_input", "stride_order"}, 1, errors_);
  if (!args.ok()) return args.status();
  if ((*args)[1] != nullptr) {
    return errors_.Error((*args)[1]->loc, "aliased outputs (alias_input) are not supported",
                         "fd.add_output(T)");
  }
  // nvFuser's printer writes the layout of permuted outputs; the values are
  // the same, and outputs here are contiguous.
  std::optional<std::vector<int64_t>> stride_order;
  if (const Expr* s = (*args)[2]) {
    auto order = IntList(*s, "stride_order", false);
    if (!order.ok()) return order.status();
    stride_order = *order;
  }
  const Expr& e = *(*args)[0];
  auto v = Eval(e);
  if (!v.ok()) return v.status();
  if (v->kind != K::kValue) {
    return errors_.Error(e.loc, absl::StrCat("add_output of ", DescribeValue(*g_, *v)),
                         "a tensor defined in the fusion");
  }
  if (!g_->value(v->id).is_tensor) {
    return errors_.Error(
        e.loc, absl::StrCat("add_output of ", DescribeValue(*g_, *v), ": outputs must be tensors"),
        "a tensor defined in the fusion");
  }
  if (stride_order && !IsPermutation(*stride_order, g_->value(v->id).rank())) {
    return errors_.Error((*args)[2]->loc, "stride_order is not a permutation of the axes",
                         "each axis of the output once");
  }
  if (absl::Status s = b_.AddOutput(v->id); !s.ok()) return errors_.At(call.loc, s);
  return PyValue{};
}

absl::StatusOr<PyValue> DefinitionLowering::FdMethod(const Expr& call, const std::string& method) {
  if (method == "define_tensor") return DefineTensorCall(call);
  // define_constant: define_scalar's name before nvFuser's 2023 rename.
  if (method == "define_scalar" || method == "define_constant") return DefineScalarCall(call);
  if (method == "define_vector") return DefineVectorCall(call);
  if (method == "add_output") return AddOutputCall(call);
  if (method == "execute") return PyValue{};  // `fd.execute(inputs)`: nothing to build
  return errors_.Error(
      call.callee().loc, absl::StrCat("unknown FusionDefinition method '", method, "'"),
      "define_tensor, define_scalar, define_vector, add_output, execute or ops.<op>");
}

absl::Status DefinitionLowering::ReductionAttrs(OpKind op, const std::vector<const Expr*>& a,
                                                Attrs* attrs) {
  auto dims = IntList(*a[1], "dims", true);
  if (!dims.ok()) return dims.status();
  attrs->dims = *dims;
  if (op == OpKind::kVar || op == OpKind::kVarMean) {
    attrs->correction = 1;  // PyTorch's default
    if (a[2]) {
      auto c = IntArg(*a[2], "correction");
      if (!c.ok()) return c.status();
      attrs->correction = *c;
    }
    if (a[3]) {
      auto k = BoolArg(*a[3], "keepdim");
      if (!k.ok()) return k.status();
      attrs->keepdim = *k;
    }
  } else {
    if (a[2]) {
      auto k = BoolArg(*a[2], "keepdim");
      if (!k.ok()) return k.status();
      attrs->keepdim = *k;
    }
    if (a[3]) {
      auto t = DTypeArg(*a[3], true);
      if (!t.ok()) return t.status();
      attrs->dtype = *t;
    }
  }
  return absl::OkStatus();
}

absl::Status DefinitionLowering::ShapeAttrs(OpKind op, const std::vector<const Expr*>& a,
                                            Attrs* attrs) {
  switch (op) {
    case OpKind::kBroadcastInDim: {
      auto shape = ShapeArg(*a[1], false);
      if (!shape.ok()) return shape.status();
      attrs->shape = *shape;
      auto bd = IntList(*a[2], "broadcast_dims", false);
      if (!bd.ok()) return bd.status();
      attrs->broadcast_dims = *bd;
      break;
    }
    case OpKind::kBroadcast: {
      auto v = Eval(*a[1]);
      if (!v.ok()) return v.status();
      if (v->kind != K::kList && v->kind != K::kTuple) {
        return errors_.Error(a[1]->loc,
                             absl::StrCat("is_broadcast_dim is ", DescribeValue(*g_, *v)),
                             "a list of True/False");
      }
      for (const PyValue& item : v->items) {
        if (item.kind != K::kBool) {
          return errors_.Error(a[1]->loc,
                               absl::StrCat("is_broadcast_dim holds ", DescribeValue(*g_, item)),
                               "True or False entries");
        }
        attrs->is_broadcast_dim.push_back(item.i != 0);
      }
      break;
    }
    case OpKind::kExpand:
    case OpKind::kReshape: {
      // -1: expand keeps the axis; reshape infers it (InferReshapeSize).
      auto shape = ShapeArg(*a[1], true);
      if (!shape.ok()) return shape.status();
      attrs->shape = *shape;
      break;
    }
    default: {
      auto dims = IntList(*a[1], "dims", op == OpKind::kSqueeze);
      if (!dims.ok()) return dims.status();
      attrs->dims = *dims;
      if (op == OpKind::kSqueeze && a[2] != nullptr) {
        auto expanded = BoolArg(*a[2], "squeeze_expanded");
        if (!expanded.ok()) return expanded.status();
      }
      break;
    }
  }
  return absl::OkStatus();
}

// nvFuser's front end before its mid-2023 change took reshape(arg,
// original_shape, new_shape) and squeeze(arg, original_shape, dims), and
// repro scripts of that time print original_shape= (or three positional
// arguments for reshape).
bool DefinitionLowering::IsLegacyShapeCall(OpKind op, const Expr& call) const {
  if (op != OpKind::kReshape && op != OpKind::kSqueeze) return false;
  for (const Keyword& k : call.keywords) {
    if (k.name == "original_shape") return true;
  }
  return op == OpKind::kReshape && call.num_args() == 3;
}

// original_shape must be x's shape: its rank, and each static extent.
absl::Status DefinitionLowering::CheckOriginalShape(const std::string& fname, const Expr& x,
                                                    const Expr& original) {
  auto v = Operand(x);
  if (!v.ok()) return v.status();
  auto sizes = IntList(original, "original_shape", false);
  if (!sizes.ok()) return sizes.status();
  const Value& xv = g_->value(*v);
  bool same = xv.is_tensor && sizes->size() == xv.shape.size();
  for (size_t i = 0; same && i < sizes->size(); ++i) {
    const Extent e = g_->Canonical(xv.shape[i]);
    same = (*sizes)[i] >= 0 && (!e.is_static() || e.size == (*sizes)[i]);
  }
  if (same) return absl::OkStatus();
  return errors_.Error(original.loc,
                       absl::StrCat(fname, "'s original_shape [", absl::StrJoin(*sizes, ", "),
                                    "] is not the shape of ", DescribeValue(*g_, ValueOf(*v))),
                       "the operand's shape (its rank and every static extent)");
}

absl::StatusOr<PyValue> DefinitionLowering::OpCall(const Expr& call, const Expr& op_name) {
  NoteDefinition(call.loc);
  if (auto factory = FactoryOp(call, op_name)) return *std::move(factory);
  std::optional<OpKind> op = ParseOpName(op_name.text);
  if (!op) {
    return errors_.Error(op_name.loc, absl::StrCat("unknown op fd.ops.", op_name.text),
                         "an op of the fusion IR such as add, mul, exp, cast, broadcast_in_dim, "
                         "sum, var_mean (see compiler/ir/op.h)");
  }
  const std::string fname = absl::StrCat("fd.ops.", op_name.text);
  const OpCategory cat = CategoryOf(*op);
  if (cat == OpCategory::kIndexed || cat == OpCategory::kShift) {  // handled by FactoryOp
    return absl::InternalError(absl::StrCat(fname, " reached OpCall"));
  }
  std::vector<std::string> params;
  size_t required = 1;
  const bool legacy = IsLegacyShapeCall(*op, call);
  if (legacy) {
    params = {"x", "original_shape", *op == OpKind::kReshape ? "new_shape" : "dims"};
    required = 3;
  } else {
    OpParameters(*op, &params, &required);
  }
  auto args = BindArguments(call, fname, params, required, errors_);
  if (!args.ok()) return args.status();
  if (legacy) {
    if (absl::Status st = CheckOriginalShape(fname, *(*args)[0], *(*args)[1]); !st.ok()) return st;
    args->erase(args->begin() + 1);
    args->push_back(nullptr);  // squeeze_expanded: not in the old spelling
  }
  const std::vector<const Expr*>& a = *args;

  if (cat == OpCategory::kSize) {
    auto x = Eval(*a[0]);
    if (!x.ok()) return x;
    if (x->kind != K::kValue || !g_->value(x->id).is_tensor) {
      return errors_.Error(a[0]->loc, absl::StrCat("size of ", DescribeValue(*g_, *x)), "a tensor");
    }
    return SizeOf(call, x->id, a[1]);
  }

  std::vector<ValueId> operands;
  const size_t num_operands = cat == OpCategory::kBinary ? 2 : cat == OpCategory::kTernary ? 3 : 1;
  for (size_t k = 0; k < num_operands; ++k) {
    auto v = Operand(*a[k]);
    if (!v.ok()) return v.status();
    operands.push_back(*v);
  }
  Attrs attrs;
  if (cat == OpCategory::kCast) {
    auto t = DTypeArg(*a[1], false);
    if (!t.ok()) return t.status();
    attrs.dtype = *t;
  } else if (cat == OpCategory::kReduction || cat == OpCategory::kVarMean) {
    if (absl::Status st = ReductionAttrs(*op, a, &attrs); !st.ok()) return st;
  } else if (cat == OpCategory::kShape) {
    if (absl::Status st = ShapeAttrs(*op, a, &attrs); !st.ok()) return st;
  }
  if (*op == OpKind::kReshape) {
    if (absl::Status st = InferReshapeSize(operands[0], &attrs.shape, *a[1]); !st.ok()) return st;
    SpecializeReshapeOperand(operands[0], attrs.shape);
  }
  auto outs = b_.AddNode(*op, operands, attrs);
  if (!outs.ok()) return errors_.At(call.loc, outs.status(), OpRules(*op));
  if (outs->size() == 1) return ValueOf((*outs)[0]);
  PyValue tuple;
  tuple.kind = K::kTuple;
  for (ValueId id : *outs) tuple.items.push_back(ValueOf(id));
  return tuple;
}

}  // namespace frontend
}  // namespace fusiond
