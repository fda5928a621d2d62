#include "compiler/ir/graph.h"

#include <algorithm>
#include <string>

namespace fusiond {

SymbolId Graph::RootSymbol(SymbolId s) const {
  while (s != kNone && symbols[s].parent != kNone) s = symbols[s].parent;
  return s;
}

Extent Graph::Canonical(Extent e) const {
  if (e.is_static()) return Extent::Static(e.size);
  SymbolId root = RootSymbol(e.symbol);
  if (symbols[root].bound >= 0) return Extent::Static(symbols[root].bound);
  return Extent::Symbolic(root);
}

bool Graph::SameExtent(Extent a, Extent b) const { return Canonical(a) == Canonical(b); }

bool Graph::UnifyExtents(Extent a, Extent b) {
  a = Canonical(a);
  b = Canonical(b);
  if (a == b) return true;
  if (a.is_static() && b.is_static()) return false;
  if (a.is_static() || b.is_static()) {
    // A symbol required to equal a static size: the symbol is bound to it
    // (and the binder checks the input's real extent against it).
    Extent sym = a.is_static() ? b : a;
    symbols[sym.symbol].bound = a.is_static() ? a.size : b.size;
    return true;
  }
  // The older symbol (smaller id) stays the root, so roots are stable.
  if (a.symbol < b.symbol) {
    symbols[b.symbol].parent = a.symbol;
  } else {
    symbols[a.symbol].parent = b.symbol;
  }
  return true;
}

std::string Graph::ExtentName(Extent e) const {
  if (e.is_static()) return std::to_string(e.size);
  const SizeSymbol& s = symbols[RootSymbol(e.symbol)];
  const Value& v = values[s.input];
  std::string base = v.name.empty() ? "%" + std::to_string(v.id) : v.name;
  return base + ".size(" + std::to_string(s.axis) + ")";
}

std::vector<std::vector<NodeId>> Graph::Uses() const {
  std::vector<std::vector<NodeId>> uses(values.size());
  for (const Node& n : nodes) {
    for (ValueId in : n.inputs) {
      if (uses[in].empty() || uses[in].back() != n.id) uses[in].push_back(n.id);
    }
  }
  return uses;
}

bool Graph::IsOutput(ValueId id) const {
  return std::find(outputs.begin(), outputs.end(), id) != outputs.end();
}

bool Graph::IsInput(ValueId id) const {
  return std::find(inputs.begin(), inputs.end(), id) != inputs.end();
}

}  // namespace fusiond
