// NvrtcOutputCache: NVRTC's outputs in memory, by the exact compile input
// (source, kernel name, arch, options), so a process compiles no kernel text
// twice. The daemon's kernel cache keys records by the heuristics' parameters,
// which include the input sizes; a symbolic definition at a new batch size is
// a new record, yet its kernel text is usually the same (sizes are kernel
// arguments): rmsnorm_bwd_manual at 2048, 3000 or 4096 rows generates one
// source. This cache turns those compiles (250-400 ms of NVRTC) into a
// lookup. Entries are matched on the whole input, not a hash of it, so a
// collision cannot hand back the wrong binary. Least recently used entries go
// first once the bytes held exceed the cap. Thread-safe; two threads that
// miss on the same input both compile it (the daemon's single flight already
// merges identical requests).
#ifndef FUSIOND_COMPILER_NVRTC_NVRTC_CACHE_H_
#define FUSIOND_COMPILER_NVRTC_NVRTC_CACHE_H_

#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "absl/status/statusor.h"
#include "compiler/nvrtc/nvrtc_compiler.h"

namespace fusiond {

// A second level behind the memory: outputs kept elsewhere (the daemon's
// stored records hold every kernel's source and cubin), found by the compile
// input. Find() returns an output only for exactly this input.
class NvrtcOutputStore {
 public:
  virtual ~NvrtcOutputStore() = default;
  virtual std::optional<NvrtcOutput> Find(const std::string& source, const std::string& kernel_name,
                                          const NvrtcOptions& options) = 0;
};

struct NvrtcCacheStats {
  uint64_t hits = 0;        // compiles answered from memory or the store
  uint64_t store_hits = 0;  // of those, from the store
  uint64_t misses = 0;      // compiles run (successful or not)
  uint64_t entries = 0;     // outputs held now
  uint64_t bytes = 0;       // bytes held now (inputs and outputs)
};

class NvrtcOutputCache {
 public:
  // Holds at most `max_bytes` of inputs and outputs (default 64 MiB); asks
  // `store` (may be null; must outlive the cache) on a miss in memory.
  explicit NvrtcOutputCache(uint64_t max_bytes = uint64_t{64} << 20,
                            NvrtcOutputStore* store = nullptr);
  NvrtcOutputCache(const NvrtcOutputCache&) = delete;
  NvrtcOutputCache& operator=(const NvrtcOutputCache&) = delete;

  // CompileWithNvrtc's result for this input: the stored one when the same
  // input compiled before (`*reused` true; `micros` is then the lookup's),
  // else a fresh compile, stored when it succeeded. Errors as
  // CompileWithNvrtc's (never stored).
  absl::StatusOr<NvrtcOutput> Compile(const std::string& source, const std::string& kernel_name,
                                      const NvrtcOptions& options, bool* reused = nullptr);

  NvrtcCacheStats Stats() const;

 private:
  struct Entry {
    NvrtcOutput output;
    std::list<std::string>::iterator lru;
    uint64_t bytes = 0;
  };
  void InsertLocked(std::string key, const NvrtcOutput& output);

  const uint64_t max_bytes_;
  NvrtcOutputStore* const store_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;   // guarded by mu_
  std::list<std::string> lru_;                       // guarded by mu_; front = newest
  uint64_t bytes_ = 0;                               // guarded by mu_
  uint64_t hits_ = 0, store_hits_ = 0, misses_ = 0;  // guarded by mu_
};

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_NVRTC_NVRTC_CACHE_H_
