// Storage faults below the record level: a database that will not open or
// verify is moved aside and a fresh one serves; unreadable records and
// request index entries are misses; request index entries count toward the
// cap. Never a wrong value.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cache/kernel_cache.h"
#include "gtest/gtest.h"
#include "rocksdb/db.h"

namespace fusiond {
namespace {

namespace fs = std::filesystem;

class KernelCacheHealTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kernel_cache_heal_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<KernelCache> Open(uint64_t max_bytes = 0) {
    KernelCacheOptions o;
    o.dir = dir_;
    o.max_bytes = max_bytes;
    o.on_problem = [this](const std::string& event, const std::string&) {
      events_.push_back(event);
    };
    auto cache = KernelCache::Open(o);
    EXPECT_TRUE(cache.ok()) << cache.status();
    return cache.ok() ? *std::move(cache) : nullptr;
  }

  static fusiond::v1::CompiledFusion Value(const std::string& hash, size_t cubin_bytes) {
    fusiond::v1::CompiledFusion v;
    v.set_canonical_hash(hash);
    v.add_segments()->mutable_kernel()->set_binary(std::string(cubin_bytes, 'c'));
    return v;
  }

  // Ten records (small ones in table files, large ones in blob files) and
  // their request index entries, flushed to files.
  void Fill() {
    auto cache = Open();
    for (int i = 0; i < 10; ++i) {
      std::string key = "v1|k" + std::to_string(i);
      ASSERT_TRUE(cache->Insert(key, Value(key, i % 2 ? 100 : 20000)).ok());
      ASSERT_TRUE(cache->InsertRequest("r1|q" + std::to_string(i), key).ok());
    }
    ASSERT_TRUE(cache->db()->Flush(rocksdb::FlushOptions(), cache->records_family()).ok());
    ASSERT_TRUE(cache->db()->Flush(rocksdb::FlushOptions(), cache->requests_family()).ok());
  }

  std::vector<fs::path> Files(const std::string& suffix) {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir_)) {
      const std::string name = e.path().filename().string();
      if (name.size() >= suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        out.push_back(e.path());
      }
    }
    return out;
  }

  // Every lookup is the right value or a miss, never an error or a wrong one.
  void ExpectRightOrMiss(KernelCache* cache) {
    for (int i = 0; i < 10; ++i) {
      std::string key = "v1|k" + std::to_string(i);
      auto got = cache->Lookup(key);
      if (got.ok()) {
        EXPECT_EQ(got->canonical_hash(), key);
      } else {
        EXPECT_TRUE(absl::IsNotFound(got.status())) << got.status();
      }
      auto request = cache->LookupRequest("r1|q" + std::to_string(i));
      if (request.ok()) {
        EXPECT_EQ(*request, key);
      } else {
        EXPECT_TRUE(absl::IsNotFound(request.status())) << request.status();
      }
    }
    EXPECT_TRUE(cache->Insert("v1|new", Value("v1|new", 20000)).ok());
    EXPECT_TRUE(cache->Lookup("v1|new").ok());
  }

  std::string dir_;
  std::vector<std::string> events_;
};

TEST_F(KernelCacheHealTest, GarbageCurrentIsQuarantinedAndAFreshCacheServes) {
  Fill();
  std::ofstream(dir_ + "/CURRENT", std::ios::trunc) << "garbage\n";
  auto cache = Open();
  ASSERT_NE(cache, nullptr);
  EXPECT_EQ(cache->Stats().quarantined, 1u);
  EXPECT_EQ(cache->Stats().entries, 0u);
  ASSERT_FALSE(cache->quarantined_to().empty());
  EXPECT_TRUE(fs::exists(cache->quarantined_to() + "/CURRENT"));  // kept, not deleted
  EXPECT_EQ(events_, std::vector<std::string>{"cache_quarantined"});
  ExpectRightOrMiss(cache.get());
}

