// `fusionc eval FILE`: runs the fusion on the CPU reference interpreter with
// seeded random inputs and prints a checksum per output.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/fusionc/commands.h"
#include "client/fusionc/eval_inputs.h"
#include "client/fusionc/flags.h"
#include "client/fusionc/script_input.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/binding.h"
#include "compiler/ir/printer.h"
#include "compiler/reference/reference.h"

namespace fusiond {
namespace fusionc {
namespace {

constexpr char kEvalUsage[] =
    "usage: fusionc eval FILE [--seed N] [--shapes S] [--max-elements N] [--values N]\n"
    "\n"
    "Evaluates the fusion in FILE on the CPU with the reference interpreter\n"
    "(float64 arithmetic, every value rounded to its declared dtype) on seeded\n"
    "random inputs drawn as the script's inputs list says (randn, rand + 0.5,\n"
    "softmax(randn), ...). Prints, per output, its name, dtype, shape and a\n"
    "checksum: the sum and the sum of absolute values (%.6e), plus a count of\n"
    "non-finite values when there are any.\n"
    "\n"
    "flags:\n"
    "  --seed N          random seed of the inputs (default 0)\n"
    "  --shapes S        input shapes, overriding the inputs list: one entry per\n"
    "                    input, ';' between inputs, 'x' between sizes, empty or\n"
    "                    'scalar' for a scalar input: --shapes '64x128;64x1;128'\n"
    "                    (needed for symbolic definitions without an inputs list)\n"
    "  --max-elements N  refuse to run when the inputs and all intermediate\n"
    "                    tensors hold more than N elements in total (default\n"
    "                    67108864, 512 MiB of float64): the CPU interpreter is slow\n"
    "                    and keeps every intermediate\n"
    "  --values N        also print the first N values of each output\n"
    "  --max-script-bytes N  refuse a FILE larger than N bytes before reading it\n"
    "                    (default and most: 16 MiB)\n"
    "  --help            this text\n"
    "\n"
    "exit codes: 0 ok, 2 bad input (parse errors, bad shapes, too large), 1 internal.\n";

int RunEval(const std::vector<std::string>& args) {
  auto flags = ParseFlags(args, {{"seed", true},
                                 {"shapes", true},
                                 {"max-elements", true},
                                 {"values", true},
                                 ScriptBytesFlagSpec()});
  if (!flags.ok()) return ReportError("eval", flags.status());
  if (flags->help) {
    std::fputs(kEvalUsage, stdout);
    return kExitOk;
  }
  if (flags->positional.size() != 1) {
    std::fputs(kEvalUsage, stderr);
    return ReportError("eval", absl::InvalidArgumentError(absl::StrCat("expected one FILE, got ",
                                                                       flags->positional.size())));
  }
  auto seed = flags->GetInt("seed");
  auto max_elements = flags->GetInt("max-elements");
  auto values = flags->GetInt("values");
  for (const auto* s : {&seed, &max_elements, &values}) {
    if (!s->ok()) return ReportError("eval", s->status());
  }
  auto parsed = ParseScriptFile(*flags, flags->positional[0]);
  if (!parsed.ok()) return ReportError("eval", parsed.status());
  const Graph& g = parsed->graph;

  std::vector<std::vector<int64_t>> shapes = parsed->input_shapes;
  if (auto text = flags->Get("shapes")) {
    auto s = ParseShapes(*text);
    if (!s.ok()) return ReportError("eval", s.status());
    shapes = *s;
  }
  if (shapes.empty() && !g.inputs.empty()) {
    return ReportError(
        "eval", absl::InvalidArgumentError("the definition has symbolic sizes and no inputs list; "
                                           "expected --shapes, e.g. --shapes '64x128;128'"));
  }
  auto binding = BindShapes(g, shapes);
  if (!binding.ok()) {
    return ReportError("eval", absl::InvalidArgumentError(absl::StrCat(
                                   "input shapes: ", std::string(binding.status().message()))));
  }
  // The interpreter keeps every tensor value; count them all before running.
  double total = 0;
  for (const Value& v : g.values) {
    if (!v.is_tensor) continue;
    double n = 1;
    for (int64_t d : binding->Shape(g, v.id)) n *= static_cast<double>(d);
    total += n;
  }
  const int64_t limit = max_elements->value_or(int64_t{1} << 26);
  if (total > static_cast<double>(limit)) {
    return ReportError(
        "eval", absl::ResourceExhaustedError(
                    absl::StrCat("evaluating needs ", total,
                                 " tensor elements (inputs and every "
                                 "intermediate), more than --max-elements ",
                                 limit, "; expected smaller --shapes or a larger --max-elements")));
  }
  const uint64_t seed_value = static_cast<uint64_t>(seed->value_or(0));
  std::vector<HostTensor> inputs = MakeEvalInputs(*parsed, shapes, seed_value);
  auto outputs = Evaluate(g, inputs);
  if (!outputs.ok()) return ReportError("eval", outputs.status());
  if (outputs->size() != g.outputs.size()) {
    return ReportError("eval",
                       absl::InternalError(absl::StrCat("Evaluate returned ", outputs->size(),
                                                        " outputs for ", g.outputs.size())));
  }
  std::string out = absl::StrCat("# ", flags->positional[0], " seed=", seed_value, "\n");
  for (size_t i = 0; i < outputs->size(); ++i) {
    const HostTensor& t = (*outputs)[i];
    double sum = 0, abs_sum = 0;
    int64_t nonfinite = 0;
    for (double x : t.data) {
      if (!std::isfinite(x)) {
        ++nonfinite;
        continue;
      }
      sum += x;
      abs_sum += std::fabs(x);
    }
    absl::StrAppend(&out, ValueName(g, g.outputs[i]), " ", DataTypeName(t.dtype), "[",
                    absl::StrJoin(t.shape, ", "), "] ",
                    absl::StrFormat("sum=%.6e abs_sum=%.6e", sum, abs_sum));
    if (nonfinite > 0) absl::StrAppend(&out, " nonfinite=", nonfinite);
    absl::StrAppend(&out, "\n");
    if (values->has_value()) {
      const int64_t n = std::min<int64_t>(**values, static_cast<int64_t>(t.data.size()));
      std::vector<std::string> first;
      for (int64_t k = 0; k < n; ++k) first.push_back(absl::StrFormat("%.6g", t.data[k]));
      absl::StrAppend(&out, "  values: ", absl::StrJoin(first, " "), "\n");
    }
  }
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

}  // namespace

FUSIONC_COMMAND(eval, "evaluate a fusion on the CPU reference interpreter", kEvalUsage, RunEval);

}  // namespace fusionc
}  // namespace fusiond
