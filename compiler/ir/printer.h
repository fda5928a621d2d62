// A stable text form of a Graph: the same graph always prints the same text.
// Used by `fusionc parse`, pass dumps and golden tests.
#ifndef FUSIOND_COMPILER_IR_PRINTER_H_
#define FUSIOND_COMPILER_IR_PRINTER_H_

#include <string>

#include "compiler/ir/graph.h"

namespace fusiond {

// "T4" for named values, "%12" for values made by passes.
std::string ValueName(const Graph& g, ValueId id);
// "bfloat16[2048, T0.size(1)]" or "float64" for a scalar.
std::string TypeString(const Graph& g, ValueId id);
// One node as one line: "T5 = cast(T0, dtype=float32) : float32[16, 128]".
std::string NodeString(const Graph& g, const Node& n);
std::string PrintGraph(const Graph& g);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_IR_PRINTER_H_
