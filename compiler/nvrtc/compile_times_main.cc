// fusiond_compile_times: cold compile time per fusion, split into our stages
// (parse, verify, passes, segment, schedule, codegen) and NVRTC.
//   fusiond_compile_times FILE.py... [--repeat=N]
// Every compile is cold (the pipeline has no cache); the first one in the
// process also pays NVRTC's library start-up, reported separately as
// "first_nvrtc_ms". Prints one JSON object per line.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "compiler/frontend/frontend.h"
#include "compiler/nvrtc/nvrtc_compiler.h"
#include "compiler/pipeline.h"

using namespace fusiond;

int main(int argc, char** argv) {
  int repeat = 3;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--repeat=", 0) == 0) repeat = std::stoi(a.substr(9)); else files.push_back(a);
  }
  // NVRTC start-up, once.
  auto t0 = std::chrono::steady_clock::now();
  auto warm = CompileWithNvrtc("extern \"C\" __global__ void k() {}", "k", NvrtcOptions{});
  const double first = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("{\"nvrtc\": \"%s\", \"first_nvrtc_ms\": %.1f, \"ok\": %s}\n", NvrtcVersion().c_str(), first,
              warm.ok() ? "true" : "false");
  int failures = 0;
  for (const std::string& f : files) {
    std::map<std::string, std::vector<double>> ms;
    for (int r = 0; r < repeat; ++r) {
      auto p0 = std::chrono::steady_clock::now();
      auto parsed = ParseReproFile(f);
      const double parse = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - p0).count();
      if (!parsed.ok()) { std::fprintf(stderr, "%s\n", parsed.status().ToString().c_str()); ++failures; break; }
      auto c0 = std::chrono::steady_clock::now();
      auto res = CompileFusion(parsed->graph, parsed->input_shapes, CompileOptions{});
      const double total = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - c0).count();
      if (!res.ok()) { std::fprintf(stderr, "%s\n", res.status().ToString().c_str()); ++failures; break; }
      ms["parse"].push_back(parse);
      ms["end_to_end"].push_back(parse + total);
      double ours = parse;
      for (const auto& [stage, us] : res->stage_micros) {
        ms[stage].push_back(us / 1000);
        if (stage != "nvrtc") ours += us / 1000;
      }
      ms["ours"].push_back(ours);
    }
    std::string line = absl::StrFormat("{\"fusion\": \"%s\"", f.substr(f.find_last_of('/') + 1));
    for (auto& [stage, v] : ms) {
      std::sort(v.begin(), v.end());
      line += absl::StrFormat(", \"%s_ms\": %.2f", stage, v[v.size() / 2]);
    }
    std::printf("%s}\n", line.c_str());
  }
  return failures == 0 ? 0 : 1;
}
