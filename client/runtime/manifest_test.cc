#include "client/runtime/manifest.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "client/runtime/launch_plan.h"

namespace fusiond {
namespace runtime {
namespace {

// The example of docs/manifest.md, comments removed.
constexpr char kDocExample[] = R"json({
  "manifest_version": 2,
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
      "requires": [{"expr": "s1", "multiple_of": 8}, {"expr": "s1", "at_most": 8192}],
      "params": [{"kind": "input", "index": 0, "align": 16}, {"kind": "input", "index": 1},
                 {"kind": "output", "index": 0, "align": 16}, {"kind": "workspace", "index": 0},
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
  ExpectBad(Replace(doc, "\"manifest_version\": 2", "\"manifest_version\": \"2\""),
            "manifest_version");
  for (const char* v : {"0", "4"}) {
    absl::Status s = ParseManifest(Replace(doc, "\"manifest_version\": 2",
                                           absl::StrCat("\"manifest_version\": ", v)))
                         .status();
    EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
    EXPECT_NE(std::string(s.message()).find("this runtime reads 1 to 3"), std::string::npos) << s;
  }
  ExpectBad(Replace(doc, "\"bfloat16\"", "\"bfloat17\""), "unknown dtype 'bfloat17'");
  ExpectBad(Replace(doc, "\"min(264, s0)\"", "\"min(264, s7)\""), "undeclared symbol 's7'");
  ExpectBad(Replace(doc, "\"min(264, s0)\"", "\"min(264 s0)\""), "expected ','");
  ExpectBad(Replace(doc, "{\"kind\": \"output\", \"index\": 0, \"align\": 16}",
                    "{\"kind\": \"output\", \"index\": 3, \"align\": 16}"),
            "index 3 out of range");
  ExpectBad(Replace(doc, "{\"kind\": \"input\", \"index\": 0, \"align\": 16}",
                    "{\"kind\": \"input\", \"index\": 2}"),
            "is a scalar");
  ExpectBad(Replace(doc, "\"kind\": \"workspace\"", "\"kind\": \"spare\""),
            "unknown param kind 'spare'");
  ExpectBad(Replace(doc, "{\"name\": \"s1\", \"input\": 0, \"axis\": 1}",
                    "{\"name\": \"s1\", \"input\": 0, \"axis\": 5}"),
            "axis 5 out of range");
  ExpectBad(Replace(doc, "\"fusion_9f1c_k0.cubin\"", "\"../x.cubin\""), "plain file name");
  ExpectBad(Replace(doc, "\"block\": [\"256\", \"1\", \"1\"], ", ""), "missing \"block\"");
}

TEST(ManifestTest, ReadsVersionOneAndTwo) {
  // Version 1 has no "requires" and no "align"; a runtime reading both
  // versions still honors them should a version-1 manifest carry them.
  absl::StatusOr<Manifest> v1 = ParseManifest(ReadTestdata("center/manifest.json"));
  ASSERT_TRUE(v1.ok()) << v1.status();
  EXPECT_EQ(v1->version, 1);
  EXPECT_TRUE(v1->kernels[0].requirements.empty());
  EXPECT_EQ(v1->kernels[0].params[0].align, 0);
  absl::StatusOr<Manifest> v2 = ParseManifest(kDocExample);
  ASSERT_TRUE(v2.ok()) << v2.status();
  EXPECT_EQ(v2->version, 2);
  absl::StatusOr<Manifest> v1_with_v2_fields =
      ParseManifest(Replace(kDocExample, "\"manifest_version\": 2", "\"manifest_version\": 1"));
  ASSERT_TRUE(v1_with_v2_fields.ok()) << v1_with_v2_fields.status();
  EXPECT_EQ(v1_with_v2_fields->kernels[0].requirements.size(), 2u);
  EXPECT_EQ(v1_with_v2_fields->kernels[0].params[0].align, 16);
}

TEST(ManifestTest, ParsesEqualsOfVersion3) {
  const std::string doc =
      Replace(Replace(kDocExample, "\"manifest_version\": 2", "\"manifest_version\": 3"),
              "{\"expr\": \"s1\", \"multiple_of\": 8}", "{\"expr\": \"s0\", \"equals\": 2048}");
  absl::StatusOr<Manifest> m = ParseManifest(doc);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->version, 3);
  const KernelRequirement& r = m->kernels[0].requirements[0];
  EXPECT_EQ(r.expr.text(), "s0");
  EXPECT_EQ(r.kind, KernelRequirement::Kind::kEquals);
  EXPECT_EQ(r.Describe(), "== 2048");
  EXPECT_TRUE(r.Holds(2048));
  EXPECT_FALSE(r.Holds(2047));
  EXPECT_FALSE(r.Holds(4096));
  absl::Status bad =
      ParseManifest(Replace(doc, "\"equals\": 2048", "\"equals\": \"2048\"")).status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument) << bad;
  EXPECT_NE(std::string(bad.message()).find("\"equals\" must be an integer"), std::string::npos)
      << bad;
}

TEST(ManifestTest, ParsesRequiresAndAlign) {
  absl::StatusOr<Manifest> m = ParseManifest(kDocExample);
  ASSERT_TRUE(m.ok()) << m.status();
  const ManifestKernel& k = m->kernels[0];
  ASSERT_EQ(k.requirements.size(), 2u);
  EXPECT_EQ(k.requirements[0].expr.text(), "s1");
  EXPECT_EQ(k.requirements[0].kind, KernelRequirement::Kind::kMultipleOf);
  EXPECT_EQ(k.requirements[0].bound, 8);
  EXPECT_EQ(k.requirements[0].Describe(), "is a multiple of 8");
  EXPECT_TRUE(k.requirements[0].Holds(8192));
  EXPECT_FALSE(k.requirements[0].Holds(8193));
  EXPECT_EQ(k.requirements[1].kind, KernelRequirement::Kind::kAtMost);
  EXPECT_EQ(k.requirements[1].bound, 8192);
  EXPECT_EQ(k.requirements[1].Describe(), "<= 8192");
  EXPECT_TRUE(k.requirements[1].Holds(8192));
  EXPECT_FALSE(k.requirements[1].Holds(8193));
  EXPECT_EQ(k.params[0].align, 16);
  EXPECT_EQ(k.params[1].align, 0);  // not given: natural alignment
  EXPECT_EQ(k.params[2].align, 16);
  std::vector<RequiredAlignment> in = RequiredAlignments(*m, KernelParam::Kind::kInput);
  ASSERT_EQ(in.size(), 3u);
  EXPECT_EQ(in[0].bytes, 16);
  EXPECT_EQ(in[0].kernel, 0);
  EXPECT_EQ(in[1].bytes, 0);
  EXPECT_EQ(in[1].kernel, -1);
  std::vector<RequiredAlignment> out = RequiredAlignments(*m, KernelParam::Kind::kOutput);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].bytes, 16);
  // Expressions as in grid/block: any launch expression, or an integer.
  const std::string doc = kDocExample;
  absl::StatusOr<Manifest> e =
      ParseManifest(Replace(doc, "{\"expr\": \"s1\", \"at_most\": 8192}",
                            "{\"at_most\": -3, \"expr\": \"ceil_div(s0 * s1, 256) - max(s0, 4)\"}, "
                            "{\"expr\": 64, \"multiple_of\": 64}"));
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->kernels[0].requirements.size(), 3u);
  EXPECT_EQ(e->kernels[0].requirements[1].bound, -3);
  EXPECT_EQ(e->kernels[0].requirements[1].expr.Symbols(), (std::vector<std::string>{"s0", "s1"}));
  EXPECT_TRUE(e->kernels[0].requirements[2].expr.is_constant());
  // An input bound to several kernels needs the largest alignment any asks.
  std::string center = ReadTestdata("center/manifest.json");
  center = Replace(center, "{\"kind\": \"input\", \"index\": 0}",
                   "{\"kind\": \"input\", \"index\": 0, \"align\": 4}");
  center = Replace(center, "{\"kind\": \"input\", \"index\": 0}",
                   "{\"kind\": \"input\", \"index\": 0, \"align\": 32}");
  absl::StatusOr<Manifest> c = ParseManifest(center);
  ASSERT_TRUE(c.ok()) << c.status();
  in = RequiredAlignments(*c, KernelParam::Kind::kInput);
  EXPECT_EQ(in[0].bytes, 32);
  EXPECT_EQ(in[0].kernel, 1);
  EXPECT_EQ(RequiredAlignments(*c, KernelParam::Kind::kOutput)[0].bytes, 0);
}

