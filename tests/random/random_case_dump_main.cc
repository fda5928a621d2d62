// fusiond_random_case_dump SEED: prints one GPU random case (gpu_cases.h):
// its graph, input shapes, the optimized graph and each segment's graph with
// its scheduler, so a failing seed of the GPU check can be read on the CPU.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_join.h"
#include "compiler/ir/printer.h"
#include "compiler/pipeline.h"
#include "tests/random/gpu_cases.h"

using namespace fusiond;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SEED\n", argv[0]);
    return 2;
  }
  const RandomGraphCase c = GpuRandomCase(std::strtoull(argv[1], nullptr, 10));
  if (!c.status.ok()) {
    std::printf("no case: %s\n", c.status.ToString().c_str());
    return 1;
  }
  std::printf("== graph\n%s", PrintGraph(c.graph).c_str());
  for (const auto& shape : c.input_shapes)
    std::printf("input shape [%s]\n", absl::StrJoin(shape, ", ").c_str());
  CompileOptions front;
  front.generate_code = false;
  absl::StatusOr<CompileResult> r = CompileFusion(c.graph, c.input_shapes, front);
  if (!r.ok()) {
    std::printf("compile: %s\n", r.status().ToString().c_str());
    return 1;
  }
  std::printf("== optimized\n%s", PrintGraph(r->optimized).c_str());
  for (size_t i = 0; i < r->segments.size(); ++i) {
    const SegmentResult& s = r->segments[i];
    std::printf("== segment %zu: %s (%s)\n%s", i, SchedulerName(s.kind), s.scheduler_reason.c_str(),
                PrintGraph(s.graph).c_str());
  }
  return 0;
}
