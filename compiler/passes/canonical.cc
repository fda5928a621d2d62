#include "compiler/passes/canonical.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <queue>
#include <utility>

#include "absl/strings/str_format.h"
#include "compiler/passes/cse.h"
#include "compiler/passes/rewrite.h"

namespace fusiond {
namespace {

// Appends fixed-width little-endian fields to a byte string.
class Bytes {
 public:
  void Add(int64_t v) { Raw(&v, sizeof v); }
  void Add(uint64_t v) { Raw(&v, sizeof v); }
  void Add(double v) { Raw(&v, sizeof v); }
  uint64_t Hash() const { return Fnv1a(s_.data(), s_.size()); }

 private:
  void Raw(const void* p, size_t n) { s_.append(static_cast<const char*>(p), n); }
  std::string s_;
};

// Symbolic extents named by the smallest (input position, axis) in their class.
std::map<SymbolId, int64_t> SymbolNames(const Graph& g) {
  std::map<SymbolId, int64_t> names;
  for (size_t pos = 0; pos < g.inputs.size(); ++pos) {
    const Value& v = g.value(g.inputs[pos]);
    for (int a = 0; a < v.rank(); ++a) {
      Extent e = g.Canonical(v.shape[a]);
      if (e.is_static()) continue;
      names.emplace(e.symbol, static_cast<int64_t>(pos) * 64 + a);  // first wins
    }
  }
  return names;
}

void AddExtent(const Graph& g, const std::map<SymbolId, int64_t>& names, Extent e, Bytes& b) {
  e = g.Canonical(e);
  if (e.is_static()) {
    b.Add(e.size);
  } else {
    auto it = names.find(e.symbol);
    b.Add(int64_t{-2} - (it == names.end() ? 0 : it->second));
  }
}

void AddShape(const Graph& g, const std::map<SymbolId, int64_t>& names,
              const std::vector<Extent>& shape, Bytes& b) {
  b.Add(static_cast<int64_t>(shape.size()));
  for (const Extent& e : shape) AddExtent(g, names, e, b);
}

void AddType(const Graph& g, const std::map<SymbolId, int64_t>& names, const Value& v, Bytes& b) {
  b.Add(static_cast<int64_t>(v.is_tensor));
  b.Add(static_cast<int64_t>(v.dtype));
  AddShape(g, names, v.shape, b);
}

}  // namespace

uint64_t Fnv1a(const void* data, size_t size, uint64_t seed) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  uint64_t h = seed;
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

std::vector<uint64_t> ValueHashes(const Graph& g) {
  const auto names = SymbolNames(g);
  std::vector<uint64_t> h(g.values.size(), 0);
  for (size_t pos = 0; pos < g.inputs.size(); ++pos) {
    const Value& v = g.value(g.inputs[pos]);
    Bytes b;
    b.Add(int64_t{1});
    b.Add(static_cast<int64_t>(pos));
    AddType(g, names, v, b);
    for (const auto& c : v.contiguity) b.Add(static_cast<int64_t>(c ? (*c ? 1 : 0) : 2));
    for (int64_t s : v.stride_order) b.Add(s);
    if (v.cpu_tensor) b.Add(int64_t{3});  // the manifest says so: a different artifact
    h[v.id] = b.Hash();
  }
  for (const Value& v : g.values) {
    if (!v.is_constant()) continue;
    Bytes b;
    b.Add(int64_t{2});
    b.Add(static_cast<int64_t>(v.dtype));
    b.Add(*v.constant);
    h[v.id] = b.Hash();
  }
  for (const Node& n : g.nodes) {  // topological order: operands are done
    std::vector<uint64_t> operands;
    for (ValueId in : n.inputs) operands.push_back(h[in]);
    if (IsCommutative(n.op)) std::sort(operands.begin(), operands.end());
    Bytes node;
    node.Add(int64_t{3});
    node.Add(static_cast<int64_t>(n.op));
    for (uint64_t o : operands) node.Add(o);
    const Attrs& a = n.attrs;
    node.Add(static_cast<int64_t>(a.dims.size()));
    for (int64_t d : a.dims) node.Add(d);
    node.Add(static_cast<int64_t>(a.broadcast_dims.size()));
    for (int64_t d : a.broadcast_dims) node.Add(d);
    AddShape(g, names, a.shape, node);
    node.Add(static_cast<int64_t>(a.is_broadcast_dim.size()));
    for (bool x : a.is_broadcast_dim) node.Add(static_cast<int64_t>(x));
    node.Add(static_cast<int64_t>(a.keepdim));
    node.Add(static_cast<int64_t>(a.dtype ? static_cast<int>(*a.dtype) : 0));
    node.Add(a.correction);
    node.Add(a.axis);
    // Only slice and pad set offsets; other nodes hash as before.
    if (!a.offsets.empty()) {
      node.Add(static_cast<int64_t>(a.offsets.size()));
      for (int64_t o : a.offsets) node.Add(o);
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      Bytes b = node;
      b.Add(static_cast<int64_t>(k));
      AddType(g, names, g.value(n.outputs[k]), b);
      h[n.outputs[k]] = b.Hash();
    }
  }
  return h;
}

uint64_t CanonicalHash(const Graph& g) {
  const auto h = ValueHashes(g);
  Bytes b;
  b.Add(static_cast<int64_t>(g.inputs.size()));
  for (ValueId in : g.inputs) b.Add(h[in]);
  b.Add(static_cast<int64_t>(g.outputs.size()));
  for (ValueId out : g.outputs) b.Add(h[out]);
  return b.Hash();
}

std::string CanonicalHashHex(const Graph& g) { return absl::StrFormat("%016x", CanonicalHash(g)); }

Graph CanonicalForm(const Graph& src) {
  Graph g = src;
  Compact(g);  // dead code and unused constants out
  const auto h = ValueHashes(g);
  // Kahn's algorithm over nodes, ready nodes taken by smallest first-output hash.
  const int nn = static_cast<int>(g.nodes.size());
  std::vector<int> missing(nn, 0);
  std::vector<std::vector<NodeId>> readers(nn);
  for (const Node& n : g.nodes) {
    for (ValueId in : n.inputs) {
      NodeId d = g.values[in].def;
      if (d == kNone) continue;
      ++missing[n.id];
      readers[d].push_back(n.id);
    }
  }
  using Item = std::pair<uint64_t, NodeId>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> ready;
  for (int n = 0; n < nn; ++n) {
    if (missing[n] == 0) ready.push({h[g.nodes[n].outputs[0]], n});
  }
  std::vector<Node> nodes;
  while (!ready.empty()) {
    NodeId n = ready.top().second;
    ready.pop();
    nodes.push_back(g.nodes[n]);
    if (IsCommutative(nodes.back().op)) {
      auto& in = nodes.back().inputs;
      std::sort(in.begin(), in.end(), [&](ValueId a, ValueId b) { return h[a] < h[b]; });
    }
    for (NodeId r : readers[n]) {
      if (--missing[r] == 0) ready.push({h[g.nodes[r].outputs[0]], r});
    }
  }
  // Constants ordered by hash: give them the smallest value ids.
  std::vector<ValueId> constants;
  for (const Value& v : g.values) {
    if (v.is_constant()) constants.push_back(v.id);
  }
  std::sort(constants.begin(), constants.end(), [&](ValueId a, ValueId b) { return h[a] < h[b]; });
  std::vector<Value> values;
  for (ValueId c : constants) values.push_back(g.values[c]);
  for (const Value& v : g.values) {
    if (!v.is_constant()) values.push_back(v);
  }
  std::vector<ValueId> remap(g.values.size());
  for (size_t i = 0; i < values.size(); ++i) remap[values[i].id] = static_cast<ValueId>(i);
  for (size_t i = 0; i < values.size(); ++i) {
    values[i].id = static_cast<ValueId>(i);
    values[i].name.clear();
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (ValueId& v : nodes[i].inputs) v = remap[v];
    for (ValueId& v : nodes[i].outputs) {
      v = remap[v];
      values[v].def = static_cast<NodeId>(i);
    }
    nodes[i].id = static_cast<NodeId>(i);
  }
  for (ValueId& v : g.inputs) v = remap[v];
  for (ValueId& v : g.outputs) v = remap[v];
  for (SizeSymbol& s : g.symbols) s.input = remap[s.input];
  g.values = std::move(values);
  g.nodes = std::move(nodes);
  Compact(g);  // renumber node results in the new node order
  return g;
}

}  // namespace fusiond
