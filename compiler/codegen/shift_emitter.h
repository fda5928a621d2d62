// Code for the ops whose element reads an operand at a shifted index
// (slice, pad, cat). Internal to the code generator.
//
// The kernel computes such an op's result like an op computed from indices:
// from the element's linear (row-major) index in the result, it derives the
// multi-index, maps it through the op (slice: start + stride * i; pad: i - low
// guarded by the operand's window, else the fill value; cat: the operand whose
// window holds i, at i - its offset) and evaluates the operand's sub-graph
// there, down to the kernel's inputs, which it loads element by element (no
// vector loads: a shifted index has no alignment to rely on). Indices are
// clamped into each operand's window, so every load is in bounds whether its
// value is used or not. Axes in front of the first axis an op moves are kept
// as one linear index while every tensor on the way has the same extents
// there (a rotary embedding's [batch, heads, seq] is one number, only the head
// axis is split off).
#ifndef FUSIOND_COMPILER_CODEGEN_SHIFT_EMITTER_H_
#define FUSIOND_COMPILER_CODEGEN_SHIFT_EMITTER_H_

#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/codegen/expr_emitter.h"
#include "compiler/codegen/kernel_plan.h"

namespace fusiond {

// Lanes of a chunk: element lane `lane` (< `count`, both names in the
// kernel's text) is the chunk's first element plus lane along the innermost
// axis; where count == width the first element's index there is a multiple
// of width and every `aligned` input's pointer is aligned to width elements.
// Index arithmetic then runs once per chunk, and reads that keep the lanes
// consecutive and width-aligned (slice starts, pad widths, cat offsets and
// extents all multiples of width along the innermost axis) load an aligned
// input as one vector (Chunk<count * bytes>), each lane taking its element.
struct ShiftLanes {
  std::string first;  // the linear index of the chunk's first element in the result
  int width = 1;
  std::string lane = "l", count = "VV";
  std::function<bool(ValueId)> aligned;
  // Where statements the same for every lane go (before the lane loop), at
  // chunk_indent; nullptr: with the lane's.
  std::string* chunk = nullptr;
  std::string chunk_indent;
};

// The expression (compute type) of shift op result v at linear index
// `linear` (an i64 expression), appending the statements it needs to *out
// at `indent`; variables are named `<prefix>_<n>`. `scalar` gives a scalar
// value's expression; `input_index` names the inputs' pointers (in<k>, typed
// by element). With `lanes` (nullptr: none) and a result whose innermost
// extent is a multiple of its width, the chunk form above. Unimplemented
// when the operand's sub-graph holds an op a kernel cannot read at shifted
// indices (ShiftReadProblem, shift_view.h).
absl::StatusOr<std::string> EmitShifted(
    const KernelPlan& plan, const ExprOptions& options, const std::map<ValueId, int>& input_index,
    ValueId v, const std::string& linear, const ShiftLanes* lanes, const std::string& prefix,
    std::string* out, const std::string& indent,
    const std::function<absl::StatusOr<std::string>(ValueId)>& scalar);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_CODEGEN_SHIFT_EMITTER_H_
