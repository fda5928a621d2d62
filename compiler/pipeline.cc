// The compile pipeline, one stage a block: verify, optimize (passes),
// segment, schedule, generate code, compile. Each stage is timed into
// CompileResult::stage_micros.
#include "compiler/pipeline.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/codegen/compile_segment.h"
#include "compiler/compile_kernels.h"
#include "compiler/ir/binding.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/canonical.h"
#include "compiler/passes/optimize.h"
#include "compiler/scheduler/scheduler.h"
#include "compiler/scheduler/target.h"
#include "compiler/segmenter/segmenter.h"
#include "compiler/util/json.h"

namespace fusiond {
namespace {

// Adds the wall time between construction and Stop() to micros[name].
class StageTimer {
 public:
  StageTimer(std::map<std::string, double>* micros, const char* name)
      : micros_(micros), name_(name), start_(std::chrono::steady_clock::now()) {}
  ~StageTimer() { Stop(); }
  void Stop() {
    if (!micros_) return;
    (*micros_)[name_] +=
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_)
            .count();
    micros_ = nullptr;
  }

 private:
  std::map<std::string, double>* micros_;
  const char* name_;
  std::chrono::steady_clock::time_point start_;
};

// The static sizes of a definition without symbolic axes.
absl::StatusOr<std::vector<std::vector<int64_t>>> StaticShapes(const Graph& g) {
  std::vector<std::vector<int64_t>> shapes;
  for (ValueId in : g.inputs) {
    std::vector<int64_t> s;
    for (const Extent& e : g.value(in).shape) {
      Extent c = g.Canonical(e);
      if (!c.is_static()) {
        return absl::InvalidArgumentError(absl::StrCat("input ", ValueName(g, in),
                                                       " has symbolic size ", g.ExtentName(e),
                                                       "; pass concrete input shapes"));
      }
      s.push_back(c.size);
    }
    shapes.push_back(s);
  }
  return shapes;
}

}  // namespace

absl::StatusOr<CompileResult> CompileFusion(const Graph& graph,
                                            const std::vector<std::vector<int64_t>>& input_shapes,
                                            const CompileOptions& options) {
  CompileResult result;
  auto target = LookupTarget(options.arch);
  if (!target.ok()) return target.status();

  // Verify: the definition and the concrete sizes (bad input, not our bug).
  StageTimer verify(&result.stage_micros, "verify");
  if (absl::Status s = VerifyGraph(graph); !s.ok()) return s;
  std::vector<std::vector<int64_t>> shapes = input_shapes;
  if (shapes.empty()) {
    auto s = StaticShapes(graph);
    if (!s.ok()) return s.status();
    shapes = *std::move(s);
  }
  if (auto b = BindShapes(graph, shapes); !b.ok()) return b.status();
  // Size and depth before any stage whose cost grows with them.
  if (absl::Status s = CheckGraphLimits(graph, options.limits); !s.ok()) return s;
  verify.Stop();

  // Optimize. The passes keep the inputs and size symbols, so the shapes
  // still bind afterwards.
  StageTimer passes(&result.stage_micros, "passes");
  result.optimized = graph;
  PassOptions pass_options;
  pass_options.allow_precision_increase = options.allow_precision_increase;
  pass_options.dump_pass = options.dump_pass;
  if (absl::Status s = RunOptimizationPasses(result.optimized, pass_options, &result.passes);
      !s.ok()) {
    return s;
  }
  result.canonical_hash = CanonicalHashHex(result.optimized);
  passes.Stop();

  // Segment: the whole graph unless no scheduler accepts it.
  StageTimer segment(&result.stage_micros, "segment");
  auto sizes = BindShapes(result.optimized, shapes);
  if (!sizes.ok())
    return absl::InternalError(absl::StrCat("after the passes: ", sizes.status().message()));
  auto segments =
      SegmentFusion(result.optimized, *sizes, *target, options.limits.max_partition_nodes);
  if (!segments.ok()) return segments.status();
  for (size_t i = 0; i < segments->size(); ++i) {  // before code generation and NVRTC
    absl::Status s = CheckKernelLimits((*segments)[i].graph, static_cast<int>(i), options.limits);
    if (!s.ok()) return s;
  }
  segment.Stop();

  // Schedule: heuristic parameters per segment at the concrete sizes.
  StageTimer schedule(&result.stage_micros, "schedule");
  for (Segment& seg : *segments) {
    auto seg_sizes = BindShapes(seg.graph, seg.input_shapes);
    if (!seg_sizes.ok()) return absl::InternalError(std::string(seg_sizes.status().message()));
    SegmentResult r;
    r.kind = seg.kind;
    r.params =
        SchedulerFor(seg.kind).ComputeHeuristics(AnalyzeFusion(seg.graph, *seg_sizes), *target);
    r.scheduler_reason = std::move(seg.scheduler_reason);
    r.boundary_reason = std::move(seg.boundary_reason);
    r.source_inputs = seg.source_inputs;
    r.source_outputs = seg.source_outputs;
    r.symbol_sizes = seg_sizes->symbol_sizes;
    r.graph = std::move(seg.graph);
    result.segments.push_back(std::move(r));
  }
  schedule.Stop();

  if (options.generate_code) {
    if (absl::Status s = GenerateKernels(options, &result); !s.ok()) return s;
  }
  return result;
}

