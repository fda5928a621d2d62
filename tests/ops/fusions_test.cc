// The GPU check fusions of tests/ops/fusions (prepare_gpu.sh compiles them
// for bench/gpu/run.py): each parses, evaluates on the CPU reference at small
// sizes, and compiles through the whole pipeline with NVRTC at its inputs
// list's sizes, so a device run finds every artifact.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "compiler/frontend/frontend.h"
#include "compiler/ir/printer.h"
#include "compiler/nvrtc/nvrtc_compiler.h"
#include "compiler/pipeline.h"
#include "compiler/reference/reference.h"

namespace fusiond {
namespace {

TEST(OpsFusions, ParseEvaluateAndCompile) {
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(FUSIOND_OPS_FUSIONS_DIR)) {
    if (entry.path().extension() != ".py") continue;
    ++seen;
    SCOPED_TRACE(entry.path().string());
    auto p = ParseReproFile(entry.path().string());
    ASSERT_TRUE(p.ok()) << p.status();
    ASSERT_FALSE(p->input_shapes.empty());
    std::vector<std::vector<int64_t>> small;
    // Symbolic axes at 8, static ones at their size.
    for (ValueId in : p->graph.inputs) {
      std::vector<int64_t> shape;
      for (const Extent& e : p->graph.value(in).shape) {
        const Extent c = p->graph.Canonical(e);
        shape.push_back(c.is_static() ? c.size : 8);
      }
      small.push_back(shape);
    }
    auto out = Evaluate(p->graph, RandomInputs(p->graph, small, 7));
    ASSERT_TRUE(out.ok()) << out.status();
    if (NvrtcVersion() == "none") continue;
    auto compiled = CompileFusion(p->graph, p->input_shapes, CompileOptions{});
    ASSERT_TRUE(compiled.ok()) << compiled.status() << "\n" << PrintGraph(p->graph);
    for (const SegmentResult& s : compiled->segments) {
      ASSERT_TRUE(s.kernel.has_value());
      EXPECT_FALSE(s.kernel->binary.empty());
    }
  }
  EXPECT_GE(seen, 4);
}

}  // namespace
}  // namespace fusiond
