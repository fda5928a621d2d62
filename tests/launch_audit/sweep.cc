#include "tests/launch_audit/sweep.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "compiler/frontend/frontend.h"
#include "tests/random/gpu_cases.h"

namespace fusiond {
namespace launch_audit {

std::vector<std::vector<int64_t>> DefaultTargets() {
  const int64_t k16m = int64_t{1} << 24;
  return {{k16m},           {65536},         {64, 65536},     {65536, 64},
          {8192, 8192},     {2048, 8192},    {65536, 1024},   {1, k16m},
          {1, 1, k16m},     {32, 2048, 128}, {256, 64, 3136}, {2, 32, 2048, 128},
          {64, 64, 56, 56}, {1, 1, 1, k16m}};
}

std::vector<std::vector<int64_t>> SmallTargets() {
  return {{16384}, {64, 256}, {4, 16, 256}, {2, 4, 16, 256}};
}

std::vector<std::string> FusionFiles(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".py") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

namespace {

// `m` (compiled at `compiled_at`) launched at `shapes`.
FusionAudit AuditReuse(const std::string& label, const CompiledManifest& m,
                       const Shapes& compiled_at, const Shapes& shapes,
                       const AuditOptions& options) {
  FusionAudit a;
  a.label = label;
  a.compile_shapes = compiled_at;
  a.launch_shapes = shapes;
  auto k = AuditLaunch(m, shapes, options);
  if (k.ok()) {
    a.kernels = *std::move(k);
  } else {
    a.status = k.status();
  }
  return a;
}

}  // namespace

std::vector<FusionAudit> AuditFile(const std::string& path, const SweepOptions& options) {
  const std::string stem = std::filesystem::path(path).stem().string();
  auto parsed = ParseReproFile(path);
  if (!parsed.ok() || parsed->input_shapes.size() != parsed->graph.inputs.size()) {
    FusionAudit a;
    a.label = stem;
    a.status = parsed.ok() ? absl::InvalidArgumentError("no input sizes") : parsed.status();
    return {a};
  }
  const Shapes& own = parsed->input_shapes;
  std::vector<FusionAudit> out;
  out.push_back(AuditFusion(stem, parsed->graph, own, own, options.audit));
  if (!out.back().status.ok() || !IsSymbolic(parsed->graph)) return out;
  // The own-size manifest, compiled once and launched at every target.
  auto reused = options.reuse_own ? CompileManifest(parsed->graph, own, options.audit)
                                  : absl::StatusOr<CompiledManifest>(absl::CancelledError());
  // Small-size manifests by rank, for reuse_small.
  struct Small {
    size_t rank;
    Shapes shapes;
    absl::StatusOr<CompiledManifest> manifest;
  };
  std::vector<Small> small;
  if (options.reuse_small) {
    for (const std::vector<int64_t>& t : SmallTargets()) {
      Shapes shapes = ScaledShapes(parsed->graph, own, t);
      if (shapes.empty()) continue;
      small.push_back({t.size(), shapes, CompileManifest(parsed->graph, shapes, options.audit)});
    }
  }
  for (const std::vector<int64_t>& t : options.targets) {
    Shapes shapes = ScaledShapes(parsed->graph, own, t);
    if (shapes.empty() || shapes == own) continue;
    if (options.compile_at_targets) {
      // Sizes the definition cannot take (a reshape's literal, a static
      // axis they contradict) come back as a status, no launch.
      out.push_back(AuditFusion(stem, parsed->graph, shapes, shapes, options.audit));
    }
    if (reused.ok())
      out.push_back(AuditReuse(stem + " (own-size artifact)", *reused, own, shapes, options.audit));
    for (const Small& sm : small) {
      if (!sm.manifest.ok() || sm.rank != t.size()) continue;
      out.push_back(
          AuditReuse(stem + " (small artifact)", *sm.manifest, sm.shapes, shapes, options.audit));
    }
  }
  return out;
}

FusionAudit AuditRandomCase(uint64_t seed, const AuditOptions& options) {
  RandomGraphCase c = GpuRandomCase(seed);
  return AuditFusion(absl::StrCat("random seed ", seed), c.graph, c.input_shapes, c.input_shapes,
                     options);
}

}  // namespace launch_audit
}  // namespace fusiond
