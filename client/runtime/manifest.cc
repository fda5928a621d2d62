#include "client/runtime/manifest.h"

#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "client/runtime/json.h"

namespace fusiond {
namespace runtime {

const char* ElementTypeName(ElementType t) {
  switch (t) {
    case ElementType::kBool:
      return "bool";
    case ElementType::kInt32:
      return "int32";
    case ElementType::kInt64:
      return "int64";
    case ElementType::kFloat16:
      return "float16";
    case ElementType::kBFloat16:
      return "bfloat16";
    case ElementType::kFloat32:
      return "float32";
    case ElementType::kFloat64:
      return "float64";
    case ElementType::kFloat8E4M3:
      return "float8_e4m3fn";
    case ElementType::kFloat8E5M2:
      return "float8_e5m2";
  }
  return "?";
}

int ElementSize(ElementType t) {
  switch (t) {
    case ElementType::kBool:
    case ElementType::kFloat8E4M3:
    case ElementType::kFloat8E5M2:
      return 1;
    case ElementType::kFloat16:
    case ElementType::kBFloat16:
      return 2;
    case ElementType::kInt32:
    case ElementType::kFloat32:
      return 4;
    case ElementType::kInt64:
    case ElementType::kFloat64:
      return 8;
  }
  return 0;
}

absl::StatusOr<ElementType> ParseElementType(std::string_view name) {
  struct Entry {
    const char* name;
    ElementType type;
  };
  static const Entry kNames[] = {
      {"bool", ElementType::kBool},
      {"Bool", ElementType::kBool},
      {"int32", ElementType::kInt32},
      {"Int32", ElementType::kInt32},
      {"int64", ElementType::kInt64},
      {"Int", ElementType::kInt64},
      {"float16", ElementType::kFloat16},
      {"Half", ElementType::kFloat16},
      {"bfloat16", ElementType::kBFloat16},
      {"BFloat16", ElementType::kBFloat16},
      {"float32", ElementType::kFloat32},
      {"Float", ElementType::kFloat32},
      {"float64", ElementType::kFloat64},
      {"Double", ElementType::kFloat64},
      {"float8_e4m3fn", ElementType::kFloat8E4M3},
      {"Float8_e4m3fn", ElementType::kFloat8E4M3},
      {"float8_e5m2", ElementType::kFloat8E5M2},
      {"Float8_e5m2", ElementType::kFloat8E5M2},
  };
  for (const Entry& e : kNames) {
    if (name == e.name) return e.type;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown dtype '", std::string(name), "'"));
}

double Float8Value(uint8_t bits, ElementType t) {
  if (t != ElementType::kFloat8E4M3 && t != ElementType::kFloat8E5M2) return NAN;
  const bool e4m3 = t == ElementType::kFloat8E4M3;
  const int mantissa_bits = e4m3 ? 3 : 2;
  const int bias = e4m3 ? 7 : 15;
  const int max_field = e4m3 ? 15 : 31;
  const int field = (bits & 0x7f) >> mantissa_bits;
  const int mantissa = bits & ((1 << mantissa_bits) - 1);
  double v;
  if (e4m3 && field == max_field && mantissa == (1 << mantissa_bits) - 1) {
    v = NAN;  // e4m3fn spends only S.1111.111 on NaN; the rest of its top binade is finite
  } else if (!e4m3 && field == max_field) {
    v = mantissa != 0 ? NAN : INFINITY;
  } else if (field == 0) {
    v = std::ldexp(mantissa, 1 - bias - mantissa_bits);  // subnormal
  } else {
    v = std::ldexp(mantissa + (1 << mantissa_bits), field - bias - mantissa_bits);
  }
  return (bits & 0x80) ? -v : v;
}

bool KernelRequirement::Holds(int64_t value) const {
  switch (kind) {
    case Kind::kMultipleOf:
      return bound > 0 && value % bound == 0;
    case Kind::kAtMost:
      return value <= bound;
    case Kind::kEquals:
      return value == bound;
  }
  return false;
}

std::string KernelRequirement::Describe() const {
  switch (kind) {
    case Kind::kMultipleOf:
      return absl::StrCat("is a multiple of ", bound);
    case Kind::kAtMost:
      return absl::StrCat("<= ", bound);
    case Kind::kEquals:
      return absl::StrCat("== ", bound);
  }
  return "?";
}

std::vector<RequiredAlignment> RequiredAlignments(const Manifest& m, KernelParam::Kind kind) {
  std::vector<RequiredAlignment> out(kind == KernelParam::Kind::kOutput ? m.outputs.size()
                                                                        : m.inputs.size());
  for (size_t k = 0; k < m.kernels.size(); ++k) {
    for (const KernelParam& p : m.kernels[k].params) {
      if (p.kind != kind || p.index >= static_cast<int>(out.size())) continue;
      RequiredAlignment& a = out[p.index];
      if (p.align > a.bytes) {
        a.bytes = p.align;
        a.kernel = static_cast<int>(k);
      }
    }
  }
  return out;
}

namespace {

absl::Status Bad(const std::string& where, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("manifest: ", where, ": ", what));
}

absl::StatusOr<const JsonValue*> Member(const JsonValue& obj, const char* key, JsonValue::Type type,
                                        const std::string& where) {
  const JsonValue* v = obj.Find(key);
  if (v == nullptr) return Bad(where, absl::StrCat("missing \"", key, "\""));
  if (v->type() != type) {
    return Bad(where, absl::StrCat("\"", key, "\" is a ", JsonValue::TypeName(v->type()),
                                   ", expected a ", JsonValue::TypeName(type)));
  }
  return v;
}

// An expression given as a string or as a JSON integer.
absl::StatusOr<Expr> ParseExprValue(const JsonValue& v, const std::string& where) {
  if (v.is_integer()) return Expr::Constant(v.int_value());
  if (!v.is_string()) return Bad(where, "expected an expression string or an integer");
  absl::StatusOr<Expr> e = Expr::Parse(v.string_value());
  if (!e.ok()) return Bad(where, std::string(e.status().message()));
  return e;
}

absl::StatusOr<int> IntMember(const JsonValue& obj, const char* key, const std::string& where) {
  absl::StatusOr<const JsonValue*> v = Member(obj, key, JsonValue::Type::kNumber, where);
  if (!v.ok()) return v.status();
  if (!(*v)->is_integer() || (*v)->int_value() < 0 || (*v)->int_value() > (1 << 30)) {
    return Bad(where, absl::StrCat("\"", key, "\" must be a non-negative integer"));
  }
  return static_cast<int>((*v)->int_value());
}

std::string OptString(const JsonValue& obj, const char* key) {
  const JsonValue* v = obj.Find(key);
  return v != nullptr && v->is_string() ? v->string_value() : std::string();
}

absl::StatusOr<std::vector<ManifestTensor>> ParseTensors(const JsonValue& root, const char* key,
                                                         bool required) {
  std::vector<ManifestTensor> out;
  const JsonValue* list = root.Find(key);
  if (list == nullptr) {
    if (required) return Bad(key, "missing");
    return out;
  }
  if (!list->is_array()) return Bad(key, "expected an array");
  for (size_t i = 0; i < list->items().size(); ++i) {
    const JsonValue& t = list->items()[i];
    std::string where = absl::StrCat(key, "[", i, "]");
    if (!t.is_object()) return Bad(where, "expected an object");
    ManifestTensor mt;
    mt.name = OptString(t, "name");
    absl::StatusOr<const JsonValue*> dt = Member(t, "dtype", JsonValue::Type::kString, where);
    if (!dt.ok()) return dt.status();
    absl::StatusOr<ElementType> et = ParseElementType((*dt)->string_value());
    if (!et.ok()) return Bad(where, std::string(et.status().message()));
    mt.dtype = *et;
    if (const JsonValue* s = t.Find("scalar"); s != nullptr && s->is_bool()) {
      mt.scalar = s->bool_value();
    }
    if (const JsonValue* c = t.Find("cpu_tensor"); c != nullptr) {
      if (!c->is_bool() || (c->bool_value() && !mt.scalar)) {
        return Bad(where, "\"cpu_tensor\" must be true or false, and true only on a scalar input");
      }
      mt.cpu_tensor = c->bool_value();
    }
    const JsonValue* shape = t.Find("shape");
    if (shape == nullptr && !mt.scalar) return Bad(where, "missing \"shape\"");
    if (shape != nullptr) {
      if (!shape->is_array()) return Bad(where, "\"shape\" must be an array");
      for (size_t a = 0; a < shape->items().size(); ++a) {
        absl::StatusOr<Expr> e =
            ParseExprValue(shape->items()[a], absl::StrCat(where, ".shape[", a, "]"));
        if (!e.ok()) return e.status();
        mt.shape.push_back(*std::move(e));
      }
    }
    out.push_back(std::move(mt));
  }
  return out;
}

absl::StatusOr<KernelParam> ParseParam(const JsonValue& p, const std::string& where) {
  if (!p.is_object()) return Bad(where, "expected an object");
  absl::StatusOr<const JsonValue*> kind = Member(p, "kind", JsonValue::Type::kString, where);
  if (!kind.ok()) return kind.status();
  const std::string& k = (*kind)->string_value();
  KernelParam param;
  if (k == "size") {
    param.kind = KernelParam::Kind::kSize;
    absl::StatusOr<const JsonValue*> sym = Member(p, "symbol", JsonValue::Type::kString, where);
    if (!sym.ok()) return sym.status();
    param.symbol = (*sym)->string_value();
    return param;
  }
  if (k == "input")
    param.kind = KernelParam::Kind::kInput;
  else if (k == "output")
    param.kind = KernelParam::Kind::kOutput;
  else if (k == "intermediate")
    param.kind = KernelParam::Kind::kIntermediate;
  else if (k == "workspace")
    param.kind = KernelParam::Kind::kWorkspace;
  else if (k == "scalar")
    param.kind = KernelParam::Kind::kScalar;
  else
    return Bad(where, absl::StrCat("unknown param kind '", k, "'"));
  absl::StatusOr<int> index = IntMember(p, "index", where);
  if (!index.ok()) return index.status();
  param.index = *index;
  const JsonValue* align = p.Find("align");
  if (align != nullptr &&
      (param.kind == KernelParam::Kind::kInput || param.kind == KernelParam::Kind::kOutput)) {
    const int64_t b = align->is_integer() ? align->int_value() : 0;
    if (b < 1 || b > 256 || (b & (b - 1)) != 0) {
      return Bad(where, "\"align\" must be a power of two from 1 to 256 (bytes)");
    }
    param.align = static_cast<int>(b);
  }
  return param;
}

// One entry of a kernel's "requires": {"expr": E} and one of
// "multiple_of": N, "at_most": N or "equals": N.
absl::StatusOr<KernelRequirement> ParseRequirement(const JsonValue& r, const std::string& where) {
  struct KindKey {
    const char* key;
    KernelRequirement::Kind kind;
  };
  static constexpr KindKey kKinds[] = {{"multiple_of", KernelRequirement::Kind::kMultipleOf},
                                       {"at_most", KernelRequirement::Kind::kAtMost},
                                       {"equals", KernelRequirement::Kind::kEquals}};
  constexpr char kOneOf[] = "\"multiple_of\", \"at_most\", \"equals\"";
  if (!r.is_object()) return Bad(where, "expected an object");
  for (const auto& [key, value] : r.members()) {
    bool known = key == "expr";
    for (const KindKey& k : kKinds) known |= key == k.key;
    if (!known)
      return Bad(where, absl::StrCat("unknown key \"", key, "\" (expected \"expr\" and one of ",
                                     kOneOf, ")"));
  }
  const JsonValue* expr = r.Find("expr");
  if (expr == nullptr) return Bad(where, "missing \"expr\"");
  KernelRequirement req;
  absl::StatusOr<Expr> e = ParseExprValue(*expr, where + ".expr");
  if (!e.ok()) return e.status();
  req.expr = *std::move(e);
  const JsonValue* bound = nullptr;
  const char* key = nullptr;
  for (const KindKey& k : kKinds) {
    const JsonValue* v = r.Find(k.key);
    if (v == nullptr) continue;
    if (bound != nullptr) return Bad(where, absl::StrCat("needs exactly one of ", kOneOf));
    bound = v;
    key = k.key;
    req.kind = k.kind;
  }
  if (bound == nullptr) return Bad(where, absl::StrCat("needs exactly one of ", kOneOf));
  const bool positive = req.kind == KernelRequirement::Kind::kMultipleOf;
  if (!bound->is_integer() || (positive && bound->int_value() <= 0)) {
    return Bad(where, absl::StrCat("\"", key, "\" must be an integer", positive ? " > 0" : ""));
  }
  req.bound = bound->int_value();
  return req;
}

// Names a kernel's condition in messages: "kernels[0] (fusion_9f1c_k0).requires[1]".
std::string RequirementWhere(const std::string& kernel_where, const std::string& kernel_name,
                             size_t i) {
  return absl::StrCat(kernel_where, " (", kernel_name, ").requires[", i, "]");
}

absl::Status ParseDims(const JsonValue& k, const char* key, Expr* dims, const std::string& where) {
  absl::StatusOr<const JsonValue*> arr = Member(k, key, JsonValue::Type::kArray, where);
  if (!arr.ok()) return arr.status();
  const auto& items = (*arr)->items();
  if (items.empty() || items.size() > 3)
    return Bad(where, absl::StrCat("\"", key, "\" needs 1 to 3 entries"));
  for (int d = 0; d < 3; ++d) {
    if (d >= static_cast<int>(items.size())) {
      dims[d] = Expr::Constant(1);
      continue;
    }
    absl::StatusOr<Expr> e = ParseExprValue(items[d], absl::StrCat(where, ".", key, "[", d, "]"));
    if (!e.ok()) return e.status();
    dims[d] = *std::move(e);
  }
  return absl::OkStatus();
}

absl::StatusOr<ManifestKernel> ParseKernel(const JsonValue& k, const std::string& where) {
  if (!k.is_object()) return Bad(where, "expected an object");
  ManifestKernel mk;
  absl::StatusOr<const JsonValue*> name = Member(k, "name", JsonValue::Type::kString, where);
  if (!name.ok()) return name.status();
  mk.name = (*name)->string_value();
  absl::StatusOr<const JsonValue*> bin = Member(k, "binary", JsonValue::Type::kString, where);
  if (!bin.ok()) return bin.status();
  mk.binary = (*bin)->string_value();
  if (mk.binary.empty() || mk.binary.find('/') != std::string::npos) {
    return Bad(where, "\"binary\" must be a plain file name beside manifest.json");
  }
  mk.scheduler = OptString(k, "scheduler");
  if (const JsonValue* c = k.Find("cooperative"); c != nullptr && c->is_bool()) {
    mk.cooperative = c->bool_value();
  }
  if (absl::Status s = ParseDims(k, "block", mk.block, where); !s.ok()) return s;
  if (absl::Status s = ParseDims(k, "grid", mk.grid, where); !s.ok()) return s;
  mk.smem_bytes = Expr::Constant(0);
  if (const JsonValue* smem = k.Find("smem_bytes"); smem != nullptr) {
    absl::StatusOr<Expr> e = ParseExprValue(*smem, where + ".smem_bytes");
    if (!e.ok()) return e.status();
    mk.smem_bytes = *std::move(e);
  }
  absl::StatusOr<const JsonValue*> params = Member(k, "params", JsonValue::Type::kArray, where);
  if (!params.ok()) return params.status();
  for (size_t i = 0; i < (*params)->items().size(); ++i) {
    absl::StatusOr<KernelParam> p =
        ParseParam((*params)->items()[i], absl::StrCat(where, ".params[", i, "]"));
    if (!p.ok()) return p.status();
    mk.params.push_back(*p);
  }
  if (const JsonValue* reqs = k.Find("requires"); reqs != nullptr) {
    if (!reqs->is_array()) {
      return Bad(absl::StrCat(where, " (", mk.name, ").requires"), "expected an array");
    }
    for (size_t i = 0; i < reqs->items().size(); ++i) {
      absl::StatusOr<KernelRequirement> r =
          ParseRequirement(reqs->items()[i], RequirementWhere(where, mk.name, i));
      if (!r.ok()) return r.status();
      mk.requirements.push_back(*std::move(r));
    }
  }
  return mk;
}

// Every symbol an expression reads is declared.
absl::Status CheckSymbols(const Expr& e, const std::set<std::string>& declared,
                          const std::string& where) {
  for (const std::string& s : e.Symbols()) {
    if (declared.count(s) == 0) {
      return Bad(where,
                 absl::StrCat("expression '", e.text(), "' reads undeclared symbol '", s, "'"));
    }
  }
  return absl::OkStatus();
}

absl::Status Validate(const Manifest& m) {
  std::set<std::string> declared;
  for (size_t i = 0; i < m.symbols.size(); ++i) {
    const ManifestSymbol& s = m.symbols[i];
    std::string where = absl::StrCat("symbols[", i, "]");
    if (!declared.insert(s.name).second)
      return Bad(where, absl::StrCat("duplicate symbol '", s.name, "'"));
    if (s.input >= static_cast<int>(m.inputs.size()) || m.inputs[s.input].scalar) {
      return Bad(where, absl::StrCat("input ", s.input, " is not a tensor input"));
    }
    if (s.axis >= static_cast<int>(m.inputs[s.input].shape.size())) {
      return Bad(where, absl::StrCat("axis ", s.axis, " out of range for input ", s.input));
    }
  }
  auto check_tensors = [&](const std::vector<ManifestTensor>& ts,
                           const char* what) -> absl::Status {
    for (size_t i = 0; i < ts.size(); ++i) {
      for (size_t a = 0; a < ts[i].shape.size(); ++a) {
        absl::Status s =
            CheckSymbols(ts[i].shape[a], declared, absl::StrCat(what, "[", i, "].shape[", a, "]"));
        if (!s.ok()) return s;
      }
    }
    return absl::OkStatus();
  };
  for (auto [ts, what] :
       {std::make_pair(&m.inputs, "inputs"), std::make_pair(&m.outputs, "outputs"),
        std::make_pair(&m.intermediates, "intermediates")}) {
    if (absl::Status s = check_tensors(*ts, what); !s.ok()) return s;
  }
  for (size_t i = 0; i < m.outputs.size(); ++i) {
    if (m.outputs[i].scalar)
      return Bad(absl::StrCat("outputs[", i, "]"), "outputs must be tensors");
  }
  for (size_t i = 0; i < m.workspaces.size(); ++i) {
    absl::Status s =
        CheckSymbols(m.workspaces[i].bytes, declared, absl::StrCat("workspaces[", i, "]"));
    if (!s.ok()) return s;
  }
  if (m.kernels.empty()) return Bad("kernels", "no kernels");
  for (size_t k = 0; k < m.kernels.size(); ++k) {
    const ManifestKernel& mk = m.kernels[k];
    std::string where = absl::StrCat("kernels[", k, "]");
    for (int d = 0; d < 3; ++d) {
      if (absl::Status s = CheckSymbols(mk.block[d], declared, where + ".block"); !s.ok()) return s;
      if (absl::Status s = CheckSymbols(mk.grid[d], declared, where + ".grid"); !s.ok()) return s;
    }
    if (absl::Status s = CheckSymbols(mk.smem_bytes, declared, where + ".smem_bytes"); !s.ok())
      return s;
    for (size_t i = 0; i < mk.requirements.size(); ++i) {
      absl::Status s =
          CheckSymbols(mk.requirements[i].expr, declared, RequirementWhere(where, mk.name, i));
      if (!s.ok()) return s;
    }
    for (size_t i = 0; i < mk.params.size(); ++i) {
      const KernelParam& p = mk.params[i];
      std::string pw = absl::StrCat(where, ".params[", i, "]");
      size_t limit = 0;
      switch (p.kind) {
        case KernelParam::Kind::kInput:
          limit = m.inputs.size();
          break;
        case KernelParam::Kind::kScalar:
          limit = m.inputs.size();
          break;
        case KernelParam::Kind::kOutput:
          limit = m.outputs.size();
          break;
        case KernelParam::Kind::kIntermediate:
          limit = m.intermediates.size();
          break;
        case KernelParam::Kind::kWorkspace:
          limit = m.workspaces.size();
          break;
        case KernelParam::Kind::kSize:
          if (declared.count(p.symbol) == 0)
            return Bad(pw, absl::StrCat("undeclared symbol '", p.symbol, "'"));
          continue;
      }
      if (p.index >= static_cast<int>(limit)) {
        return Bad(pw, absl::StrCat("index ", p.index, " out of range (", limit, " available)"));
      }
      if (p.kind == KernelParam::Kind::kInput && m.inputs[p.index].scalar) {
        return Bad(pw, absl::StrCat("input ", p.index, " is a scalar; use kind \"scalar\""));
      }
      if (p.kind == KernelParam::Kind::kScalar && !m.inputs[p.index].scalar &&
          !m.inputs[p.index].shape.empty()) {
        return Bad(pw, absl::StrCat("input ", p.index, " is a tensor, not a scalar"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Manifest> ParseManifest(std::string_view json_text) {
  absl::StatusOr<JsonValue> doc = ParseJson(json_text);
  if (!doc.ok()) return Bad("json", std::string(doc.status().message()));
  const JsonValue& root = *doc;
  if (!root.is_object()) return Bad("top level", "expected an object");
  Manifest m;
  absl::StatusOr<int> version = IntMember(root, "manifest_version", "top level");
  if (!version.ok()) return version.status();
  if (*version < 1 || *version > 3) {
    return absl::UnimplementedError(absl::StrCat("manifest: manifest_version ", *version,
                                                 " is not supported (this runtime reads 1 to 3)"));
  }
  m.version = *version;
  m.fusion = OptString(root, "fusion");
  m.canonical_hash = OptString(root, "canonical_hash");
  m.arch = OptString(root, "arch");
  if (const JsonValue* syms = root.Find("symbols"); syms != nullptr) {
    if (!syms->is_array()) return Bad("symbols", "expected an array");
    for (size_t i = 0; i < syms->items().size(); ++i) {
      const JsonValue& s = syms->items()[i];
      std::string where = absl::StrCat("symbols[", i, "]");
      if (!s.is_object()) return Bad(where, "expected an object");
      ManifestSymbol ms;
      absl::StatusOr<const JsonValue*> name = Member(s, "name", JsonValue::Type::kString, where);
      if (!name.ok()) return name.status();
      ms.name = (*name)->string_value();
      absl::StatusOr<int> input = IntMember(s, "input", where);
      if (!input.ok()) return input.status();
      absl::StatusOr<int> axis = IntMember(s, "axis", where);
      if (!axis.ok()) return axis.status();
      ms.input = *input;
      ms.axis = *axis;
      m.symbols.push_back(ms);
    }
  }
  absl::StatusOr<std::vector<ManifestTensor>> inputs = ParseTensors(root, "inputs", true);
  if (!inputs.ok()) return inputs.status();
  m.inputs = *std::move(inputs);
  absl::StatusOr<std::vector<ManifestTensor>> outputs = ParseTensors(root, "outputs", true);
  if (!outputs.ok()) return outputs.status();
  m.outputs = *std::move(outputs);
  absl::StatusOr<std::vector<ManifestTensor>> inter = ParseTensors(root, "intermediates", false);
  if (!inter.ok()) return inter.status();
  m.intermediates = *std::move(inter);
  if (const JsonValue* ws = root.Find("workspaces"); ws != nullptr) {
    if (!ws->is_array()) return Bad("workspaces", "expected an array");
    for (size_t i = 0; i < ws->items().size(); ++i) {
      const JsonValue& w = ws->items()[i];
      std::string where = absl::StrCat("workspaces[", i, "]");
      if (!w.is_object()) return Bad(where, "expected an object");
      const JsonValue* bytes = w.Find("bytes");
      if (bytes == nullptr) return Bad(where, "missing \"bytes\"");
      absl::StatusOr<Expr> e = ParseExprValue(*bytes, where + ".bytes");
      if (!e.ok()) return e.status();
      ManifestWorkspace mw;
      mw.bytes = *std::move(e);
      if (const JsonValue* z = w.Find("zero"); z != nullptr && z->is_bool())
        mw.zero = z->bool_value();
      if (const JsonValue* k = w.Find("keep"); k != nullptr && k->is_bool())
        mw.keep = k->bool_value();
      m.workspaces.push_back(std::move(mw));
    }
  }
  absl::StatusOr<const JsonValue*> kernels =
      Member(root, "kernels", JsonValue::Type::kArray, "top level");
  if (!kernels.ok()) return kernels.status();
  for (size_t i = 0; i < (*kernels)->items().size(); ++i) {
    absl::StatusOr<ManifestKernel> k =
        ParseKernel((*kernels)->items()[i], absl::StrCat("kernels[", i, "]"));
    if (!k.ok()) return k.status();
    m.kernels.push_back(*std::move(k));
  }
  if (absl::Status s = Validate(m); !s.ok()) return s;
  return m;
}

}  // namespace runtime
}  // namespace fusiond
