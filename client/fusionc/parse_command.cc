// `fusionc parse FILE`: parses a repro script and prints its IR.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/fusionc/commands.h"
#include "client/fusionc/flags.h"
#include "client/fusionc/script_input.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/ir_proto.h"
#include "compiler/ir/printer.h"

namespace fusiond {
namespace fusionc {
namespace {

constexpr char kParseUsage[] =
    "usage: fusionc parse FILE [--inputs] [--roundtrip] [--out F.pb]\n"
    "\n"
    "Parses the repro script FILE (fd.define_tensor / fd.ops.* / fd.add_output and\n"
    "the trailing `inputs = [...]` list), verifies the graph and prints its IR.\n"
    "\n"
    "flags:\n"
    "  --inputs       also print the inputs list (generator, dtype, shape) and the\n"
    "                 concrete input shapes\n"
    "  --roundtrip    check that the graph survives the wire format unchanged:\n"
    "                 ToProto -> bytes -> FromProto must print the same IR and give\n"
    "                 the same bytes; exit 1 if not\n"
    "  --out F.pb     write the graph in the wire format (fusiond.v1.FusionGraph)\n"
    "  --max-script-bytes N  refuse a FILE larger than N bytes before reading it\n"
    "                 (default and most: 16 MiB)\n"
    "  --help         this text\n"
    "\n"
    "Errors are printed to stderr as FILE:LINE:COLUMN: what; expected ...\n"
    "exit codes: 0 ok, 2 bad input, 1 internal error.\n";

std::string Shape(const std::vector<int64_t>& s) {
  return absl::StrCat("[", absl::StrJoin(s, ", "), "]");
}

absl::Status CheckRoundTrip(const Graph& g) {
  const std::string text = PrintGraph(g);
  std::string bytes;
  if (!ToProto(g).SerializeToString(&bytes))
    return absl::InternalError("ToProto: cannot serialize");
  fusiond::v1::FusionGraph parsed;
  if (!parsed.ParseFromString(bytes)) return absl::InternalError("cannot parse our own bytes");
  auto back = FromProto(parsed);
  if (!back.ok()) {
    return absl::InternalError(
        absl::StrCat("FromProto rejects our own graph: ", std::string(back.status().message())));
  }
  if (PrintGraph(*back) != text) {
    return absl::InternalError(
        absl::StrCat("round trip changed the IR; after it:\n", PrintGraph(*back)));
  }
  std::string again;
  ToProto(*back).SerializeToString(&again);
  if (again != bytes) return absl::InternalError("round trip changed the wire bytes");
  return absl::OkStatus();
}

int RunParse(const std::vector<std::string>& args) {
  auto flags = ParseFlags(
      args, {{"inputs", false}, {"roundtrip", false}, {"out", true}, ScriptBytesFlagSpec()});
  if (!flags.ok()) return ReportError("parse", flags.status());
  if (flags->help) {
    std::fputs(kParseUsage, stdout);
    return kExitOk;
  }
  if (flags->positional.size() != 1) {
    std::fputs(kParseUsage, stderr);
    return ReportError("parse", absl::InvalidArgumentError(absl::StrCat("expected one FILE, got ",
                                                                        flags->positional.size())));
  }
  auto parsed = ParseScriptFile(*flags, flags->positional[0]);
  if (!parsed.ok()) return ReportError("parse", parsed.status());
  std::string out = PrintGraph(parsed->graph);
  if (flags->Has("inputs")) {
    for (size_t i = 0; i < parsed->inputs.size(); ++i) {
      const InputSpec& s = parsed->inputs[i];
      absl::StrAppend(&out, "# input ", i, ": ", s.generator, " ", DataTypeName(s.dtype),
                      Shape(s.shape));
      if (s.scale != 1 || s.offset != 0) absl::StrAppend(&out, " * ", s.scale, " + ", s.offset);
      if (s.generator == "full" || s.generator == "scalar")
        absl::StrAppend(&out, " value=", s.value);
      if (s.generator == "softmax") absl::StrAppend(&out, " dim=", s.softmax_dim);
      absl::StrAppend(&out, "\n");
    }
    std::vector<std::string> shapes;
    for (const auto& s : parsed->input_shapes) shapes.push_back(Shape(s));
    absl::StrAppend(&out, "# input shapes: ",
                    parsed->input_shapes.empty() ? "unknown (symbolic, no inputs list)"
                                                 : absl::StrJoin(shapes, " "),
                    "\n");
  }
  std::fputs(out.c_str(), stdout);
  if (flags->Has("roundtrip")) {
    if (absl::Status s = CheckRoundTrip(parsed->graph); !s.ok()) return ReportError("parse", s);
    std::fputs("# roundtrip ok\n", stdout);
  }
  if (auto path = flags->Get("out")) {
    std::ofstream f(*path, std::ios::binary);
    if (!f || !ToProto(parsed->graph).SerializeToOstream(&f)) {
      return ReportError("parse", absl::InvalidArgumentError(absl::StrCat("cannot write ", *path)));
    }
  }
  return kExitOk;
}

}  // namespace

FUSIONC_COMMAND(parse, "parse a repro script and print its IR", kParseUsage, RunParse);

}  // namespace fusionc
}  // namespace fusiond
