// Online softmax (HeuristicParams::online_softmax): a row reduction
// sum(exp(x - max(x))) over the axes of the max is computed in the max's
// stage from a running max m and a running sum s of exp(x - m), s rescaled
// by exp(m_old - m_new) when the max grows, so a multi-pass kernel reads
// its input for two passes (the reductions, the output) instead of three.
//
// Recognized in the kernel plan (PlanKernel's `online_softmax`): the sum's
// operand is exp or exp2 of (A - B) or (A + neg(B)), behind lossless casts;
// B is max(X)'s result behind casts and broadcasts; A and X are one value
// behind lossless casts (a scaling by log2e or a temperature sits before the
// max, in X). Both reduce the same axes in float accumulators.
#ifndef FUSIOND_COMPILER_CODEGEN_ONLINE_SOFTMAX_H_
#define FUSIOND_COMPILER_CODEGEN_ONLINE_SOFTMAX_H_

#include <string>

#include "compiler/codegen/kernel_plan.h"
#include "compiler/ir/graph.h"

namespace fusiond {

// The max node whose sum of exponentials `sum` is (the node id), or kNone
// when `sum` is not of that form; *exp2 tells whether the exponential is
// exp2. Needs the plan's axis maps and variation (PlaceAxes).
NodeId OnlineSoftmaxMax(const Graph& g, const KernelPlan& p, const Node& sum, bool* exp2);

// The index in p.row_slots of online slot i's partner (its max or its sum).
int OnlinePartnerSlot(const KernelPlan& p, int i);

// Whether slot i leads an online pair (the max: it emits the pair's code;
// the sum's slot is skipped where slots are combined one by one).
inline bool OnlineLead(const Graph& g, const ReductionSlot& sl) {
  return sl.online && g.node(sl.node).op == OpKind::kMax;
}

// The exponential of slot `slot`'s pair as the device functions' template
// argument: "0" expf, "1" exp2f, "2" fz_exp_approx (exp where no output is
// float32 or float64: the value emitter's choice, so the sum matches the
// output pass's numerators).
std::string OnlineExp(const KernelPlan& p, int slot);

// The statement that merges partial (m2, s2) into slot lead's pair (accumulator
// names acc<lead>, acc<partner>): "fz_os_merge<E>(accL, accP, m2, s2);".
std::string OnlineMerge(const KernelPlan& p, int lead, const std::string& m2,
                        const std::string& s2);

// Device functions of kernels with online pairs (after DevicePrelude, which
// gives fz_max and fz_exp_approx): fz_os_chunk<E, N>(m, s, x) folds a chunk
// of N values into (m, s); fz_os_merge<E>(m, s, m2, s2) combines two
// partials; fz_warp_os combines a warp's. E: OnlineExp. A max of -inf (nothing but
// -inf seen) keeps the sum at 0; -inf elements add 0; NaN propagates as the
// two-pass form's max and sum would. Plain C++ apart from __device__,
// __forceinline__ and the shuffles, so host tests compile it too.
const char* OnlineSoftmaxPrelude();

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_CODEGEN_ONLINE_SOFTMAX_H_
