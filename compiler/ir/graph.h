// The fusion IR: a DAG of nodes over tensor and scalar values.
//
// A Graph owns its values and nodes in vectors; ids are indices. Nodes are
// kept in a topological order (every input is defined before its use), which
// the builder guarantees and passes preserve. Extents of tensor axes are
// either static or a size symbol: a symbol is born from a -1 axis of an input
// tensor and is unified with every extent that an op requires to be equal,
// so two axes with the same root symbol always have the same size.
#ifndef FUSIOND_COMPILER_IR_GRAPH_H_
#define FUSIOND_COMPILER_IR_GRAPH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/dtype.h"
#include "compiler/ir/op.h"

namespace fusiond {

using ValueId = int;
using NodeId = int;
using SymbolId = int;
constexpr int kNone = -1;

// The size of one tensor axis: static (size >= 0) or symbolic (size == -1,
// symbol names the size symbol).
struct Extent {
  int64_t size = -1;
  SymbolId symbol = kNone;

  static Extent Static(int64_t n) { return Extent{n, kNone}; }
  static Extent Symbolic(SymbolId s) { return Extent{-1, s}; }
  bool is_static() const { return size >= 0; }
  // A static extent of 1: may be broadcast against any extent.
  bool is_broadcast() const { return size == 1; }
  bool operator==(const Extent& o) const { return size == o.size && symbol == o.symbol; }
};

// A size symbol: the extent of axis `axis` of graph input `input`.
struct SizeSymbol {
  ValueId input = kNone;
  int axis = 0;
  SymbolId parent = kNone;  // union-find link; kNone for a root
  // Roots only: a static size an op required this symbol to equal, or -1.
  int64_t bound = -1;
};

struct Value {
  ValueId id = kNone;
  std::string name;  // front-end name ("T4"); empty for values made by passes
  bool is_tensor = true;
  DataType dtype = DataType::kFloat;
  std::vector<Extent> shape;  // tensors only; empty for a 0-d tensor
  // Inputs only: per axis true/false, or nullopt for a broadcast axis.
  std::vector<std::optional<bool>> contiguity;
  // Inputs only: nvFuser's stride order (rank-1 marks the outermost axis);
  // empty means row-major.
  std::vector<int64_t> stride_order;
  NodeId def = kNone;  // defining node; kNone for inputs and constants
  // Scalars only: the value of a constant.
  std::optional<double> constant;
  // Scalar inputs only: the caller passes a 0-dim CPU tensor (nvFuser's
  // define_tensor(shape=[], is_cpu=True)); the runtime reads its value at launch.
  bool cpu_tensor = false;

  int rank() const { return static_cast<int>(shape.size()); }
  bool is_constant() const { return !is_tensor && constant.has_value(); }
};

// Typed attributes. Which fields an op reads is documented per op in
// docs/ir.md; the others stay at their defaults.
struct Attrs {
  std::vector<int64_t> dims;            // reduction axes; squeeze axes; permutation
  std::vector<int64_t> broadcast_dims;  // broadcast_in_dim: output axis of each input axis
  std::vector<Extent> shape;            // broadcast_in_dim / expand / reshape: output shape
  std::vector<bool> is_broadcast_dim;   // broadcast: true where a new axis is inserted
  bool keepdim = false;                 // reductions
  std::optional<DataType> dtype;        // cast target; reduction result type (nullopt: default)
  int64_t correction = 0;               // var / var_mean
  int64_t axis = 0;                     // size; cat: the joined axis
  // slice: starts, ends, strides (3 * rank); pad: low, high per axis (2 * rank).
  std::vector<int64_t> offsets;
};

struct Node {
  NodeId id = kNone;
  OpKind op = OpKind::kAdd;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;  // two for var_mean (var, mean), else one
  Attrs attrs;
};

class Graph {
 public:
  // Values, nodes, inputs (in call order) and outputs (in add_output order).
  std::vector<Value> values;
  std::vector<Node> nodes;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  std::vector<SizeSymbol> symbols;

  const Value& value(ValueId id) const { return values[id]; }
  Value& value(ValueId id) { return values[id]; }
  const Node& node(NodeId id) const { return nodes[id]; }
  // The node that defines `id`, or nullptr for inputs and constants.
  const Node* def(ValueId id) const {
    return values[id].def == kNone ? nullptr : &nodes[values[id].def];
  }

  // Union-find over size symbols.
  SymbolId RootSymbol(SymbolId s) const;
  // Extent with its symbol replaced by the root symbol.
  Extent Canonical(Extent e) const;
  // True when a and b are provably the same size.
  bool SameExtent(Extent a, Extent b) const;
  // Makes a and b the same symbol; false if both are static and differ.
  bool UnifyExtents(Extent a, Extent b);
  // "T0.size(1)" for symbolic extents, the number for static ones.
  std::string ExtentName(Extent e) const;

  // For every value, the nodes that read it.
  std::vector<std::vector<NodeId>> Uses() const;
  bool IsOutput(ValueId id) const;
  bool IsInput(ValueId id) const;
};

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_IR_GRAPH_H_