// InvalidArgument naming the kernel and the condition (or the param).
void ExpectBadAt(const std::string& json, const std::vector<std::string>& fragments) {
  absl::StatusOr<Manifest> m = ParseManifest(json);
  ASSERT_FALSE(m.ok()) << "accepted: " << json;
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument) << m.status();
  for (const std::string& f : fragments) {
    EXPECT_NE(std::string(m.status().message()).find(f), std::string::npos)
        << "no '" << f << "' in: " << m.status();
  }
}

TEST(ManifestTest, RejectsMalformedRequiresAndAlign) {
  const std::string doc = kDocExample;
  const std::string reqs =
      "\"requires\": [{\"expr\": \"s1\", \"multiple_of\": 8}, {\"expr\": \"s1\", \"at_most\": "
      "8192}]";
  auto with_second = [&](const std::string& cond) {
    return Replace(doc, reqs,
                   "\"requires\": [{\"expr\": \"s1\", \"multiple_of\": 8}, " + cond + "]");
  };
  const std::string k = "kernels[0] (fusion_9f1c_k0)";
  ExpectBadAt(Replace(doc, reqs, "\"requires\": {\"expr\": \"s1\", \"multiple_of\": 8}"),
              {k + ".requires:", "expected an array"});
  ExpectBadAt(Replace(doc, reqs, "\"requires\": \"s1 % 8\""),
              {k + ".requires:", "expected an array"});
  ExpectBadAt(with_second("8"), {k + ".requires[1]:", "expected an object"});
  ExpectBadAt(with_second("{\"expr\": \"s1\", \"at_most\": 8192, \"atmost\": 1}"),
              {k + ".requires[1]:", "unknown key \"atmost\""});
  ExpectBadAt(with_second("{\"expr\": \"s1\", \"at_most\": 8192, \"multiple_of\": 8}"),
              {k + ".requires[1]:", "exactly one of \"multiple_of\", \"at_most\", \"equals\""});
  ExpectBadAt(with_second("{\"expr\": \"s1\"}"),
              {k + ".requires[1]:", "exactly one of \"multiple_of\", \"at_most\", \"equals\""});
  ExpectBadAt(with_second("{\"at_most\": 8192}"), {k + ".requires[1]:", "missing \"expr\""});
  for (const char* n : {"0", "-8", "8.5", "\"8\"", "null"}) {
    ExpectBadAt(with_second(absl::StrCat("{\"expr\": \"s1\", \"multiple_of\": ", n, "}")),
                {k + ".requires[1]:", "\"multiple_of\" must be an integer > 0"});
  }
  for (const char* n : {"8192.5", "\"8192\"", "1e4", "true"}) {
    ExpectBadAt(with_second(absl::StrCat("{\"expr\": \"s1\", \"at_most\": ", n, "}")),
                {k + ".requires[1]:", "\"at_most\" must be an integer"});
  }
  ExpectBadAt(with_second("{\"expr\": \"min(s1\", \"at_most\": 8192}"),
              {k + ".requires[1].expr:", "min(s1"});
  ExpectBadAt(with_second("{\"expr\": [\"s1\"], \"at_most\": 8192}"),
              {k + ".requires[1].expr:", "expected an expression"});
  ExpectBadAt(with_second("{\"expr\": \"s1 * s9\", \"at_most\": 8192}"),
              {k + ".requires[1]:", "undeclared symbol 's9'"});
  const std::string param = "{\"kind\": \"output\", \"index\": 0, \"align\": 16}";
  for (const char* b : {"0", "3", "-16", "512", "16.0", "\"16\"", "null"}) {
    ExpectBadAt(Replace(doc, param,
                        absl::StrCat("{\"kind\": \"output\", \"index\": 0, \"align\": ", b, "}")),
                {"kernels[0].params[2]:", "\"align\" must be a power of two from 1 to 256"});
  }
  for (const char* b : {"1", "2", "256"}) {
    absl::StatusOr<Manifest> m = ParseManifest(Replace(
        doc, param, absl::StrCat("{\"kind\": \"output\", \"index\": 0, \"align\": ", b, "}")));
    ASSERT_TRUE(m.ok()) << b << ": " << m.status();
  }
}

