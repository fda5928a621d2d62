#include "cache/kernel_cache.h"

#include <cstdlib>
#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "rocksdb/db.h"

namespace fusiond {
namespace {

class KernelCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kernel_cache_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<KernelCache> Open(uint64_t max_bytes = 0) {
    KernelCacheOptions o;
    o.dir = dir_;
    o.max_bytes = max_bytes;
    auto cache = KernelCache::Open(o);
    EXPECT_TRUE(cache.ok()) << cache.status();
    return cache.ok() ? *std::move(cache) : nullptr;
  }

  static fusiond::v1::CompiledFusion Value(const std::string& hash, size_t cubin_bytes) {
    fusiond::v1::CompiledFusion v;
    v.set_canonical_hash(hash);
    auto* k = v.add_segments()->mutable_kernel();
    k->set_kernel_name("kernel_" + hash);
    k->set_binary(std::string(cubin_bytes, static_cast<char>(hash.size())));
    return v;
  }

  std::string dir_;
};

TEST_F(KernelCacheTest, MissThenHitAndSurvivesReopen) {
  {
    auto cache = Open();
    EXPECT_TRUE(absl::IsNotFound(cache->Lookup("k1").status()));
    ASSERT_TRUE(cache->Insert("k1", Value("abc", 20000)).ok());
    auto got = cache->Lookup("k1");
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->canonical_hash(), "abc");
    EXPECT_EQ(got->segments(0).kernel().binary().size(), 20000u);
    ASSERT_TRUE(cache->InsertRequest("req", "k1").ok());
  }
  auto cache = Open();
  auto got = cache->Lookup("k1");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->segments(0).kernel().kernel_name(), "kernel_abc");
  EXPECT_EQ(*cache->LookupRequest("req"), "k1");
  EXPECT_EQ(cache->Stats().entries, 1u);
  EXPECT_GT(cache->Stats().bytes, 20000u);
}

// Hits by tier (fusiond_cache_tier_hits_total): after a reopen the first
// read comes from RocksDB, the next from the memory tier.
TEST_F(KernelCacheTest, CountsHitsByTier) {
  {
    auto cache = Open();
    ASSERT_TRUE(cache->Insert("k1", Value("abc", 100)).ok());
  }
  auto cache = Open();
  ASSERT_TRUE(cache->Lookup("k1").ok());
  ASSERT_TRUE(cache->LookupPayload("k1").ok());
  EXPECT_TRUE(absl::IsNotFound(cache->Lookup("k2").status()));
  KernelCacheStats s = cache->Stats();
  EXPECT_EQ(s.disk_hits, 1u);
  EXPECT_EQ(s.memory_hits, 1u);
  EXPECT_EQ(s.lookups_found, 2u);
  EXPECT_EQ(s.lookups_missing, 1u);
}

TEST_F(KernelCacheTest, SecondOpenOfALiveCacheIsUnavailable) {
  auto cache = Open();
  KernelCacheOptions o;
  o.dir = dir_;
  auto second = KernelCache::Open(o);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(KernelCacheTest, CorruptRecordIsAMissCountedAndDeleted) {
  {
    auto cache = Open();
    ASSERT_TRUE(cache->Insert("small", Value("s", 10)).ok());
    ASSERT_TRUE(cache->Insert("large", Value("l", 50000)).ok());
  }
  {  // Flip one payload byte of each stored value behind the cache's back.
    rocksdb::DB* db = nullptr;
    rocksdb::Options o;
    std::vector<rocksdb::ColumnFamilyDescriptor> families = {
        {rocksdb::kDefaultColumnFamilyName, {}}, {"access", {}}, {"requests", {}}};
    families[0].options.enable_blob_files = true;
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    ASSERT_TRUE(rocksdb::DB::Open(o, dir_, families, &handles, &db).ok());
    for (const char* key : {"small", "large"}) {
      std::string v;
      ASSERT_TRUE(db->Get({}, handles[0], key, &v).ok());
      v[v.size() - 3] ^= 0x40;
      ASSERT_TRUE(db->Put({}, handles[0], key, v).ok());
    }
    for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
    delete db;
  }
  auto cache = Open();
  EXPECT_TRUE(absl::IsNotFound(cache->Lookup("small").status()));
  EXPECT_TRUE(absl::IsNotFound(cache->Lookup("large").status()));
  EXPECT_EQ(cache->Stats().corrupt_records, 2u);
  EXPECT_EQ(cache->Stats().entries, 0u);
  // Deleted: a second lookup is a plain miss, not another corrupt record.
  EXPECT_TRUE(absl::IsNotFound(cache->Lookup("small").status()));
  EXPECT_EQ(cache->Stats().corrupt_records, 2u);
}

TEST_F(KernelCacheTest, EvictsLeastRecentlyUsedToTheCap) {
  auto cache = Open(/*max_bytes=*/35000);
  ASSERT_TRUE(cache->Insert("a", Value("a", 10000)).ok());
  ASSERT_TRUE(cache->Insert("b", Value("b", 10000)).ok());
  ASSERT_TRUE(cache->Insert("c", Value("c", 10000)).ok());
  ASSERT_TRUE(cache->Lookup("a").ok());                     // a is now the most recent
  ASSERT_TRUE(cache->Insert("d", Value("d", 10000)).ok());  // over the cap: b goes
  EXPECT_TRUE(cache->Lookup("a").ok());
  EXPECT_TRUE(absl::IsNotFound(cache->Lookup("b").status()));
  EXPECT_TRUE(cache->Lookup("c").ok());
  EXPECT_TRUE(cache->Lookup("d").ok());
  EXPECT_EQ(cache->Stats().evictions, 1u);
  EXPECT_LE(cache->Stats().bytes, 35000u);
}

}  // namespace
}  // namespace fusiond
