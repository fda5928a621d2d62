#include "tests/host_emulation/emu_cases.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tests/corpus/closed_forms.h"
#include "tests/corpus/corpus_inputs.h"
#include "tests/frontends/small_sizes.h"

namespace fusiond {
namespace host_emulation {
namespace {

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string Expectation(const std::string& text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, "# expect:")) {
      std::vector<std::string> words =
          absl::StrSplit(absl::StripAsciiWhitespace(line), ' ', absl::SkipEmpty());
      return words.empty() ? "" : words[0];
    }
  }
  return "";
}

std::string Identifier(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

// Inputs from the script's list at `shapes`; scalar inputs at their values.
std::vector<HostTensor> Inputs(const ParsedFusion& p,
                               const std::vector<std::vector<int64_t>>& shapes, uint64_t seed,
                               const std::vector<int>& softmax_inputs) {
  std::vector<HostTensor> in =
      corpus::MakeCorpusInputs(p.graph, p.inputs, shapes, seed, softmax_inputs);
  for (size_t i = 0; i < in.size() && i < p.inputs.size(); ++i) {
    if (!p.graph.value(p.graph.inputs[i]).is_tensor) in[i].data = {p.inputs[i].value};
  }
  return in;
}

// Smaller sizes for the definitions whose small form is still large for an
// emulation (millions of elements): literal -> size, ahead of the rules.
const std::map<std::string, std::map<std::string, std::string>>& EmulationSizes() {
  static const auto* sizes = new std::map<std::string, std::map<std::string, std::string>>{
      {"gpt2_log_softmax_odd_vocab", {{"1024", "16"}}},
      {"ce_label_smoothing_odd_vocab_fwd", {{"2048", "4"}}},
      {"grad_clip_global_norm", {{"25165824", "65536"}}},
      {"clip_grad_value_sgd_weight_decay", {{"25165824", "65536"}}},
      // 32 groups of 256 / 32 channels: 64 channels keep two a group.
      {"groupnorm_fwd_32x256x28x28", {{"256", "64"}, {"28", "4"}}},
      {"groupnorm_bwd_32x256x28x28", {{"256", "64"}, {"28", "4"}}},
      // Window bounds that are no multiple of 16 move with their extents.
      {"pad_lastdim_2048x8190", {{"8190", "510"}}},
      {"slice_outer_sum_2048x4096", {{"2040", "120"}}},
      // Heads and sequence shrink; the head size (and its halves) stays.
      {"rope_fwd_2x32x2048x128", {{"2048", "8"}, {"32", "4"}, {"128", "128"}}},
      {"rope_bwd_2x32x2048x128", {{"2048", "8"}, {"32", "4"}, {"128", "128"}}},
      {"rope_partial_fwd_2x32x2048x128", {{"2048", "8"}, {"128", "128"}}},
      {"rope_fwd_qkv_llama_1x1024x12288", {{"1024", "8"}, {"128", "128"}, {"12288", "12288"}}},
      // 56x56 feature maps keep their size under the rule.
      {"hardswish_hardsigmoid_softplus_fwd_bwd", {{"56", "8"}}},
      // bench/gpu's odd and tall shapes, kept odd and tall.
      {"sum_dim0_333x16x77", {{"333", "37"}}},
      {"softmax_dim0_fwd_300x1000", {{"300", "37"}, {"1000", "250"}}},
      {"softmax_dim0_fwd_65536x1024", {{"65536", "1024"}}},
      {"softmax_dim0_bwd_65536x1024", {{"65536", "1024"}}},
      {"sum_dim0_65536x1024", {{"65536", "1024"}}},
  };
  return *sizes;
}

// Second sizes for GPU check fusions, odd where the first are multiples of
// every vector width: each kernel's tails (a row's last partial vector, a
// Philox call's last partial group of four, a block's last partial row).
// Literal -> size for the whole file, as EmulationSizes.
const std::map<std::string, std::map<std::string, std::string>>& OddSizes() {
  static const auto* sizes = new std::map<std::string, std::map<std::string, std::string>>{
      {"random_ops_1024x4096", {{"1024", "5"}, {"4096", "333"}}},
      {"random_ops_onekernel_1024x4096", {{"1024", "5"}, {"4096", "333"}}},
      {"dropout_bwd_2048x8192", {{"2048", "7"}, {"8192", "1003"}}},
      {"dropout_layernorm_fwd_2048x8192", {{"2048", "7"}, {"8192", "1003"}}},
      {"dropout_layernorm_bwd_2048x8192", {{"2048", "7"}, {"8192", "1003"}}},
      {"dropout_rmsnorm_fwd_2048x8192", {{"2048", "7"}, {"8192", "1003"}}},
      {"dropout_row_col_sums_2048x4096", {{"2048", "9"}, {"4096", "517"}}},
      {"dropout_softmax_dim0_2048x8192", {{"2048", "37"}, {"8192", "101"}}},
      {"ops_unary_2048x8192", {{"2048", "3"}, {"8192", "1001"}}},
      {"ops_binary_2048x8192", {{"2048", "3"}, {"8192", "1001"}}},
      {"ops_bitwise_4096x4096", {{"4096", "77"}}},
      {"fp8_scale_2048x8192", {{"2048", "5"}, {"8192", "999"}}},
      {"masked_softmax_full_2048x4096", {{"2048", "5"}, {"4096", "999"}}},
      {"iota_positions_2048x4096", {{"2048", "5"}, {"4096", "333"}}},
      {"pad_softmax_2048x4096", {{"2048", "5"}, {"4096", "333"}}},
      {"strided_inputs_1024x2048", {{"1024", "33"}, {"2048", "65"}, {"2097152", "2145"}}},
  };
  return *sizes;
}

std::vector<std::string> PyFiles(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".py") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::string ShrinkLiterals(const std::string& text, const std::string& stem,
                           const std::map<std::string, std::string>* sizes) {
  auto found = EmulationSizes().find(stem);
  if (sizes == nullptr && found != EmulationSizes().end()) sizes = &found->second;
  return ShrinkToSmallSizes(text, SmallSizesMap(text), sizes);
}

absl::StatusOr<std::vector<EmuCase>> CorpusCases(const std::string& corpus_dir,
                                                 const KeepCase& keep) {
  std::vector<EmuCase> cases;
  for (const corpus::ClosedFormCase& c : corpus::ClosedFormCases()) {
    const std::string path = absl::StrCat(corpus_dir, "/", c.file);
    const std::string stem = c.file.substr(0, c.file.size() - 3);
    if (keep && !keep(Identifier(absl::StrCat("corpus_", stem, "_0"))) &&
        !keep(Identifier(absl::StrCat("corpus_", stem, "_1")))) {
      continue;
    }
    auto p = c.shape_sets.empty() ? ParseReproScript(ShrinkLiterals(ReadFile(path), stem), c.file)
                                  : ParseReproFile(path);
    if (!p.ok()) return p.status();
    std::vector<std::vector<std::vector<int64_t>>> sets = c.shape_sets;
    if (sets.empty()) sets.push_back(p->input_shapes);
    for (size_t s = 0; s < sets.size(); ++s) {
      EmuCase e;
      e.name = Identifier(absl::StrCat("corpus_", stem, "_", s));
      e.origin = path;
      e.graph = p->graph;
      e.shapes = sets[s];
      e.inputs = Inputs(*p, sets[s], 1234 + s, c.softmax_inputs);
      cases.push_back(std::move(e));
    }
  }
  return cases;
}

absl::StatusOr<std::vector<EmuCase>> FrontendCases(const std::string& fusions_dir,
                                                   const KeepCase& keep) {
  std::vector<EmuCase> cases;
  for (const std::string& path : PyFiles(fusions_dir)) {
    const std::string stem = std::filesystem::path(path).stem().string();
    if (keep && !keep(Identifier("fe_" + stem))) continue;
    const std::string text = ReadFile(path);
    const std::string expect = Expectation(text);
    if (expect != "compiles" && expect != "pending") continue;
    auto p = ParseReproScript(ShrinkLiterals(text, stem), stem + ".small.py");
    if (!p.ok()) {
      if (expect == "pending") continue;  // its op is refused by the front end yet
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": the small form does not parse: ", p.status().message()));
    }
    EmuCase e;
    e.name = Identifier("fe_" + stem);
    e.origin = path;
    e.graph = p->graph;
    e.shapes = p->input_shapes;
    e.inputs = Inputs(*p, p->input_shapes, 34, {});
    e.pending = expect == "pending";
    cases.push_back(std::move(e));
  }
  return cases;
}

