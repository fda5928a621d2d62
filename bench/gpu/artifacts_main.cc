// fusiond_artifacts: compiles a repro script with the full pipeline
// (compiler/pipeline.h) and writes what the runtimes load, as
// `fusionc compile FILE --out DIR` is specified to (docs/manifest.md):
// DIR/manifest.json plus DIR/<kernel>.cubin (or .ptx) per kernel. The device
// bundle uses it where fusionc has no --out yet.
//   fusiond_artifacts FILE --out DIR [--name NAME] [--arch sm_90]
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "compiler/codegen/manifest.h"
#include "compiler/frontend/frontend.h"
#include "compiler/pipeline.h"

namespace {

int Fail(const std::string& what) {
  std::fprintf(stderr, "fusiond_artifacts: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string file, out, name, arch = "sm_90";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--out" && i + 1 < argc)
      out = argv[++i];
    else if (a == "--name" && i + 1 < argc)
      name = argv[++i];
    else if (a == "--arch" && i + 1 < argc)
      arch = argv[++i];
    else if (file.empty())
      file = a;
    else
      return Fail("unexpected argument " + a);
  }
  if (file.empty() || out.empty()) {
    std::fprintf(stderr, "usage: %s FILE --out DIR [--name NAME] [--arch sm_90]\n", argv[0]);
    return 2;
  }
  if (name.empty()) name = std::filesystem::path(file).stem().string();
  absl::StatusOr<fusiond::ParsedFusion> parsed = fusiond::ParseReproFile(file);
  if (!parsed.ok()) return Fail(parsed.status().ToString());
  fusiond::CompileOptions options;
  options.arch = arch;
  absl::StatusOr<fusiond::CompileResult> result =
      fusiond::CompileFusion(parsed->graph, parsed->input_shapes, options);
  if (!result.ok()) return Fail(result.status().ToString());
  std::filesystem::create_directories(out);
  for (const fusiond::SegmentResult& s : result->segments) {
    if (!s.kernel.has_value() || s.kernel->binary.empty()) {
      return Fail("a segment has no compiled kernel (NVRTC missing?)");
    }
    const fusiond::KernelArtifact& k = *s.kernel;
    std::ofstream bin(out + "/" + k.kernel_name + (k.is_ptx ? ".ptx" : ".cubin"), std::ios::binary);
    bin << k.binary;
    std::ofstream src(out + "/" + k.kernel_name + ".cu");
    src << k.cuda_source;
  }
  std::ofstream(out + "/manifest.json") << fusiond::FusionManifestJson(*result, name);
  std::ofstream(out + "/compile.json") << fusiond::CompileResultToJson(*result);
  std::printf("%s: %zu kernel(s) -> %s\n", name.c_str(), result->segments.size(), out.c_str());
  return 0;
}
