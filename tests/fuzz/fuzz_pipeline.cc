#include "tests/fuzz/fuzz_pipeline.h"

#include <cstdio>
#include <cstdlib>

#include "compiler/codegen/codegen.h"
#include "compiler/ir/verifier.h"
#include "compiler/pipeline.h"

namespace fusiond {

void FuzzCheck(bool ok, const char* what, const absl::Status& status) {
  if (ok) return;
  std::fprintf(stderr, "fuzz check failed: %s: %s\n", what, status.ToString().c_str());
  std::abort();
}

void FuzzCheckError(const absl::Status& status) {
  FuzzCheck(!status.message().empty(), "an error without a message", status);
}

void FuzzPipeline(const Graph& g, const std::vector<std::vector<int64_t>>& input_shapes) {
  const absl::Status verified = VerifyGraph(g);
  FuzzCheck(verified.ok(), "a graph the verifier rejects reached the pipeline", verified);
  CompileOptions options;
  options.generate_code = false;
  auto compiled = CompileFusion(g, input_shapes, options);
  if (!compiled.ok()) return FuzzCheckError(compiled.status());
  const absl::Status optimized = VerifyGraph(compiled->optimized);
  FuzzCheck(optimized.ok(), "the passes returned a graph the verifier rejects", optimized);
  for (const SegmentResult& seg : compiled->segments) {
    CodegenOptions co;
    co.symbol_sizes = seg.symbol_sizes;
    auto kernel = GenerateKernel(seg.graph, seg.params, co);
    if (kernel.ok()) {
      FuzzCheck(!kernel->source.empty(), "a kernel without source");
    } else {
      FuzzCheckError(kernel.status());
    }
  }
}

}  // namespace fusiond
