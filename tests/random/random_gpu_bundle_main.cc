// fusiond_random_gpu_bundle FIRST COUNT DIR: the random graphs of the GPU
// check (tests/random/gpu_cases.h) compiled through the whole pipeline, each
// to DIR/r<seed>/ (manifest and cubins); DIR/BUNDLE lists every seed with
// its outcome, one line each:
//   <seed> compiled <scheduler,...> kernels=<n> smem=<kernels with dynamic
//          shared memory> cluster=<kernels with clusters> elements=<largest input>
//   <seed> refused <status code> <scheduler,... or -> <message on one line>
// (a refusal's schedulers: the front half's choice, without code generation).
// The device (fusiond_random_gpu_check DIR) regenerates each graph and its
// inputs from the seed, so no data travels. Prints per-scheduler counts;
// exit status 1 when a compile fails with Internal (a bug, not a refusal).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "compiler/codegen/manifest.h"
#include "compiler/pipeline.h"
#include "tests/random/gpu_cases.h"

using namespace fusiond;

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s FIRST_SEED COUNT DIR\n", argv[0]);
    return 2;
  }
  const int first = std::atoi(argv[1]), count = std::atoi(argv[2]);
  const std::string dir = argv[3];
  std::filesystem::create_directories(dir);
  std::ofstream bundle(dir + "/BUNDLE");
  std::map<std::string, int> per_scheduler, refusals;
  int compiled = 0, internal = 0, smem = 0, cluster = 0;
  for (int seed = first; seed < first + count; ++seed) {
    RandomGraphCase c = GpuRandomCase(seed);
    absl::StatusOr<CompileResult> r = c.status.ok()
                                          ? CompileFusion(c.graph, c.input_shapes, CompileOptions{})
                                          : absl::StatusOr<CompileResult>(c.status);
    absl::Status written =
        r.ok() ? WriteArtifacts(*r, absl::StrCat(dir, "/r", seed), absl::StrCat("r", seed))
               : r.status();
    if (!written.ok()) {
      const std::string code = absl::StatusCodeToString(written.code());
      CompileOptions front;
      front.generate_code = false;
      absl::StatusOr<CompileResult> scheduled = CompileFusion(c.graph, c.input_shapes, front);
      std::vector<std::string> kinds;
      if (scheduled.ok()) {
        for (const SegmentResult& seg : scheduled->segments)
          kinds.push_back(SchedulerName(seg.kind));
      }
      const std::string where = kinds.empty() ? "-" : absl::StrJoin(kinds, ",");
      bundle << seed << " refused " << code << " " << where << " "
             << absl::StrReplaceAll(written.message(), {{"\n", " "}}) << "\n";
      ++refusals[absl::StrCat(code, " in ", where)];
      internal += written.code() == absl::StatusCode::kInternal;
      continue;
    }
    std::vector<std::string> kinds;
    int s = 0, cl = 0;
    for (const SegmentResult& seg : r->segments) {
      kinds.push_back(SchedulerName(seg.kind));
      ++per_scheduler[kinds.back()];
      s += seg.params.smem_bytes > 0 || seg.params.smem_buffer || seg.params.smem_columns;
      cl += seg.params.cluster_x > 1;
    }
    int64_t elements = 0;
    for (const auto& shape : c.input_shapes) {
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      elements = std::max(elements, n);
    }
    bundle << seed << " compiled " << absl::StrJoin(kinds, ",") << " kernels=" << r->segments.size()
           << " smem=" << s << " cluster=" << cl << " elements=" << elements << "\n";
    ++compiled;
    smem += s > 0;
    cluster += cl > 0;
  }
  std::printf(
      "random GPU bundle: %d of %d seeds compiled (%d with shared-memory staging, %d with "
      "clusters)\n",
      compiled, count, smem, cluster);
  for (const std::string& name : AllSchedulerNames()) {
    std::printf("  scheduler %-22s %d segments\n", name.c_str(), per_scheduler[name]);
  }
  for (const auto& [code, n] : refusals) std::printf("  refused (%s): %d\n", code.c_str(), n);
  return internal > 0 ? 1 : 0;
}
