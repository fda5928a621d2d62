#include "client/runtime/manifest.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "client/runtime/launch_plan.h"

namespace fusiond {
namespace runtime {
namespace {

// The example of docs/manifest.md, comments removed.
constexpr char kDocExample[] = R"json({
  "manifest_version": 1,
  "fusion": "rmsnorm_bwd_manual",
  "canonical_hash": "9f1c",
  "arch": "sm_90",
  "symbols": [{"name": "s0", "input": 0, "axis": 0}, {"name": "s1", "input": 0, "axis": 1}],
  "inputs":  [{"name": "T4", "dtype": "bfloat16", "shape": ["s0", "s1"]},
              {"name": "T5", "dtype": "float32",  "shape": ["s0", "1"]},
              {"name": "S2", "dtype": "float64", "shape": [], "scalar": true}],
  "outputs": [{"name": "T63", "dtype": "bfloat16", "shape": ["s0", "s1"]}],
  "intermediates": [{"name": "I0", "dtype": "float32", "shape": ["s0"]}],
  "workspaces": [{"bytes": "s1 * 4 * 264 + 64", "zero": true}],
  "kernels": [{
      "name": "fusion_9f1c_k0", "binary": "fusion_9f1c_k0.cubin",
      "scheduler": "inner_outer_persistent", "cooperative": true,
      "block": ["256", "1", "1"], "grid": ["min(264, s0)", "1", "1"], "smem_bytes": "0",
      "params": [{"kind": "input", "index": 0}, {"kind": "input", "index": 1},
                 {"kind": "output", "index": 0}, {"kind": "workspace", "index": 0},
                 {"kind": "intermediate", "index": 0}, {"kind": "scalar", "index": 2},
                 {"kind": "size", "symbol": "s0"}]}]
})json";

TEST(ManifestTest, ParsesDocExample) {
  absl::StatusOr<Manifest> m = ParseManifest(kDocExample);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->fusion, "rmsnorm_bwd_manual");
  EXPECT_EQ(m->arch, "sm_90");
  ASSERT_EQ(m->symbols.size(), 2u);
  EXPECT_EQ(m->symbols[1].name, "s1");
  EXPECT_EQ(m->symbols[1].axis, 1);
  ASSERT_EQ(m->inputs.size(), 3u);
  EXPECT_EQ(m->inputs[0].dtype, ElementType::kBFloat16);
  EXPECT_EQ(m->inputs[1].shape[1].text(), "1");
  EXPECT_TRUE(m->inputs[2].scalar);
  ASSERT_EQ(m->kernels.size(), 1u);
  const ManifestKernel& k = m->kernels[0];
  EXPECT_TRUE(k.cooperative);
  EXPECT_EQ(k.scheduler, "inner_outer_persistent");
  ASSERT_EQ(k.params.size(), 7u);
  EXPECT_EQ(k.params[3].kind, KernelParam::Kind::kWorkspace);
  EXPECT_EQ(k.params[5].kind, KernelParam::Kind::kScalar);
  EXPECT_EQ(k.params[6].kind, KernelParam::Kind::kSize);
  EXPECT_EQ(k.params[6].symbol, "s0");
  EXPECT_TRUE(m->workspaces[0].zero);
  EXPECT_FALSE(m->workspaces[0].keep);
  std::string kept = kDocExample;
  kept.replace(kept.find("\"zero\": true"), 12, "\"zero\": true, \"keep\": true");
  absl::StatusOr<Manifest> k2 = ParseManifest(kept);
  ASSERT_TRUE(k2.ok()) << k2.status();
  EXPECT_TRUE(k2->workspaces[0].keep);
}

