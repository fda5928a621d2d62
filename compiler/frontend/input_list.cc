// The `inputs = [...]` list: torch tensor factories and Python numbers, and
// the check of the list against the definition's inputs.
#include <algorithm>
#include <cmath>
#include <functional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/frontend/cpu_scalar_input.h"
#include "compiler/frontend/lower.h"
#include "compiler/frontend/pyvalue.h"
#include "compiler/ir/binding.h"
#include "compiler/ir/printer.h"

namespace fusiond {
namespace frontend {
namespace {

constexpr const char* kFactories =
    "torch.randn / rand / zeros / ones / full / testing.make_tensor((sizes), dtype=torch.<type>, "
    "device=...), optionally `* k`, `+ k`, `.to(torch.<type>)`, or a Python number";

std::optional<DataType> TorchDType(std::string_view name) {
  if (name == "float32" || name == "float") return DataType::kFloat;
  if (name == "float16" || name == "half") return DataType::kHalf;
  if (name == "bfloat16") return DataType::kBFloat16;
  if (name == "float64" || name == "double") return DataType::kDouble;
  if (name == "int32" || name == "int") return DataType::kInt32;
  if (name == "int64" || name == "long") return DataType::kInt64;
  if (name == "bool") return DataType::kBool;
  if (name == "float8_e4m3fn") return DataType::kFloat8E4M3;
  if (name == "float8_e5m2") return DataType::kFloat8E5M2;
  return std::nullopt;
}

class InputReader {
 public:
  explicit InputReader(const ErrorReporter& errors) : errors_(errors) {}

  absl::StatusOr<InputSpec> Tensor(const Expr& e);

 private:
  absl::StatusOr<double> Number(const Expr& e);
  absl::StatusOr<DataType> DType(const Expr& e);
  absl::StatusOr<InputSpec> Factory(const Expr& call, const std::string& name);
  absl::StatusOr<InputSpec> RandInt(const Expr& call);
  absl::StatusOr<InputSpec> AsStrided(const Expr& call);
  // Tensor's forms: `tensor <op> k` / `k <op> tensor`, a call (factories,
  // softmax, conversions), torch.softmax(torch.randn(...), dim) and
  // .to(...) / .cuda() / .contiguous().
  absl::StatusOr<InputSpec> Arithmetic(const Expr& e);
  absl::StatusOr<InputSpec> TensorCall(const Expr& e);
  absl::StatusOr<InputSpec> Softmax(const Expr& e);
  absl::StatusOr<InputSpec> Conversion(const Expr& e);
  absl::StatusOr<std::vector<int64_t>> Shape(const Expr& call, const Expr* sizes, size_t first,
                                             size_t last);