absl::Status GenerateKernels(const CompileOptions& options, CompileResult* scheduled) {
  CompileResult& result = *scheduled;
  auto target = LookupTarget(options.arch);
  if (!target.ok()) return target.status();
  // Generate and compile: one kernel per segment (codegen, then NVRTC;
  // CompileSegment times both), a split fusion's kernels at once.
  {
    std::vector<KernelJob> jobs(result.segments.size());
    for (size_t i = 0; i < jobs.size(); ++i) {
      const SegmentResult& seg = result.segments[i];
      SegmentCompileOptions& so = jobs[i].options;
      so.kernel_name = absl::StrCat("fusion_", result.canonical_hash.substr(0, 12), "_k", i);
      so.target = *target;
      so.nvrtc_cache = options.nvrtc_cache;
      so.specialize = !options.general_kernels;
      so.symbol_sizes = seg.symbol_sizes;
      jobs[i].graph = &seg.graph;
      jobs[i].params = &seg.params;
    }
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<absl::StatusOr<KernelArtifact>> kernels =
        CompileKernels(jobs, options.kernel_threads);
    const double wall =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    double codegen = 0, nvrtc = 0;
    for (size_t i = 0; i < kernels.size(); ++i) {
      if (!kernels[i].ok()) return kernels[i].status();
      codegen += kernels[i]->codegen_micros;
      nvrtc += kernels[i]->nvrtc_micros;
      result.segments[i].kernel = *std::move(kernels[i]);
    }
    // Stages are wall time: kernels compiled at once overlap, so there NVRTC
    // gets the section's wall time less code generation's.
    const bool overlapped = KernelThreads(options.kernel_threads, jobs.size()) > 1;
    result.stage_micros["codegen"] += codegen;
    result.stage_micros["nvrtc"] += overlapped ? std::max(0.0, wall - codegen) : nvrtc;
  }
  return absl::OkStatus();
}

std::string CompileResultToJson(const CompileResult& result) {
  std::string out =
      absl::StrCat("{\"canonical_hash\":", JsonString(result.canonical_hash), ",\"passes\":[");
  for (size_t i = 0; i < result.passes.size(); ++i) {
    const PassRecord& p = result.passes[i];
    absl::StrAppend(&out, i ? "," : "", "{\"name\":", JsonString(p.name),
                    ",\"changed\":", JsonBool(p.changed), ",\"micros\":", JsonNumber(p.micros),
                    ",\"notes\":[");
    for (size_t k = 0; k < p.notes.size(); ++k) {
      absl::StrAppend(&out, k ? "," : "", JsonString(p.notes[k]));
    }
    absl::StrAppend(&out, "]");
    if (!p.dump.empty()) absl::StrAppend(&out, ",\"dump\":", JsonString(p.dump));
    absl::StrAppend(&out, "}");
  }
  absl::StrAppend(&out, "],\"segments\":[");
  for (size_t i = 0; i < result.segments.size(); ++i) {
    const SegmentResult& s = result.segments[i];
    absl::StrAppend(&out, i ? "," : "", "{\"scheduler\":", JsonString(SchedulerName(s.kind)),
                    ",\"reason\":", JsonString(s.scheduler_reason),
                    ",\"boundary_reason\":", JsonString(s.boundary_reason),
                    ",\"heuristics\":", s.params.ToJson(),
                    ",\"heuristics_hash\":", JsonString(absl::StrFormat("%016x", s.params.Hash())),
                    ",\"num_inputs\":", s.graph.inputs.size(),
                    ",\"num_outputs\":", s.graph.outputs.size(),
                    ",\"ir\":", JsonString(PrintGraph(s.graph)));
    if (s.kernel) {
      absl::StrAppend(&out, ",\"kernel\":{\"name\":", JsonString(s.kernel->kernel_name),
                      ",\"registers\":", s.kernel->registers,
                      ",\"spill_bytes\":", s.kernel->spill_bytes, "}");
    }
    absl::StrAppend(&out, "}");
  }
  absl::StrAppend(&out, "],\"stage_micros\":{");
  bool first = true;
  for (const auto& [stage, micros] : result.stage_micros) {
    absl::StrAppend(&out, first ? "" : ",", JsonString(stage), ":", JsonNumber(micros));
    first = false;
  }
  absl::StrAppend(&out, "},\"optimized_ir\":", JsonString(PrintGraph(result.optimized)), "}");
  return out;
}

}  // namespace fusiond