TEST_F(KernelCacheHealTest, FlippedBytesInTableFilesAreQuarantinedOrMisses) {
  Fill();
  std::vector<fs::path> tables = Files(".sst");
  ASSERT_FALSE(tables.empty());
  for (const fs::path& p : tables) {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(p) / 3));
    f.write("\xde\xad\xbe\xef\xde\xad\xbe\xef", 8);
  }
  auto cache = Open();
  ASSERT_NE(cache, nullptr);
  EXPECT_EQ(cache->Stats().quarantined, 1u);  // the checksums at open saw it
  ExpectRightOrMiss(cache.get());
}

TEST_F(KernelCacheHealTest, TruncatedManifestIsQuarantined) {
  Fill();
  std::vector<fs::path> manifests;
  for (const auto& e : fs::directory_iterator(dir_)) {
    if (e.path().filename().string().rfind("MANIFEST-", 0) == 0) manifests.push_back(e.path());
  }
  ASSERT_FALSE(manifests.empty());
  for (const fs::path& p : manifests) fs::resize_file(p, fs::file_size(p) / 2);
  auto cache = Open();
  ASSERT_NE(cache, nullptr);
  ExpectRightOrMiss(cache.get());
}

TEST_F(KernelCacheHealTest, DeletedBlobFileIsAMissNotAnError) {
  Fill();
  std::vector<fs::path> blobs = Files(".blob");
  ASSERT_FALSE(blobs.empty());
  for (const fs::path& p : blobs) fs::remove(p);
  auto cache = Open();
  ASSERT_NE(cache, nullptr);
  ExpectRightOrMiss(cache.get());
}

TEST_F(KernelCacheHealTest, DamagedRequestIndexEntryIsADroppedMiss) {
  auto cache = Open();
  ASSERT_TRUE(cache->InsertRequest("r1|a", "v1|x").ok());
  ASSERT_TRUE(cache->InsertRequest("r1|b", "v1|y").ok());
  std::string value;
  ASSERT_TRUE(cache->db()->Get({}, cache->requests_family(), "r1|a", &value).ok());
  value.back() ^= 1;  // "v1|y" would be a wrong key, a flipped byte anything
  ASSERT_TRUE(cache->db()->Put({}, cache->requests_family(), "r1|a", value).ok());
  // Another entry's whole value under this key fails too (the CRC covers the key).
  std::string other;
  ASSERT_TRUE(cache->db()->Get({}, cache->requests_family(), "r1|b", &other).ok());
  ASSERT_TRUE(cache->db()->Put({}, cache->requests_family(), "r1|c", other).ok());
  EXPECT_TRUE(absl::IsNotFound(cache->LookupRequest("r1|a").status()));
  EXPECT_TRUE(absl::IsNotFound(cache->LookupRequest("r1|c").status()));
  EXPECT_EQ(*cache->LookupRequest("r1|b"), "v1|y");
  EXPECT_EQ(cache->Stats().corrupt_requests, 2u);
  EXPECT_TRUE(absl::IsNotFound(cache->LookupRequest("r1|a").status()));  // dropped
  EXPECT_EQ(cache->Stats().corrupt_requests, 2u);
}

TEST_F(KernelCacheHealTest, RequestIndexCountsTowardTheCap) {
  auto cache = Open(/*max_bytes=*/200000);
  ASSERT_TRUE(cache->Insert("v1|k", Value("v1|k", 1000)).ok());
  const std::string big(10000, 'n');
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(cache->InsertRequest("r1|" + std::to_string(i) + big, "v1|k").ok());
  }
  KernelCacheStats s = cache->Stats();
  EXPECT_LE(s.bytes, 200000u);
  EXPECT_LT(s.request_entries, 100u);
  EXPECT_GT(s.request_entries, 0u);
  EXPECT_EQ(s.evictions, 1u);  // the record, least recently used; entries are not counted
  // The newest entries stay, the oldest went.
  EXPECT_TRUE(cache->LookupRequest("r1|99" + big).ok());
  EXPECT_TRUE(absl::IsNotFound(cache->LookupRequest("r1|0" + big).status()));
  cache.reset();
  auto reopened = Open(200000);
  EXPECT_EQ(reopened->Stats().request_entries, s.request_entries);
  EXPECT_EQ(reopened->Stats().bytes, s.bytes);
}

}  // namespace
}  // namespace fusiond
