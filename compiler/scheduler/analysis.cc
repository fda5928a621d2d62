#include "compiler/scheduler/analysis.h"

#include <algorithm>
#include <optional>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/reshape_views.h"
#include "compiler/ir/shift_view.h"

namespace fusiond {
namespace {

using AxisMap = std::vector<int>;  // tensor axis -> space axis, -1 for a broadcast 1
using Mask = uint32_t;             // a set of space axes

class Analyzer {
 public:
  Analyzer(const Graph& g, const SizeBinding& sizes) : g_(g), sizes_(sizes) {}
  FusionAnalysis Run();

 private:
  bool Fail(std::string why) {
    if (failure_.empty()) failure_ = std::move(why);
    return false;
  }
  // v's axes on the space axes of the same position, when each agrees with
  // the space's (size, and symbol where the space value's is symbolic: code
  // generation places only axes of equal extents, kernel_plan.cc) or is 1.
  std::optional<AxisMap> Identity(ValueId v) const;
  bool MapNode(const Node& n);
  bool CheckNode(const Node& n);
  Mask Covered(ValueId v) const;
  TensorSummary Summarize(ValueId v, Mask inner_axes, Mask column_axes) const;

  // Run's steps. The space: the largest tensor (empty axes count as 1 for
  // size and as real axes for the tie-break), then the most axes of extent
  // != 1.
  void ChooseSpace();
  // Places every value in the space and checks the reductions; false (with
  // failure_) when something has no place.
  bool PlaceValues();
  // The reduced axes of the row (inner), column (outer) and mixed
  // reductions; `conflict` when two of one kind reduce different axes.
  struct ReductionKinds {
    std::optional<Mask> inner, outer, mixed;
    std::string conflict;
  };
  ReductionKinds GroupReductions() const;
  // The pattern, reason and sizes of a fusion without reductions.
  void ClassifyPointwise(FusionAnalysis* a, Mask* inner_axes) const;
  // The pattern, reason and sizes of a fusion with reductions of `kinds`.
  void ClassifyReductions(const ReductionKinds& kinds, FusionAnalysis* a, Mask* inner_axes,
                          Mask* column_axes) const;
  // The product of the extents of the space axes in m.
  int64_t Product(Mask m) const;
  // Whether a value derived from reductions over s is indexed by s again.
  bool BroadcastBack(Mask s) const;
  bool SameLayout(const Node& n) const;

  const Graph& g_;
  const SizeBinding& sizes_;
  std::vector<int64_t> space_;
  ValueId space_value_ = kNone;  // the tensor whose shape space_ is
  Mask nontrivial_ = 0;          // space axes of extent != 1
  std::vector<std::vector<int64_t>> shape_;
  std::vector<std::optional<AxisMap>> map_;
  std::vector<Mask> derived_;  // union of the reduced axes of upstream reductions
  std::vector<std::pair<NodeId, Mask>> reductions_;
  bool layout_ops_ = false;
  std::string failure_;
};

std::optional<AxisMap> Analyzer::Identity(ValueId v) const {
  const std::vector<int64_t>& shape = shape_[v];
  if (shape.size() != space_.size()) return std::nullopt;
  AxisMap m(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] != space_[i] && shape[i] != 1) return std::nullopt;
    if (shape[i] != 1 &&
        !(g_.Canonical(g_.value(v).shape[i]) == g_.Canonical(g_.value(space_value_).shape[i]))) {
      return std::nullopt;
    }
    m[i] = shape[i] == space_[i] && space_[i] != 1 ? static_cast<int>(i) : -1;
  }
  return m;
}

Mask Analyzer::Covered(ValueId v) const {
  Mask m = 0;
  if (!map_[v]) return m;
  for (int a : *map_[v]) {
    if (a >= 0) m |= Mask{1} << a;
  }
  return m;
}