std::vector<bool> InputFreeOutputs(const Graph& g) {
  std::vector<bool> reached(g.values.size(), false);
  for (ValueId in : g.inputs) reached[in] = g.value(in).is_tensor;
  for (const Node& n : g.nodes) {
    bool r = false;
    // A size read off a tensor carries none of its values.
    for (ValueId in : n.inputs) r |= reached[in] && n.op != OpKind::kSize;
    for (ValueId o : n.outputs) reached[o] = r;
  }
  std::vector<bool> out;
  for (ValueId o : g.outputs) out.push_back(!reached[o]);
  return out;
}

absl::StatusOr<std::vector<EmuCase>> CheckFolderCases(const std::string& dir,
                                                      const std::string& prefix, bool exact,
                                                      const KeepCase& keep) {
  std::vector<EmuCase> cases;
  for (const std::string& path : PyFiles(dir)) {
    const std::string stem = std::filesystem::path(path).stem().string();
    const std::string name = Identifier(prefix + stem);
    if (keep && !keep(name)) continue;
    const std::string text = ReadFile(path);
    std::vector<const std::map<std::string, std::string>*> forms = {nullptr};
    if (auto odd = OddSizes().find(stem); odd != OddSizes().end()) forms.push_back(&odd->second);
    for (const auto* sizes : forms) {
      auto p = ParseReproScript(ShrinkLiterals(text, stem, sizes), stem + ".small.py");
      if (!p.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": the ", sizes ? "odd" : "small",
                         " form does not parse: ", p.status().message()));
      }
      EmuCase e;
      e.name = sizes ? name + "_odd" : name;
      e.origin = path;
      e.graph = p->graph;
      e.shapes = p->input_shapes;
      e.inputs = Inputs(*p, p->input_shapes, 20261205, {});
      if (exact) e.exact = InputFreeOutputs(e.graph);
      cases.push_back(std::move(e));
    }
  }
  return cases;
}

}  // namespace host_emulation
}  // namespace fusiond