TEST(ManifestTest, PlanEvaluatesEveryExpressionAtSeveralShapes) {
  absl::StatusOr<Manifest> m = ParseManifest(kDocExample);
  ASSERT_TRUE(m.ok()) << m.status();
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{2048, 8192}, {100, 64}, {16384, 4096}}) {
    absl::StatusOr<LaunchPlan> plan = PlanLaunch(*m, {{rows, cols}, {rows, 1}, {}});
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->symbols.at("s0"), rows);
    EXPECT_EQ(plan->output_shapes[0], (Shape{rows, cols}));
    EXPECT_EQ(plan->intermediate_shapes[0], (Shape{rows}));
    EXPECT_EQ(plan->workspace_bytes[0], cols * 4 * 264 + 64);
    EXPECT_EQ(plan->launches[0].grid[0], static_cast<uint32_t>(std::min<int64_t>(264, rows)));
    EXPECT_EQ(plan->launches[0].block[0], 256u);
    EXPECT_EQ(plan->launches[0].block[2], 1u);
  }
}

TEST(ManifestTest, PlanRejectsShapesThatDisagree) {
  absl::StatusOr<Manifest> m = ParseManifest(kDocExample);
  ASSERT_TRUE(m.ok());
  absl::StatusOr<LaunchPlan> p = PlanLaunch(*m, {{2048, 8192}, {1024, 1}, {}});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(p.status().message()).find("axis 0 is 1024"), std::string::npos)
      << p.status();
  EXPECT_FALSE(PlanLaunch(*m, {{2048, 8192}, {2048, 2}, {}}).ok());     // static extent 1
  EXPECT_FALSE(PlanLaunch(*m, {{2048, 8192, 1}, {2048, 1}, {}}).ok());  // rank
  EXPECT_FALSE(PlanLaunch(*m, {{2048, 8192}, {2048, 1}}).ok());         // count
  EXPECT_FALSE(PlanLaunch(*m, {{0, 8192}, {0, 1}, {}}).ok());           // grid of 0 blocks
}

std::string ReadTestdata(const std::string& rel) {
  const char* root = std::getenv("FUSIOND_SOURCE_DIR");
  std::string path = std::string(root ? root : ".") + "/client/runtime/testdata/" + rel;
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << "cannot read " << path;
  return ss.str();
}

TEST(ManifestTest, ParsesTestdataManifests) {
  absl::StatusOr<Manifest> center = ParseManifest(ReadTestdata("center/manifest.json"));
  ASSERT_TRUE(center.ok()) << center.status();
  EXPECT_EQ(center->kernels.size(), 2u);
  absl::StatusOr<LaunchPlan> plan = PlanLaunch(*center, {{1000, 33}, {}});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->launches[0].grid[0], 250u);
  EXPECT_EQ(plan->launches[0].block[1], 4u);
  EXPECT_EQ(plan->launches[1].grid[0], 129u);  // ceil(33000 / 256)
  absl::StatusOr<Manifest> coop = ParseManifest(ReadTestdata("coop/manifest.json"));
  ASSERT_TRUE(coop.ok()) << coop.status();
  EXPECT_TRUE(coop->kernels[0].cooperative);
}

