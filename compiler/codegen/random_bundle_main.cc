// fusiond_random_bundle FIRST_SEED COUNT DIR: random valid graphs compiled
// through the pipeline, each written to DIR/r<seed>/ with its manifest and
// cubins plus seeded inputs and the CPU reference's outputs (raw float64),
// for checking the generated kernels on a GPU (.devcarry/cg/run_random.py).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/codegen/manifest.h"
#include "compiler/ir/printer.h"
#include "compiler/pipeline.h"
#include "compiler/reference/reference.h"
#include "tests/random/random_graph.h"

using namespace fusiond;

namespace {

std::string TensorEntry(const HostTensor& t, const std::string& file) {
  return absl::StrCat("{\"dtype\": \"", DataTypeName(t.dtype), "\", \"shape\": [",
                      absl::StrJoin(t.shape, ", "), "], \"file\": \"", file, "\"}");
}

void WriteRaw(const std::string& path, const std::vector<double>& v) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(double)));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s FIRST_SEED COUNT DIR\n", argv[0]);
    return 2;
  }
  const int first = std::atoi(argv[1]), count = std::atoi(argv[2]);
  const std::string dir = argv[3];
  int written = 0, refused = 0;
  for (int seed = first; seed < first + count; ++seed) {
    RandomGraphCase c = RandomGraphWithShapes(seed);
    auto r = CompileFusion(c.graph, c.input_shapes, CompileOptions{});
    if (!r.ok()) {
      std::fprintf(stderr, "seed %d: %s\n", seed, r.status().ToString().c_str());
      if (std::getenv("BUNDLE_PRINT")) std::fprintf(stderr, "%s\n", PrintGraph(c.graph).c_str());
      ++refused;
      continue;
    }
    if (std::getenv("BUNDLE_PRINT")) std::fprintf(stderr, "%s\n", PrintGraph(r->optimized).c_str());
    std::vector<HostTensor> ins = RandomInputs(c.graph, c.input_shapes, seed);
    auto outs = Evaluate(c.graph, ins);
    if (!outs.ok()) { std::fprintf(stderr, "seed %d: reference: %s\n", seed, outs.status().ToString().c_str()); continue; }
    const std::string d = absl::StrCat(dir, "/r", seed);
    std::filesystem::create_directories(d);
    if (absl::Status s = WriteArtifacts(*r, d, absl::StrCat("r", seed)); !s.ok()) {
      std::fprintf(stderr, "seed %d: %s\n", seed, s.ToString().c_str());
      continue;
    }
    std::vector<std::string> ie, oe;
    for (size_t i = 0; i < ins.size(); ++i) {
      WriteRaw(absl::StrCat(d, "/in", i, ".f64"), ins[i].data);
      ie.push_back(TensorEntry(ins[i], absl::StrCat("in", i, ".f64")));
    }
    for (size_t i = 0; i < outs->size(); ++i) {
      WriteRaw(absl::StrCat(d, "/out", i, ".f64"), (*outs)[i].data);
      oe.push_back(TensorEntry((*outs)[i], absl::StrCat("out", i, ".f64")));
    }
    std::string kinds;
    for (const SegmentResult& s : r->segments) kinds += absl::StrCat(kinds.empty() ? "" : ",", SchedulerName(s.kind));
    std::ofstream(d + "/case.json") << "{\"seed\": " << seed << ", \"schedulers\": \"" << kinds
                                    << "\", \"inputs\": [" << absl::StrJoin(ie, ", ") << "], \"outputs\": ["
                                    << absl::StrJoin(oe, ", ") << "]}\n";
    ++written;
  }
  std::fprintf(stderr, "written %d, refused %d\n", written, refused);
  return 0;
}
