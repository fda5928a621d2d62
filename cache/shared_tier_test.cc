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
#include <cstdio>
#include <filesystem>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "cache/cached_compiler.h"
#include "cache/compile_lease.h"
#include "cache/record.h"
#include "cache/shared_tier_record.h"
#include "compiler/ir/builder.h"
#include "compiler/ir/ir_proto.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/util/child_process.h"
#include "tests/util/free_port.h"

extern char** environ;

namespace fusiond {
namespace {

constexpr char kSecret[] = "0123456789abcdef-test-cluster-secret";

// One redis-server process on 127.0.0.1:port, no persistence; with a
// password when `password` is set.
class RedisServer {
 public:
  explicit RedisServer(int port, std::string password = "")
      : port_(port), password_(std::move(password)) {}
  ~RedisServer() { Stop(); }

  // Starts it and waits (up to 10 s) until a SharedTier can connect.
  void Start(const std::vector<std::string>& extra = {}) {
    const std::string port = std::to_string(port_);
    std::vector<std::string> args = {
        FUSIOND_REDIS_SERVER, "--port", port,          "--bind", "127.0.0.1",  "--save", "",
        "--appendonly",       "no",     "--daemonize", "no",     "--loglevel", "warning"};
    if (!password_.empty()) args.insert(args.end(), {"--requirepass", password_});
    args.insert(args.end(), extra.begin(), extra.end());
    ASSERT_TRUE(server_.Start(args)) << "could not start " << FUSIOND_REDIS_SERVER;
    for (int i = 0; i < 200; ++i) {
      if (SharedTier::Connect(Options()).ok()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "redis-server on port " << port_ << " did not answer within 10 s";
  }
  void Stop() { server_.Stop(SIGTERM); }
  // SIGSTOP / SIGCONT: a hung server (accepts connections, never answers).
  void Pause() { kill(server_.pid(), SIGSTOP); }
  void Resume() { kill(server_.pid(), SIGCONT); }
  SharedTierOptions Options() const {
    SharedTierOptions o;
    o.redis.port = port_;
    o.redis.password = password_;
    o.secret = kSecret;
    o.key_prefix = "test:";
    return o;
  }
  // Raw GET / SET, as anyone who can reach Redis could.
  std::string GetRaw(const std::string& key) { return RawCommand("GET", key, nullptr); }
  void SetRaw(const std::string& key, const std::string& value) { RawCommand("SET", key, &value); }

 private:
  std::string RawCommand(const char* verb, const std::string& key, const std::string* value) {
    redisContext* c = redisConnect("127.0.0.1", port_);
    EXPECT_TRUE(c != nullptr && c->err == 0);
    if (!password_.empty()) freeReplyObject(redisCommand(c, "AUTH %s", password_.c_str()));
    redisReply* r = static_cast<redisReply*>(
        value == nullptr ? redisCommand(c, "%s %b", verb, key.data(), key.size())
                         : redisCommand(c, "%s %b %b", verb, key.data(), key.size(), value->data(),
                                        value->size()));
    std::string out =
        r != nullptr && r->type == REDIS_REPLY_STRING ? std::string(r->str, r->len) : "";
    freeReplyObject(r);
    redisFree(c);
    return out;
  }

  int port_;
  std::string password_;
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

// A value past max_value_bytes (anyone who can write to Redis could store
// 512 MB under a key) is refused after reading one byte past the limit.
TEST_F(SharedTierTest, OversizedValueIsRefused) {
  SharedTierOptions o = redis_->Options();
  o.max_value_bytes = 4096;
  auto tier = SharedTier::Connect(o);
  ASSERT_TRUE(tier.ok()) << tier.status();
  ASSERT_TRUE((*tier)->Put("big", std::string(8192, 'x')).ok());
  ASSERT_TRUE((*tier)->Put("small", std::string(1000, 'y')).ok());
  bool refused = false;
  auto big = (*tier)->Get("big", &refused);
  EXPECT_TRUE(absl::IsNotFound(big.status())) << big.status();
  EXPECT_NE(big.status().message().find("longer than 4096 bytes"), std::string::npos)
      << big.status();
  EXPECT_TRUE(refused);
  auto small = (*tier)->Get("small");
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ(*small, std::string(1000, 'y'));
  SharedTierStats s = (*tier)->Stats();
  EXPECT_EQ(s.corrupt, 1u);
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.errors, 0u);
}

TEST_F(SharedTierTest, PoisonedValuesAreRefusedAndCounted) {
  auto tier = SharedTier::Connect(redis_->Options());
  ASSERT_TRUE(tier.ok()) << tier.status();
  ASSERT_TRUE((*tier)->Put("x", "fusion X's kernels").ok());
  ASSERT_TRUE((*tier)->Put("y", "fusion Y's kernels").ok());
  const std::string genuine_y = redis_->GetRaw("test:y");

  // An altered payload with its CRC recomputed (EncodeRecord), re-wrapped
  // with the right key but without the secret.
  redis_->SetRaw("test:x", EncodeSharedRecord("not the cluster secret", "test:x", "evil"));
  EXPECT_TRUE(absl::IsNotFound((*tier)->Get("x").status()));
  EXPECT_EQ((*tier)->Stats().rejected, 1u);
  // The genuine record's bytes with the payload edited in place: the MAC fails.
  std::string edited = genuine_y;
  edited[edited.size() - kSharedRecordMacBytes - 1] ^= 1;
  redis_->SetRaw("test:x", edited);
  EXPECT_TRUE(absl::IsNotFound((*tier)->Get("x").status()));
  EXPECT_EQ((*tier)->Stats().rejected, 2u);
  // Fusion Y's genuine record under X's key: it names Y's key.
  redis_->SetRaw("test:x", genuine_y);
  EXPECT_TRUE(absl::IsNotFound((*tier)->Get("x").status()));
  EXPECT_EQ((*tier)->Stats().rejected, 3u);
  // Garbage and a bare (unsigned) kernel-cache record.
  redis_->SetRaw("test:x", "garbage");
  EXPECT_TRUE(absl::IsNotFound((*tier)->Get("x").status()));
  redis_->SetRaw("test:x", EncodeRecord("fusion X's kernels"));
  EXPECT_TRUE(absl::IsNotFound((*tier)->Get("x").status()));
  EXPECT_EQ((*tier)->Stats().corrupt, 2u);
  EXPECT_EQ((*tier)->Stats().hits, 0u);
  // Y itself is still served.
  auto y = (*tier)->Get("y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(*y, "fusion Y's kernels");
  // A tier with another secret refuses every record of this one.
  SharedTierOptions other = redis_->Options();
  other.secret = "another cluster's secret, 32 bytes";
  auto stranger = SharedTier::Connect(other);
  ASSERT_TRUE(stranger.ok());
  EXPECT_TRUE(absl::IsNotFound((*stranger)->Get("y").status()));
  EXPECT_EQ((*stranger)->Stats().rejected, 1u);
}

TEST(SharedTierSecret, RequiredUnlessExplicitlyInsecureOnLoopback) {
  SharedTierOptions o;
  EXPECT_EQ(SharedTier::Create(o).status().code(), absl::StatusCode::kInvalidArgument);
  o.secret = "short";
  EXPECT_EQ(SharedTier::Create(o).status().code(), absl::StatusCode::kInvalidArgument);
  o.secret.clear();
  o.insecure_unsigned = true;
  EXPECT_TRUE(SharedTier::Create(o).ok());
  o.redis.host = "10.0.0.7";
  EXPECT_EQ(SharedTier::Create(o).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SharedTierAuth, PasswordRequiredByTheServer) {
  RedisServer redis(FreePort(), "redis-test-password");
  redis.Start();
  SharedTierOptions o = redis.Options();
  auto tier = SharedTier::Connect(o);
  ASSERT_TRUE(tier.ok()) << tier.status();
  ASSERT_TRUE((*tier)->Put("k", "v").ok());
  o.redis.password = "wrong";
  auto wrong = SharedTier::Connect(o);
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(wrong.status().message().find("AUTH"), std::string::npos) << wrong.status();
  o.redis.password.clear();
  auto none = SharedTier::Create(o);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ((*none)->Get("k").status().code(), absl::StatusCode::kUnavailable);
}

TEST(SharedTierAuth, AclUser) {
  RedisServer redis(FreePort());
  redis.Start({"--user", "fusiond", "on", ">acl-password", "~test:*", "~fusiond:*", "+@all"});
  SharedTierOptions o = redis.Options();
  o.redis.user = "fusiond";
  o.redis.password = "acl-password";
  auto tier = SharedTier::Connect(o);
  ASSERT_TRUE(tier.ok()) << tier.status();
  ASSERT_TRUE((*tier)->Put("k", "v").ok());
  EXPECT_TRUE((*tier)->Get("k").ok());
  o.redis.password = "wrong";
  EXPECT_EQ(SharedTier::Connect(o).status().code(), absl::StatusCode::kUnavailable);
}

// A hung Redis (SIGSTOP) costs a few timeouts, then the breaker answers at
// once; after SIGCONT the next probe closes it.
TEST_F(SharedTierTest, HungServerTripsTheBreaker) {
  SharedTierOptions o = redis_->Options();
  o.redis.command_timeout_ms = 100;
  o.redis.breaker_open_ms = 300;
  auto tier = SharedTier::Connect(o);
  ASSERT_TRUE(tier.ok()) << tier.status();
  ASSERT_TRUE((*tier)->Put("k", "v").ok());
  redis_->Pause();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ((*tier)->Get("k").status().code(), absl::StatusCode::kUnavailable);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("200 lookups against a hung redis: %.3f s\n", seconds);
  EXPECT_LT(seconds, 1.0);  // 3 timeouts of 100 ms, then no I/O
  SharedTierStats s = (*tier)->Stats();
  EXPECT_TRUE(s.pool.breaker_open);
  EXPECT_EQ(s.pool.breaker_trips, 1u);
  EXPECT_GE(s.pool.short_circuited, 190u);
  redis_->Resume();
  std::this_thread::sleep_for(std::chrono::milliseconds(350));
  auto got = (*tier)->Get("k");
  EXPECT_TRUE(got.ok()) << got.status();
  EXPECT_FALSE((*tier)->Stats().pool.breaker_open);
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
  EXPECT_EQ(o->redis.host, "10.0.0.7");
  EXPECT_EQ(o->redis.port, 6380);
  for (const char* bad : {"", "host", "host:", ":6379", "host:0", "host:70000", "host:x"}) {
    EXPECT_EQ(ParseRedisAddress(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  SharedTierOptions closed = *ParseRedisAddress("127.0.0.1:" + std::to_string(FreePort()));
  closed.secret = kSecret;
  EXPECT_EQ(SharedTier::Connect(closed).status().code(), absl::StatusCode::kUnavailable);
}

// y = x * k + x over float[64, 256].
FusionRequest SmallRequest(double k = 3.0) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("x", DataType::kFloat, {64, 256});
  ValueId y = *b.Binary(OpKind::kMul, x, b.DefineConstant(k, DataType::kDouble));
  EXPECT_TRUE(b.AddOutput(*b.Binary(OpKind::kAdd, y, x)).ok());
  FusionRequest r;
  r.graph = ToProto(g);
  r.input_shapes = {{64, 256}};
  return r;
}

// One "machine": its own RocksDB cache directory and CachedCompiler.
struct Machine {
  explicit Machine(SharedTier* shared, CompileLease* lease = nullptr, int threads = 2) {
    char tmpl[] = "/tmp/shared_tier_test.XXXXXX";
    EXPECT_NE(mkdtemp(tmpl), nullptr);
    dir = tmpl;
    KernelCacheOptions o;
    o.dir = dir;
    cache = *KernelCache::Open(o);
    CachedCompilerOptions co;
    co.shared = shared;
    co.lease = lease;
    co.compile_threads = threads;
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
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(second->compiled, first->compiled));
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

// Every kernel's binary, in order.
std::vector<std::string> Binaries(const fusiond::v1::CompiledFusion& f) {
  std::vector<std::string> out;
  for (const auto& segment : f.segments()) {
    if (segment.has_kernel()) out.push_back(segment.kernel().binary());
  }
  return out;
}

// Poisoned values in Redis never reach a machine's local cache or a caller:
// fusion Y's genuine record under X's key, and X's record with its kernel
// edited (CRC recomputed) and signed with a wrong secret.
TEST_F(SharedTierTest, PoisonedRecordsAreNeitherServedNorStoredLocally) {
  auto tier_a = SharedTier::Connect(redis_->Options());
  auto tier_b = SharedTier::Connect(redis_->Options());
  ASSERT_TRUE(tier_a.ok() && tier_b.ok());
  Machine a(tier_a->get());
  auto x = a.compiler->Compile(SmallRequest(3.0));
  auto y = a.compiler->Compile(SmallRequest(5.0));
  ASSERT_TRUE(x.ok() && y.ok());
  ASSERT_NE(x->cache_key, y->cache_key);
  const std::string x_key = "test:" + x->cache_key;

  fusiond::v1::CompiledFusion evil = x->compiled;
  for (auto& segment : *evil.mutable_segments()) {
    if (segment.has_kernel())
      segment.mutable_kernel()->set_binary(
          "\x7f"
          "ELF planted kernel");
  }
  const std::vector<std::string> poisons = {
      redis_->GetRaw("test:" + y->cache_key),
      EncodeSharedRecord("a guessed secret, not the real one", x_key, evil.SerializeAsString()),
      std::string("garbage")};
  for (size_t i = 0; i < poisons.size(); ++i) {
    redis_->SetRaw(x_key, poisons[i]);
    Machine b(tier_b->get());
    auto got = b.compiler->Compile(SmallRequest(3.0));
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_FALSE(got->hit) << "poison " << i << " was served";
    EXPECT_TRUE(got->compiled_here) << "poison " << i;
    EXPECT_EQ(got->compiled.canonical_hash(), x->compiled.canonical_hash());
    EXPECT_EQ(Binaries(got->compiled), Binaries(x->compiled)) << "poison " << i;
    auto local = b.cache->Lookup(x->cache_key);
    ASSERT_TRUE(local.ok());
    EXPECT_EQ(Binaries(*local), Binaries(x->compiled)) << "poison " << i;
    // The compile republished a genuine record over the poison.
    auto republished = (*tier_a)->Get(x->cache_key);
    ASSERT_TRUE(republished.ok()) << republished.status();
    fusiond::v1::CompiledFusion fresh;
    ASSERT_TRUE(fresh.ParseFromString(*republished));
    EXPECT_EQ(Binaries(fresh), Binaries(x->compiled)) << "poison " << i;
  }
  SharedTierStats s = (*tier_b)->Stats();
  EXPECT_EQ(s.rejected, 2u);
  EXPECT_EQ(s.corrupt, 1u);
  EXPECT_EQ(s.hits, 0u);
}

// Compile leases: one holder; a waiter gets the record the holder publishes;
// an expired lease is taken over; a dead Redis means compiling without one.
TEST_F(SharedTierTest, CompileLeaseWaitTakeoverAndFailure) {
  auto tier_a = SharedTier::Connect(redis_->Options());
  auto tier_b = SharedTier::Connect(redis_->Options());
  ASSERT_TRUE(tier_a.ok() && tier_b.ok());
  CompileLeaseOptions o;
  o.lease_ms = 300;
  o.poll_ms = 10;
  CompileLease a(tier_a->get(), o), b(tier_b->get(), o);

  auto held = a.AcquireOrWait("k1");
  EXPECT_FALSE(held->published());
  std::thread publisher([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));  // past one lease period
    ASSERT_TRUE((*tier_a)->Put("k1", "record").ok());
    held.reset();  // releases after publishing, as CachedCompiler does
  });
  auto waited = b.AcquireOrWait("k1");
  publisher.join();
  EXPECT_TRUE(waited->published());  // renewed while "compiling": no takeover
  EXPECT_EQ(b.Stats().waits, 1u);
  EXPECT_EQ(b.Stats().takeovers, 0u);
  EXPECT_GE(b.Stats().wait_seconds, 0.5);
  EXPECT_EQ(a.Stats().acquired, 1u);

  // A lease nobody renews (its holder died): taken over after it expires.
  ASSERT_TRUE(*(*tier_a)->AcquireLease("k2", "dead daemon", 200));
  auto took = b.AcquireOrWait("k2");
  EXPECT_FALSE(took->published());
  EXPECT_EQ(b.Stats().takeovers, 1u);
  EXPECT_EQ(b.Stats().acquired, 1u);
  took.reset();

  // Redis gone: no lease, no wait; the caller compiles.
  redis_->Stop();
  const auto start = std::chrono::steady_clock::now();
  auto alone = b.AcquireOrWait("k3");
  EXPECT_FALSE(alone->published());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

// A miss whose key another daemon is compiling waits off the compile pool:
// with one compile thread, other misses compile meanwhile. The parked miss is
// served when the record appears, and compiles itself when the other
// daemon's lease ends without one.
TEST_F(SharedTierTest, ALeaseWaitHoldsNoCompileThread) {
  auto tier = SharedTier::Connect(redis_->Options());
  ASSERT_TRUE(tier.ok()) << tier.status();
  CompileLeaseOptions lo;
  lo.poll_ms = 10;
  CompileLease lease(tier->get(), lo);
  // Keys and a genuine record, from a machine without the shared tier.
  Machine probe(nullptr);
  auto published = probe.compiler->Compile(SmallRequest(7.0));
  auto abandoned = probe.compiler->Compile(SmallRequest(9.0));
  ASSERT_TRUE(published.ok() && abandoned.ok());
  for (const auto* r : {&*published, &*abandoned}) {
    ASSERT_TRUE(*(*tier)->AcquireLease(r->cache_key, "another daemon", 30000));
  }
  Machine b(tier->get(), &lease, /*threads=*/1);
  using Result = absl::StatusOr<CachedCompileResult>;
  std::promise<Result> first, second;
  b.compiler->CompileAsync(SmallRequest(7.0), [&](Result r) { first.set_value(std::move(r)); });
  b.compiler->CompileAsync(SmallRequest(9.0), [&](Result r) { second.set_value(std::move(r)); });
  for (int i = 0; i < 1000 && lease.Stats().waits < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(lease.Stats().waits, 2u);
  // Both wait, yet the one compile thread compiles another fusion.
  std::promise<Result> third;
  b.compiler->CompileAsync(SmallRequest(8.0), [&](Result r) { third.set_value(std::move(r)); });
  auto third_done = third.get_future();
  ASSERT_EQ(third_done.wait_for(std::chrono::seconds(60)), std::future_status::ready)
      << "a lease wait held the only compile thread";
  Result other = third_done.get();
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_TRUE(other->compiled_here);
  auto first_done = first.get_future(), second_done = second.get_future();
  EXPECT_EQ(first_done.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  // The other daemon publishes the first: served from Redis, not compiled.
  ASSERT_TRUE((*tier)->Put(published->cache_key, published->compiled.SerializeAsString()).ok());
  ASSERT_TRUE((*tier)->ReleaseLease(published->cache_key, "another daemon").ok());
  ASSERT_EQ(first_done.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  Result got = first_done.get();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_FALSE(got->compiled_here);
  EXPECT_EQ(got->cache_key, published->cache_key);
  EXPECT_EQ(got->compiled.segments(0).kernel().binary(),
            published->compiled.segments(0).kernel().binary());
  // It gives the second up without a record: this daemon takes over.
  ASSERT_TRUE((*tier)->ReleaseLease(abandoned->cache_key, "another daemon").ok());
  ASSERT_EQ(second_done.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  got = second_done.get();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(got->compiled_here);
  EXPECT_EQ(lease.Stats().takeovers, 1u);
  EXPECT_EQ(b.compiler->Stats().compiles, 2u);
}

}  // namespace
}  // namespace fusiond
