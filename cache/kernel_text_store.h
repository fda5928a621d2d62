// KernelTextStore: NVRTC's outputs found in the kernel cache's own records,
// so no kernel text is compiled twice across daemon restarts either.
//
// Every stored record holds each kernel's CUDA source and cubin. After a
// compile, Index() maps a digest of each kernel's compile input (compiler
// version with NVRTC's flags, NVRTC version, arch, kernel name, source) to
// the record's cache key and the segment, in the cache's `requests` column
// family under "t1|<digest>" (its RequestKeys start "r2|"). Find() follows that entry, reads the
// record (checksummed as any lookup) and answers only when the stored source and name equal the
// asked ones, so a stale or colliding entry is a miss, never a wrong binary. An entry whose record
// was evicted is a miss too.
#ifndef FUSIOND_CACHE_KERNEL_TEXT_STORE_H_
#define FUSIOND_CACHE_KERNEL_TEXT_STORE_H_

#include <optional>
#include <string>

#include "cache/kernel_cache.h"
#include "compiler/nvrtc/nvrtc_cache.h"
#include "proto/cache.pb.h"

namespace fusiond {

class KernelTextStore : public NvrtcOutputStore {
 public:
  // `cache` must outlive the store.
  explicit KernelTextStore(KernelCache* cache) : cache_(cache) {}

  // Indexes the kernels of the record stored under `cache_key`, compiled
  // for `arch` (empty: each kernel's own arch; PTX kernels are then skipped,
  // theirs is not the arch asked for). Kernels without a binary (no NVRTC)
  // are skipped.
  void Index(const std::string& cache_key, const fusiond::v1::CompiledFusion& record,
             const std::string& arch);

  std::optional<NvrtcOutput> Find(const std::string& source, const std::string& kernel_name,
                                  const NvrtcOptions& options) override;

  // "t1|..." for this input (exposed for tests).
  static std::string IndexKey(const std::string& source, const std::string& kernel_name,
                              const std::string& arch);

 private:
  KernelCache* cache_;
};

}  // namespace fusiond

#endif  // FUSIOND_CACHE_KERNEL_TEXT_STORE_H_