// Places n's operands and results in the space from whichever side is
// known; returns true when it placed something new. Runs to a fixed point.
bool Analyzer::MapNode(const Node& n) {
  const ValueId out = n.outputs[0];
  if (!g_.value(out).is_tensor || n.op == OpKind::kSize) return false;
  bool placed = false;
  auto set = [&](ValueId v, AxisMap m) {
    if (map_[v]) return;
    map_[v] = std::move(m);
    placed = true;
  };
  // (Not a permute's result: of the operand's extents in another order, it
  // may match the space's shape and still lie on other axes.)
  if (auto id = Identity(out); id && !IsReduction(n.op) && n.op != OpKind::kPermute) {
    set(out, *id);
  }
  const ValueId x = n.inputs[0];
  switch (CategoryOf(n.op)) {
    case OpCategory::kShape: {
      if (n.op == OpKind::kBroadcastInDim) {
        const auto& bd = n.attrs.broadcast_dims;
        if (map_[out] && !map_[x]) {
          AxisMap m;
          for (size_t i = 0; i < bd.size(); ++i) {
            m.push_back(shape_[x][i] == 1 ? -1 : (*map_[out])[bd[i]]);
          }
          set(x, m);
        } else if (!map_[out] && map_[x]) {
          AxisMap m(shape_[out].size(), -1);
          for (size_t i = 0; i < bd.size(); ++i) m[bd[i]] = (*map_[x])[i];
          bool whole = true;
          for (size_t a = 0; a < m.size(); ++a) whole &= m[a] != -1 || shape_[out][a] == 1;
          // A new axis x cannot place (x's axis of size 1, or one x lacks,
          // as after a squeeze): the result's users may place it; CheckNode
          // fails what stays unplaced.
          if (whole) set(out, m);
        }
      } else if (n.op == OpKind::kSqueeze) {
        const auto& sq = n.attrs.dims;
        if (map_[x] && !map_[out]) {
          AxisMap m;
          for (int a = 0; a < static_cast<int>(map_[x]->size()); ++a) {
            if (!std::binary_search(sq.begin(), sq.end(), a)) m.push_back((*map_[x])[a]);
          }
          set(out, m);
        } else if (map_[out] && !map_[x]) {
          AxisMap m;
          size_t k = 0;
          for (int a = 0; a < static_cast<int>(shape_[x].size()); ++a) {
            m.push_back(std::binary_search(sq.begin(), sq.end(), a) ? -1 : (*map_[out])[k++]);
          }
          set(x, m);
        }
      } else if (n.op == OpKind::kPermute) {
        const auto& d = n.attrs.dims;  // output axis o is operand axis d[o]
        if (map_[x] && !map_[out]) {
          AxisMap m;
          for (int64_t a : d) m.push_back((*map_[x])[a]);
          set(out, m);
        } else if (map_[out] && !map_[x]) {
          AxisMap m(d.size());
          for (size_t o = 0; o < d.size(); ++o) m[d[o]] = (*map_[out])[o];
          set(x, m);
        }
      } else {
        layout_ops_ = true;  // reshape / unconverted broadcasts
      }
      break;
    }
    case OpCategory::kReduction:
    case OpCategory::kVarMean: {
      if (!map_[x] || map_[out]) break;
      AxisMap m;
      for (int a = 0; a < static_cast<int>(map_[x]->size()); ++a) {
        const bool r = std::binary_search(n.attrs.dims.begin(), n.attrs.dims.end(), a);
        if (!r)
          m.push_back((*map_[x])[a]);
        else if (n.attrs.keepdim)
          m.push_back(-1);
      }
      for (ValueId o : n.outputs) set(o, m);
      break;
    }
    default: {  // pointwise: operands of the result's shape share its map
      if (!map_[out]) {
        for (ValueId in : n.inputs) {
          if (map_[in] && shape_[in] == shape_[out]) {
            set(out, *map_[in]);
            break;
          }
        }
      }
      if (map_[out]) {
        for (ValueId in : n.inputs) {
          if (!g_.value(in).is_tensor || shape_[in].size() != shape_[out].size()) continue;
          // An operand broadcast along its extent-1 axes takes the result's
          // map there as -1 (as broadcast_in_dim's operand does).
          AxisMap m = *map_[out];
          bool fits = true;
          for (size_t a = 0; a < m.size() && fits; ++a) {
            if (shape_[in][a] == shape_[out][a]) continue;
            fits = shape_[in][a] == 1;
            m[a] = -1;
          }
          if (fits) set(in, m);
        }
      }
      break;
    }
  }
  return placed;
}