TEST(ManifestTest, PlanChecksRequires) {
  absl::StatusOr<Manifest> m = ParseManifest(kDocExample);
  ASSERT_TRUE(m.ok()) << m.status();
  // Both conditions hold, at the bound of at_most too.
  for (int64_t cols : {8, 4096, 8192}) {
    absl::StatusOr<LaunchPlan> plan = PlanLaunch(*m, {{2048, cols}, {2048, 1}, {}});
    EXPECT_TRUE(plan.ok()) << cols << ": " << plan.status();
  }
  const std::string tail =
      ": compile the fusion for these shapes (fusionc compile --shapes, or a daemon request with "
      "this signature), or with --general for kernels that run every shape";
  // An odd width, then a row wider than compiled for: each refused, naming
  // the condition it breaks.
  const std::pair<int64_t, std::string> refused[] = {
      {100, "s1 is a multiple of 8; these inputs give s1 = 100 (s1 is input T4 axis 1)"},
      {8200, "s1 <= 8192; these inputs give s1 = 8200 (s1 is input T4 axis 1)"},
  };
  for (const auto& [cols, why] : refused) {
    absl::StatusOr<LaunchPlan> plan = PlanLaunch(*m, {{2048, cols}, {2048, 1}, {}});
    ASSERT_FALSE(plan.ok()) << cols;
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition) << plan.status();
    EXPECT_EQ(plan.status().message(),
              "kernel fusion_9f1c_k0 (inner_outer_persistent) was compiled for shapes where " +
                  why + tail);
  }
  // Shapes that disagree with the manifest stay InvalidArgument.
  EXPECT_EQ(PlanLaunch(*m, {{2048, 100}, {1024, 1}, {}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  // A compound expression is named by its text and evaluated.
  const std::string doc = kDocExample;
  absl::StatusOr<Manifest> c =
      ParseManifest(Replace(doc, "{\"expr\": \"s1\", \"at_most\": 8192}",
                            "{\"expr\": \"ceil_div(s0 * s1, 256)\", \"at_most\": 1024}"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(PlanLaunch(*c, {{32, 8192}, {32, 1}, {}}).ok());
  absl::StatusOr<LaunchPlan> big = PlanLaunch(*c, {{33, 8192}, {33, 1}, {}});
  EXPECT_EQ(big.status().message(),
            "kernel fusion_9f1c_k0 (inner_outer_persistent) was compiled for shapes where "
            "ceil_div(s0 * s1, 256) <= 1024; these inputs give ceil_div(s0 * s1, 256) = 1056 "
            "(s0 is input T4 axis 0, s1 is input T4 axis 1)" +
                tail);
}

// A corrupted or hand-edited manifest gets a clear error, never a crash or
// an internal error: the doc example and the test manifests, mutated at the
// byte and the token level (deterministic seed), either parse and plan at
// a few shapes or fail with InvalidArgument (Unimplemented for another
// manifest_version) and a message.
TEST(ManifestTest, MutatedManifestsFailCleanly) {
  const std::vector<std::string> bases = {kDocExample, ReadTestdata("center/manifest.json"),
                                          ReadTestdata("coop/manifest.json")};
  const char* tokens[] = {"0",
                          "-1",
                          "1e309",
                          "\"s0\"",
                          "\"ceil_div(s0, 0)\"",
                          "\"s0 / 0\"",
                          "null",
                          "[]",
                          "{}",
                          "\"min(\"",
                          "9223372036854775807",
                          "\"9223372036854775807 * 2\"",
                          "\"-9223372036854775807 - 1\"",
                          "true",
                          "\"\\u0000\"",
                          "\""};
  const std::vector<Shape> shapes = {{0}, {1}, {7}, {2048}, {8192}, {int64_t{1} << 40}};
  std::mt19937 rng(20261130);
  int parsed = 0, refused = 0;
  for (int it = 0; it < 4000; ++it) {
    std::string s = bases[rng() % bases.size()];
    for (int e = 0, n = 1 + static_cast<int>(rng() % 4); e < n && !s.empty(); ++e) {
      const size_t pos = rng() % s.size();
      const char* tok = tokens[rng() % (sizeof(tokens) / sizeof(*tokens))];
      switch (rng() % 4) {
        case 0:
          s.erase(pos, 1 + rng() % 8);
          break;
        case 1:
          s.insert(pos, tok);
          break;
        case 2: {  // a value replaced up to the next delimiter
          const size_t end = s.find_first_of(",}]", pos);
          if (end != std::string::npos) s.replace(pos, end - pos, tok);
          break;
        }
        default:
          s[pos] = "{}[]\",:09a-"[rng() % 12];
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
    if (!plan.ok()) {  // FailedPrecondition: the doc example's "requires"
      EXPECT_TRUE(plan.status().code() == absl::StatusCode::kInvalidArgument ||
                  plan.status().code() == absl::StatusCode::kFailedPrecondition)
          << plan.status();
    }
  }
  EXPECT_GT(parsed, 50);  // both outcomes occur
  EXPECT_GT(refused, 50);
}

}  // namespace
}  // namespace runtime
}  // namespace fusiond
