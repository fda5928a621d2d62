// Reshapes that are views of contiguous memory: the only reshapes the
// schedulers and the code generator take (compiler/passes/reshape_views.h
// leaves the others out of a graph where it can).
//  - An input view reshapes a row-major graph input, and the input has no
//    other use (nor is it an output): the kernel reads the input's buffer
//    with the reshaped shape.
//  - An output view reshapes a value computed by a node other than a
//    reshape, and no output itself, into graph outputs only: the kernel
//    writes the value's elements in order.
// ResolveReshapeViews gives the segment as the schedulers and the code
// generator see it: the input takes the reshaped shape, the output is the
// value itself, and the view nodes are gone. Its size symbols still name the
// axes of the caller's tensors (so the kernel's size parameters stay those
// of the original inputs), so the result is for analysis and code
// generation only: it does not verify, and it never goes on the wire.
#ifndef FUSIOND_COMPILER_IR_RESHAPE_VIEWS_H_
#define FUSIOND_COMPILER_IR_RESHAPE_VIEWS_H_

#include <vector>

#include "compiler/ir/graph.h"

namespace fusiond {

// uses: g.Uses().
bool IsInputView(const Graph& g, const Node& n, const std::vector<std::vector<NodeId>>& uses);
bool IsOutputView(const Graph& g, const Node& n, const std::vector<std::vector<NodeId>>& uses);

// g without its view reshapes (above); g itself when it has none. Other
// reshapes stay (the schedulers refuse them).
Graph ResolveReshapeViews(const Graph& g);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_IR_RESHAPE_VIEWS_H_
