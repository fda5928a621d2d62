// `fusionc compile FILE`: runs the compile pipeline (compiler/pipeline.h) on
// a repro script and prints what it decided: passes, segments, schedulers
// and every heuristic parameter (--explain), or the same as one JSON object
// (--json).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/fusionc/commands.h"
#include "client/fusionc/flags.h"
#include "client/fusionc/script_input.h"
#include "compiler/codegen/manifest.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/printer.h"
#include "compiler/passes/optimize.h"
#include "compiler/pipeline.h"
#include "compiler/scheduler/target.h"
#ifdef FUSIONC_WITH_CACHE
#include "client/fusionc/compile_cached.h"
#endif

namespace fusiond {
namespace fusionc {
namespace {

constexpr char kCompileUsage[] =
    "usage: fusionc compile FILE [--arch sm_90] [--shapes S] [--json] [--explain]\n"
    "                            [--dump PASS|all] [--allow-precision-increase] [--general]\n"
    "                            [--no-codegen] [--emit-cuda] [--out DIR]\n"
    "                            [--server HOST:PORT [--source] | --cache-dir DIR\n"
    "                             [--redis HOST:PORT] | --no-cache]\n"
    "\n"
    "Parses the repro script FILE and runs the compile pipeline at the script's\n"
    "input sizes (--shapes, else the trailing `inputs = [...]` list, else the\n"
    "static sizes):\n"
    "verify, optimization passes, segmentation, scheduling (heuristics), and\n"
    "code generation + NVRTC where this build has them.\n"
    "\n"
    "Where the kernels come from: by default the embedded kernel cache (RocksDB in\n"
    "--cache-dir, default $FUSIOND_CACHE_DIR, else $XDG_CACHE_HOME/fusiond, else\n"
    "~/.cache/fusiond): a hit is served without compiling. With --server the\n"
    "daemon compiles and caches; the report is the same. --explain, --dump,\n"
    "--emit-cuda and --no-codegen need the pipeline's full result and compile\n"
    "in-process without the cache, as does --no-cache.\n"
    "\n"
    "flags:\n"
    "  --arch A                    target architecture: sm_80, sm_86, sm_89, sm_90,\n"
    "                              sm_100 (default sm_90)\n"
    "  --shapes S                  compile for these input shapes instead of the\n"
    "                              inputs list (the heuristics depend on them): one\n"
    "                              entry per input, ';' between inputs, 'x' between\n"
    "                              sizes, 'scalar' for a scalar input, e.g.\n"
    "                              --shapes '512x65536;512x1;512x65536;65536'\n"
    "  --explain                   print the passes applied (with timings and notes),\n"
    "                              every segment with its scheduler and why, every\n"
    "                              heuristic parameter, and the optimized IR\n"
    "  --json                      print the same as one JSON object:\n"
    "                              {\"canonical_hash\", \"passes\":[...], \"segments\":\n"
    "                              [{\"scheduler\", \"heuristics\":{...}, ...}], ...}\n"
    "  --dump PASS|all             print the IR after PASS (or every pass) when it\n"
    "                              changed the graph; passes: constant_folding,\n"
    "                              algebra, pow_constant, cast_chains,\n"
    "                              trivial_reductions, shape_chains, cse, dce\n"
    "  --allow-precision-increase  also remove narrowing cast round trips\n"
    "                              (f32->bf16->f32); the report says so\n"
    "  --general                   kernels that run at every shape and alignment\n"
    "                              (persistent kernels keep their fallback loops;\n"
    "                              compiles ~1.4x slower). By default a kernel is\n"
    "                              for the shapes compiled for: its manifest says\n"
    "                              which (`requires`), and the runtime refuses others\n"
    "  --no-codegen                stop after scheduling (no CUDA source, no NVRTC)\n"
    "  --emit-cuda                 print every kernel's generated CUDA C++\n"
    "  --out DIR                   write DIR/manifest.json and one cubin (or PTX)\n"
    "                              per kernel (docs/manifest.md), plus the .cu\n"
    "                              (with --server: when --source asks for it)\n"
    "  --server HOST:PORT          compile through a fusiond daemon; its reply holds\n"
    "                              what a launch needs (cubins, manifests), plus the\n"
    "                              report when --json prints it\n"
    "  --source                    with --server: also fetch each kernel's CUDA C++\n"
    "                              (written to --out DIR as .cu; the embedded cache\n"
    "                              always has it)\n"
    "  --cache-dir DIR             the embedded kernel cache's directory\n"
    "  --redis HOST:PORT           behind the embedded cache, the cluster's shared\n"
    "                              tier (a local miss asks it before compiling; a\n"
    "                              compile is published to it)\n"
    "  --no-cache                  compile in-process, without any cache\n"
    "  --max-graph-nodes N         compile limits (0 = none; past one the compile is\n"
    "  --max-graph-depth N         refused with the limit's name, exit 2): nodes\n"
    "  --max-kernel-ops N          (default 100000), longest chain (2000), nodes of\n"
    "  --max-partition-nodes N     one kernel (500), compute nodes the segmenter\n"
    "                              splits (1000); with --server the daemon's apply\n"
    "  --max-kernel-params N       parameters of one kernel: inputs, outputs and\n"
    "                              symbolic sizes (640; 0 = none)\n"
    "  --max-script-bytes N        refuse a FILE larger than N bytes before reading\n"
    "                              it (default and most: 16 MiB)\n"
    "  --help                      this text\n"
    "\n"
    "security (docs/service.md): with --server, --tls-ca FILE (or --tls: system\n"
    "CAs), --tls-cert FILE --tls-key FILE, --tls-server-name NAME, --token-file\n"
    "FILE (env FUSIOND_TLS_CA, _TLS_CERT, _TLS_KEY, _TOKEN_FILE); with --redis,\n"
    "--redis-secret-file FILE (env FUSIOND_REDIS_SECRET_FILE; or\n"
    "--redis-insecure-unsigned, loopback only), --redis-user NAME,\n"
    "--redis-password-file FILE (env FUSIOND_REDIS_PASSWORD)\n"
    "\n"
    "Without --explain or --json: one line per segment and the canonical hash.\n"
    "exit codes: 0 ok, 2 bad input (parse/verify errors, unknown --arch, bad\n"
    "flags), 1 internal error.\n";

std::string Explain(const CompileResult& r, const std::string& arch) {
  std::string out = absl::StrCat("fusion ", r.canonical_hash, " for ", arch, "\n\npasses:\n");
  for (const PassRecord& p : r.passes) {
    if (!p.changed && p.notes.empty()) continue;
    absl::StrAppend(&out, absl::StrFormat("  %-20s %s %8.1f us\n", p.name,
                                          p.changed ? "changed" : "kept   ", p.micros));
    for (const std::string& n : p.notes) absl::StrAppend(&out, "    note: ", n, "\n");
  }
  int unchanged = 0;
  double total = 0;
  for (const PassRecord& p : r.passes) {
    unchanged += !p.changed;
    total += p.micros;
  }
  absl::StrAppend(&out, absl::StrFormat("  (%d pass runs, %d without change, %.1f us in all)\n",
                                        r.passes.size(), unchanged, total));
  absl::StrAppend(&out, "\nsegments: ", r.segments.size(), "\n");
  for (size_t i = 0; i < r.segments.size(); ++i) {
    const SegmentResult& s = r.segments[i];
    absl::StrAppend(&out, "  segment ", i, ": ", SchedulerName(s.kind),
                    "\n    why: ", s.scheduler_reason, "\n");
    if (!s.boundary_reason.empty())
      absl::StrAppend(&out, "    boundary: ", s.boundary_reason, "\n");
    absl::StrAppend(&out, "    inputs ", s.graph.inputs.size(), ", outputs ",
                    s.graph.outputs.size(), "\n");
    absl::StrAppend(&out, "    heuristics (hash ", absl::StrFormat("%016x", s.params.Hash()),
                    "):\n");
    for (absl::string_view field : absl::StrSplit(s.params.ToString(), ' ')) {
      std::pair<std::string, std::string> kv = absl::StrSplit(field, absl::MaxSplits('=', 1));
      absl::StrAppend(&out, absl::StrFormat("      %-18s %s\n", kv.first, kv.second));
    }
  }
  absl::StrAppend(&out, "\nstages (us):");
  for (const auto& [stage, micros] : r.stage_micros) {
    absl::StrAppend(&out, absl::StrFormat(" %s=%.1f", stage, micros));
  }
  absl::StrAppend(&out, "\n\noptimized IR:\n", PrintGraph(r.optimized));
  return out;
}

#ifdef FUSIONC_WITH_CACHE
// The embedded cache or the daemon (compile_cached.h).
int RunCachedCompile(const ParsedFlags& flags, const ParsedFusion& parsed,
                     const CompileOptions& options) {
  absl::StatusOr<CachedCompile> compiled = absl::UnknownError("");
  if (flags.Has("server")) {
    absl::StatusOr<FusionClientOptions> client_options = ClientOptionsFromFlags(flags);
    if (!client_options.ok()) return ReportError("compile", client_options.status());
    ReplyContents contents;
    contents.source = flags.Has("source");
    contents.report = flags.Has("json");
    compiled = CompileRemote(parsed, options, *flags.Get("server"), *client_options, contents);
  } else {
    compiled = CompileEmbedded(parsed, options, flags.Get("cache-dir").value_or(""),
                               RedisFlagsFrom(flags));
  }
  if (!compiled.ok()) return ReportError("compile", compiled.status());
  if (auto dir = flags.Get("out"); dir.has_value()) {
    if (absl::Status s = WriteCachedArtifacts(*compiled, *dir); !s.ok()) {
      return ReportError("compile", s);
    }
  }
  std::string out =
      flags.Has("json") ? CachedReportJson(*compiled) + "\n" : CachedSummary(*compiled);
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}
#endif

int RunCompileCommand(const std::vector<std::string>& args) {
  std::vector<FlagSpec> specs = {
      {"arch", true},     {"shapes", true},      {"json", false},
      {"explain", false}, {"dump", true},        {"allow-precision-increase", false},
      {"general", false}, {"no-codegen", false}, {"emit-cuda", false},
      {"out", true},      {"server", true},      {"cache-dir", true},
      {"redis", true},    {"no-cache", false},   {"source", false}};
  for (const FlagSpec& spec : LimitFlagSpecs()) specs.push_back(spec);
#ifdef FUSIONC_WITH_CACHE
  for (const FlagSpec& spec : SecurityFlagSpecs()) specs.push_back(spec);
#endif
  auto flags = ParseFlags(args, specs);
  if (!flags.ok()) return ReportError("compile", flags.status());
  if (flags->help) {
    std::fputs(kCompileUsage, stdout);
    return kExitOk;
  }
  if (flags->positional.size() != 1) {
    std::fputs(kCompileUsage, stderr);
    return ReportError("compile", absl::InvalidArgumentError(absl::StrCat(
                                      "expected one FILE, got ", flags->positional.size())));
  }
  CompileOptions options;
  options.arch = flags->Get("arch").value_or("sm_90");
  options.allow_precision_increase = flags->Has("allow-precision-increase");
  options.general_kernels = flags->Has("general");
  options.dump_pass = flags->Get("dump").value_or("");
  options.generate_code = !flags->Has("no-codegen");
  if (auto t = LookupTarget(options.arch); !t.ok()) return ReportError("compile", t.status());
  if (absl::Status s = ApplyLimitFlags(*flags, &options.limits); !s.ok()) {
    return ReportError("compile", s);
  }
  if (flags->Has("server") && LimitFlagGiven(*flags)) {
    return ReportError("compile", absl::InvalidArgumentError(
                                      "--max-graph-nodes, --max-graph-depth, --max-kernel-ops, "
                                      "--max-partition-nodes and --max-kernel-params bound a "
                                      "compile here; with --server "
                                      "the daemon's own apply (fusiond --max-graph-depth, ...)"));
  }
  if (!options.dump_pass.empty() && options.dump_pass != "all") {
    std::vector<std::string> names;
    for (const NamedPass& p : OptimizationPasses()) names.push_back(p.name);
    if (std::find(names.begin(), names.end(), options.dump_pass) == names.end()) {
      return ReportError("compile", absl::InvalidArgumentError(absl::StrCat(
                                        "--dump: unknown pass \"", options.dump_pass,
                                        "\"; known: all, ", absl::StrJoin(names, ", "))));
    }
  }
  auto parsed = ParseScriptFile(*flags, flags->positional[0]);
  if (!parsed.ok()) return ReportError("compile", parsed.status());
  if (auto text = flags->Get("shapes")) {
    auto shapes = ParseShapes(*text);
    if (!shapes.ok()) return ReportError("compile", shapes.status());
    parsed->input_shapes = *std::move(shapes);
  }
  const bool needs_full_result = flags->Has("explain") || flags->Has("emit-cuda") ||
                                 !options.dump_pass.empty() || !options.generate_code;
  if (flags->Has("server") && flags->Has("redis")) {
    return ReportError("compile", absl::InvalidArgumentError(
                                      "--redis is the embedded cache's shared tier; with --server "
                                      "the daemon uses its own (fusiond --redis)"));
  }
  if (flags->Has("server") && needs_full_result) {
    return ReportError("compile", absl::InvalidArgumentError(
                                      "--explain, --dump, --emit-cuda and --no-codegen run the "
                                      "pipeline in-process; drop --server for them"));
  }
#ifdef FUSIONC_WITH_CACHE
  if (!needs_full_result && !flags->Has("no-cache")) {
    return RunCachedCompile(*flags, *parsed, options);
  }
#else
  if (flags->Has("server") || flags->Has("cache-dir") || flags->Has("redis")) {
    return ReportError("compile", absl::InvalidArgumentError(
                                      "this fusionc was built without the service "
                                      "(FUSIOND_BUILD_SERVICE=OFF): no --server, --cache-dir "
                                      "or --redis"));
  }
#endif
  auto result = CompileFusion(parsed->graph, parsed->input_shapes, options);
  if (!result.ok()) return ReportError("compile", result.status());

  // Artifacts (compiler/codegen/manifest.h): written before any report.
  if (auto dir = flags->Get("out"); dir.has_value()) {
    std::string name = flags->positional[0];
    name = name.substr(name.find_last_of('/') + 1);
    name = name.substr(0, name.find('.'));
    if (absl::Status s = WriteArtifacts(*result, *dir, name); !s.ok()) {
      return ReportError("compile", s);
    }
  }
  if (flags->Has("emit-cuda")) {
    std::fputs(EmittedCuda(*result).c_str(), stdout);
    return kExitOk;
  }
  if (flags->Has("json")) {
    std::fputs((CompileResultToJson(*result) + "\n").c_str(), stdout);
    return kExitOk;
  }
  std::string out;
  for (const PassRecord& p : result->passes) {
    if (!p.dump.empty()) absl::StrAppend(&out, "// IR after ", p.name, "\n", p.dump, "\n");
  }
  if (flags->Has("explain")) {
    absl::StrAppend(&out, Explain(*result, options.arch));
  } else {
    for (size_t i = 0; i < result->segments.size(); ++i) {
      const SegmentResult& s = result->segments[i];
      absl::StrAppend(&out, "segment ", i, ": ", SchedulerName(s.kind), "  ", s.params.ToString(),
                      "\n");
    }
    absl::StrAppend(&out, "canonical_hash ", result->canonical_hash, "\n");
  }
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

}  // namespace

FUSIONC_COMMAND(compile, "compile a fusion: passes, segments, schedulers, heuristics",
                kCompileUsage, RunCompileCommand);

}  // namespace fusionc
}  // namespace fusiond