// A kernel computes each value on one set of axes: a permute's result must
// lie on its operand's axes in the permuted order, a broadcast's operand on
// the result axes it maps to, and an element-wise op's operands on the
// result's axes (where neither is broadcast), or one value would be read in
// two layouts (x + permute(x) would read x twice the same way).
bool Analyzer::SameLayout(const Node& n) const {
  const ValueId out = n.outputs[0];
  const AxisMap& mo = *map_[out];
  const ValueId x = n.inputs[0];
  auto agree = [](int a, int b) { return a < 0 || b < 0 || a == b; };
  if (n.op == OpKind::kPermute || n.op == OpKind::kBroadcastInDim) {
    if (!g_.value(x).is_tensor || !map_[x]) return true;
    const AxisMap& mx = *map_[x];
    const bool permute = n.op == OpKind::kPermute;
    const size_t k = permute ? n.attrs.dims.size() : n.attrs.broadcast_dims.size();
    for (size_t i = 0; i < k && i < mx.size(); ++i) {
      // permute: result axis i is operand axis dims[i]; broadcast_in_dim:
      // operand axis i is result axis broadcast_dims[i].
      const bool same =
          permute ? agree(mo[i], mx[n.attrs.dims[i]]) : agree(mx[i], mo[n.attrs.broadcast_dims[i]]);
      if (!same) return false;
    }
    return true;
  }
  const OpCategory c = CategoryOf(n.op);
  if (c != OpCategory::kUnary && c != OpCategory::kBinary && c != OpCategory::kTernary &&
      c != OpCategory::kCast) {
    return true;
  }
  for (ValueId in : n.inputs) {
    if (!g_.value(in).is_tensor || !map_[in] || map_[in]->size() != mo.size()) continue;
    for (size_t a = 0; a < mo.size(); ++a) {
      if (!agree((*map_[in])[a], mo[a])) return false;
    }
  }
  return true;
}

// After placement: reductions must read the whole space; records their
// reduced axes and what every value derives from.
bool Analyzer::CheckNode(const Node& n) {
  const ValueId out = n.outputs[0];
  if (!g_.value(out).is_tensor || n.op == OpKind::kSize) return true;
  for (ValueId in : n.inputs) derived_[out] |= derived_[in];
  for (ValueId o : n.outputs) derived_[o] = derived_[out];
  for (ValueId v : n.outputs) {
    if (!map_[v]) {
      return Fail(absl::StrCat(ValueName(g_, v), " : ", TypeString(g_, v),
                               " has no place in the iteration space [",
                               absl::StrJoin(space_, ", "), "]"));
    }
  }
  if (!SameLayout(n) && n.op == OpKind::kBroadcastInDim) {
    return Fail(absl::StrCat(
        ValueName(g_, out), " = broadcast_in_dim(", ValueName(g_, n.inputs[0]),
        ") puts its operand's axes on result axes [", absl::StrJoin(n.attrs.broadcast_dims, ", "),
        "], another reader of ", ValueName(g_, n.inputs[0]),
        " in this kernel on others: one value broadcast along two axes in one expression (such "
        "as x[:, None] - x[None, :]) is not supported, a kernel reads each value in one layout"));
  }
  if (!SameLayout(n)) {
    return Fail(absl::StrCat(ValueName(g_, out),
                             " reads a value in two layouts (a value and its permute in one "
                             "kernel): the permute is computed apart"));
  }
  if (!IsReduction(n.op)) return true;
  const ValueId x = n.inputs[0];
  if (!map_[x] || (Covered(x) & nontrivial_) != nontrivial_) {
    return Fail(absl::StrCat("reduction ", ValueName(g_, out), " reads ", TypeString(g_, x),
                             ", only part of the iteration space [", absl::StrJoin(space_, ", "),
                             "]"));
  }
  Mask reduced = 0;
  for (int64_t a : n.attrs.dims) {
    if ((*map_[x])[a] >= 0) reduced |= Mask{1} << (*map_[x])[a];
    // Of size 1 here but any size in the kernel, which would have to reduce
    // it: the partitioner's segments have static sizes.
    if (shape_[x][a] == 1 && !g_.Canonical(g_.value(x).shape[a]).is_static()) {
      return Fail(absl::StrCat("reduction ", ValueName(g_, out), " reduces axis ", a, " of ",
                               TypeString(g_, x), ", symbolic and of size 1 here"));
    }
  }
  for (ValueId o : n.outputs) derived_[o] |= reduced;
  if (reduced != 0) reductions_.push_back({n.id, reduced});
  return true;
}

