// The canonical form and canonical hash of a graph: two graphs that differ
// only in value names or in the order of independent definitions have the
// same canonical form and hash. Each value is hashed from what defines it
// (an input by its position, dtype, shape and layout; a constant by dtype
// and value; a node result by op, attributes, result index, dtype, shape and
// the hashes of its operands, sorted for commutative ops), with symbolic
// extents named by the first input axis (position, axis) carrying them. The
// graph hash combines the inputs' and then the outputs' hashes in order.
// The hash is FNV-1a over a canonical byte string: stable across runs,
// builds and machines (never std::hash).
#ifndef FUSIOND_COMPILER_PASSES_CANONICAL_H_
#define FUSIOND_COMPILER_PASSES_CANONICAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace fusiond {

// A structural hash per value (indexed by ValueId).
std::vector<uint64_t> ValueHashes(const Graph& g);

uint64_t CanonicalHash(const Graph& g);
// 16 lowercase hex digits.
std::string CanonicalHashHex(const Graph& g);

// g with names cleared, unused constants dropped, constants ordered by hash
// and nodes in a topological order that breaks ties by structural hash.
Graph CanonicalForm(const Graph& g);

// FNV-1a 64 over bytes, continuing from `seed`.
uint64_t Fnv1a(const void* data, size_t size, uint64_t seed = 0xcbf29ce484222325ull);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_PASSES_CANONICAL_H_
