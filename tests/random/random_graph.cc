// The random graph generator. See random_graph.h for what it emits.
#include "tests/random/random_graph.h"

#include <algorithm>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/ir/builder.h"

namespace fusiond {
namespace {

// Per universe axis: present at full extent, present as a size-1 axis (a
// keepdim reduction or a [.., 1] input), or absent (a lower-rank tensor).
enum class Axis : char { kFull, kOne, kAbsent };
using Form = std::vector<Axis>;

struct Entry {
  ValueId id;
  Form form;
};

class Generator {
 public:
  Generator(uint64_t seed, const RandomGraphOptions& opts)
      : rng_(seed), opts_(opts), b_(&c_.graph) {}

  RandomGraphCase Run();

 private:
  int Uniform(int lo, int hi) {  // inclusive
    if (hi <= lo) return lo;
    return lo + static_cast<int>(rng_() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool Chance(double p) { return (rng_() >> 11) * 0x1.0p-53 < p; }
  template <class T>
  const T& Pick(const std::vector<T>& v) {
    return v[Uniform(0, static_cast<int>(v.size()) - 1)];
  }

  DataType RandomFloat() {
    static const std::vector<DataType> kTypes = {DataType::kBFloat16, DataType::kHalf,
                                                 DataType::kFloat, DataType::kDouble};
    return Pick(kTypes);
  }
  // True when the form has every axis (full or size-1): such values combine
  // with each other in binary ops.
  static bool HasAllAxes(const Form& f) {
    return std::none_of(f.begin(), f.end(), [](Axis a) { return a == Axis::kAbsent; });
  }
  bool Ok(const absl::StatusOr<ValueId>& v) {
    if (!v.ok() && error_.ok()) error_ = v.status();
    return v.ok();
  }
  void Add(ValueId v, Form f) { pool_.push_back({v, std::move(f)}); }
  ValueId Const(double v) { return b_.DefineConstant(v, DataType::kDouble); }

  void MakeInputs();
  ValueId DefineInput(const Form& f, DataType t);
  Entry PickAny() { return Pick(pool_); }
  Entry PickWithAllAxes();
  // A full-shape view of e (broadcast_in_dim when e is partial).
  Entry ToFull(const Entry& e);

  void OpUnary();
  void OpBinary();
  void OpScalar();
  void OpIdentity();
  void OpPow();
  void OpCast();
  void OpReduce();
  void OpBroadcast();
  void OpWhere();
  void PickOutputs();

  std::mt19937_64 rng_;
  RandomGraphOptions opts_;
  RandomGraphCase c_;
  GraphBuilder b_;
  absl::Status error_;
  int rank_ = 1;
  std::vector<int64_t> extents_;
  bool symbolic_ = false;
  bool scalar_input_ = false;       // the last graph input is a scalar
  std::vector<Extent> full_shape_;  // extents of the first full input
  std::vector<Entry> pool_;         // tensor values ops may read
  int first_node_value_ = 0;        // pool_ index of the first node result
};

ValueId Generator::DefineInput(const Form& f, DataType t) {
  std::vector<int64_t> decl, real;
  for (int a = 0; a < rank_; ++a) {
    if (f[a] == Axis::kAbsent) continue;
    const int64_t e = f[a] == Axis::kOne ? 1 : extents_[a];
    real.push_back(e);
    decl.push_back(f[a] == Axis::kFull && symbolic_ ? -1 : e);
  }
  auto v = b_.DefineTensor(absl::StrCat("T", c_.graph.inputs.size()), t, decl);
  Ok(v);
  c_.input_shapes.push_back(real);
  return v.ok() ? *v : kNone;
}

void Generator::MakeInputs() {
  rank_ =
      Uniform(std::max(1, std::min(opts_.min_rank, opts_.max_rank)), std::max(1, opts_.max_rank));
  // Extents from extent_choices when given, redrawn while the universe has
  // more than max_elements (after 100 draws, the last axis shrinks to fit).
  for (int attempt = 0; attempt < 100; ++attempt) {
    extents_.clear();
    int64_t elements = 1;
    for (int a = 0; a < rank_; ++a) {
      extents_.push_back(opts_.extent_choices.empty() ? Uniform(1, std::max(1, opts_.max_extent))
                                                      : Pick(opts_.extent_choices));
      elements *= extents_.back();
    }
    if (opts_.max_elements <= 0 || elements <= opts_.max_elements) break;
    if (attempt == 99)
      extents_.back() = std::max<int64_t>(1, opts_.max_elements / (elements / extents_.back()));
  }
  symbolic_ = Chance(opts_.symbolic_probability);
  const Form full(rank_, Axis::kFull);
  const int num_full = Uniform(1, 3);
  for (int i = 0; i < num_full; ++i) {
    ValueId v = DefineInput(full, RandomFloat());
    if (v == kNone) return;
    if (i == 0) full_shape_ = c_.graph.value(v).shape;
    Add(v, full);
  }
  if (Chance(0.6)) {  // a lower-rank input, e.g. a weight [N]
    Form f = full;
    int present = 0;
    for (int a = 0; a < rank_; ++a) {
      if (Chance(0.5))
        f[a] = Axis::kAbsent;
      else
        ++present;
    }
    if (present == 0) f[Uniform(0, rank_ - 1)] = Axis::kFull;
    if (present == rank_ && rank_ > 1) f[Uniform(0, rank_ - 1)] = Axis::kAbsent;
    if (rank_ == 1) f[0] = Axis::kOne;
    ValueId v = DefineInput(f, RandomFloat());
    if (v != kNone) Add(v, f);
  }
  if (Chance(0.4)) {  // a saved statistic, e.g. rstd [M, 1]
    Form f = full;
    f[Uniform(0, rank_ - 1)] = Axis::kOne;
    ValueId v = DefineInput(f, Chance(0.5) ? DataType::kFloat : RandomFloat());
    if (v != kNone) Add(v, f);
  }
  if (opts_.allow_scalar_inputs && Chance(0.2)) {
    b_.DefineScalarInput(DataType::kDouble, absl::StrCat("S", c_.graph.inputs.size()));
    c_.input_shapes.push_back({});
    scalar_input_ = true;
  }
}

Entry Generator::PickWithAllAxes() {
  std::vector<Entry> c;
  for (const Entry& e : pool_) {
    if (HasAllAxes(e.form)) c.push_back(e);
  }
  return Pick(c);  // the full inputs are always there
}

Entry Generator::ToFull(const Entry& e) {
  bool full = std::all_of(e.form.begin(), e.form.end(), [](Axis a) { return a == Axis::kFull; });
  if (full) return e;
  std::vector<int64_t> dims;
  for (int a = 0; a < rank_; ++a) {
    if (e.form[a] != Axis::kAbsent) dims.push_back(a);
  }
  auto v = b_.BroadcastInDim(e.id, full_shape_, dims);
  if (!Ok(v)) return e;
  Entry r{*v, Form(rank_, Axis::kFull)};
  pool_.push_back(r);
  return r;
}

void Generator::OpUnary() {
  Entry x = PickAny();
  auto v = absl::StatusOr<ValueId>(x.id);
  switch (Uniform(0, 10)) {
    case 0:
      v = b_.Unary(OpKind::kNeg, x.id);
      break;
    case 1:
      v = b_.Unary(OpKind::kAbs, x.id);
      break;
    case 2:
      v = b_.Unary(OpKind::kTanh, x.id);
      break;
    case 3:
      v = b_.Unary(OpKind::kSigmoid, x.id);
      break;
    case 4:
      v = b_.Unary(OpKind::kSin, x.id);
      break;
    case 5:
      v = b_.Unary(OpKind::kCos, x.id);
      break;
    case 6:
      v = b_.Unary(OpKind::kErf, x.id);
      break;
    case 7:
      v = b_.Unary(OpKind::kRelu, x.id);
      break;
    case 8:  // exp of a bounded value
      v = b_.Unary(OpKind::kTanh, x.id);
      if (Ok(v)) v = b_.Unary(OpKind::kExp, *v);
      break;
    case 9:  // sqrt(|x|)
      v = b_.Unary(OpKind::kAbs, x.id);
      if (Ok(v)) v = b_.Unary(OpKind::kSqrt, *v);
      break;
    default:  // rsqrt(|x| + 1)
      v = b_.Unary(OpKind::kAbs, x.id);
      if (Ok(v)) v = b_.Binary(OpKind::kAdd, *v, Const(1.0));
      if (Ok(v)) v = b_.Unary(OpKind::kRsqrt, *v);
      break;
  }
  if (Ok(v)) Add(*v, x.form);
}

void Generator::OpBinary() {
  Entry a = PickAny();
  Entry c = PickAny();
  if (!HasAllAxes(a.form) || !HasAllAxes(c.form)) {
    if (a.form != c.form) {  // make both full: a partial combines by broadcast
      a = ToFull(a);
      c = ToFull(c);
    }
  }
  static const std::vector<OpKind> kOps = {OpKind::kAdd, OpKind::kSub,     OpKind::kMul,
                                           OpKind::kDiv, OpKind::kMaximum, OpKind::kMinimum};
  OpKind op = Pick(kOps);
  ValueId rhs = c.id;
  if (op == OpKind::kDiv) {  // divide by |c| + 1, never by zero
    auto d = b_.Unary(OpKind::kAbs, c.id);
    if (Ok(d)) d = b_.Binary(OpKind::kAdd, *d, Const(1.0));
    if (!Ok(d)) return;
    rhs = *d;
  }
  auto v = b_.Binary(op, a.id, rhs);
  if (!Ok(v)) return;
  Form f = a.form;
  for (int i = 0; i < rank_; ++i) {
    if (c.form[i] == Axis::kFull) f[i] = Axis::kFull;
  }
  Add(*v, f);
}

void Generator::OpScalar() {
  Entry x = PickAny();
  static const std::vector<OpKind> kOps = {OpKind::kAdd, OpKind::kSub, OpKind::kMul};
  ValueId s = scalar_input_ && Chance(0.5)
                  ? c_.graph.inputs.back()
                  : Const(Pick(std::vector<double>{0.5, -2.0, 3.0, 1e-5, 0.044715}));
  auto v = Chance(0.5) ? b_.Binary(Pick(kOps), x.id, s) : b_.Binary(Pick(kOps), s, x.id);
  if (Ok(v)) Add(*v, x.form);
}

void Generator::OpIdentity() {
  Entry x = PickAny();
  absl::StatusOr<ValueId> v = x.id;
  switch (Uniform(0, 7)) {
    case 0:
      v = b_.Binary(OpKind::kMul, x.id, Const(1.0));
      break;
    case 1:
      v = b_.Binary(OpKind::kMul, Const(1.0), x.id);
      break;
    case 2:
      v = b_.Binary(OpKind::kAdd, x.id, Const(0.0));
      break;
    case 3:
      v = b_.Binary(OpKind::kAdd, Const(0.0), x.id);
      break;
    case 4:
      v = b_.Binary(OpKind::kSub, x.id, Const(0.0));
      break;
    case 5:
      v = b_.Binary(OpKind::kDiv, x.id, Const(1.0));
      break;
    case 6:
      v = b_.Unary(OpKind::kReciprocal, x.id);
      if (Ok(v)) v = b_.Unary(OpKind::kReciprocal, *v);
      break;
    default:
      v = b_.Unary(OpKind::kNeg, x.id);
      if (Ok(v)) v = b_.Unary(OpKind::kNeg, *v);
      break;
  }
  if (Ok(v)) Add(*v, x.form);
}

void Generator::OpPow() {
  static const std::vector<double> kExponents = {
      -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0.5, -0.5, 1.0, 2.0, 3.0, 1.7, -1.3, 2.5, 0.25};
  Entry x = PickAny();
  ValueId base = x.id;
  const double e = Pick(kExponents);
  // A negative base only under a non-negative integer exponent (else NaN
  // or, at zero, infinity would flood the results).
  const bool int_exponent = e == static_cast<int>(e) && e >= 0;
  if (!int_exponent || Chance(0.5)) {  // a positive base: |x| + 0.5
    auto p = b_.Unary(OpKind::kAbs, x.id);
    if (Ok(p)) p = b_.Binary(OpKind::kAdd, *p, Const(0.5));
    if (!Ok(p)) return;
    base = *p;
  }
  // Integer exponents sometimes come as an int64 scalar.
  ValueId exponent =
      e == static_cast<int>(e) && Chance(0.2) ? b_.DefineConstant(e, DataType::kInt64) : Const(e);
  auto v = b_.Binary(OpKind::kPow, base, exponent);
  if (Ok(v)) Add(*v, x.form);
}

void Generator::OpCast() {
  Entry x = PickAny();
  absl::StatusOr<ValueId> v = x.id;
  switch (Uniform(0, 2)) {
    case 0:
      v = b_.Cast(x.id, RandomFloat());
      break;
    case 1:  // bf16 -> f32 -> bf16
      v = b_.Cast(x.id, DataType::kBFloat16);
      if (Ok(v)) v = b_.Cast(*v, DataType::kFloat);
      if (Ok(v)) v = b_.Cast(*v, DataType::kBFloat16);
      break;
    default:  // f32 -> bf16 -> f32 (or via fp16)
      v = b_.Cast(x.id, DataType::kFloat);
      if (Ok(v)) v = b_.Cast(*v, Chance(0.7) ? DataType::kBFloat16 : DataType::kHalf);
      if (Ok(v)) v = b_.Cast(*v, DataType::kFloat);
      break;
  }
  if (Ok(v)) Add(*v, x.form);
}

void Generator::OpReduce() {
  Entry x = PickAny();
  std::vector<int> present;  // universe axes x has
  for (int a = 0; a < rank_; ++a) {
    if (x.form[a] != Axis::kAbsent) present.push_back(a);
  }
  std::vector<int64_t> dims;
  Form f = x.form;
  const bool keepdim = Chance(0.5);
  for (size_t i = 0; i < present.size(); ++i) {
    if (Chance(0.5)) {
      dims.push_back(static_cast<int64_t>(i));
      f[present[i]] = keepdim ? Axis::kOne : Axis::kAbsent;
    }
  }
  if (dims.empty()) {
    const int i = Uniform(0, static_cast<int>(present.size()) - 1);
    dims.push_back(i);
    f[present[i]] = keepdim ? Axis::kOne : Axis::kAbsent;
  }
  // A reduction to rank 0 cannot be broadcast back by the pattern below;
  // keep at least one axis unless keepdim.
  if (!keepdim && dims.size() == present.size()) {
    if (present.size() == 1) return;
    f[present[dims.back()]] = x.form[present[dims.back()]];
    dims.pop_back();
  }
  auto v = b_.Reduce(Chance(0.7) ? OpKind::kSum : OpKind::kMax, x.id, dims, keepdim);
  if (!Ok(v)) return;
  Entry r{*v, f};
  Add(r.id, r.form);
  if (Chance(0.6)) {  // normalization pattern: full - broadcast(reduction)
    Entry full = ToFull(r);
    Entry other = ToFull(PickWithAllAxes());
    auto d = b_.Binary(Chance(0.5) ? OpKind::kSub : OpKind::kMul, other.id, full.id);
    if (Ok(d)) Add(*d, Form(rank_, Axis::kFull));
  }
}

void Generator::OpBroadcast() {
  std::vector<Entry> partial;
  for (const Entry& e : pool_) {
    if (!std::all_of(e.form.begin(), e.form.end(), [](Axis a) { return a == Axis::kFull; })) {
      partial.push_back(e);
    }
  }
  if (partial.empty()) return OpUnary();
  ToFull(Pick(partial));
}

void Generator::OpWhere() {
  Entry a = ToFull(PickAny());
  Entry c = ToFull(PickAny());
  auto cond =
      Chance(0.5) ? b_.Binary(OpKind::kGt, a.id, Const(0.0)) : b_.Binary(OpKind::kLt, a.id, c.id);
  if (!Ok(cond)) return;
  auto v = b_.Where(*cond, a.id, c.id);
  if (Ok(v)) Add(*v, Form(rank_, Axis::kFull));
}

void Generator::PickOutputs() {
  // Sinks: node results no other node reads. Extra sinks are folded into
  // one another with add (broadcast to full first) until at most the drawn
  // number of outputs remain, so no node is dead.
  std::vector<char> used(c_.graph.values.size(), 0);
  for (const Node& n : c_.graph.nodes) {
    for (ValueId in : n.inputs) used[in] = 1;
  }
  std::vector<Entry> sinks;
  for (size_t i = first_node_value_; i < pool_.size(); ++i) {
    const Entry& e = pool_[i];
    if (c_.graph.value(e.id).def != kNone && !used[e.id]) sinks.push_back(e);
  }
  const size_t n = static_cast<size_t>(Uniform(1, std::max(1, opts_.max_outputs)));
  while (sinks.size() > n && error_.ok()) {
    Entry a = ToFull(sinks[sinks.size() - 2]);
    Entry c = ToFull(sinks.back());
    sinks.resize(sinks.size() - 2);
    auto v = b_.Binary(OpKind::kAdd, a.id, c.id);
    if (!Ok(v)) return;
    sinks.push_back({*v, Form(rank_, Axis::kFull)});
  }
  for (const Entry& e : sinks) {
    if (!b_.AddOutput(e.id).ok() && error_.ok()) error_ = absl::InternalError("add_output");
  }
}

RandomGraphCase Generator::Run() {
  MakeInputs();
  if (pool_.empty()) {  // the builder refused the inputs (absurd options)
    c_.status = error_.ok() ? absl::InvalidArgumentError("no tensor inputs") : error_;
    return std::move(c_);
  }
  first_node_value_ = static_cast<int>(pool_.size());
  const int ops = std::max(1, opts_.num_ops);
  for (int k = 0; k < ops && error_.ok(); ++k) {
    // extra_reductions > 0: values past 11 draw reductions too.
    switch (Uniform(0, 11 + std::max(0, opts_.extra_reductions))) {
      case 0:
      case 1:
        OpUnary();
        break;
      case 2:
      case 3:
        OpBinary();
        break;
      case 4:
        OpScalar();
        break;
      case 5:
        OpIdentity();
        break;
      case 6:
        OpPow();
        break;
      case 7:
        OpCast();
        break;
      case 8:
      case 9:
        OpReduce();
        break;
      case 10:
        OpBroadcast();
        break;
      case 11:
        if (opts_.allow_where)
          OpWhere();
        else
          OpBinary();
        break;
      default:
        OpReduce();
        break;
    }
  }
  if (static_cast<int>(pool_.size()) == first_node_value_) OpUnary();
  PickOutputs();
  c_.status = error_;
  return std::move(c_);
}

}  // namespace

RandomGraphCase RandomGraphWithShapes(uint64_t seed, const RandomGraphOptions& opts) {
  return Generator(seed, opts).Run();
}

Graph RandomGraph(uint64_t seed, const RandomGraphOptions& opts) {
  return RandomGraphWithShapes(seed, opts).graph;
}

}  // namespace fusiond