void ExpectBad(const std::string& json, const char* fragment) {
  absl::StatusOr<Manifest> m = ParseManifest(json);
  ASSERT_FALSE(m.ok()) << "accepted: " << json;
  EXPECT_NE(std::string(m.status().message()).find(fragment), std::string::npos) << m.status();
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

TEST(ManifestTest, RejectsInconsistentManifests) {
  const std::string doc = kDocExample;
  ExpectBad("[1]", "expected an object");
  ExpectBad("{", "json");
  ExpectBad(Replace(doc, "\"manifest_version\": 1", "\"manifest_version\": \"1\""),
            "manifest_version");
  EXPECT_EQ(ParseManifest(Replace(doc, "\"manifest_version\": 1", "\"manifest_version\": 2"))
                .status()
                .code(),
            absl::StatusCode::kUnimplemented);
  ExpectBad(Replace(doc, "\"bfloat16\"", "\"bfloat17\""), "unknown dtype 'bfloat17'");
  ExpectBad(Replace(doc, "\"min(264, s0)\"", "\"min(264, s7)\""), "undeclared symbol 's7'");
  ExpectBad(Replace(doc, "\"min(264, s0)\"", "\"min(264 s0)\""), "expected ','");
  ExpectBad(
      Replace(doc, "{\"kind\": \"output\", \"index\": 0}", "{\"kind\": \"output\", \"index\": 3}"),
      "index 3 out of range");
  ExpectBad(
      Replace(doc, "{\"kind\": \"input\", \"index\": 0}", "{\"kind\": \"input\", \"index\": 2}"),
      "is a scalar");
  ExpectBad(Replace(doc, "\"kind\": \"workspace\"", "\"kind\": \"spare\""),
            "unknown param kind 'spare'");
  ExpectBad(Replace(doc, "{\"name\": \"s1\", \"input\": 0, \"axis\": 1}",
                    "{\"name\": \"s1\", \"input\": 0, \"axis\": 5}"),
            "axis 5 out of range");
  ExpectBad(Replace(doc, "\"fusion_9f1c_k0.cubin\"", "\"../x.cubin\""), "plain file name");
  ExpectBad(Replace(doc, "\"block\": [\"256\", \"1\", \"1\"], ", ""), "missing \"block\"");
}

// A corrupted or hand-edited manifest gets a clear error, never a crash or
// an internal error: the doc example and the test manifests, mutated at the
// byte and the token level (deterministic seed), either parse and plan at
// a few shapes or fail with InvalidArgument (Unimplemented for another
// manifest_version) and a message.
TEST(ManifestTest, MutatedManifestsFailCleanly) {
  const std::vector<std::string> bases = {kDocExample, ReadTestdata("center/manifest.json"),
                                          ReadTestdata("coop/manifest.json")};
  const char* tokens[] = {"0", "-1", "1e309", "\"s0\"", "\"ceil_div(s0, 0)\"", "\"s0 / 0\"", "null", "[]",
                          "{}", "\"min(\"", "9223372036854775807", "\"9223372036854775807 * 2\"",
                          "\"-9223372036854775807 - 1\"", "true", "\"\\u0000\"", "\""};
  const std::vector<Shape> shapes = {{0}, {1}, {7}, {2048}, {8192}, {int64_t{1} << 40}};
  std::mt19937 rng(20261130);
  int parsed = 0, refused = 0;
  for (int it = 0; it < 4000; ++it) {
    std::string s = bases[rng() % bases.size()];
    for (int e = 0, n = 1 + static_cast<int>(rng() % 4); e < n && !s.empty(); ++e) {
      const size_t pos = rng() % s.size();
      const char* tok = tokens[rng() % (sizeof(tokens) / sizeof(*tokens))];
      switch (rng() % 4) {
        case 0: s.erase(pos, 1 + rng() % 8); break;
        case 1: s.insert(pos, tok); break;
        case 2: {  // a value replaced up to the next delimiter
          const size_t end = s.find_first_of(",}]", pos);
          if (end != std::string::npos) s.replace(pos, end - pos, tok);
          break;
        }
        default: s[pos] = "{}[]\",:09a-"[rng() % 12];
      }
    }
    SCOPED_TRACE(s);
    absl::StatusOr<Manifest> m = ParseManifest(s);
    if (!m.ok()) {
      ++refused;
      EXPECT_TRUE(m.status().code() == absl::StatusCode::kInvalidArgument ||
                  m.status().code() == absl::StatusCode::kUnimplemented)
          << m.status();
      EXPECT_FALSE(m.status().message().empty());
      continue;
    }
    ++parsed;
    std::vector<Shape> in;
    for (const ManifestTensor& t : m->inputs) {
      Shape sh;
      for (size_t d = 0; d < t.shape.size(); ++d) sh.push_back(shapes[rng() % shapes.size()][0]);
      in.push_back(sh);
    }
    absl::StatusOr<LaunchPlan> plan = PlanLaunch(*m, in);
    if (!plan.ok()) {
      EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument) << plan.status();
    }
  }
  EXPECT_GT(parsed, 50);  // both outcomes occur
  EXPECT_GT(refused, 50);
}

}  // namespace
}  // namespace runtime
}  // namespace fusiond
