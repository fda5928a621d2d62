#include "compiler/codegen/shift_emitter.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/printer.h"

namespace fusiond {
namespace {

// Bounds on one shifted read: the operand chain's depth (the emitter
// recurses over it) and the (value, index) pairs it emits (nested cats
// multiply them).
constexpr int kMaxDepth = 256;
constexpr int kMaxEmitted = 4096;

// A multi-index of a tensor: axes [0, k) as one linear index `outer` over
// the extents outer_ext (k = outer_ext.size()), the others one expression
// each ("" for the axes in `outer`). `lane`: the innermost axis' expression is
// the chunk's first lane's, each lane adds its number (ShiftLanes).
struct Index {
  std::string outer;
  std::vector<Extent> outer_ext;
  std::vector<std::string> axis;
  bool lane = false;

  std::string Key() const {
    return absl::StrCat(outer, "|", absl::StrJoin(axis, ","), lane ? "|l" : "");
  }
};

class Emitter {
 public:
  Emitter(const KernelPlan& plan, const ExprOptions& options,
          const std::map<ValueId, int>& input_index, const ShiftLanes* lanes,
          const std::string& prefix, std::string* out, const std::string& indent,
          const std::function<absl::StatusOr<std::string>(ValueId)>& scalar)
      : p_(plan),
        g_(*plan.graph),
        opt_(options),
        input_index_(input_index),
        lanes_(lanes),
        prefix_(prefix),
        out_(out),
        indent_(indent),
        scalar_(scalar) {}

  absl::StatusOr<std::string> Root(ValueId v, const std::string& linear);

 private:
  Extent Ext(ValueId v, int a) const { return g_.Canonical(g_.value(v).shape[a]); }
  std::string Declare(const std::string& type, const std::string& expr);
  // An i64 index; `chunk`: the same for every lane, declared before the
  // lane loop where the scope has a place there (ShiftLanes::chunk).
  std::string Var(const std::string& expr, bool chunk);
  // Product of shape[from, to) ("1" when empty).
  std::string Prod(const std::vector<Extent>& shape, size_t from, size_t to) const;
  std::vector<Extent> Shape(ValueId v) const;
  std::string Div(const std::string& x, const std::string& d) const;
  std::string Mod(const std::string& x, const std::string& d) const;
  // Spells out every axis of ix (k becomes 0).
  void Materialize(Index& ix);
  // Gives each lane its own innermost index (ix.lane becomes false).
  void Delane(Index& ix);
  // Whether an innermost extent keeps a chunk's lanes together.
  bool Whole(const Extent& e) const { return e.is_static() && e.size % width_ == 0; }
  // The offset of ix in a contiguous row-major tensor of v's shape.
  std::string Linear(ValueId v, Index ix);
  absl::StatusOr<std::string> Eval(ValueId v, Index ix, int depth);
  absl::StatusOr<std::string> Pointwise(const Node& n, Index ix, int depth);
  absl::StatusOr<Index> ShapeOperandIndex(const Node& n, Index ix);
  absl::StatusOr<std::string> Slice(const Node& n, Index ix, int depth);
  absl::StatusOr<std::string> Pad(const Node& n, Index ix, int depth);
  absl::StatusOr<std::string> Cat(const Node& n, Index ix, int depth);
  // The operand at the same row-major offset (both contiguous).
  absl::StatusOr<std::string> Reshape(const Node& n, Index ix, int depth);
  absl::StatusOr<std::string> Load(ValueId v, Index ix);
  // x clamped into [0, e) (e > 0); with lanes (e a multiple of the width)
  // the first lane's index clamped so that every lane's is in range.
  std::string Clamp(const std::string& x, int64_t e, bool low, bool high, bool lane, bool chunk);

