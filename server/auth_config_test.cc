// The security settings: parsing, the checks at start, and the example
// config (deploy/fusiond.conf.example), which must be secure or loopback-only.
#include "server/auth_config.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "cache/secret_file.h"
#include "gtest/gtest.h"
#include "server/config.h"

namespace fusiond {
namespace {

absl::StatusOr<ServerConfig> Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "fusiond");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return ParseServerFlags(static_cast<int>(argv.size()), argv.data());
}

TEST(AuthConfig, PublicListenNeedsTlsAndClientAuthentication) {
  EXPECT_TRUE(Parse({"--listen", "127.0.0.1:1"}).ok());
  EXPECT_TRUE(Parse({"--listen", "[::1]:1"}).ok());
  EXPECT_TRUE(Parse({"--listen", "localhost:1"}).ok());
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--listen", "0.0.0.0:1"},
           {"--listen", "10.0.0.1:1", "--tls-cert", "c", "--tls-key", "k"},
           {"--listen", "0.0.0.0:1", "--token-file", "t"},
           {"--tls-cert", "c"},
           {"--tls-client-ca", "ca"}}) {
    EXPECT_EQ(Parse(args).status().code(), absl::StatusCode::kInvalidArgument) << args[1];
  }
  EXPECT_TRUE(
      Parse({"--listen", "0.0.0.0:1", "--tls-cert", "c", "--tls-key", "k", "--token-file", "t"})
          .ok());
  EXPECT_TRUE(
      Parse({"--listen", "0.0.0.0:1", "--tls-cert", "c", "--tls-key", "k", "--tls-client-ca", "ca"})
          .ok());
  EXPECT_TRUE(Parse({"--listen", "0.0.0.0:1", "--allow-insecure-listen", "true"}).ok());
  EXPECT_EQ(Parse({"--allow-insecure-listen", "maybe"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Parse({"--redis-pool-size", "0"}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(AuthConfig, SharedTierOptionsNeedAReadableSecret) {
  AuthConfig c;
  c.redis_secret_file = "/nonexistent/secret";
  EXPECT_EQ(MakeSharedTierOptions("127.0.0.1:6379", c).status().code(),
            absl::StatusCode::kInvalidArgument);
  c.redis_secret_file.clear();
  c.redis_user = "fusiond";
  c.redis_timeout_ms = 50;
  auto o = MakeSharedTierOptions("10.1.2.3:6380", c);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->redis.host, "10.1.2.3");
  EXPECT_EQ(o->redis.port, 6380);
  EXPECT_EQ(o->redis.user, "fusiond");
  EXPECT_EQ(o->redis.command_timeout_ms, 50);
  EXPECT_TRUE(o->secret.empty());
}

TEST(AuthConfig, LoopbackHosts) {
  for (const char* h : {"127.0.0.1", "127.0.0.1:80", "localhost:1", "[::1]:50051", "::1"}) {
    EXPECT_TRUE(IsLoopbackHost(h)) << h;
  }
  for (const char* h : {"0.0.0.0:1", "10.0.0.1", "[::]:1", "redis.internal:6379", ""}) {
    EXPECT_FALSE(IsLoopbackHost(h)) << h;
  }
}

TEST(AuthConfig, ExampleConfigIsSecureOrLoopbackOnly) {
  const char* root = std::getenv("FUSIOND_SOURCE_DIR");
  ASSERT_NE(root, nullptr);
  auto config = Parse({"--config", std::string(root) + "/deploy/fusiond.conf.example"});
  ASSERT_TRUE(config.ok()) << config.status();
  if (!IsLoopbackHost(config->listen)) {
    EXPECT_FALSE(config->auth.tls_cert.empty());
    EXPECT_TRUE(!config->auth.token_file.empty() || !config->auth.tls_client_ca.empty());
  }
  EXPECT_TRUE(config->metrics.empty() || IsLoopbackHost(config->metrics)) << config->metrics;
  EXPECT_TRUE(config->auth.health_listen.empty() || IsLoopbackHost(config->auth.health_listen));
  EXPECT_FALSE(config->auth.redis_insecure_unsigned);
}

}  // namespace
}  // namespace fusiond
