// fusiond_random_gpu_check DIR: the GPU half of the random-graph check. DIR
// is fusiond_random_gpu_bundle's (scripts/device_bundle.sh puts it in
// .devcarry/rnd): every compiled seed's graph and inputs are made again from
// the seed (tests/random/gpu_cases.h), evaluated on the CPU reference and
// run through the C++ runtime (dynamic shared memory and grids as the
// manifest says) into outputs filled with NaN, then again into outputs
// filled with 0x42 bytes (an element no kernel writes keeps the fill:
// unwritten, even where the reference is NaN). Each output must pass
// corpus::CheckOutput (dtype, per-element error, bf16 1e-2, fp32 1e-4).
// Prints each failure, per-scheduler counts, every refusal (at compile, from
// BUNDLE, per scheduler, and at launch) with its reason, and a SUMMARY line.
// Exit status 1 on any failure, a refusal at launch (the kernels were
// compiled for these shapes), an Internal refusal at compile, no GPU, or a
// scheduler with no passing case.
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/runtime/loaded_fusion.h"
#include "tests/corpus/output_check.h"
#include "tests/random/gpu_cases.h"
#include "tests/runtime_e2e/gpu_run.h"

using namespace fusiond;

namespace {

struct Counts {
  int cases = 0, passed = 0, failed = 0, refused = 0;
};

// Why the case fails, or "" when every output passes.
std::string CheckCase(uint64_t seed, const std::string& dir) {
  RandomGraphCase c = GpuRandomCase(seed);
  if (!c.status.ok()) return absl::StrCat("generator: ", c.status.ToString());
  std::vector<HostTensor> inputs = RandomInputs(c.graph, c.input_shapes, seed);
  absl::StatusOr<std::vector<HostTensor>> want = Evaluate(c.graph, inputs);
  if (!want.ok()) return absl::StrCat("reference: ", want.status().ToString());
  absl::StatusOr<std::unique_ptr<runtime::LoadedFusion>> fusion = runtime::LoadedFusion::Load(dir);
  if (!fusion.ok()) return absl::StrCat("load: ", fusion.status().ToString());
  absl::StatusOr<std::vector<HostTensor>> got = RunOnGpu(**fusion, inputs, 0xFF);
  if (!got.ok()) return absl::StrCat("run: ", got.status().ToString());
  if (got->size() != want->size())
    return absl::StrCat(got->size(), " outputs, expected ", want->size());
  std::vector<std::string> why;
  for (size_t i = 0; i < got->size(); ++i) {
    corpus::OutputVerdict v = corpus::CheckOutput((*got)[i], (*want)[i]);
    if (!v.pass) why.push_back(absl::StrCat("output ", i, ": ", v.why));
  }
  absl::StatusOr<std::vector<HostTensor>> again = RunOnGpu(**fusion, inputs, 0x42);
  if (!again.ok()) return absl::StrCat("second run: ", again.status().ToString());
  for (size_t i = 0; i < again->size() && i < want->size(); ++i) {
    const double fill = FilledValue((*again)[i].dtype, 0x42);
    int64_t unwritten = 0;
    for (size_t k = 0; k < (*again)[i].data.size() && k < (*want)[i].data.size(); ++k) {
      unwritten += (*again)[i].data[k] == fill && (*want)[i].data[k] != fill;
    }
    if (unwritten > 0)
      why.push_back(absl::StrCat("output ", i, ": ", unwritten, " elements never written"));
  }
  return absl::StrJoin(why, "; ");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR (fusiond_random_gpu_bundle's)\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  std::ifstream bundle(dir + "/BUNDLE");
  if (!bundle) {
    std::printf("SUMMARY random graphs: FAILED: no %s/BUNDLE (scripts/device_bundle.sh)\n",
                dir.c_str());
    return 1;
  }
  if (absl::Status gpu = runtime::CheckGpuAvailable(); !gpu.ok()) {
    std::printf("SUMMARY random graphs: FAILED: no usable GPU: %s\n", gpu.ToString().c_str());
    return 1;
  }
  std::map<std::string, Counts> per_scheduler;
  std::map<std::string, int> compile_refusals;
  std::vector<std::string> launch_refusals, failures;
  int cases = 0, passed = 0, internal = 0, smem_cases = 0, cluster_cases = 0;
  for (std::string line; std::getline(bundle, line);) {
    std::istringstream in(line);
    uint64_t seed = 0;
    std::string outcome, kinds, kernels, smem, cluster;
    if (!(in >> seed >> outcome >> kinds)) continue;
    if (outcome == "refused") {  // "<code> <schedulers or -> <message>"
      const std::string code = kinds;
      std::string where;
      in >> where;
      ++compile_refusals[code];
      internal += code == "INTERNAL";
      for (absl::string_view k : absl::StrSplit(where, ','))
        ++per_scheduler[std::string(k)].refused;
      std::printf("seed %llu refused at compile: %s\n", static_cast<unsigned long long>(seed),
                  line.substr(line.find(code)).c_str());
      continue;
    }
    in >> kernels >> smem >> cluster;
    const bool uses_smem = smem != "smem=0", uses_cluster = cluster != "cluster=0";
    ++cases;
    std::string why = CheckCase(seed, absl::StrCat(dir, "/r", seed));
    std::set<std::string> names;
    for (absl::string_view k : absl::StrSplit(kinds, ',')) names.insert(std::string(k));
    if (why.rfind("run: FAILED_PRECONDITION", 0) == 0) {
      launch_refusals.push_back(absl::StrCat("seed ", seed, " (", kinds, "): ", why));
      for (const std::string& k : names) ++per_scheduler[k].refused;  // counted apart; no pass
      continue;
    }
    for (const std::string& k : names) {
      Counts& n = per_scheduler[k];
      ++n.cases;
      ++(why.empty() ? n.passed : n.failed);
    }
    if (why.empty()) {
      ++passed;
      smem_cases += uses_smem;
      cluster_cases += uses_cluster;
    } else {
      failures.push_back(absl::StrCat("seed ", seed, " (", kinds, "): ", why));
      std::printf("FAIL seed %llu (%s): %s\n", static_cast<unsigned long long>(seed), kinds.c_str(),
                  why.c_str());
    }
  }
  std::vector<std::string> unexercised;
  std::vector<std::string> names = AllSchedulerNames();
  names.push_back("-");  // refused before any scheduler took it
  for (const std::string& name : names) {
    const Counts& n = per_scheduler[name];
    if (name == "-" && n.refused == 0) continue;
    std::printf("scheduler %-22s %3d cases: %3d passed, %3d failed, %3d refused\n", name.c_str(),
                n.cases, n.passed, n.failed, n.refused);
    if (n.passed == 0 && name != "-") unexercised.push_back(name);
  }
  std::printf("passed with dynamic shared memory or staging: %d, with clusters: %d\n", smem_cases,
              cluster_cases);
  int refused = 0;
  for (const auto& [code, n] : compile_refusals) {
    std::printf("refused at compile (%s): %d\n", code.c_str(), n);
    refused += n;
  }
  for (const std::string& r : launch_refusals) std::printf("refused at launch: %s\n", r.c_str());
  // A kernel compiled for exactly these shapes must not refuse them.
  const bool ok = failures.empty() && launch_refusals.empty() && internal == 0 &&
                  unexercised.empty() && cases > 0;
  std::printf(
      "SUMMARY random graphs: %s: %d cases run, %d passed, %zu failed, %zu refused at launch; %d "
      "refused "
      "at compile (%d internal)%s\n",
      ok ? "ok" : "FAILED", cases, passed, failures.size(), launch_refusals.size(), refused,
      internal,
      unexercised.empty()
          ? ""
          : absl::StrCat("; no passing case for ", absl::StrJoin(unexercised, ", ")).c_str());
  return ok ? 0 : 1;
}
