#include "compiler/nvrtc/nvrtc_cache.h"

#include <gtest/gtest.h>

#include <string>

namespace fusiond {
namespace {

std::string Kernel(const std::string& name, float add) {
  return "extern \"C\" __global__ void " + name +
         "(float* x, long long n) {\n"
         "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
         "  if (i < n) x[i] += " +
         std::to_string(add) + "f;\n}\n";
}

TEST(NvrtcOutputCache, CompilesEachInputOnce) {
  NvrtcOutputCache cache;
  bool reused = true;
  auto first = cache.Compile(Kernel("k", 1), "k", NvrtcOptions{}, &reused);
  if (absl::IsUnavailable(first.status())) GTEST_SKIP() << "no NVRTC in this build";
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(reused);
  auto again = cache.Compile(Kernel("k", 1), "k", NvrtcOptions{}, &reused);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(reused);
  EXPECT_EQ(again->binary, first->binary);
  EXPECT_EQ(again->registers, first->registers);
  EXPECT_EQ(again->options, first->options);
  // Another source, kernel name or arch is another input.
  ASSERT_TRUE(cache.Compile(Kernel("k", 2), "k", NvrtcOptions{}, &reused).ok());
  EXPECT_FALSE(reused);
  ASSERT_TRUE(cache.Compile(Kernel("k2", 1), "k2", NvrtcOptions{}, &reused).ok());
  EXPECT_FALSE(reused);
  NvrtcOptions sm80;
  sm80.arch = "sm_80";
  auto other_arch = cache.Compile(Kernel("k", 1), "k", sm80, &reused);
  ASSERT_TRUE(other_arch.ok()) << other_arch.status();
  EXPECT_FALSE(reused);
  EXPECT_NE(other_arch->binary, first->binary);
  const NvrtcCacheStats s = cache.Stats();
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.misses, 4u);
  EXPECT_EQ(s.entries, 4u);
  EXPECT_GT(s.bytes, first->binary.size());
}

TEST(NvrtcOutputCache, FailuresAreNotStored) {
  NvrtcOutputCache cache;
  bool reused = true;
  auto bad = cache.Compile("extern \"C\" __global__ void k() { undeclared(); }\n", "k",
                           NvrtcOptions{}, &reused);
  if (absl::IsUnavailable(bad.status())) GTEST_SKIP() << "no NVRTC in this build";
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInternal);
  bad = cache.Compile("extern \"C\" __global__ void k() { undeclared(); }\n", "k", NvrtcOptions{},
                      &reused);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInternal);
  EXPECT_FALSE(reused);
  EXPECT_EQ(cache.Stats().entries, 0u);
  EXPECT_EQ(cache.Stats().misses, 2u);
}

TEST(NvrtcOutputCache, EvictsTheLeastRecentlyUsedAtTheCap) {
  NvrtcOutputCache probe;
  auto one = probe.Compile(Kernel("k", 1), "k", NvrtcOptions{});
  if (absl::IsUnavailable(one.status())) GTEST_SKIP() << "no NVRTC in this build";
  ASSERT_TRUE(one.ok()) << one.status();
  // Room for two entries of this size, not three.
  NvrtcOutputCache cache(probe.Stats().bytes * 5 / 2);
  bool reused = false;
  ASSERT_TRUE(cache.Compile(Kernel("k", 1), "k", NvrtcOptions{}).ok());
  ASSERT_TRUE(cache.Compile(Kernel("k", 2), "k", NvrtcOptions{}).ok());
  ASSERT_TRUE(cache.Compile(Kernel("k", 1), "k", NvrtcOptions{}, &reused).ok());  // 1 is newest now
  EXPECT_TRUE(reused);
  ASSERT_TRUE(cache.Compile(Kernel("k", 3), "k", NvrtcOptions{}).ok());  // evicts 2
  EXPECT_EQ(cache.Stats().entries, 2u);
  ASSERT_TRUE(cache.Compile(Kernel("k", 1), "k", NvrtcOptions{}, &reused).ok());
  EXPECT_TRUE(reused);
  ASSERT_TRUE(cache.Compile(Kernel("k", 2), "k", NvrtcOptions{}, &reused).ok());
  EXPECT_FALSE(reused);
  EXPECT_LE(cache.Stats().bytes, probe.Stats().bytes * 5 / 2);
}

}  // namespace
}  // namespace fusiond

namespace fusiond {
namespace {

// A store that holds one output, for the second-level path.
class OneOutputStore : public NvrtcOutputStore {
 public:
  std::optional<NvrtcOutput> Find(const std::string& source, const std::string& kernel_name,
                                  const NvrtcOptions& options) override {
    ++finds;
    if (source != "held" || kernel_name != "k" || options.arch != "sm_90") return std::nullopt;
    NvrtcOutput o;
    o.binary = "cubin bytes";
    o.registers = 42;
    return o;
  }
  int finds = 0;
};

TEST(NvrtcOutputCache, AsksTheStoreOnAMissInMemoryAndKeepsWhatItFound) {
  OneOutputStore store;
  NvrtcOutputCache cache(uint64_t{1} << 20, &store);
  bool reused = false;
  auto held = cache.Compile("held", "k", NvrtcOptions{}, &reused);
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_TRUE(reused);
  EXPECT_EQ(held->binary, "cubin bytes");
  EXPECT_EQ(held->registers, 42);
  EXPECT_EQ(store.finds, 1);
  ASSERT_TRUE(cache.Compile("held", "k", NvrtcOptions{}, &reused).ok());  // from memory now
  EXPECT_TRUE(reused);
  EXPECT_EQ(store.finds, 1);
  EXPECT_EQ(cache.Stats().hits, 2u);
  EXPECT_EQ(cache.Stats().store_hits, 1u);
  EXPECT_EQ(cache.Stats().misses, 0u);
  // Not in the store: compiled (or Unavailable without NVRTC).
  auto other = cache.Compile("extern \"C\" __global__ void k() {}\n", "k", NvrtcOptions{}, &reused);
  EXPECT_FALSE(reused);
  EXPECT_EQ(store.finds, 2);
  EXPECT_EQ(cache.Stats().misses, 1u);
  if (!absl::IsUnavailable(other.status())) {
    EXPECT_TRUE(other.ok()) << other.status();
  }
}

}  // namespace
}  // namespace fusiond
