// fusiond_ops_gpu_check DIR: the GPU check of the random ops (DIR is what
// tests/ops/prepare_gpu.sh writes, .devcarry/ops). DIR/RANDOM lists one
// fusion a line: its stem, then the artifact folders of other schedules of
// it ("stem alt..."). For each, the repro DIR/fusions/<stem>.py is parsed,
// its inputs made (seeded normal tensors, the scalars of its inputs list),
// evaluated on the CPU reference, and every artifact run through the C++
// runtime into NaN-filled outputs. An output that depends on no tensor
// input (the random values, a dropout mask) must equal the reference bit
// for bit, under every schedule; every other output must pass
// corpus::CheckOutput (the reference is float64 with each dtype's rounding).
// The other schedules' exact outputs must also equal the first schedule's
// bit for bit; for the others the differing elements are printed.
// Prints a line per artifact and a SUMMARY; exit status 1 on any failure,
// a missing artifact or no GPU.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/runtime/loaded_fusion.h"
#include "compiler/frontend/frontend.h"
#include "compiler/reference/reference.h"
#include "tests/corpus/output_check.h"
#include "tests/runtime_e2e/gpu_run.h"

using namespace fusiond;

namespace {

// Outputs whose values depend on no tensor input: exact by definition.
std::vector<bool> RandomOnlyOutputs(const Graph& g) {
  std::vector<bool> tensor_dep(g.values.size(), false);
  for (ValueId in : g.inputs) tensor_dep[in] = g.value(in).is_tensor;
  for (const Node& n : g.nodes) {
    bool d = false;
    for (ValueId in : n.inputs) d |= tensor_dep[in] && n.op != OpKind::kSize;
    for (ValueId o : n.outputs) tensor_dep[o] = d;
  }
  std::vector<bool> out;
  for (ValueId o : g.outputs) out.push_back(!tensor_dep[o]);
  return out;
}

bool SameBits(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

// Elements of a and b whose bits differ (every element when the sizes do).
int64_t Differing(const HostTensor& a, const HostTensor& b) {
  if (a.data.size() != b.data.size()) return static_cast<int64_t>(a.data.size());
  int64_t n = 0;
  for (size_t k = 0; k < a.data.size(); ++k) n += !SameBits(a.data[k], b.data[k]);
  return n;
}

// Runs one artifact; the failures found, "" when it passes. `first`: the
// outputs of the fusion's first schedule (empty for that one): the exact
// outputs must equal them bit for bit, the others are counted.
std::string CheckArtifact(const std::string& dir, const std::vector<HostTensor>& inputs,
                          const std::vector<HostTensor>& want, const std::vector<bool>& exact,
                          std::vector<HostTensor>* first, std::string* note) {
  auto fusion = runtime::LoadedFusion::Load(dir);
  if (!fusion.ok()) return absl::StrCat("load: ", fusion.status().ToString());
  auto got = RunOnGpu(**fusion, inputs, 0xFF);
  if (!got.ok()) return absl::StrCat("run: ", got.status().ToString());
  if (got->size() != want.size())
    return absl::StrCat(got->size(), " outputs, expected ", want.size());
  std::vector<std::string> why, notes;
  if (first->empty()) {
    *first = *got;
  } else {
    for (size_t i = 0; i < got->size() && i < first->size(); ++i) {
      const int64_t d = Differing((*got)[i], (*first)[i]);
      notes.push_back(absl::StrCat("output ", i, " against the first schedule: ",
                                   d == 0 ? "bitwise equal" : absl::StrCat(d, " elements differ")));
      if (d > 0 && exact[i]) {
        why.push_back(
            absl::StrCat("output ", i, ": ", d, " elements differ from the first schedule's bits"));
      }
    }
  }
  for (size_t i = 0; i < got->size(); ++i) {
    const HostTensor& g = (*got)[i];
    const HostTensor& w = want[i];
    if (exact[i]) {
      if (g.dtype != w.dtype || g.data.size() != w.data.size()) {
        why.push_back(absl::StrCat("output ", i, ": dtype or size differs"));
        continue;
      }
      int64_t differ = 0, at = -1;
      for (size_t k = 0; k < g.data.size(); ++k) {
        if (!SameBits(g.data[k], w.data[k])) {
          if (at < 0) at = static_cast<int64_t>(k);
          ++differ;
        }
      }
      notes.push_back(absl::StrCat("output ", i, " against the reference: bitwise ",
                                   differ == 0 ? "equal" : "DIFFERENT"));
      if (differ > 0) {
        why.push_back(absl::StrCat("output ", i, ": ", differ, " of ", g.data.size(),
                                   " elements differ from the reference's bits (first at ", at,
                                   ": ", g.data[at], " against ", w.data[at], ")"));
      }
      continue;
    }
    corpus::OutputVerdict v = corpus::CheckOutput(g, w);
    notes.push_back(absl::StrCat("output ", i, " error ", v.error));
    if (!v.pass) why.push_back(absl::StrCat("output ", i, ": ", v.why));
  }
  *note = absl::StrJoin(notes, ", ");
  return absl::StrJoin(why, "; ");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR (tests/ops/prepare_gpu.sh's .devcarry/ops)\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  std::ifstream list(dir + "/RANDOM");
  if (!list) {
    std::printf("SUMMARY random ops: FAILED: no %s/RANDOM (tests/ops/prepare_gpu.sh)\n",
                dir.c_str());
    return 1;
  }
  if (absl::Status gpu = runtime::CheckGpuAvailable(); !gpu.ok()) {
    std::printf("SUMMARY random ops: FAILED: no usable GPU: %s\n", gpu.ToString().c_str());
    return 1;
  }
  int artifacts = 0, failed = 0;
  for (std::string line; std::getline(list, line);) {
    std::istringstream in(line);
    std::string stem;
    if (!(in >> stem)) continue;
    std::vector<std::string> runs = {stem};
    for (std::string alt; in >> alt;) runs.push_back(alt);
    auto parsed = ParseReproFile(absl::StrCat(dir, "/fusions/", stem, ".py"));
    if (!parsed.ok()) {
      std::printf("%s: FAILED: %s\n", stem.c_str(), parsed.status().ToString().c_str());
      ++failed;
      continue;
    }
    const Graph& g = parsed->graph;
    std::vector<HostTensor> inputs = RandomInputs(g, parsed->input_shapes, 20261205);
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!g.value(g.inputs[i]).is_tensor) inputs[i].data = {parsed->inputs[i].value};
    }
    auto want = Evaluate(g, inputs);
    if (!want.ok()) {
      std::printf("%s: FAILED: reference: %s\n", stem.c_str(), want.status().ToString().c_str());
      ++failed;
      continue;
    }
    const std::vector<bool> exact = RandomOnlyOutputs(g);
    std::vector<HostTensor> first;
    for (const std::string& run : runs) {
      ++artifacts;
      std::string note;
      const std::string why =
          CheckArtifact(absl::StrCat(dir, "/", run), inputs, *want, exact, &first, &note);
      std::printf("%s [%s]: %s%s (%s)\n", stem.c_str(), run.c_str(),
                  why.empty() ? "ok" : "FAILED: ", why.c_str(), note.c_str());
      failed += !why.empty();
    }
  }
  std::printf("SUMMARY random ops: %d artifacts, %d failed%s\n", artifacts, failed,
              artifacts == 0 ? " (none listed)" : "");
  return failed > 0 || artifacts == 0 ? 1 : 0;
}
