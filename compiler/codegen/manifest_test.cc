// The fusion manifest of a fusion the segmenter splits: every kernel
// parameter names an existing input, output, intermediate or workspace, and
// every intermediate is named by the kernel writing it and a kernel reading it.
#include "compiler/codegen/manifest.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "compiler/pipeline.h"
#include "tests/random/random_graph.h"

namespace fusiond {
namespace {

int Count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(FusionManifest, SplitFusionBindsIntermediates) {
  // Seed 2002 of the random generator splits into two segments (found by
  // fusiond_random_bundle); compile without NVRTC-dependent checks.
  RandomGraphCase c = RandomGraphWithShapes(2002);
  CompileOptions o;
  auto r = CompileFusion(c.graph, c.input_shapes, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_GE(r->segments.size(), 2u);
  for (const SegmentResult& s : r->segments) {
    EXPECT_EQ(s.source_inputs.size(), s.graph.inputs.size());
    EXPECT_EQ(s.source_outputs.size(), s.graph.outputs.size());
  }
  const std::string m = FusionManifestJson(*r, "split");
  const int n_inputs = static_cast<int>(r->optimized.inputs.size());
  const int n_outputs = static_cast<int>(r->optimized.outputs.size());
  const int n_inter = Count(
      m.substr(m.find("\"intermediates\""), m.find("\"workspaces\"") - m.find("\"intermediates\"")),
      "\"dtype\"");
  EXPECT_GE(n_inter, 1);
  std::regex param("\\{\"kind\": \"([a-z]+)\", \"index\": ([0-9]+)(, \"align\": [0-9]+)?\\}");
  int kernel = 0;
  std::map<int, std::set<int>> users;  // intermediate -> kernels naming it
  size_t pos = m.find("\"kernels\"");
  for (size_t k = m.find("\"name\": \"fusion_", pos); k != std::string::npos;
       k = m.find("\"name\": \"fusion_", k + 1), ++kernel) {
    const size_t end = m.find("\"registers\"", k);
    const std::string entry = m.substr(k, end - k);
    int inputs_seen = 0;
    for (std::sregex_iterator it(entry.begin(), entry.end(), param), e; it != e; ++it) {
      const std::string kind = (*it)[1];
      const int index = std::stoi((*it)[2]);
      if (kind == "input" || kind == "scalar") {
        EXPECT_LT(index, n_inputs) << entry;
      }
      if (kind == "output") {
        EXPECT_LT(index, n_outputs) << entry;
      }
      if (kind == "intermediate") {
        EXPECT_LT(index, n_inter) << entry;
        users[index].insert(kernel);
      }
      ++inputs_seen;
    }
    EXPECT_GT(inputs_seen, 0);
  }
  EXPECT_EQ(kernel, static_cast<int>(r->segments.size()));
  // Every intermediate is written by one kernel and read by another.
  EXPECT_EQ(static_cast<int>(users.size()), n_inter);
  for (const auto& [index, ks] : users) EXPECT_GE(ks.size(), 2u) << "intermediate " << index;
}

}  // namespace
}  // namespace fusiond
