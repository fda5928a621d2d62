#include "compiler/codegen/online_softmax.h"

#include "absl/strings/str_cat.h"

namespace fusiond {
namespace {

// v behind lossless casts (bf16 -> float, float -> double).
ValueId StripCasts(const Graph& g, ValueId v) {
  for (const Node* d = g.def(v); d != nullptr && d->op == OpKind::kCast; d = g.def(v)) {
    if (!IsLosslessCast(g.value(d->inputs[0]).dtype, g.value(v).dtype)) break;
    v = d->inputs[0];
  }
  return v;
}

// The node behind lossless casts and broadcasts of v (they keep a row
// value's value), or nullptr for an input.
const Node* DefBehind(const Graph& g, ValueId v) {
  for (const Node* d = g.def(v); d != nullptr; d = g.def(v)) {
    const bool keeps =
        d->op == OpKind::kBroadcastInDim || d->op == OpKind::kBroadcast ||
        d->op == OpKind::kExpand ||
        (d->op == OpKind::kCast && IsLosslessCast(g.value(d->inputs[0]).dtype, g.value(v).dtype));
    if (!keeps) return d;
    v = d->inputs[0];
  }
  return nullptr;
}

bool FloatAccumulator(DataType t) { return IsFloatingPoint(t) && t != DataType::kDouble; }

}  // namespace

NodeId OnlineSoftmaxMax(const Graph& g, const KernelPlan& p, const Node& sum, bool* exp2) {
  if (sum.op != OpKind::kSum || !FloatAccumulator(g.value(sum.outputs[0]).dtype)) return kNone;
  const Node* e = g.def(StripCasts(g, sum.inputs[0]));
  if (e == nullptr || (e->op != OpKind::kExp && e->op != OpKind::kExp2)) return kNone;
  const Node* d = g.def(e->inputs[0]);
  if (d == nullptr || d->inputs.size() != 2) return kNone;
  ValueId a = kNone, b = kNone;
  if (d->op == OpKind::kSub) {
    a = d->inputs[0];
    b = d->inputs[1];
  } else if (d->op == OpKind::kAdd) {
    // x + neg(max), the neg before or after the broadcast.
    for (int k = 0; k < 2; ++k) {
      const Node* neg = DefBehind(g, d->inputs[1 - k]);
      if (neg != nullptr && neg->op == OpKind::kNeg) {
        a = d->inputs[k];
        b = neg->inputs[0];
        break;
      }
    }
  }
  if (a == kNone || !g.value(a).is_tensor || !g.value(b).is_tensor) return kNone;
  const Node* mx = DefBehind(g, b);
  if (mx == nullptr || mx->op != OpKind::kMax || !FloatAccumulator(g.value(mx->outputs[0]).dtype)) {
    return kNone;
  }
  if (StripCasts(g, a) != StripCasts(g, mx->inputs[0])) return kNone;
  // The same elements: the same reduced axes, the operands varying alike.
  if (p.ReducedAxes(*mx) != p.ReducedAxes(sum) ||
      (p.vary[mx->inputs[0]] & p.r_mask) != (p.vary[sum.inputs[0]] & p.r_mask)) {
    return kNone;
  }
  *exp2 = e->op == OpKind::kExp2;
  return mx->id;
}

int OnlinePartnerSlot(const KernelPlan& p, int i) {
  for (size_t j = 0; j < p.row_slots.size(); ++j) {
    if (p.row_slots[j].online && p.row_slots[j].node == p.row_slots[i].partner)
      return static_cast<int>(j);
  }
  return -1;
}

std::string OnlineExp(const KernelPlan& p, int slot) {
  if (p.row_slots[slot].online_exp2) return "1";
  // The value emitter's rule (SetUpValueEmitter): exp on the SFU unless an
  // output is float32 or float64.
  for (ValueId o : p.graph->outputs) {
    const DataType t = p.graph->value(o).dtype;
    if (t == DataType::kFloat || t == DataType::kDouble) return "0";
  }
  return "2";
}

std::string OnlineMerge(const KernelPlan& p, int lead, const std::string& m2,
                        const std::string& s2) {
  return absl::StrCat("fz_os_merge<", OnlineExp(p, lead), ">(acc", lead, ", acc",
                      OnlinePartnerSlot(p, lead), ", ", m2, ", ", s2, ");");
}

const char* OnlineSoftmaxPrelude() {
  return R"(
// Online softmax: running max m and sum s of exp(x - m).
__device__ __forceinline__ bool fz_os_neg_inf(float x) { return x == -__int_as_float(0x7f800000); }
// E: 0 expf, 1 exp2f, 2 fz_exp_approx (as the kernel's own exp).
template <int E> __device__ __forceinline__ float fz_os_exp(float x) {
  return E == 1 ? exp2f(x) : E == 2 ? fz_exp_approx(x) : expf(x);
}
template <int E, int N> __device__ __forceinline__ void fz_os_chunk(float& m, float& s,
                                                                     const float* x) {
  float cm = x[0];
#pragma unroll
  for (int l = 1; l < N; ++l) cm = fz_max(cm, x[l]);
  const float mn = fz_max(m, cm);
  if (fz_os_neg_inf(mn)) return;  // only -inf so far: s stays 0
  float a = s * fz_os_exp<E>(m - mn);
#pragma unroll
  for (int l = 0; l < N; ++l) a += fz_os_exp<E>(x[l] - mn);
  s = a;
  m = mn;
}
template <int E> __device__ __forceinline__ void fz_os_merge(float& m, float& s, float m2,
                                                              float s2) {
  const float mn = fz_max(m, m2);
  s = fz_os_neg_inf(mn) ? s + s2 : s * fz_os_exp<E>(m - mn) + s2 * fz_os_exp<E>(m2 - mn);
  m = mn;
}
// The merge is symmetric (max and a sum of two terms), so both lanes of a
// butterfly pair end with the same bits.
template <int E> __device__ __forceinline__ void fz_warp_os(float& m, float& s) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, o), s2 = __shfl_xor_sync(0xffffffffu, s, o);
    fz_os_merge<E>(m, s, m2, s2);
  }
}
)";
}

}  // namespace fusiond