TensorSummary Analyzer::Summarize(ValueId v, Mask inner_axes, Mask column_axes) const {
  TensorSummary t;
  t.dtype = g_.value(v).dtype;
  t.numel = 1;
  for (int64_t s : shape_[v]) t.numel *= s;
  const Mask c = Covered(v);
  t.varies_inner = (c & inner_axes) != 0;
  t.full = (c & nontrivial_) == nontrivial_;
  t.varies_outer = (c & nontrivial_ & ~inner_axes) != 0;
  t.column = column_axes != 0 && (derived_[v] & column_axes) == column_axes;
  return t;
}

void Analyzer::ChooseSpace() {
  std::tuple<int64_t, int, size_t> best{-1, 0, 0};
  for (ValueId v = 0; v < static_cast<int>(g_.values.size()); ++v) {
    if (!g_.value(v).is_tensor) continue;
    shape_[v] = sizes_.Shape(g_, v);
    int64_t numel = 1;
    int real_axes = 0;
    for (int64_t s : shape_[v]) {
      numel *= std::max<int64_t>(s, 1);
      real_axes += s != 1;
    }
    std::tuple<int64_t, int, size_t> key{numel, real_axes, shape_[v].size()};
    if (key > best) {
      best = key;
      space_ = shape_[v];
      space_value_ = v;
    }
  }
}

bool Analyzer::PlaceValues() {
  for (size_t i = 0; i < space_.size(); ++i) {
    if (space_[i] != 1) nontrivial_ |= Mask{1} << i;
  }
  for (ValueId in : g_.inputs) {
    if (g_.value(in).is_tensor) map_[in] = Identity(in);
  }
  // Forward and backward until nothing new is placed (a lower-rank input is
  // placed by the broadcast that reads it, possibly after a cast).
  for (size_t round = 0; round <= g_.nodes.size() && failure_.empty(); ++round) {
    bool placed = false;
    for (const Node& n : g_.nodes) placed |= MapNode(n);
    for (auto it = g_.nodes.rbegin(); it != g_.nodes.rend(); ++it) placed |= MapNode(*it);
    if (!placed) break;
  }
  for (const Node& n : g_.nodes) {
    if (!failure_.empty() || !CheckNode(n)) break;
  }
  if (failure_.empty()) {
    for (ValueId o : g_.outputs) {
      if (!map_[o])
        Fail(absl::StrCat("output ", ValueName(g_, o), " has no place in the iteration space"));
    }
  }
  return failure_.empty();
}

Analyzer::ReductionKinds Analyzer::GroupReductions() const {
  const int rank = static_cast<int>(space_.size());
  std::vector<int> axes;
  for (int i = 0; i < rank; ++i) {
    if (nontrivial_ >> i & 1) axes.push_back(i);  // (extent 0 included)
  }
  auto prefix = [&](size_t k) {
    Mask m = 0;
    for (size_t i = 0; i < k; ++i) m |= Mask{1} << axes[i];
    return m;
  };
  ReductionKinds kinds;
  for (const auto& [node, s] : reductions_) {
    bool is_inner = false, is_outer = false;
    for (size_t k = 0; k < axes.size(); ++k) {
      if (s == (nontrivial_ & ~prefix(k))) is_inner = true;
      if (k > 0 && s == prefix(k)) is_outer = true;
    }
    std::optional<Mask>& slot = is_inner ? kinds.inner : is_outer ? kinds.outer : kinds.mixed;
    if (slot && *slot != s) {
      kinds.conflict = absl::StrCat("reductions over different axes of one kind (",
                                    NodeString(g_, g_.node(node)), ")");
    }
    slot = s;
  }
  return kinds;
}

int64_t Analyzer::Product(Mask m) const {
  const int rank = static_cast<int>(space_.size());
  int64_t p = 1;
  for (int i = 0; i < rank; ++i)
    if (m >> i & 1) p *= space_[i];
  return p;
}

