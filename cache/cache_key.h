// The kernel cache key, defined here and nowhere else.
//
// A record is keyed by everything that decides the bytes of the kernels:
//   format_version   kCacheFormatVersion: the layout of the key and of the
//                    stored record; bump it and every old entry is a miss.
//   canonical_hash   the optimized graph's canonical hash from the pipeline:
//                    equal for definitions equal up to names and node order.
//   bucket           the input signature, as the heuristics see it: the
//                    HeuristicParams hash of every segment, in order. For a
//                    static definition this is a function of the graph; for a
//                    symbolic one it holds the iteration space's sizes
//                    (outer_size, inner_size): shapes with equal ones share
//                    an entry (the kernels read real sizes from their
//                    arguments); other sizes are other entries, and when
//                    their kernel text is equal they share NVRTC's work
//                    (NvrtcOutputCache), not the record.
//   arch             the target GPU architecture ("sm_90").
//   options          compile options that change the output
//                    (allow_precision_increase). dump_pass does not.
//   nvrtc_version    NvrtcVersion() (compiler/nvrtc): the NVRTC that compiled
//                    the cubins ("none" without one).
//   compiler_version CompilerVersionString(): a hash of every source that can
//                    change a kernel or a manifest (passes, segmenter,
//                    schedulers and heuristics, codegen, NVRTC wrapper; the
//                    build computes it, compiler/version) and NVRTC's flags.
//                    An upgrade that changes any of them misses every entry.
//
// Finding the canonical hash and the bucket needs the front half of the
// pipeline (passes, segmentation, scheduling; no codegen). The cache
// remembers the answer per exact request (RequestKey, which holds the
// compiler version too) so a repeated request goes straight to its record;
// after an upgrade its RequestKey is another, so it resolves afresh.
#ifndef FUSIOND_CACHE_CACHE_KEY_H_
#define FUSIOND_CACHE_CACHE_KEY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/pipeline.h"
#include "proto/fusion.pb.h"

namespace fusiond {

// Bump when the key scheme or the stored record's meaning changes.
constexpr uint32_t kCacheFormatVersion = 2;

// "codegen-<kCodegenVersion>" (the code generator's hand-set version, for
// reports; the key holds CompilerVersionString()).
std::string CodegenVersionString();

// "src-<16 hex of the compiler's source hash>;nvrtc=<NvrtcFlags, comma-joined>",
// or the value a ScopedCompilerVersionForTesting sets.
std::string CompilerVersionString();

// While alive, CompilerVersionString() returns `version`: what a build of
// other compiler sources would (the upgrade test). Not nestable; tests only.
class ScopedCompilerVersionForTesting {
 public:
  explicit ScopedCompilerVersionForTesting(std::string version);
  ~ScopedCompilerVersionForTesting();
  ScopedCompilerVersionForTesting(const ScopedCompilerVersionForTesting&) = delete;
  ScopedCompilerVersionForTesting& operator=(const ScopedCompilerVersionForTesting&) = delete;
};

struct CacheKey {
  uint32_t format_version = kCacheFormatVersion;
  std::string canonical_hash;
  std::string bucket;
  std::string arch;
  std::string options;
  std::string nvrtc_version;
  std::string compiler_version = CompilerVersionString();

  // "v2|<canonical_hash>|<bucket>|<arch>|<options>|<nvrtc>|<compiler>":
  // printable, so `fusiond_cache_tool list` shows what is stored.
  std::string Encode() const;
};

// The NVRTC version this build compiles with, "13.0", or "none".
std::string NvrtcVersionString();

// The compile-option part of the key.
std::string OptionsKeyPart(const CompileOptions& options);

// The bucket part: every segment's params hash, in order ("<kind>:<hex>,..."),
// with_sizes: each persistent one followed by the segment's symbol sizes
// (":2048x8192").
std::string BucketOf(const CompileResult& scheduled, bool with_sizes);

// The key of a result from the front half of the pipeline (or a full one).
CacheKey MakeCacheKey(const CompileResult& scheduled, const CompileOptions& options);

// The exact request: versions (NVRTC's, the compiler's) + the deterministic
// serialization of the graph, the shapes and the options. Maps to a CacheKey in the cache's
// request index; never leaves this machine.
std::string RequestKey(const fusiond::v1::FusionGraph& graph,
                       const std::vector<std::vector<int64_t>>& input_shapes,
                       const CompileOptions& options);

}  // namespace fusiond

#endif  // FUSIOND_CACHE_CACHE_KEY_H_