  const KernelPlan& p_;
  const Graph& g_;
  const ExprOptions& opt_;
  const std::map<ValueId, int>& input_index_;
  const ShiftLanes* lanes_;
  int width_ = 1;  // the chunk's lanes (1: no chunk form)
  const std::string prefix_;
  std::string* out_;
  const std::string indent_;
  const std::function<absl::StatusOr<std::string>(ValueId)>& scalar_;
  bool narrow_ = false;  // the root's indices fit 32 bits: 32-bit divisions
  int vars_ = 0;
  std::map<std::string, std::string> memo_;  // "v@index" -> its expression
};

std::string Emitter::Var(const std::string& expr, bool chunk) {
  if (!chunk || lanes_ == nullptr || lanes_->chunk == nullptr) return Declare("i64", expr);
  std::string name = absl::StrCat(prefix_, "_", vars_++);
  absl::StrAppend(lanes_->chunk, lanes_->chunk_indent, "const i64 ", name, " = ", expr, ";\n");
  return name;
}

std::string Emitter::Declare(const std::string& type, const std::string& expr) {
  std::string name = absl::StrCat(prefix_, "_", vars_++);
  absl::StrAppend(out_, indent_, "const ", type, " ", name, " = ", expr, ";\n");
  return name;
}

std::vector<Extent> Emitter::Shape(ValueId v) const {
  std::vector<Extent> s;
  for (int a = 0; a < g_.value(v).rank(); ++a) s.push_back(Ext(v, a));
  return s;
}

std::string Emitter::Prod(const std::vector<Extent>& shape, size_t from, size_t to) const {
  int64_t k = 1;
  std::vector<std::string> f;
  for (size_t a = from; a < to; ++a) {
    if (shape[a].is_static()) {
      k *= shape[a].size;
    } else {
      f.push_back(p_.ExtentExpr(shape[a]));
    }
  }
  if (k != 1 || f.empty()) f.push_back(std::to_string(k));
  return f.size() == 1 ? f[0] : absl::StrCat("(", absl::StrJoin(f, " * "), ")");
}

std::string Emitter::Div(const std::string& x, const std::string& d) const {
  if (d == "1") return x;
  const char* u = narrow_ ? "u32" : "u64";
  return absl::StrCat("(i64)((", u, ")(", x, ") / (", u, ")(", d, "))");
}

std::string Emitter::Mod(const std::string& x, const std::string& d) const {
  if (d == "1") return "0";
  const char* u = narrow_ ? "u32" : "u64";
  return absl::StrCat("(i64)((", u, ")(", x, ") % (", u, ")(", d, "))");
}

void Emitter::Materialize(Index& ix) {
  const size_t k = ix.outer_ext.size();
  for (size_t a = 0; a < k; ++a) {
    if (ix.outer_ext[a].is_broadcast()) {
      ix.axis[a] = "0";
      continue;
    }
    std::string q = Div(ix.outer, Prod(ix.outer_ext, a + 1, k));
    if (a > 0) q = Mod(q, p_.ExtentExpr(ix.outer_ext[a]));
    ix.axis[a] = Var(q, ix.lane);
  }
  ix.outer.clear();
  ix.outer_ext.clear();
}

std::string Emitter::Linear(ValueId v, Index ix) {
  const std::vector<Extent> shape = Shape(v);
  const size_t r = shape.size();
  size_t k = ix.outer_ext.size();
  if (k > 0) {
    bool same = ix.axis.size() == r;
    for (size_t a = 0; same && a < k; ++a) same = shape[a] == ix.outer_ext[a];
    if (!same) {
      Materialize(ix);
      k = 0;
    }
  }
  std::vector<std::string> terms;
  if (k > 0) {
    const std::string s = Prod(shape, k, r);
    terms.push_back(s == "1" ? ix.outer : absl::StrCat(ix.outer, " * ", s));
  }
  for (size_t a = k; a < r; ++a) {
    if (shape[a].is_broadcast() || ix.axis[a] == "0") continue;
    const std::string s = Prod(shape, a + 1, r);
    terms.push_back(s == "1" ? ix.axis[a] : absl::StrCat(ix.axis[a], " * ", s));
  }
  if (terms.empty()) return "0";
  return absl::StrCat("(", absl::StrJoin(terms, " + "), ")");
}

void Emitter::Delane(Index& ix) {
  if (!ix.lane) return;
  std::string& a = ix.axis.back();
  a = Var(absl::StrCat(a, " + ", lanes_->lane), false);
  ix.lane = false;
}

std::string Emitter::Clamp(const std::string& x, int64_t e, bool low, bool high, bool lane,
                           bool chunk) {
  std::string c = x;
  if (high) c = absl::StrCat("(", c, " >= ", e, " ? (i64)", e - (lane ? width_ : 1), " : ", c, ")");
  if (low) c = absl::StrCat("(", x, " < 0 ? (i64)0 : ", c, ")");
  return c == x ? x : Var(c, chunk);
}

absl::StatusOr<std::string> Emitter::Root(ValueId v, const std::string& linear) {
  const Node& n = *g_.def(v);
  const std::vector<Extent> shape = Shape(v);
  const int r = static_cast<int>(shape.size());
  // The first axis the op moves an index along or guards.
  int k = r;
  for (int a = 0; a < r && k == r; ++a) {
    const auto& o = n.attrs.offsets;
    if ((n.op == OpKind::kSlice && (o[a] != 0 || o[2 * r + a] != 1)) ||
        (n.op == OpKind::kPad && (o[2 * a] != 0 || o[2 * a + 1] != 0)) ||
        (n.op == OpKind::kCat && n.attrs.axis == a)) {
      k = a;
    }
  }
  int64_t numel = 1;
  narrow_ = true;
  for (const Extent& e : shape) {
    narrow_ &= e.is_static() && (e.size == 0 || numel <= INT32_MAX / e.size);
    if (narrow_) numel *= e.size;
  }
  // The chunk form: lanes along an innermost axis that holds whole chunks.
  Index ix;
  if (lanes_ != nullptr && !lanes_->first.empty() && lanes_->width > 1 && r > 0) {
    width_ = lanes_->width;
    ix.lane = Whole(shape[r - 1]);
    if (!ix.lane) width_ = 1;
  }
  if (ix.lane && k == r) k = r - 1;  // the innermost axis apart
  ix.axis.assign(r, "");
  ix.outer_ext.assign(shape.begin(), shape.begin() + k);
  std::string rem = Var(ix.lane ? lanes_->first : linear, ix.lane);
  if (k > 0) {
    const std::string inner = Prod(shape, k, r);
    ix.outer = inner == "1" ? rem : Var(Div(rem, inner), ix.lane);
    if (k < r) rem = Var(Mod(rem, inner), ix.lane);
  }
  for (int a = r - 1; a >= k; --a) {
    if (shape[a].is_broadcast()) {
      ix.axis[a] = "0";
    } else if (a == k) {
      ix.axis[a] = rem;
    } else {
      const std::string e = p_.ExtentExpr(shape[a]);
      ix.axis[a] = Var(Mod(rem, e), ix.lane);
      rem = Var(Div(rem, e), ix.lane);
    }
  }
  return Eval(v, std::move(ix), 0);
}

absl::StatusOr<std::string> Emitter::Eval(ValueId v, Index ix, int depth) {
  const Value& val = g_.value(v);
  if (!val.is_tensor) return scalar_(v);
  if (depth > kMaxDepth || static_cast<int>(memo_.size()) > kMaxEmitted) {
    return absl::UnimplementedError(absl::StrCat(
        "codegen: the values read at shifted indices for ", ValueName(g_, v), " pass ", kMaxDepth,
        " ops deep or ", kMaxEmitted, " (value, index) pairs; the segmenter cuts such chains"));
  }
  const std::string key = absl::StrCat(v, "@", ix.Key());
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  const Node* d = g_.def(v);
  const std::string type = ComputeTypeName(val.dtype);
  absl::StatusOr<std::string> e;
  if (d == nullptr) {
    e = Load(v, ix);
  } else if (IsPointwise(d->op)) {
    e = Pointwise(*d, ix, depth);
  } else if (IsIndexed(d->op)) {
    Delane(ix);
    std::vector<std::string> ops;
    for (ValueId in : d->inputs) {
      auto s = scalar_(in);
      if (!s.ok()) return s.status();
      ops.push_back(*s);
    }
    auto x = EmitIndexed(g_, *d, ops, Linear(v, ix));
    if (!x.ok()) return x.status();
    e = Declare(type, *x);
  } else if (d->op == OpKind::kSlice) {
    e = Slice(*d, ix, depth);
  } else if (d->op == OpKind::kPad) {
    e = Pad(*d, ix, depth);
  } else if (d->op == OpKind::kCat) {
    e = Cat(*d, ix, depth);
  } else if (d->op == OpKind::kReshape) {
    e = Reshape(*d, ix, depth);
  } else if (IsShapeOp(d->op)) {
    if (!g_.value(d->inputs[0]).is_tensor) {
      e = scalar_(d->inputs[0]);  // full / zeros / ones: a broadcast scalar
    } else {
      auto oi = ShapeOperandIndex(*d, ix);
      if (!oi.ok()) return oi.status();
      e = Eval(d->inputs[0], *std::move(oi), depth + 1);
    }
  } else {
    return absl::UnimplementedError(absl::StrCat(
        "codegen: ", ValueName(g_, v), ", a ", OpName(d->op),
        " result, is read at shifted indices; a kernel reads shifted operands only through "
        "pointwise ops, broadcasts, squeeze, permute, reshape and slice/pad/cat down to its "
        "inputs"));
  }
  if (!e.ok()) return e.status();
  memo_[key] = *e;
  return e;
}

absl::StatusOr<std::string> Emitter::Load(ValueId v, Index ix) {
  auto in = input_index_.find(v);
  if (in == input_index_.end()) {
    return absl::InternalError(absl::StrCat("codegen: ", ValueName(g_, v), " is no input"));
  }
  const Value& val = g_.value(v);
  const int dt = static_cast<int>(val.dtype);
  const std::string type = ComputeTypeName(val.dtype);
  const bool known = lanes_ != nullptr && lanes_->aligned && lanes_->aligned(v);
  if (ix.lane && Whole(Ext(v, val.rank() - 1)) && (known || lanes_->chunk != nullptr)) {
    // The chunk's elements are consecutive in the input: its words once per
    // chunk, each lane taking its own. A pointer vec_ok aligns is read as a
    // vector; another one as a vector where it is aligned, else element by
    // element. Without a place before the lane loop every lane loads the
    // same words (NVVM keeps one load of each word the lanes use).
    const std::string bytes = absl::StrCat(lanes_->count, " * ", DataTypeSize(val.dtype));
    const std::string w = absl::StrCat(prefix_, "_", vars_++, "w");
    std::string* to = lanes_->chunk != nullptr ? lanes_->chunk : out_;
    const std::string& at = lanes_->chunk != nullptr ? lanes_->chunk_indent : indent_;
    const std::string ptr = absl::StrCat("in", in->second, " + ", Linear(v, ix));
    if (known) {
      absl::StrAppend(to, at, "u32 ", w, "[(", bytes, " + 3) / 4];\n", at, "Chunk<", bytes,
                      ">::ld(", w, ", ", ptr, ");\n");
    } else {
      absl::StrAppend(to, at, "u32 ", w, "[(", bytes, " + 3) / 4] = {};\n", at, "{\n", at,
                      "  const auto* p = ", ptr, ";\n", at, "  bool v = false;\n", at,
                      "  if constexpr (", bytes, " <= 16) {\n", at, "    if ((u64)p % (", bytes,
                      ") == 0) {\n", at, "      Chunk<", bytes, ">::ld(", w, ", p);\n", at,
                      "      v = true;\n", at, "    }\n", at, "  }\n", at, "  if (!v)\n", at,
                      "    for (int q = 0; q < ", lanes_->count, "; ++q) Ty<", dt, ">::put(", w,
                      ", q, Ty<", dt, ">::load(p + q));\n", at, "}\n");
    }
    return Declare(type, absl::StrCat("Ty<", dt, ">::get(", w, ", ", lanes_->lane, ")"));
  }
  Delane(ix);
  return Declare(type,
                 absl::StrCat("Ty<", dt, ">::load(in", in->second, " + ", Linear(v, ix), ")"));
}

absl::StatusOr<std::string> Emitter::Pointwise(const Node& n, Index ix, int depth) {
  const ValueId out = n.outputs[0];
  const int r = g_.value(out).rank();
  // An operand broadcast along an axis of `outer` needs the axes spelled out.
  for (ValueId in : n.inputs) {
    const Value& iv = g_.value(in);
    if (!iv.is_tensor || iv.rank() != r) continue;
    for (size_t a = 0; a < ix.outer_ext.size(); ++a) {
      if (!(Ext(in, a) == ix.outer_ext[a])) {
        Materialize(ix);
        break;
      }
    }
  }
  std::vector<std::string> ops;
  for (ValueId in : n.inputs) {
    const Value& iv = g_.value(in);
    Index oi;
    if (iv.is_tensor && iv.rank() == r) {
      oi = ix;
      for (int a = 0; a < r; ++a) {
        if (Ext(in, a).is_broadcast() && !Ext(out, a).is_broadcast()) {
          oi.axis[a] = "0";
          if (a == r - 1) oi.lane = false;  // the same element for every lane
        }
      }
    }
    auto x = Eval(in, std::move(oi), depth + 1);
    if (!x.ok()) return x.status();
    ops.push_back(*x);
  }
  auto e = EmitPointwise(g_, n, ops, opt_);
  if (!e.ok()) return e.status();
  return Declare(ComputeTypeName(g_.value(out).dtype), *e);
}

absl::StatusOr<Index> Emitter::ShapeOperandIndex(const Node& n, Index ix) {
  Materialize(ix);
  const ValueId x = n.inputs[0];
  const int xr = g_.value(x).rank();
  // from[i]: the result axis whose index operand axis i takes (-1: none).
  std::vector<int> from(xr, -1);
  switch (n.op) {
    case OpKind::kBroadcastInDim:
      for (int i = 0; i < xr; ++i) from[i] = static_cast<int>(n.attrs.broadcast_dims[i]);
      break;
    case OpKind::kBroadcast: {
      int i = 0;
      for (size_t o = 0; o < n.attrs.is_broadcast_dim.size(); ++o) {
        if (!n.attrs.is_broadcast_dim[o]) from[i++] = static_cast<int>(o);
      }
      break;
    }
    case OpKind::kExpand:
      for (int i = 0; i < xr; ++i) from[i] = i;
      break;
    case OpKind::kSqueeze: {
      int o = 0;
      for (int i = 0; i < xr; ++i) {
        const auto& dims = n.attrs.dims;
        if (std::count(dims.begin(), dims.end(), static_cast<int64_t>(i)) == 0) from[i] = o++;
      }
      break;
    }
    case OpKind::kPermute:
      for (size_t o = 0; o < n.attrs.dims.size(); ++o) from[n.attrs.dims[o]] = static_cast<int>(o);
      break;
    default:
      return absl::UnimplementedError(
          absl::StrCat("codegen: ", OpName(n.op), " read at shifted indices"));
  }
  for (int i = 0; i < xr; ++i) {
    if (Ext(x, i).is_broadcast()) from[i] = -1;  // index 0 whatever the result's
  }
  Index oi;
  if (ix.lane) {
    // The lanes stay a chunk when the operand's innermost axis is the
    // result's; an operand that does not see that axis is the same for
    // every lane; otherwise each lane indexes on its own.
    const int last = static_cast<int>(ix.axis.size()) - 1;
    const bool seen = std::count(from.begin(), from.end(), last) > 0;
    if (seen && xr > 0 && from[xr - 1] == last && Ext(x, xr - 1) == Ext(n.outputs[0], last)) {
      oi.lane = true;
    } else if (seen) {
      Delane(ix);
    }
  }
  oi.axis.assign(xr, "0");
  for (int i = 0; i < xr; ++i) {
    if (from[i] >= 0) oi.axis[i] = ix.axis[from[i]];
  }
  return oi;
}

absl::StatusOr<std::string> Emitter::Slice(const Node& n, Index ix, int depth) {
  const auto& o = n.attrs.offsets;
  const int r = static_cast<int>(ix.axis.size());
  for (int a = 0; a < r; ++a) {
    const int64_t start = o[a], stride = o[2 * r + a];
    if (start == 0 && stride == 1) continue;
    if (a < static_cast<int>(ix.outer_ext.size())) Materialize(ix);
    if (a == r - 1 && (stride != 1 || start % width_ != 0)) Delane(ix);
    std::string i = ix.axis[a];
    if (stride != 1) i = absl::StrCat(i, " * ", stride);
    ix.axis[a] = Var(start == 0 ? i : absl::StrCat(i, " + ", start), ix.lane);
  }
  return Eval(n.inputs[0], std::move(ix), depth + 1);
}

absl::StatusOr<std::string> Emitter::Pad(const Node& n, Index ix, int depth) {
  const auto& o = n.attrs.offsets;
  const ValueId x = n.inputs[0];
  const DataType dt = g_.value(x).dtype;
  auto pv = scalar_(n.inputs[1]);
  if (!pv.ok()) return pv.status();
  const std::string type = ComputeTypeName(dt);
  const std::string fill = RoundTo(dt, absl::StrCat("((", type, ")(", *pv, "))"));
  const int r = static_cast<int>(ix.axis.size());
  std::vector<std::string> inside;
  for (int a = 0; a < r; ++a) {
    const int64_t lo = o[2 * a], hi = o[2 * a + 1];
    if (lo == 0 && hi == 0) continue;
    const int64_t e = Ext(x, a).size;        // static: the builder pads only static axes
    if (e == 0) return Declare(type, fill);  // nothing to read: the fill everywhere
    if (a < static_cast<int>(ix.outer_ext.size())) Materialize(ix);
    // Lanes stay a chunk where the window's edges are chunk edges.
    if (a == r - 1 && (lo % width_ != 0 || e % width_ != 0)) Delane(ix);
    const std::string t = lo == 0 ? ix.axis[a] : Var(absl::StrCat(ix.axis[a], " - ", lo), ix.lane);
    inside.push_back(absl::StrCat("(u64)", t, " < (u64)", e));
    ix.axis[a] = Clamp(t, e, lo > 0, hi > 0, ix.lane && a == r - 1, ix.lane);
  }
  auto xv = Eval(x, std::move(ix), depth + 1);
  if (!xv.ok()) return xv.status();
  if (inside.empty()) return xv;
  return Declare(type, absl::StrCat("(", absl::StrJoin(inside, " && "), ") ? ", *xv, " : ", fill));
}

absl::StatusOr<std::string> Emitter::Reshape(const Node& n, Index ix, int depth) {
  const ValueId x = n.inputs[0];
  const int xr = g_.value(x).rank();
  // Lanes stay a chunk when the operand's innermost extent holds whole
  // chunks: the first lane's offset is a multiple of the width.
  const bool lane = ix.lane && xr > 0 && Whole(Ext(x, xr - 1));
  if (!lane) Delane(ix);
  const std::string lin = Var(Linear(n.outputs[0], ix), lane);
  // The operand may be larger than the result whose index this is: its own
  // element count decides the divisions' width.
  const bool narrow = narrow_;
  int64_t numel = 1;
  narrow_ = true;
  for (int a = 0; a < xr; ++a) {
    const Extent e = Ext(x, a);
    narrow_ &= e.is_static() && (e.size == 0 || numel <= INT32_MAX / e.size);
    if (narrow_) numel *= e.size;
  }
  Index oi;
  oi.axis.assign(xr, "0");
  oi.lane = lane;
  std::string rem = lin;
  int first = 0;  // the outermost axis that is not 1
  while (first < xr && Ext(x, first).is_broadcast()) ++first;
  for (int a = xr - 1; a >= first; --a) {
    const Extent e = Ext(x, a);
    if (e.is_broadcast()) continue;
    if (a == first) {
      oi.axis[a] = rem;
      break;
    }
    oi.axis[a] = Var(Mod(rem, p_.ExtentExpr(e)), lane);
    rem = Var(Div(rem, p_.ExtentExpr(e)), lane);
  }
  narrow_ = narrow;
  return Eval(x, std::move(oi), depth + 1);
}

absl::StatusOr<std::string> Emitter::Cat(const Node& n, Index ix, int depth) {
  const int c = static_cast<int>(n.attrs.axis);
  const bool last = c == static_cast<int>(ix.axis.size()) - 1;
  if (c < static_cast<int>(ix.outer_ext.size())) Materialize(ix);
  for (ValueId in : n.inputs) {
    if (last && !Whole(Ext(in, c))) Delane(ix);  // a window edge inside a chunk
  }
  const std::string i = ix.axis[c];
  struct Part {
    int64_t offset;
    std::string value;
  };
  std::vector<Part> parts;
  int64_t offset = 0;
  const int64_t total = Ext(n.outputs[0], c).size;
  for (ValueId in : n.inputs) {
    const int64_t e = Ext(in, c).size;  // static: the builder joins only static extents
    if (e == 0) continue;
    Index oi = ix;
    const std::string t = offset == 0 ? i : Var(absl::StrCat(i, " - ", offset), ix.lane);
    oi.axis[c] = Clamp(t, e, offset > 0, offset + e < total, ix.lane && last, ix.lane);
    auto v = Eval(in, std::move(oi), depth + 1);
    if (!v.ok()) return v.status();
    parts.push_back({offset, *v});
    offset += e;
  }
  if (parts.empty()) {
    return absl::InternalError("codegen: cat of empty operands has elements");
  }
  std::string sel = parts.back().value;
  for (int k = static_cast<int>(parts.size()) - 2; k >= 0; --k) {
    sel = absl::StrCat("(", i, " < ", parts[k + 1].offset, " ? ", parts[k].value, " : ", sel, ")");
  }
  if (parts.size() == 1) return sel;
  return Declare(ComputeTypeName(g_.value(n.outputs[0]).dtype), sel);
}

}  // namespace

absl::StatusOr<std::string> EmitShifted(
    const KernelPlan& plan, const ExprOptions& options, const std::map<ValueId, int>& input_index,
    ValueId v, const std::string& linear, const ShiftLanes* lanes, const std::string& prefix,
    std::string* out, const std::string& indent,
    const std::function<absl::StatusOr<std::string>(ValueId)>& scalar) {
  const Node* n = plan.graph->def(v);
  if (n == nullptr || !IsShift(n->op)) {
    return absl::InternalError(absl::StrCat("codegen: value ", v, " is not a shift op's result"));
  }
  return Emitter(plan, options, input_index, lanes, prefix, out, indent, scalar).Root(v, linear);
}

}  // namespace fusiond
