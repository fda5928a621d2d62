// fusiond_random_case_dump SEED [--source]: prints one GPU random case
// (gpu_cases.h): its graph, input shapes, the optimized graph and each
// segment's graph with its scheduler and whether code generation accepts it
// (--source: and the kernel), so a failing seed of the GPU check can be read
// on the CPU.
// fusiond_random_case_dump --sweep FIRST COUNT: compiles COUNT cases through
// passes, segmenter, schedulers and code generation (no NVRTC, so it is
// quick) and prints the refusals by reason (numbers masked), then each
// refused seed; --sweep-sources also prints a hash of each compiled seed's
// kernel sources (to compare two builds).
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/codegen/codegen.h"
#include "compiler/ir/printer.h"
#include "compiler/pipeline.h"
#include "tests/random/gpu_cases.h"

using namespace fusiond;

namespace {

// The first refusal of seed's case: passes to code generation, "" when none
// (then *sources gets every kernel's source).
std::string Refusal(uint64_t seed, std::string* sources) {
  const RandomGraphCase c = GpuRandomCase(seed);
  if (!c.status.ok()) return absl::StrCat("no case: ", c.status.ToString());
  CompileOptions front;
  front.generate_code = false;
  absl::StatusOr<CompileResult> r = CompileFusion(c.graph, c.input_shapes, front);
  if (!r.ok()) return r.status().ToString();
  for (const SegmentResult& s : r->segments) {
    absl::StatusOr<GeneratedKernel> k = GenerateKernel(s.graph, s.params, CodegenOptions{});
    if (!k.ok()) return absl::StrCat(SchedulerName(s.kind), ": ", k.status().ToString());
    absl::StrAppend(sources, k->source);
  }
  return "";
}

// The reason with its numbers and value names masked, to count alike ones.
std::string Masked(const std::string& why) {
  std::string out;
  for (size_t i = 0; i < why.size() && out.size() < 160; ++i) {
    if (std::isdigit(static_cast<unsigned char>(why[i]))) {
      if (out.empty() || out.back() != '#') out += '#';
    } else {
      out += why[i];
    }
  }
  return out;
}

// `sources`: also a hash of each compiled seed's kernels, to compare two
// builds of the compiler.
int Sweep(uint64_t first, int count, bool sources) {
  std::map<std::string, int> by_reason;
  std::string seeds;
  for (uint64_t seed = first; seed < first + count; ++seed) {
    std::string text;
    const std::string why = Refusal(seed, &text);
    if (why.empty() && sources) {
      absl::StrAppend(&seeds, seed, " kernels ", std::hash<std::string>()(text), "\n");
    }
    if (why.empty()) continue;
    ++by_reason[Masked(why)];
    absl::StrAppend(&seeds, seed, " ", why, "\n");
  }
  int refused = 0;
  for (const auto& [why, n] : by_reason) refused += n;
  std::printf("%d of %d seeds refused\n", refused, count);
  for (const auto& [why, n] : by_reason) std::printf("%5d  %s\n", n, why.c_str());
  std::printf("%s", seeds.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (argc == 4 && (mode == "--sweep" || mode == "--sweep-sources")) {
    return Sweep(std::strtoull(argv[2], nullptr, 10), std::atoi(argv[3]), mode != "--sweep");
  }
  const bool source = argc == 3 && std::string(argv[2]) == "--source";
  if (argc != 2 && !source) {
    std::fprintf(stderr,
                 "usage: %s SEED [--source] | --sweep FIRST COUNT | --sweep-sources FIRST COUNT\n",
                 argv[0]);
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
    // Code generation alone (no NVRTC): which segment a refusal comes from.
    absl::StatusOr<GeneratedKernel> k = GenerateKernel(s.graph, s.params, CodegenOptions{});
    std::printf("codegen: %s\n", k.ok() ? "ok" : k.status().ToString().c_str());
    if (k.ok() && source) std::printf("%s", k->source.c_str());
  }
  return 0;
}