bool Analyzer::BroadcastBack(Mask s) const {
  const int nv = static_cast<int>(g_.values.size());
  for (ValueId v = 0; v < nv; ++v) {
    if (map_[v] && (derived_[v] & s) && (Covered(v) & derived_[v] & s)) return true;
  }
  return false;
}

void Analyzer::ClassifyPointwise(FusionAnalysis* a, Mask* inner_axes) const {
  const int rank = static_cast<int>(space_.size());
  a->pattern = FusionPattern::kPointwise;
  a->reason = "no reductions";
  *inner_axes = rank > 0 ? Mask{1} << (rank - 1) : 0;
  // The inner extent: trailing axes every input spans fully or not at all.
  int64_t inner_size = 1;
  for (int i = rank - 1; i >= 0; --i) {
    if (space_[i] == 1) continue;
    bool mergeable = true;
    if (inner_size > 1) {
      for (ValueId in : g_.inputs) {
        if (!g_.value(in).is_tensor) continue;
        Mask c = Covered(in);
        Mask tail = nontrivial_ & ~((Mask{1} << i) - 1);
        if ((c & tail) != 0 && (c & tail) != tail) mergeable = false;
      }
    }
    if (!mergeable) break;
    inner_size *= space_[i];
  }
  a->inner_size = inner_size;
  a->outer_size = Product(nontrivial_) / std::max<int64_t>(inner_size, 1);
  for (ValueId o : g_.outputs) {
    if ((Covered(o) & nontrivial_) != nontrivial_) {
      a->pattern = FusionPattern::kUnsupported;
      a->reason = absl::StrCat("pointwise outputs of different sizes (", TypeString(g_, o), ")");
    }
  }
  if (layout_ops_) a->reason = "no reductions; reshape/permute handled as index remapping";
}

void Analyzer::ClassifyReductions(const ReductionKinds& kinds, FusionAnalysis* a, Mask* inner_axes,
                                  Mask* column_axes) const {
  const std::optional<Mask>& inner = kinds.inner;
  const std::optional<Mask>& outer = kinds.outer;
  const std::optional<Mask>& mixed = kinds.mixed;
  const int64_t total = Product(nontrivial_);
  if (layout_ops_) {
    a->reason = "reshape or permute inside a reduction fusion";
  } else if (inner && !mixed && (!outer || *outer == (nontrivial_ & ~*inner))) {
    *inner_axes = *inner;
    a->inner_size = Product(*inner);
    a->outer_size = total / std::max<int64_t>(a->inner_size, 1);
    if (!outer) {
      a->pattern = FusionPattern::kInner;
      a->reason = "row reductions over the innermost axes";
    } else if (BroadcastBack(*outer)) {
      a->reason = "column reduction results are used again in the full iteration space";
    } else {
      *column_axes = *outer;
      a->pattern = FusionPattern::kInnerOuter;
      a->reason = "row reductions plus column reductions whose results are outputs";
    }
  } else if (outer && !inner && !mixed) {
    *inner_axes = nontrivial_ & ~*outer;
    a->inner_size = Product(*inner_axes);
    a->outer_size = Product(*outer);
    if (BroadcastBack(*outer)) {
      a->pattern = FusionPattern::kOuterPersistent;
      a->reason = "column reductions whose results are used again in the full iteration space";
      a->outer_size = a->inner_size;
      a->reduced_strided = Product(*outer);
      a->inner_size = a->reduced_strided;
    } else {
      a->pattern = FusionPattern::kOuter;
      a->reason = "column reductions over the outermost axes";
    }
  } else if (mixed && !inner && !outer) {
    a->pattern = FusionPattern::kOuterPersistent;
    a->reason = "reductions over axes on both sides of a kept axis";
    const Mask kept = nontrivial_ & ~*mixed;
    int last_kept = 0;
    for (int i = 0; i < static_cast<int>(space_.size()); ++i)
      if (kept >> i & 1) last_kept = i;
    Mask after = *mixed & ~((Mask{2} << last_kept) - 1);
    *inner_axes = after;
    a->outer_size = Product(kept);
    a->inner_size = Product(*mixed);
    a->reduced_contiguous = Product(after);
    a->reduced_strided = a->inner_size / std::max<int64_t>(a->reduced_contiguous, 1);
  } else {
    a->reason = "row, column and mixed reductions that no single kernel pattern covers";
  }
}

