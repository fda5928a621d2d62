#include "tests/fuzz/fuzz_pipeline.h"

#include <cstdio>
#include <cstdlib>

#include "compiler/codegen/codegen.h"
#include "compiler/ir/ir_proto.h"
#include "compiler/ir/verifier.h"
#include "compiler/nvrtc/nvrtc_cache.h"
#include "compiler/pipeline.h"
#include "compiler/reference/reference.h"
#include "tests/passes/pass_check.h"

namespace fusiond {
namespace {

// Whether every value of g is static and small enough for the reference
// interpreter to evaluate g before and after each pass at fuzzing speed.
bool SmallAndStatic(const Graph& g) {
  constexpr int64_t kMaxElements = int64_t{1} << 14;
  for (const Value& v : g.values) {
    int64_t n = 1;
    for (const Extent& e : v.shape) {
      const Extent c = g.Canonical(e);
      if (!c.is_static()) return false;
      if (c.size > 0 && n > kMaxElements / c.size) return false;
      n *= c.size;
    }
  }
  return true;
}

}  // namespace

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
  // FUSIOND_FUZZ_NVRTC=1 (scripts/fuzz.sh, over a finished run's corpus):
  // NVRTC compiles every generated kernel too and must accept it.
  static const bool nvrtc = std::getenv("FUSIOND_FUZZ_NVRTC") != nullptr;
  static NvrtcOutputCache nvrtc_cache;
  options.generate_code = nvrtc;
  options.nvrtc_cache = &nvrtc_cache;
  auto compiled = CompileFusion(g, input_shapes, options);
  if (!compiled.ok()) {
    FuzzCheck(
        compiled.status().code() != absl::StatusCode::kInternal,
        "the pipeline failed with Internal (a broken invariant, or NVRTC rejected generated code)",
        compiled.status());
    return FuzzCheckError(compiled.status());
  }
  const absl::Status optimized = VerifyGraph(compiled->optimized);
  FuzzCheck(optimized.ok(), "the passes returned a graph the verifier rejects", optimized);
  if (SmallAndStatic(g)) {
    // Every pass keeps the reference results (tests/passes/pass_check.h).
    const std::string why = CheckPassesPreserve(g, RandomInputs(g, input_shapes, 1));
    FuzzCheck(why.empty() || why.rfind("the reference rejects the graph:", 0) == 0, why.c_str());
  }
  // What a client sends is the graph's wire form: it must read back as the
  // same fusion (the daemon's cache key is the canonical hash).
  auto wire = FromProto(ToProto(g));
  FuzzCheck(wire.ok(), "a verified graph's wire form does not read back", wire.status());
  auto again = CompileFusion(*wire, input_shapes, options);
  FuzzCheck(again.ok() && again->canonical_hash == compiled->canonical_hash,
            "the wire form compiles to another fusion", again.status());
  for (const SegmentResult& seg : compiled->segments) {
    // Cache records store each segment's wire form.
    auto seg_wire = FromProto(ToProto(seg.graph));
    FuzzCheck(seg_wire.ok(), "a segment's wire form does not read back", seg_wire.status());
    CodegenOptions co;
    co.symbol_sizes = seg.symbol_sizes;
    auto kernel = GenerateKernel(seg.graph, seg.params, co);
    if (kernel.ok()) {
      FuzzCheck(!kernel->source.empty(), "a kernel without source");
    } else {
      FuzzCheck(kernel.status().code() != absl::StatusCode::kInternal,
                "code generation failed inside", kernel.status());
      FuzzCheckError(kernel.status());
    }
  }
}

}  // namespace fusiond
