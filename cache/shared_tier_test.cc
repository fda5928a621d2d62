// The shared tier against a real redis-server on loopback (started by the
// test), alone and behind two CachedCompilers with separate RocksDB caches
// (two "machines" sharing one Redis).
#include "cache/shared_tier.h"

#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cache/cached_compiler.h"
#include "cache/record.h"
#include "compiler/ir/builder.h"
#include "compiler/ir/ir_proto.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/util/child_process.h"
#include "tests/util/free_port.h"

extern char** environ;

namespace fusiond {
namespace {

// One redis-server process on 127.0.0.1:port, no persistence.
class RedisServer {
 public:
  explicit RedisServer(int port) : port_(port) {}
  ~RedisServer() { Stop(); }

  // Starts it and waits (up to 10 s) until a SharedTier can connect.
  void Start() {
    const std::string port = std::to_string(port_);
    std::vector<std::string> args = {FUSIOND_REDIS_SERVER, "--port", port, "--bind", "127.0.0.1",
                                     "--save", "", "--appendonly", "no", "--daemonize", "no",
                                     "--loglevel", "warning"};
    ASSERT_TRUE(server_.Start(args)) << "could not start " << FUSIOND_REDIS_SERVER;
    for (int i = 0; i < 200; ++i) {
      if (SharedTier::Connect(Options()).ok()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "redis-server on port " << port_ << " did not answer within 10 s";
  }
  void Stop() { server_.Stop(SIGTERM); }
  SharedTierOptions Options() const {
    SharedTierOptions o;
    o.port = port_;
    o.key_prefix = "test:";
    return o;
  }
  // A raw SET, bypassing the record framing.
  void SetRaw(const std::string& key, const std::string& value) {
    redisContext* c = redisConnect("127.0.0.1", port_);
    ASSERT_TRUE(c != nullptr && c->err == 0);
    freeReplyObject(redisCommand(c, "SET %b %b", key.data(), key.size(), value.data(), value.size()));
    redisFree(c);
  }

 private:
  int port_;
  ChildProcess server_;
};

class SharedTierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    redis_ = std::make_unique<RedisServer>(FreePort());
    redis_->Start();
  }
  std::unique_ptr<RedisServer> redis_;
};

TEST_F(SharedTierTest, PutThenGetAndMissing) {
  auto tier = SharedTier::Connect(redis_->Options());
  ASSERT_TRUE(tier.ok()) << tier.status();
  EXPECT_TRUE(absl::IsNotFound((*tier)->Get("k1").status()));
  ASSERT_TRUE((*tier)->Put("k1", std::string("payload\0bytes", 13)).ok());
  auto got = (*tier)->Get("k1");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, std::string("payload\0bytes", 13));
  SharedTierStats s = (*tier)->Stats();
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.puts, 1u);
  EXPECT_EQ(s.errors, 0u);
}

TEST_F(SharedTierTest, CorruptRecordIsDeletedNotServed) {
  auto tier = SharedTier::Connect(redis_->Options());
  ASSERT_TRUE(tier.ok()) << tier.status();
  std::string record = EncodeRecord("a compiled fusion");
  record.back() ^= 1;  // payload no longer matches its CRC
  redis_->SetRaw("test:bad", record);
  EXPECT_TRUE(absl::IsNotFound((*tier)->Get("bad").status()));
  EXPECT_EQ((*tier)->Stats().corrupt, 1u);
  // Deleted: the next Get is a plain miss.
  EXPECT_TRUE(absl::IsNotFound((*tier)->Get("bad").status()));
  EXPECT_EQ((*tier)->Stats().corrupt, 1u);
  EXPECT_EQ((*tier)->Stats().misses, 1u);
}