FusionAnalysis Analyzer::Run() {
  FusionAnalysis a;
  const int nv = static_cast<int>(g_.values.size());
  shape_.resize(nv);
  map_.resize(nv);
  derived_.assign(nv, 0);
  ChooseSpace();
  a.space = space_;
  if (space_.size() > 30) {
    a.reason = "rank above 30";
    return a;
  }
  const bool placed = PlaceValues();
  a.num_reductions = static_cast<int>(reductions_.size());
  if (!placed) {
    a.reason = failure_;
    return a;
  }
  // Classify the reductions by their axes.
  const ReductionKinds kinds = GroupReductions();
  Mask inner_axes = 0, column_axes = 0;
  if (!kinds.conflict.empty()) {
    a.reason = kinds.conflict;
  } else if (reductions_.empty()) {
    ClassifyPointwise(&a, &inner_axes);
  } else {
    ClassifyReductions(kinds, &a, &inner_axes, &column_axes);
  }
  // Empty tensors: heuristics size kernels for at least one element.
  for (int64_t* v : {&a.outer_size, &a.inner_size, &a.reduced_contiguous, &a.reduced_strided}) {
    *v = std::max<int64_t>(*v, 1);
  }
  for (ValueId in : g_.inputs) {
    if (g_.value(in).is_tensor) a.inputs.push_back(Summarize(in, inner_axes, column_axes));
  }
  for (ValueId o : g_.outputs) a.outputs.push_back(Summarize(o, inner_axes, column_axes));
  std::sort(a.inputs.begin(), a.inputs.end());
  std::sort(a.outputs.begin(), a.outputs.end());
  return a;
}

std::string Summary(const std::vector<TensorSummary>& ts) {
  std::vector<std::string> parts;
  for (const TensorSummary& t : ts) {
    parts.push_back(absl::StrCat(DataTypeName(t.dtype), "x", t.numel, t.full ? " full" : "",
                                 t.varies_inner ? " inner" : "", t.column ? " column" : ""));
  }
  return absl::StrJoin(parts, "; ");
}

}  // namespace

const char* PatternName(FusionPattern p) {
  switch (p) {
    case FusionPattern::kPointwise:
      return "pointwise";
    case FusionPattern::kInner:
      return "inner";
    case FusionPattern::kInnerOuter:
      return "inner_outer";
    case FusionPattern::kOuter:
      return "outer";
    case FusionPattern::kOuterPersistent:
      return "outer_persistent";
    case FusionPattern::kUnsupported:
      return "unsupported";
  }
  return "unknown";
}

std::string FusionAnalysis::ToString() const {
  return absl::StrCat("pattern=", PatternName(pattern), " space=[", absl::StrJoin(space, ", "),
                      "] outer=", outer_size, " inner=", inner_size,
                      " reduced_contiguous=", reduced_contiguous,
                      " reduced_strided=", reduced_strided, " inputs={", Summary(inputs),
                      "} outputs={", Summary(outputs), "}");
}

FusionAnalysis AnalyzeFusion(const Graph& g, const SizeBinding& sizes) {
  // Reshapes that are views of an input or an output: the segment as the
  // code generator sees it (compiler/ir/reshape_views.h), before the shift
  // ops' checks (a slice of a reshaped input reads the input).
  if (std::any_of(g.nodes.begin(), g.nodes.end(),
                  [](const Node& n) { return n.op == OpKind::kReshape; })) {
    Graph viewed = ResolveReshapeViews(g);
    if (viewed.nodes.size() < g.nodes.size()) return AnalyzeFusion(viewed, sizes);
  }
  // Shift ops (slice, pad, cat): the kernel computes them from their indices
  // and reads their operands' sub-graphs at shifted indices, outside its
  // iteration space (compiler/ir/shift_view.h).
  if (std::any_of(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return IsShift(n.op); })) {
    if (std::string why = ShiftReadProblem(g); !why.empty()) {
      FusionAnalysis a;
      a.reason = why;
      return a;
    }
    return AnalyzeFusion(ShiftFreeView(g), sizes);
  }
  return Analyzer(g, sizes).Run();
}

}  // namespace fusiond
