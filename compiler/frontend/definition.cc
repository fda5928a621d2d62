#include "compiler/frontend/definition.h"

#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/ir/printer.h"

namespace fusiond {
namespace frontend {
namespace {

using K = PyValue::Kind;

constexpr const char* kFdMethods =
    "fd.define_tensor, fd.define_scalar, fd.define_vector, fd.add_output, fd.execute or "
    "fd.ops.<op>";

constexpr size_t kMaxDefinitionList = 64;

}  // namespace

void DefinitionLowering::NoteDefinition(Location at) {
  if (!saw_definition_ && !saw_def_) definition_loc_ = at;
  saw_definition_ = true;
}

std::string DefinitionLowering::FreshName(const std::string& base) {
  if (used_names_.insert(base).second) return base;
  int& k = next_suffix_[base];
  while (true) {
    std::string name = absl::StrCat(base, "_", ++k);
    if (used_names_.insert(name).second) return name;
  }
}

void DefinitionLowering::Bind(const std::string& name, const PyValue& v) {
  if (v.kind == K::kValue && g_->value(v.id).name.empty()) {
    g_->value(v.id).name = FreshName(name);
  } else {
    used_names_.insert(name);
  }
  names_[name] = v;
}

void DefinitionLowering::NameRemainingValues() {
  for (Value& v : g_->values) {
    if (v.name.empty()) v.name = FreshName(absl::StrCat("t", v.id));
  }
}

ValueId DefinitionLowering::Constant(const PyValue& n) {
  DataType t = n.kind == K::kFloat  ? DataType::kDouble
               : n.kind == K::kBool ? DataType::kBool
                                    : DataType::kInt64;
  return b_.DefineConstant(n.number(), t, FreshName(absl::StrCat("c", literal_count_++)));
}

absl::Status DefinitionLowering::Statement(const Stmt& st) {
  switch (st.kind) {
    case Stmt::Kind::kIgnored:
      return absl::OkStatus();
    case Stmt::Kind::kDef: {
      if (saw_def_ && saw_definition_) {
        return errors_.Error(st.loc, absl::StrCat("a second function definition '", st.name, "'"),
                             "one fusion definition per script");
      }
      PyValue f;
      f.kind = K::kFunction;
      Bind(st.name, f);
      if (!st.params.empty()) {
        PyValue fd;
        fd.kind = K::kFd;
        Bind(st.params[0], fd);
      }
      if (!saw_def_ && !saw_definition_) definition_loc_ = st.loc;
      saw_def_ = true;
      return absl::OkStatus();
    }
    case Stmt::Kind::kWith: {
      const Expr& v = *st.value;
      if (v.kind != Expr::Kind::kCall ||
          !absl::EndsWith(DottedName(v.callee()), "FusionDefinition") || v.num_args() != 0 ||
          !v.keywords.empty()) {
        return errors_.Error(v.loc, "unsupported 'with' statement",
                             "with FusionDefinition() as fd:");
      }
      PyValue fd;
      fd.kind = K::kFd;
      Bind(st.name, fd);
      return absl::OkStatus();
    }
    case Stmt::Kind::kExpr: {
      const Expr& v = *st.value;
      if (v.kind == Expr::Kind::kString) return absl::OkStatus();  // a docstring
      if (v.kind != Expr::Kind::kCall) {
        return errors_.Error(v.loc, "an expression statement that is not a call",
                             absl::StrCat("a call such as ", kFdMethods));
      }
      // Calls that do not touch the definition: printing results and
      // seeding torch's generator.
      const std::string callee = DottedName(v.callee());
      if (callee == "print" || callee == "torch.manual_seed") return absl::OkStatus();
      // The wrapper's call: `nvfuser_fusion_id0(fd)`.
      if (v.callee().kind == Expr::Kind::kName) {
        auto it = names_.find(v.callee().text);
        if (it != names_.end() && it->second.kind == K::kFunction) return absl::OkStatus();
      }
      auto r = EvalCall(v);
      return r.status();
    }
    case Stmt::Kind::kAssign: {
      auto r = Eval(*st.value);
      if (!r.ok()) return r.status();
      if (st.targets.size() == 1) {
        Bind(st.targets[0].name, *r);
        return absl::OkStatus();
      }
      if (r->kind != K::kTuple && r->kind != K::kList) {
        return errors_.Error(st.targets[0].loc,
                             absl::StrCat("cannot unpack ", DescribeValue(*g_, *r), " into ",
                                          st.targets.size(), " names"),
                             "an op with several results, such as var_mean");
      }
      if (r->items.size() != st.targets.size()) {
        return errors_.Error(
            st.targets[0].loc,
            absl::StrCat(st.targets.size(), " names for ", r->items.size(), " values"),
            absl::StrCat(r->items.size(), " names left of '='"));
      }
      for (size_t i = 0; i < st.targets.size(); ++i) Bind(st.targets[i].name, r->items[i]);
      return absl::OkStatus();
    }
  }
  return absl::InternalError("unknown statement kind");
}

absl::StatusOr<PyValue> DefinitionLowering::Eval(const Expr& e) {
  PyValue v;
  switch (e.kind) {
    case Expr::Kind::kName: {
      auto it = names_.find(e.text);
      if (it != names_.end()) return it->second;
      if (e.text == "DataType" || e.text == "torch" || e.text == "FusionDefinition") {
        return errors_.Error(e.loc, absl::StrCat("'", e.text, "' cannot be used as a value here"),
                             "DataType.<Type> or a defined name");
      }
      return errors_.Error(e.loc, absl::StrCat("name '", e.text, "' is not defined"),
                           "a name assigned earlier in the definition");
    }
    case Expr::Kind::kInt:
      v.kind = K::kInt;
      v.i = e.int_value;
      return v;
    case Expr::Kind::kFloat:
      v.kind = K::kFloat;
      v.f = e.float_value;
      return v;
    case Expr::Kind::kBool:
      v.kind = K::kBool;
      v.i = e.int_value;
      return v;
    case Expr::Kind::kNone:
      return v;
    case Expr::Kind::kString:
      v.kind = K::kString;  // the text is never needed inside a definition
      return v;
    case Expr::Kind::kAttribute: {
      const std::string dotted = DottedName(e);
      if (absl::StartsWith(dotted, "DataType.")) {
        v.kind = K::kDType;
        if (e.text == "Null") return v;
        // Index: nvFuser's index type (64-bit here), in casts its direct
        // printer writes for slice and size arithmetic.
        std::optional<DataType> t =
            e.text == "Index" ? std::optional<DataType>(DataType::kInt64) : ParseDataType(e.text);
        if (!t) {
          return errors_.Error(e.loc, absl::StrCat("unknown dtype DataType.", e.text),
                               "DataType.Bool, Int32, Int, Index, Half, BFloat16, Float, "
                               "Double, Float8_e4m3fn, Float8_e5m2 or Null");
        }
        v.dtype = t;
        return v;
      }
      if (absl::StartsWith(dotted, "torch.")) {
        return errors_.Error(e.loc, absl::StrCat(dotted, " is only understood in the inputs list"),
                             "DataType.<Type> inside the definition");
      }
      return errors_.Error(e.loc, absl::StrCat("unsupported attribute '", e.text, "'"),
                           absl::StrCat("DataType.<Type>, T.shape() or T.size(i) or ", kFdMethods));
    }
    case Expr::Kind::kList:
    case Expr::Kind::kTuple: {
      // Lists in a definition are shapes, dims and contiguity flags; a bound
      // on their length keeps copies of named lists cheap.
      if (e.operands.size() > kMaxDefinitionList) {
        return errors_.Error(
            e.loc, absl::StrCat("a list of ", e.operands.size(), " entries"),
            absl::StrCat("at most ", kMaxDefinitionList,
                         " (shapes, dims and contiguity have one entry per axis)"));
      }
      v.kind = e.kind == Expr::Kind::kList ? K::kList : K::kTuple;
      v.items.reserve(e.operands.size());
      for (const ExprPtr& item : e.operands) {
        auto r = Eval(*item);
        if (!r.ok()) return r;
        v.items.push_back(std::move(*r));
      }
      return v;
    }
    case Expr::Kind::kUnary: {
      auto x = Eval(*e.operands[0]);
      if (!x.ok()) return x;
      return FoldUnary(e, *x, *g_, errors_);
    }
    case Expr::Kind::kBinary: {
      auto a = Eval(*e.operands[0]);
      if (!a.ok()) return a;
      auto b = Eval(*e.operands[1]);
      if (!b.ok()) return b;
      return FoldBinary(e, *a, *b, *g_, errors_);
    }
    case Expr::Kind::kCall:
      return EvalCall(e);
  }
  return absl::InternalError("unknown expression kind");
}

absl::StatusOr<PyValue> DefinitionLowering::EvalCall(const Expr& call) {
  const Expr& callee = call.callee();
  if (callee.kind == Expr::Kind::kAttribute) {
    const Expr& obj = *callee.operands[0];
    // fd.ops.<op>(...)
    if (obj.kind == Expr::Kind::kAttribute && obj.text == "ops" &&
        obj.operands[0]->kind == Expr::Kind::kName) {
      auto it = names_.find(obj.operands[0]->text);
      if (it != names_.end() && it->second.kind == K::kFd) return OpCall(call, callee);
    }
    // fd.<method>(...)
    if (obj.kind == Expr::Kind::kName) {
      auto it = names_.find(obj.text);
      if (it != names_.end() && it->second.kind == K::kFd) return FdMethod(call, callee.text);
    }
    if (callee.text == "size" || callee.text == "shape") return TensorMethod(call, callee.text);
    const std::string dotted = DottedName(callee);
    if (absl::StartsWith(dotted, "torch.")) {
      return errors_.Error(call.loc, absl::StrCat(dotted, " is only understood in the inputs list"),
                           kFdMethods);
    }
    return errors_.Error(
        callee.loc, absl::StrCat("unknown function '", dotted.empty() ? callee.text : dotted, "'"),
        absl::StrCat(kFdMethods, ", T.size(i) or T.shape()"));
  }
  if (callee.kind == Expr::Kind::kName) {
    if (IsPythonFloatCall(call) && !names_.count("float")) {  // float("-inf") for masks
      auto x = PythonFloatCall(call, errors_);
      if (!x.ok()) return x.status();
      PyValue v;
      v.kind = K::kFloat;
      v.f = *x;
      return v;
    }
    auto it = names_.find(callee.text);
    if (it != names_.end() && it->second.kind == K::kFunction) {
      return errors_.Error(call.loc, absl::StrCat("the result of ", callee.text, "(...) is used"),
                           absl::StrCat("a plain call statement ", callee.text, "(fd)"));
    }
    return errors_.Error(callee.loc, absl::StrCat("unknown function '", callee.text, "'"),
                         kFdMethods);
  }
  return errors_.Error(call.loc, "this expression cannot be called", kFdMethods);
}

absl::StatusOr<PyValue> DefinitionLowering::TensorMethod(const Expr& call,
                                                         const std::string& method) {
  const Expr& obj = *call.callee().operands[0];
  auto t = Eval(obj);
  if (!t.ok()) return t;
  if (t->kind != K::kValue || !g_->value(t->id).is_tensor) {
    return errors_.Error(
        obj.loc, absl::StrCat(".", method, "() called on ", DescribeValue(*g_, *t)), "a tensor");
  }
  NoteDefinition(call.loc);
  if (method == "size") {
    auto args = BindArguments(call, "size", {"dim"}, 1, errors_);
    if (!args.ok()) return args.status();
    return SizeOf(call, t->id, (*args)[0]);
  }
  auto args = BindArguments(call, "shape", {}, 0, errors_);
  if (!args.ok()) return args.status();
  PyValue v;
  v.kind = K::kExtents;
  for (const Extent& e : g_->value(t->id).shape) v.extents.push_back(g_->Canonical(e));
  return v;
}

absl::StatusOr<PyValue> DefinitionLowering::SizeOf(const Expr& at, ValueId tensor,
                                                   const Expr* axis_expr) {
  auto axis = IntArg(*axis_expr, "the axis of size");
  if (!axis.ok()) return axis.status();
  const int rank = g_->value(tensor).rank();
  if (*axis < -rank || *axis >= rank) {
    return errors_.Error(axis_expr->loc,
                         absl::StrCat("axis ", *axis, " is out of range for ",
                                      ValueName(*g_, tensor), " of rank ", rank),
                         absl::StrCat("an axis in [", -rank, ", ", rank, ")"));
  }
  return SizeAt(at, tensor, *axis < 0 ? *axis + rank : *axis);
}

absl::StatusOr<PyValue> DefinitionLowering::SizeAt(const Expr& at, ValueId tensor, int64_t a) {
  auto it = size_nodes_.find({tensor, a});
  if (it != size_nodes_.end()) return ValueOf(it->second);
  auto id = b_.Size(tensor, a);
  if (!id.ok()) return errors_.At(at.loc, id.status());
  const std::string& base = g_->value(tensor).name;
  g_->value(*id).name = FreshName(absl::StrCat(base.empty() ? "t" : base, "_size", a));
  size_nodes_[{tensor, a}] = *id;
  return ValueOf(*id);
}

absl::StatusOr<ValueId> DefinitionLowering::Operand(const Expr& e) {
  auto v = Eval(e);
  if (!v.ok()) return v.status();
  if (v->kind == K::kValue) return v->id;
  if (v->is_number()) return Constant(*v);
  return errors_.Error(e.loc, absl::StrCat("operand is ", DescribeValue(*g_, *v)),
                       "a tensor, a scalar or a number");
}

absl::StatusOr<int64_t> DefinitionLowering::IntArg(const Expr& e, const char* what) {
  auto v = Eval(e);
  if (!v.ok()) return v.status();
  if (v->kind != K::kInt) {
    return errors_.Error(e.loc, absl::StrCat(what, " is ", DescribeValue(*g_, *v)), "an integer");
  }
  return v->i;
}

absl::StatusOr<bool> DefinitionLowering::BoolArg(const Expr& e, const char* what) {
  auto v = Eval(e);
  if (!v.ok()) return v.status();
  if (v->kind != K::kBool) {
    return errors_.Error(e.loc, absl::StrCat(what, " is ", DescribeValue(*g_, *v)),
                         "True or False");
  }
  return v->i != 0;
}

absl::StatusOr<std::vector<int64_t>> DefinitionLowering::IntList(const Expr& e, const char* what,
                                                                 bool allow_single) {
  auto v = Eval(e);
  if (!v.ok()) return v.status();
  if (allow_single && v->kind == K::kInt) return std::vector<int64_t>{v->i};
  if (v->kind != K::kList && v->kind != K::kTuple) {
    return errors_.Error(e.loc, absl::StrCat(what, " is ", DescribeValue(*g_, *v)),
                         "a list of integers");
  }
  std::vector<int64_t> out;
  for (size_t k = 0; k < v->items.size(); ++k) {
    if (v->items[k].kind != K::kInt) {
      const Expr& at = e.operands.size() == v->items.size() ? *e.operands[k] : e;
      return errors_.Error(
          at.loc, absl::StrCat(what, " entry ", k, " is ", DescribeValue(*g_, v->items[k])),
          "an integer");
    }
    out.push_back(v->items[k].i);
  }
  return out;
}

absl::StatusOr<std::optional<DataType>> DefinitionLowering::DTypeArg(const Expr& e,
                                                                     bool allow_null) {
  auto v = Eval(e);
  if (!v.ok()) return v.status();
  if (v->kind != K::kDType) {
    return errors_.Error(e.loc, absl::StrCat("dtype is ", DescribeValue(*g_, *v)),
                         "DataType.<Type>");
  }
  if (!v->dtype && !allow_null) {
    return errors_.Error(e.loc, "DataType.Null is not allowed here", "a concrete DataType");
  }
  return v->dtype;
}

absl::StatusOr<Extent> DefinitionLowering::ExtentArg(const PyValue& v, const Expr& at,
                                                     bool allow_keep) {
  if (v.kind == K::kInt) {
    if (v.i >= 0) return Extent::Static(v.i);
    if (v.i == -1 && allow_keep) return Extent{};
    return errors_.Error(at.loc, absl::StrCat("shape entry ", v.i, " is negative"),
                         allow_keep ? "a size >= 0, or -1 to keep the axis" : "a size >= 0");
  }
  if (v.kind == K::kValue) {
    if (std::optional<Extent> e = b_.ExtentOfScalar(v.id)) return *e;
    if (!g_->value(v.id).is_tensor && g_->def(v.id) != nullptr) return ComputedExtent(v.id, at);
    return errors_.Error(at.loc, absl::StrCat(DescribeValue(*g_, v), " is not a size"),
                         "an integer, an integer constant or T.size(i)");
  }
  return errors_.Error(at.loc, absl::StrCat("shape entry is ", DescribeValue(*g_, v)),
                       "an integer or T.size(i)");
}

absl::StatusOr<std::vector<Extent>> DefinitionLowering::ShapeArg(const Expr& e, bool allow_keep) {
  auto v = Eval(e);
  if (!v.ok()) return v.status();
  if (v->kind == K::kExtents) return v->extents;
  if (v->kind != K::kList && v->kind != K::kTuple) {
    return errors_.Error(e.loc, absl::StrCat("shape is ", DescribeValue(*g_, *v)),
                         "a list of sizes, T.shape() or an fd.define_vector(...) result");
  }
  std::vector<Extent> out;
  for (size_t k = 0; k < v->items.size(); ++k) {
    const Expr& at = e.operands.size() == v->items.size() ? *e.operands[k] : e;
    auto x = ExtentArg(v->items[k], at, allow_keep);
    if (!x.ok()) return x.status();
    out.push_back(*x);
  }
  return out;
}

}  // namespace frontend
}  // namespace fusiond
