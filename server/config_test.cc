#include "server/config.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace fusiond {
namespace {

absl::StatusOr<ServerConfig> Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "fusiond");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return ParseServerFlags(static_cast<int>(argv.size()), argv.data());
}

TEST(ServerConfigTest, FlagsOfTheInterface) {
  auto c = Parse({"--listen", "127.0.0.1:7000", "--metrics=127.0.0.1:7001", "--cache-dir", "/tmp/x",
                  "--cache-max-bytes", "1000"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->listen, "127.0.0.1:7000");
  EXPECT_EQ(c->metrics, "127.0.0.1:7001");
  EXPECT_EQ(c->cache_dir, "/tmp/x");
  EXPECT_EQ(c->cache_max_bytes, 1000u);
}

TEST(ServerConfigTest, RedisAddress) {
  auto c = Parse({"--redis", "10.1.2.3:6380"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->redis, "10.1.2.3:6380");
  EXPECT_EQ(Parse({}).value().redis, "");
  auto bad = Parse({"--redis", "10.1.2.3"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("--redis"), absl::string_view::npos) << bad.status();
}

TEST(ServerConfigTest, HelpAndErrors) {
  EXPECT_TRUE(absl::IsNotFound(Parse({"--help"}).status()));
  auto bad = Parse({"--cache-max-bytes", "lots"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cache-max-bytes"), absl::string_view::npos);
  EXPECT_FALSE(Parse({"--no-such-flag", "1"}).ok());
  EXPECT_FALSE(Parse({"--listen"}).ok());
  EXPECT_FALSE(Parse({"stray"}).ok());
}

TEST(ServerConfigTest, CompileLimits) {
  auto d = Parse({});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->max_graph_nodes, 100000);
  EXPECT_EQ(d->max_graph_depth, 2000);
  EXPECT_EQ(d->max_kernel_ops, 500);
  EXPECT_EQ(d->max_partition_nodes, 1000);
  EXPECT_EQ(d->max_graph_io, 512);
  EXPECT_EQ(d->max_kernel_params, 640);
  std::string path = ::testing::TempDir() + "/fusiond_limits.conf";
  {
    std::ofstream out(path);
    out << "max_graph_depth = 30\nmax-kernel-ops = 0\nmax_graph_io = 40\n";
  }
  auto c = Parse({"--config", path, "--max-partition-nodes", "7", "--max-graph-nodes=9",
                  "--max-kernel-params", "12"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->max_graph_depth, 30);
  EXPECT_EQ(c->max_kernel_ops, 0);
  EXPECT_EQ(c->max_partition_nodes, 7);
  EXPECT_EQ(c->max_graph_nodes, 9);
  EXPECT_EQ(c->max_graph_io, 40);
  EXPECT_EQ(c->max_kernel_params, 12);
  std::remove(path.c_str());
  EXPECT_FALSE(Parse({"--max-kernel-ops", "-1"}).ok());
  EXPECT_FALSE(Parse({"--max-graph-io", "-1"}).ok());
  EXPECT_FALSE(Parse({"--max-kernel-params", "-1"}).ok());
  EXPECT_FALSE(Parse({"--listen", "127.0.0.1:99999"}).ok());
  EXPECT_FALSE(Parse({"--metrics", "999.1.1.1:9464"}).ok());
  EXPECT_FALSE(Parse({"--health-listen", "127.0.0.1:x"}).ok());
  EXPECT_TRUE(Parse({"--metrics", "localhost:9464"}).ok());
  EXPECT_TRUE(Parse({"--metrics", ""}).ok());
  EXPECT_FALSE(Parse({"--compile-threads", "100000"}).ok());
  auto huge = Parse({"--max-queue", std::string(100000, '9')});
  ASSERT_FALSE(huge.ok());
  EXPECT_LT(huge.status().message().size(), 200u) << "the value is quoted whole";
  EXPECT_FALSE(Parse({"--max-graph-depth", "deep"}).ok());
  EXPECT_NE(ServerUsage().find("--max-partition-nodes"), std::string::npos);
  EXPECT_NE(ServerUsage().find("--max-kernel-params"), std::string::npos);
}

TEST(ServerConfigTest, ConfigFileThenFlagsWin) {
  std::string path = ::testing::TempDir() + "/fusiond_test.conf";
  {
    std::ofstream out(path);
    out << "# comment\nlisten = 0.0.0.0:1234\ncache_max_bytes = 42  # trailing\n"
        << "compile-threads = 3\n";
  }
  auto c = Parse({"--config", path, "--listen", "127.0.0.1:5"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->listen, "127.0.0.1:5");
  EXPECT_EQ(c->cache_max_bytes, 42u);
  EXPECT_EQ(c->compile_threads, 3);
  {
    std::ofstream out(path);
    out << "listen 1234\n";
  }
  auto bad = Parse({"--config", path});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(":1:"), absl::string_view::npos) << bad.status();
  std::remove(path.c_str());
}

}  // namespace
}  // namespace fusiond