TEST_F(SharedTierTest, DownServerIsUnavailableThenReconnects) {
  auto tier = SharedTier::Connect(redis_->Options());
  ASSERT_TRUE(tier.ok()) << tier.status();
  ASSERT_TRUE((*tier)->Put("k", "v").ok());
  redis_->Stop();
  EXPECT_EQ((*tier)->Get("k").status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ((*tier)->Put("k", "v").code(), absl::StatusCode::kUnavailable);
  EXPECT_GE((*tier)->Stats().errors, 2u);
  redis_->Start();  // same port, empty (no persistence)
  EXPECT_TRUE(absl::IsNotFound((*tier)->Get("k").status()));
  EXPECT_TRUE((*tier)->Put("k", "v").ok());
  EXPECT_TRUE((*tier)->Get("k").ok());
}

TEST(SharedTierAddress, ParsesHostPort) {
  auto o = ParseRedisAddress("10.0.0.7:6380");
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->host, "10.0.0.7");
  EXPECT_EQ(o->port, 6380);
  for (const char* bad : {"", "host", "host:", ":6379", "host:0", "host:70000", "host:x"}) {
    EXPECT_EQ(ParseRedisAddress(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(SharedTier::Connect(SharedTierOptions{"127.0.0.1", FreePort(), 100}).status().code(),
            absl::StatusCode::kUnavailable);
}

// y = x * 3 + x over float[64, 256].
FusionRequest SmallRequest() {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("x", DataType::kFloat, {64, 256});
  ValueId y = *b.Binary(OpKind::kMul, x, b.DefineConstant(3.0, DataType::kDouble));
  EXPECT_TRUE(b.AddOutput(*b.Binary(OpKind::kAdd, y, x)).ok());
  FusionRequest r;
  r.graph = ToProto(g);
  r.input_shapes = {{64, 256}};
  return r;
}

// One "machine": its own RocksDB cache directory and CachedCompiler.
struct Machine {
  explicit Machine(SharedTier* shared) {
    char tmpl[] = "/tmp/shared_tier_test.XXXXXX";
    EXPECT_NE(mkdtemp(tmpl), nullptr);
    dir = tmpl;
    KernelCacheOptions o;
    o.dir = dir;
    cache = *KernelCache::Open(o);
    CachedCompilerOptions co;
    co.shared = shared;
    compiler = std::make_unique<CachedCompiler>(cache.get(), co);
  }
  ~Machine() {
    compiler.reset();
    cache.reset();
    std::filesystem::remove_all(dir);
  }
  std::string dir;
  std::unique_ptr<KernelCache> cache;
  std::unique_ptr<CachedCompiler> compiler;
};

TEST_F(SharedTierTest, SecondMachineServesTheFirstMachinesCompile) {
  auto tier_a = SharedTier::Connect(redis_->Options());
  auto tier_b = SharedTier::Connect(redis_->Options());
  ASSERT_TRUE(tier_a.ok() && tier_b.ok());
  Machine a(tier_a->get()), b(tier_b->get());

  auto first = a.compiler->Compile(SmallRequest());
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->compiled_here);
  EXPECT_EQ((*tier_a)->Stats().puts, 1u);

  auto second = b.compiler->Compile(SmallRequest());
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->hit);
  EXPECT_FALSE(second->compiled_here);
  EXPECT_EQ(second->cache_key, first->cache_key);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(second->compiled, first->compiled));
  EXPECT_EQ(b.compiler->Stats().compiles, 0u);
  EXPECT_EQ(b.compiler->Stats().shared_hits, 1u);
  EXPECT_EQ(b.cache->Stats().entries, 1u);  // kept locally too

  // B's local copy now serves without Redis, even with Redis gone.
  redis_->Stop();
  auto third = b.compiler->Compile(SmallRequest());
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_TRUE(third->hit);
  EXPECT_EQ(b.compiler->Stats().shared_hits, 1u);

  // A third machine with Redis down compiles (the tier's error is a miss).
  Machine c(tier_b->get());
  auto fourth = c.compiler->Compile(SmallRequest());
  ASSERT_TRUE(fourth.ok()) << fourth.status();
  EXPECT_TRUE(fourth->compiled_here);
  EXPECT_GE((*tier_b)->Stats().errors, 1u);
}

}  // namespace
}  // namespace fusiond
