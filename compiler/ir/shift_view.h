// How a kernel sees the ops that read operands at shifted indices (slice,
// pad, cat). A kernel computes such an op's element from its output index:
// it reads the operand's sub-graph again at the shifted index, down to the
// kernel's inputs (guarded loads), so that sub-graph is not part of the
// kernel's iteration space. These helpers say which values live only there,
// whether a kernel can read an op's operands that way, and give the graph the
// scheduler analyses (each shift op a fresh input of its shape).
#ifndef FUSIOND_COMPILER_IR_SHIFT_VIEW_H_
#define FUSIOND_COMPILER_IR_SHIFT_VIEW_H_

#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace fusiond {

// Per value: true when the value is read only at shifted indices, i.e. every
// use is a tensor operand of a shift op or an operand of a node whose
// results are all such values (and it is not a graph output).
std::vector<bool> ShiftedOnly(const Graph& g);

// "" when a kernel can read every shift op's tensor operands at shifted
// indices: their sub-graphs reach graph inputs and
// scalars through pointwise ops, broadcast_in_dim, broadcast, expand,
// squeeze, permute, iota, random ops and other shift ops. Otherwise why not, naming the op
// ("slice T3 reads T2, a sum result, ...").
std::string ShiftReadProblem(const Graph& g);

// g with every shift op whose result the kernel's iteration space holds
// replaced by a cast of a new input of its shape and dtype, and the values
// read only at shifted indices (with inputs read only there) left out.
// Value ids change; symbols do not, so a SizeBinding of g resolves the
// view's extents. g itself when it has no shift op.
Graph ShiftFreeView(const Graph& g);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_IR_SHIFT_VIEW_H_
