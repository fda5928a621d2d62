// Writes each repro script given as a serialized FusionGraph (the seeds of
// fuzz_graph_proto): fuzz_seed_protos OUT_DIR SCRIPT.py... Scripts the front
// end rejects are skipped with a note; exits non-zero when none converts.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "compiler/frontend/frontend.h"
#include "compiler/ir/ir_proto.h"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc < 3) {
    std::fprintf(stderr, "usage: fuzz_seed_protos OUT_DIR SCRIPT.py...\n");
    return 2;
  }
  const fs::path out = argv[1];
  std::error_code ec;
  fs::create_directories(out, ec);
  int written = 0;
  for (int i = 2; i < argc; ++i) {
    auto parsed = fusiond::ParseReproFile(argv[i]);
    if (!parsed.ok()) {
      std::fprintf(stderr, "fuzz_seed_protos: skipped %s: %s\n", argv[i],
                   parsed.status().ToString().c_str());
      continue;
    }
    const fs::path file = out / (fs::path(argv[i]).stem().string() + ".pb");
    std::ofstream f(file, std::ios::binary);
    if (!fusiond::ToProto(parsed->graph).SerializeToOstream(&f)) {
      std::fprintf(stderr, "fuzz_seed_protos: cannot write %s\n", file.c_str());
      return 1;
    }
    ++written;
  }
  std::printf("fuzz_seed_protos: %d seeds in %s\n", written, out.c_str());
  return written > 0 ? 0 : 1;
}