  const ErrorReporter& errors_;
  Graph empty_;  // for FoldBinary's messages
};

absl::StatusOr<double> InputReader::Number(const Expr& e) {
  if (e.kind == Expr::Kind::kInt) return static_cast<double>(e.int_value);
  if (e.kind == Expr::Kind::kFloat) return e.float_value;
  if (IsPythonFloatCall(e)) return PythonFloatCall(e, errors_);
  if (e.kind == Expr::Kind::kUnary && e.text == "-") {
    auto x = Number(*e.operands[0]);
    if (!x.ok()) return x;
    return -*x;
  }
  return errors_.Error(e.loc, "not a number", "a number literal");
}

absl::StatusOr<DataType> InputReader::DType(const Expr& e) {
  const std::string dotted = DottedName(e);
  if (absl::StartsWith(dotted, "torch.")) {
    if (auto t = TorchDType(dotted.substr(6))) return *t;
  }
  return errors_.Error(e.loc,
                       absl::StrCat("unknown torch dtype '", dotted.empty() ? "?" : dotted, "'"),
                       "torch.float32, float16, bfloat16, float64, int32, int64, bool, "
                       "float8_e4m3fn or float8_e5m2");
}

absl::StatusOr<std::vector<int64_t>> InputReader::Shape(const Expr& call, const Expr* sizes,
                                                        size_t first, size_t last) {
  // Either one tuple/list argument, or the sizes as separate arguments.
  std::vector<const Expr*> items;
  if (sizes != nullptr) {
    if (sizes->kind != Expr::Kind::kTuple && sizes->kind != Expr::Kind::kList) {
      return errors_.Error(sizes->loc, "size is not a tuple",
                           "a tuple of sizes such as (2048, 8192)");
    }
    for (const ExprPtr& item : sizes->operands) items.push_back(item.get());
  } else if (last == first + 1 && (call.arg(first).kind == Expr::Kind::kTuple ||
                                   call.arg(first).kind == Expr::Kind::kList)) {
    for (const ExprPtr& item : call.arg(first).operands) items.push_back(item.get());
  } else {
    for (size_t k = first; k < last; ++k) items.push_back(&call.arg(k));
  }
  std::vector<int64_t> shape;
  for (const Expr* item : items) {
    // Sizes may be written as integer expressions (1 << 20, 2 * 1024).
    std::function<absl::StatusOr<int64_t>(const Expr&)> fold =
        [&](const Expr& x) -> absl::StatusOr<int64_t> {
      if (x.kind == Expr::Kind::kInt) return x.int_value;
      if (x.kind == Expr::Kind::kUnary || x.kind == Expr::Kind::kBinary) {
        PyValue a, b;
        auto l = fold(*x.operands[0]);
        if (!l.ok()) return l;
        a.kind = PyValue::Kind::kInt;
        a.i = *l;
        absl::StatusOr<PyValue> r;
        if (x.kind == Expr::Kind::kUnary) {
          r = FoldUnary(x, a, empty_, errors_);
        } else {
          auto rr = fold(*x.operands[1]);
          if (!rr.ok()) return rr;
          b.kind = PyValue::Kind::kInt;
          b.i = *rr;
          r = FoldBinary(x, a, b, empty_, errors_);
        }
        if (!r.ok()) return r.status();
        if (r->kind != PyValue::Kind::kInt) {
          return errors_.Error(x.loc, "size is not an integer", "an integer size");
        }
        return r->i;
      }
      return errors_.Error(x.loc, "size is not an integer", "an integer size");
    };
    auto n = fold(*item);
    if (!n.ok()) return n.status();
    if (*n < 0) {
      return errors_.Error(item->loc, absl::StrCat("size ", *n, " is negative"), "a size >= 0");
    }
    shape.push_back(*n);
  }
  return shape;
}

absl::StatusOr<InputSpec> InputReader::Factory(const Expr& call, const std::string& name) {
  InputSpec spec;
  const bool full = name == "full";
  const bool make_tensor = name == "testing.make_tensor";
  // Positional arguments: the sizes (and full's fill value last).
  size_t last = call.num_args();
  if (full) {
    if (last != 2) {
      return errors_.Error(call.loc, "torch.full takes a size and a fill value",
                           "torch.full((sizes), value, dtype=...)");
    }
    auto v = Number(call.arg(1));
    if (!v.ok()) return v.status();
    spec.value = *v;
    last = 1;
    if (call.arg(1).kind == Expr::Kind::kInt) spec.dtype = DataType::kInt64;
  }
  const Expr* size_kw = nullptr;
  bool have_low = false;
  double low = -9, high = 9;
  for (const Keyword& k : call.keywords) {
    if (k.name == "dtype") {
      auto t = DType(*k.value);
      if (!t.ok()) return t.status();
      spec.dtype = *t;
    } else if (k.name == "size") {
      size_kw = k.value.get();
    } else if (k.name == "device" || k.name == "requires_grad" || k.name == "layout" ||
               k.name == "pin_memory") {
      // Where the tensor lives does not change the fusion.
    } else if (make_tensor && (k.name == "low" || k.name == "high")) {
      if (k.value->kind == Expr::Kind::kNone) continue;
      auto v = Number(*k.value);
      if (!v.ok()) return v.status();
      (k.name == "low" ? low : high) = *v;
      have_low = true;
    } else {
      return errors_.Error(
          k.loc, absl::StrCat("unexpected keyword argument '", k.name, "' for torch.", name),
          "dtype=, device=, requires_grad= (make_tensor: low=, high=)");
    }
  }
  if (size_kw != nullptr && last != 0) {
    return errors_.Error(size_kw->loc,
                         "sizes given both positionally and as size=", "one of the two");
  }
  auto shape = Shape(call, size_kw, 0, last);
  if (!shape.ok()) return shape.status();
  spec.shape = *shape;
  spec.generator = make_tensor ? "make_tensor" : name;
  if (make_tensor) {
    if (have_low && !(high > low)) {
      return errors_.Error(call.loc,
                           absl::StrCat("make_tensor range [", low, ", ", high, ") is empty"),
                           "low < high");
    }
    spec.offset = low;
    spec.scale = high - low;
  }
  return spec;
}

// torch.randint([low,] high, size, dtype=...): integers uniform in [low, high).
absl::StatusOr<InputSpec> InputReader::RandInt(const Expr& call) {
  constexpr const char* kForm = "torch.randint(low, high, (sizes), dtype=torch.<type>, device=...)";
  const Expr* size = nullptr;
  std::vector<const Expr*> bounds;
  for (size_t k = 0; k < call.num_args(); ++k) {
    const Expr& a = call.arg(k);
    if (a.kind == Expr::Kind::kTuple || a.kind == Expr::Kind::kList) {
      if (size != nullptr || k + 1 != call.num_args()) {
        return errors_.Error(a.loc, "torch.randint takes the sizes last", kForm);
      }
      size = &a;
    } else {
      bounds.push_back(&a);
    }
  }
  InputSpec spec;
  spec.dtype = DataType::kInt64;
  for (const Keyword& k : call.keywords) {
    if (k.name == "dtype") {
      auto t = DType(*k.value);
      if (!t.ok()) return t.status();
      spec.dtype = *t;
    } else if (k.name == "size" && size == nullptr) {
      size = k.value.get();
    } else if (k.name != "device" && k.name != "requires_grad" && k.name != "layout" &&
               k.name != "pin_memory") {
      return errors_.Error(
          k.loc, absl::StrCat("unexpected keyword argument '", k.name, "' for torch.randint"),
          kForm);
    }
  }
  if (size == nullptr || bounds.empty() || bounds.size() > 2) {
    return errors_.Error(
        call.loc, "torch.randint needs a high bound (optionally a low one) and sizes", kForm);
  }
  double low = 0, high = 0;
  for (size_t k = 0; k < bounds.size(); ++k) {
    auto v = Number(*bounds[k]);
    if (!v.ok()) return v.status();
    (bounds.size() == 2 && k == 0 ? low : high) = *v;
  }
  if (!(high > low)) {
    return errors_.Error(call.loc,
                         absl::StrCat("torch.randint range [", low, ", ", high, ") is empty"),
                         "low < high");
  }
  auto shape = Shape(call, size, 0, 0);
  if (!shape.ok()) return shape.status();
  spec.shape = *shape;
  spec.generator = "make_tensor";  // uniform in [low, high), then floored for integers
  spec.offset = low;
  spec.scale = high - low;
  return spec;
}

// `<tensor>.as_strided(sizes, strides[, storage_offset])`: nvFuser's repro
// printer writes a non-contiguous input as a view of a flat tensor. The
// fusion sees the sizes (runtimes copy such inputs to contiguous first); the
// strides are kept and checked to stay within the flat tensor.
absl::StatusOr<InputSpec> InputReader::AsStrided(const Expr& call) {
  constexpr const char* kForm = "<tensor>.as_strided((sizes), (strides))";
  auto base = Tensor(*call.callee().operands[0]);
  if (!base.ok()) return base;
  if (base->generator == "scalar" || base->generator == "softmax" || !base->strides.empty()) {
    return errors_.Error(call.loc, ".as_strided() of something other than a tensor factory", kForm);
  }
  const Expr* size = call.num_args() >= 1 ? &call.arg(0) : nullptr;
  const Expr* stride = call.num_args() >= 2 ? &call.arg(1) : nullptr;
  const Expr* offset = call.num_args() >= 3 ? &call.arg(2) : nullptr;
  for (const Keyword& k : call.keywords) {
    const Expr** slot = k.name == "size"             ? &size
                        : k.name == "stride"         ? &stride
                        : k.name == "storage_offset" ? &offset
                                                     : nullptr;
    if (slot == nullptr || *slot != nullptr) {
      return errors_.Error(
          k.loc, absl::StrCat("unexpected keyword argument '", k.name, "' for .as_strided"), kForm);
    }
    *slot = k.value.get();
  }
  if (size == nullptr || stride == nullptr || call.num_args() > 3) {
    return errors_.Error(call.loc, ".as_strided needs sizes and strides", kForm);
  }
  auto sizes = Shape(call, size, 0, 0);
  if (!sizes.ok()) return sizes.status();
  auto strides = Shape(call, stride, 0, 0);
  if (!strides.ok()) return strides.status();
  if (sizes->size() != strides->size()) {
    return errors_.Error(
        stride->loc,
        absl::StrCat(".as_strided has ", sizes->size(), " sizes but ", strides->size(), " strides"),
        "one stride per size");
  }
  int64_t first = 0;
  if (offset != nullptr) {
    auto o = Number(*offset);
    if (!o.ok()) return o.status();
    if (*o < 0 || *o != std::floor(*o) || *o > 9.0e15) {
      return errors_.Error(offset->loc, "storage_offset is not an integer >= 0", "an integer >= 0");
    }
    first = static_cast<int64_t>(*o);
  }
  // The largest element index the view reads must lie within the flat tensor.
  double storage = 1, last = static_cast<double>(first), elements = 1;
  for (int64_t n : base->shape) storage *= static_cast<double>(n);
  for (size_t a = 0; a < sizes->size(); ++a) {
    elements *= static_cast<double>((*sizes)[a]);
    last += static_cast<double>(std::max<int64_t>((*sizes)[a] - 1, 0)) *
            static_cast<double>((*strides)[a]);
  }
  if (elements > 0 && last >= storage) {
    return errors_.Error(
        call.loc,
        absl::StrCat(".as_strided reads element ", last, " of a tensor of ", storage, " elements"),
        "sizes and strides within the tensor it views");
  }
  InputSpec spec = *base;
  spec.shape = *sizes;
  spec.strides = *strides;
  return spec;
}

absl::StatusOr<InputSpec> InputReader::Arithmetic(const Expr& e) {
  const std::string& op = e.text;
  if (op != "+" && op != "-" && op != "*" && op != "/") {
    return errors_.Error(e.loc, absl::StrCat("unsupported operator '", op, "' in the inputs list"),
                         "`tensor + k`, `tensor - k`, `tensor * k` or `tensor / k`");
  }
  const bool number_left =
      e.operands[0]->kind == Expr::Kind::kInt || e.operands[0]->kind == Expr::Kind::kFloat;
  if (number_left && op != "+" && op != "*") {
    return errors_.Error(e.loc, absl::StrCat("`k ", op, " tensor` is not supported"),
                         "`tensor + k`, `tensor - k`, `tensor * k` or `tensor / k`");
  }
  auto s = Tensor(*e.operands[number_left ? 1 : 0]);
  if (!s.ok()) return s;
  auto k = Number(*e.operands[number_left ? 0 : 1]);
  if (!k.ok()) return k.status();
  if (s->generator == "scalar") {
    return errors_.Error(e.loc, "arithmetic on a Python number in the inputs list",
                         "a literal number");
  }
  if (op == "+") s->offset += *k;
  if (op == "-") s->offset -= *k;
  if (op == "*" || op == "/") {
    if (op == "/" && *k == 0) return errors_.Error(e.loc, "division by zero", "a nonzero divisor");
    const double m = op == "*" ? *k : 1.0 / *k;
    s->scale *= m;
    s->offset *= m;
  }
  return s;
}

absl::StatusOr<InputSpec> InputReader::Softmax(const Expr& e) {
  const Expr* dim = e.num_args() >= 2 ? &e.arg(1) : nullptr;
  for (const Keyword& k : e.keywords) {
    if (k.name != "dim") {
      return errors_.Error(
          k.loc, absl::StrCat("unexpected keyword argument '", k.name, "' for torch.softmax"),
          "torch.softmax(tensor, dim)");
    }
    dim = k.value.get();
  }
  if (e.num_args() < 1 || e.num_args() > 2 || dim == nullptr ||
      (e.num_args() == 2 && !e.keywords.empty())) {
    return errors_.Error(e.loc, "torch.softmax needs a tensor and a dim",
                         "torch.softmax(torch.randn(...), dim)");
  }
  auto s = Tensor(e.arg(0));
  if (!s.ok()) return s;
  if (s->generator != "randn" || s->scale != 1 || s->offset != 0) {
    return errors_.Error(e.arg(0).loc, "softmax of a tensor other than a plain torch.randn",
                         "torch.softmax(torch.randn(...), dim)");
  }
  auto d = Number(*dim);
  if (!d.ok()) return d.status();
  const int64_t rank = static_cast<int64_t>(s->shape.size());
  if (*d != std::floor(*d) || *d < -rank || *d >= rank) {
    return errors_.Error(dim->loc,
                         absl::StrCat("softmax dim ", *d, " is out of range for rank ", rank),
                         absl::StrCat("an axis in [", -rank, ", ", rank, ")"));
  }
  s->generator = "softmax";
  s->softmax_dim = static_cast<int64_t>(*d);
  return s;
}

absl::StatusOr<InputSpec> InputReader::Conversion(const Expr& e) {
  const Expr& callee = e.callee();
  auto s = Tensor(*callee.operands[0]);
  if (!s.ok()) return s;
  if (s->generator == "scalar") {
    return errors_.Error(e.loc, absl::StrCat(".", callee.text, "() on a number"), kFactories);
  }
  if (callee.text != "to") return s;
  for (size_t k = 0; k < e.num_args(); ++k) {
    if (e.arg(k).kind == Expr::Kind::kString) continue;  // a device
    auto t = DType(e.arg(k));
    if (!t.ok()) return t.status();
    s->dtype = *t;
  }
  for (const Keyword& k : e.keywords) {
    if (k.name == "dtype") {
      auto t = DType(*k.value);
      if (!t.ok()) return t.status();
      s->dtype = *t;
    } else if (k.name != "device" && k.name != "non_blocking" && k.name != "copy") {
      return errors_.Error(k.loc,
                           absl::StrCat("unexpected keyword argument '", k.name, "' for .to()"),
                           ".to(torch.<type>) or .to(dtype=torch.<type>)");
    }
  }
  return s;
}

absl::StatusOr<InputSpec> InputReader::TensorCall(const Expr& e) {
  const Expr& callee = e.callee();
  const std::string dotted = DottedName(callee);
  if (IsPythonFloatCall(e)) {  // float("nan"), as nvFuser's repro printer writes it
    auto v = PythonFloatCall(e, errors_);
    if (!v.ok()) return v.status();
    InputSpec s;
    s.generator = "scalar";
    s.value = *v;
    s.dtype = DataType::kDouble;
    return s;
  }
  if (dotted == "torch.randint") return RandInt(e);
  if (dotted == "torch.tensor") {
    return TorchTensorEntry(
        e, errors_, [this](const Expr& x) { return Number(x); },
        [this](const Expr& x) { return DType(x); });
  }
  if (callee.kind == Expr::Kind::kAttribute && callee.text == "as_strided") return AsStrided(e);
  static const char* kNames[] = {"randn", "rand", "zeros", "ones", "full", "testing.make_tensor"};
  for (const char* n : kNames) {
    if (dotted == absl::StrCat("torch.", n)) return Factory(e, n);
  }
  if (dotted == "torch.softmax" || dotted == "torch.nn.functional.softmax") {
    return Softmax(e);
  }
  if (callee.kind == Expr::Kind::kAttribute &&
      (callee.text == "to" || callee.text == "cuda" || callee.text == "contiguous")) {
    return Conversion(e);
  }
  return errors_.Error(
      callee.loc, absl::StrCat("unsupported input factory '", dotted.empty() ? "?" : dotted, "'"),
      kFactories);
}

absl::StatusOr<InputSpec> InputReader::Tensor(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::kInt:
    case Expr::Kind::kFloat:
    case Expr::Kind::kBool: {
      InputSpec s;
      s.generator = "scalar";
      s.value = e.kind == Expr::Kind::kFloat ? e.float_value : static_cast<double>(e.int_value);
      s.dtype = e.kind == Expr::Kind::kFloat  ? DataType::kDouble
                : e.kind == Expr::Kind::kBool ? DataType::kBool
                                              : DataType::kInt64;
      return s;
    }
    case Expr::Kind::kUnary: {
      auto s = Tensor(*e.operands[0]);
      if (!s.ok() || e.text == "+") return s;
      if (e.text != "-") return errors_.Error(e.loc, "unsupported operator '~'", kFactories);
      if (s->generator == "scalar") {
        s->value = -s->value;
      } else {
        s->scale = -s->scale;
        s->offset = -s->offset;
      }
      return s;
    }
    case Expr::Kind::kBinary:
      return Arithmetic(e);
    case Expr::Kind::kCall:
      return TensorCall(e);
    default:
      return errors_.Error(e.loc, "unsupported entry in the inputs list", kFactories);
  }
}

std::string ShapeString(const std::vector<int64_t>& s) {
  return absl::StrCat("(", absl::StrJoin(s, ", "), s.size() == 1 ? ",)" : ")");
}

}  // namespace

absl::StatusOr<std::vector<LocatedInput>> ReadInputList(const Expr& list,
                                                        const ErrorReporter& errors) {
  InputReader reader(errors);
  std::vector<LocatedInput> out;
  for (const ExprPtr& item : list.operands) {
    auto spec = reader.Tensor(*item);
    if (!spec.ok()) return spec.status();
    out.push_back(LocatedInput{std::move(*spec), item->loc});
  }
  return out;
}

absl::Status CheckInputList(const Graph& g, const std::vector<LocatedInput>& inputs,
                            Location list_loc, const ErrorReporter& errors,
                            const GraphLimits& limits) {
  if (inputs.size() != g.inputs.size()) {
    std::vector<std::string> names;
    for (ValueId id : g.inputs) names.push_back(ValueName(g, id));
    return errors.Error(
        list_loc,
        absl::StrCat("the inputs list has ", inputs.size(),
                     inputs.size() == 1 ? " entry" : " entries", " but the definition takes ",
                     g.inputs.size(), g.inputs.size() == 1 ? " input (" : " inputs (",
                     absl::StrJoin(names, ", "), ")"),
        "one entry per define_tensor / define_scalar input, in order");
  }
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = g.value(g.inputs[i]);
    const InputSpec& s = inputs[i].spec;
    const Location at = inputs[i].loc;
    const std::string who = absl::StrCat("input ", i, " (", ValueName(g, v.id), ")");
    if (v.cpu_tensor) {  // a 0-dim CPU tensor: any 0-dim factory of its dtype
      if (absl::Status bad = CheckCpuScalarEntry(v.dtype, s, at, who, errors); !bad.ok()) {
        return bad;
      }
      shapes.emplace_back();
      continue;
    }
    if (!v.is_tensor) {
      if (s.generator != "scalar") {
        return errors.Error(
            at, absl::StrCat(who, " is a scalar but the list gives a tensor"),
            absl::StrCat("a Python number for a ", DataTypeName(v.dtype), " scalar"));
      }
      if ((IsIntegral(v.dtype) && s.dtype == DataType::kDouble) ||
          (v.dtype == DataType::kBool && s.dtype != DataType::kBool)) {
        return errors.Error(
            at,
            absl::StrCat(who, " is a scalar of type ", DataTypeName(v.dtype),
                         " but the list gives a ", DataTypeName(s.dtype), " number"),
            absl::StrCat("a Python number of type ", DataTypeName(v.dtype)));
      }
      shapes.emplace_back();
      continue;
    }
    if (s.generator == "scalar") {
      return errors.Error(at, absl::StrCat(who, " is a tensor but the list gives a number"),
                          "a torch tensor factory call");
    }
    if (static_cast<int>(s.shape.size()) != v.rank()) {
      return errors.Error(
          at,
          absl::StrCat(who, " has rank ", v.rank(), " in the definition but the list gives shape ",
                       ShapeString(s.shape)),
          absl::StrCat(v.rank(), " sizes"));
    }
    if (s.dtype != v.dtype) {
      return errors.Error(
          at,
          absl::StrCat(who, " is ", DataTypeName(v.dtype), " in the definition but the list makes ",
                       DataTypeName(s.dtype)),
          absl::StrCat("dtype=torch.", DataTypeName(v.dtype)));
    }
    double elements = 1;
    for (size_t a = 0; a < s.shape.size(); ++a) {
      elements *= static_cast<double>(s.shape[a]);
      const Extent e = g.Canonical(v.shape[a]);
      if (e.is_static() && e.size != s.shape[a]) {
        return errors.Error(at,
                            absl::StrCat(who, " axis ", a, " is ", s.shape[a],
                                         " in the list but the definition requires ", e.size),
                            absl::StrCat("size ", e.size));
      }
    }
    if (elements > static_cast<double>(limits.max_elements)) {
      return errors.Error(
          at, absl::StrCat(who, " shape ", ShapeString(s.shape), " has ", elements, " elements"),
          absl::StrCat("at most ", limits.max_elements, " elements"));
    }
    shapes.push_back(s.shape);
  }
  auto binding = BindShapes(g, shapes);
  if (!binding.ok())
    return errors.At(list_loc, binding.status(), "sizes that agree with the definition");
  return absl::OkStatus();
}

}  // namespace frontend
}  // namespace fusiond
