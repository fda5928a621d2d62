// A stable 64-bit hash (FNV-1a) for cache keys and heuristic parameters:
// the same bytes hash the same on every run, build and machine.
#ifndef FUSIOND_COMPILER_UTIL_HASH_H_
#define FUSIOND_COMPILER_UTIL_HASH_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace fusiond {

inline uint64_t Fnv1a64(std::string_view bytes, uint64_t seed = 0xcbf29ce484222325ull) {
  uint64_t h = seed;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_UTIL_HASH_H_
