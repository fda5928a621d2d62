// The cache key's bucket: specialized kernels (manifest `requires`) run the
// sizes they were compiled for, so a persistent segment's entry holds its
// symbol sizes; pointwise and multi-pass kernels, and --general ones, run
// every shape and share an entry across shapes with the same parameters.
#include "cache/cache_key.h"

#include <gtest/gtest.h>

namespace fusiond {
namespace {

CompileResult Scheduled(SchedulerKind kind, bool multi_pass, std::vector<int64_t> sizes) {
  CompileResult r;
  r.canonical_hash = "0123456789abcdef";
  SegmentResult s;
  s.kind = kind;
  s.params.kind = kind;
  s.params.outer_size = 2;   // a reduction over [2, 5] or [10, 1] of its axes:
  s.params.inner_size = 10;  // the same parameters
  s.params.multi_pass = multi_pass;
  s.symbol_sizes = std::move(sizes);
  r.segments.push_back(std::move(s));
  return r;
}

TEST(CacheKey, PersistentEntriesHoldTheSizesCompiledFor) {
  CompileOptions specialized, general;
  general.general_kernels = true;
  const auto a = Scheduled(SchedulerKind::kInnerPersistent, false, {2, 5, 1});
  const auto b = Scheduled(SchedulerKind::kInnerPersistent, false, {2, 1, 5});
  EXPECT_NE(MakeCacheKey(a, specialized).bucket, MakeCacheKey(b, specialized).bucket);
  EXPECT_NE(MakeCacheKey(a, specialized).bucket.find(":2x5x1"), std::string::npos);
  EXPECT_EQ(MakeCacheKey(a, general).bucket, MakeCacheKey(b, general).bucket);
  EXPECT_NE(MakeCacheKey(a, specialized).options, MakeCacheKey(a, general).options);
  for (auto [kind, multi_pass] : {std::pair{SchedulerKind::kPointwise, false},
                                  std::pair{SchedulerKind::kInnerReduction, true}}) {
    EXPECT_EQ(MakeCacheKey(Scheduled(kind, multi_pass, {2, 5, 1}), specialized).bucket,
              MakeCacheKey(Scheduled(kind, multi_pass, {2, 1, 5}), specialized).bucket);
  }
}

}  // namespace
}  // namespace fusiond
