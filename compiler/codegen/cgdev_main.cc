// fusiond_cgdev: a developer tool for the code generator. Parses a repro
// script, chooses the scheduler and heuristics as the pipeline would (no
// one segment), lets fields be overridden, generates the kernel,
// compiles it with NVRTC and writes DIR/<kernel>.cu, the binary and
// DIR/manifest.json.
//   fusiond_cgdev FILE DIR [field=value ...] [--shape=AxB,C,...]
//   fusiond_cgdev --compile-cu SOURCE.cu KERNEL OUT.cubin
// The second form compiles hand-edited CUDA with the pipeline's NVRTC
// options (bench/gpu/probes/lean_swap.sh) and prints ptxas' figures.
// Fields: kind vectorize block_x block_y grid_x grid_y persistent_batch
// multi_pass unroll smem_buffer smem_bytes cluster_x
// rows_per_block smem_columns reread_rows cluster_rows lanes_in_registers
// online_softmax;
// then code generation's choices, which the heuristics decide from those (DecideKernelForm) unless
// given: one_pass_variance dynamic_rows streaming_stores exact_tiling blocks_per_sm.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "compiler/codegen/codegen.h"
#include "compiler/codegen/compile_segment.h"
#include "compiler/codegen/manifest.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/binding.h"
#include "compiler/nvrtc/nvrtc_compiler.h"
#include "compiler/pipeline.h"
#include "compiler/scheduler/kernel_heuristics.h"  // DecideKernelForm
#include "compiler/scheduler/scheduler.h"          // SchedulerName, Schedulers

using namespace fusiond;

// --compile-cu SOURCE KERNEL OUT: exit 0, 3 when ptxas spilled, 1 on errors.
int CompileCu(const char* source, const char* kernel, const char* out) {
  std::ifstream f(source);
  if (!f) {
    std::cerr << "cannot read " << source << "\n";
    return 1;
  }
  std::stringstream text;
  text << f.rdbuf();
  auto r = CompileWithNvrtc(text.str(), kernel, NvrtcOptions{});
  if (!r.ok()) {
    std::cerr << r.status() << "\n";
    return 1;
  }
  std::ofstream(out, std::ios::binary) << r->binary;
  std::printf("registers %d spill %d smem %d nvrtc_ms %.1f\n", r->registers, r->spill_bytes,
              r->static_smem_bytes, r->micros / 1000.0);
  return r->spill_bytes > 0 ? 3 : 0;
}

namespace {

// The command line of the first form.
struct Args {
  std::string file, dir;
  std::vector<std::vector<int64_t>> shapes;  // empty: the script's
  std::vector<std::string> sets;             // field=value
  bool general = false;
};

int Usage(const char* argv0, bool help) {
  std::fprintf(help ? stdout : stderr,
               "usage: %s FILE DIR [field=value ...] [--shape=AxB,C,...] [--general]\n"
               "       %s --compile-cu SOURCE.cu KERNEL OUT.cubin\n"
               "The first form compiles a repro script's one segment as the pipeline would, with\n"
               "the heuristics' fields overridden, into DIR (<kernel>.cu, .cubin, manifest.json);\n"
               "--shape gives the input sizes (default: the script's); --general keeps the\n"
               "fallback loops (CompileOptions::general_kernels). The second compiles\n"
               "hand-written CUDA with the pipeline's NVRTC options. Fields (numbers, or\n"
               "true/false): kind vectorize block_x block_y grid_x grid_y persistent_batch\n"
               "multi_pass unroll smem_buffer smem_bytes cluster_x rows_per_block smem_columns\n"
               "reread_rows cluster_rows lanes_in_registers online_softmax; code generation's "
               "choices, decided "
               "from those unless given:\n"
               "one_pass_variance dynamic_rows streaming_stores exact_tiling blocks_per_sm.\n",
               argv0, argv0);
  return help ? 0 : 2;
}

// Parses argv[3..] into args; 0, or the exit status of a usage error.
int ParseArgs(int argc, char** argv, Args* args) {
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--general") {
      args->general = true;
    } else if (a.rfind("--shape=", 0) == 0) {
      args->shapes.clear();
      for (auto t : absl::StrSplit(a.substr(8), ',')) {
        std::vector<int64_t> s;
        for (auto d : absl::StrSplit(t, 'x', absl::SkipEmpty())) {
          int64_t n = 0;
          if (!absl::SimpleAtoi(d, &n) || n < 0) {
            std::cerr << "--shape: '" << d << "' in '" << t
                      << "' is not a size (e.g. --shape=2048x8192,8192)\n";
            return 2;
          }
          s.push_back(n);
        }
        args->shapes.push_back(s);
      }
    } else {
      args->sets.push_back(a);
    }
  }
  return 0;
}

// The file's stem, the kernels' and the manifest's name.
std::string Stem(const std::string& file) {
  std::string base = file.substr(file.find_last_of('/') + 1);
  return base.substr(0, base.find('.'));
}

// The product path: passes, segmenter, schedulers, codegen, NVRTC.
int CompileAsThePipeline(const ParsedFusion& parsed, const Args& args) {
  CompileOptions options;
  options.general_kernels = args.general;
  auto r = CompileFusion(parsed.graph, args.shapes, options);
  if (!r.ok()) {
    std::cerr << r.status() << "\n";
    return 1;
  }
  if (absl::Status s = WriteArtifacts(*r, args.dir, Stem(args.file)); !s.ok()) {
    std::cerr << s << "\n";
    return 1;
  }
  int spill = 0;
  for (const SegmentResult& seg : r->segments) {
    std::cerr << seg.params.ToString() << "\n";
    std::cerr << "registers " << seg.kernel->registers << " spill " << seg.kernel->spill_bytes
              << " stages_us";
    for (const auto& [k, v] : r->stage_micros) std::cerr << " " << k << "=" << v;
    std::cerr << "\n";
    spill += seg.kernel->spill_bytes;
  }
  return spill > 0 ? 3 : 0;
}

// Applies one field=value to hp: `derived` selects code generation's choices
// (applied after DecideKernelForm), else the heuristics' own fields. Returns
// 0, 2 on a bad value or an unknown field, or -1 when the field belongs to
// the other group.
int SetField(const std::string& k, const std::string& value, bool derived, HeuristicParams& hp) {
  static const char* const kDerived[] = {"one_pass_variance", "dynamic_rows", "streaming_stores",
                                         "exact_tiling", "blocks_per_sm"};
  bool is_derived = false;
  for (const char* d : kDerived) is_derived |= k == d;
  if (is_derived != derived) return -1;
  // Numbers, or true/false for the flags.
  int64_t v = 0;
  bool flag = false;
  if (k != "kind" && !absl::SimpleAtoi(value, &v)) {
    if (!absl::SimpleAtob(value, &flag)) {
      std::cerr << "field " << k << ": '" << value << "' is neither a number nor true/false\n";
      return 2;
    }
    v = flag ? 1 : 0;
  }
  if (k == "kind") {
    for (const Scheduler* sc : Schedulers()) {
      if (SchedulerName(sc->kind()) == value) {
        hp.kind = sc->kind();
        return 0;
      }
    }
    std::cerr << "kind: unknown scheduler '" << value << "'\n";
    return 2;
  }
  const std::pair<const char*, int*> ints[] = {
      {"vectorize", &hp.vectorize}, {"block_x", &hp.block_x},
      {"block_y", &hp.block_y},     {"persistent_batch", &hp.persistent_batch},
      {"unroll", &hp.unroll},       {"rows_per_block", &hp.rows_per_block},
      {"cluster_x", &hp.cluster_x}, {"blocks_per_sm", &hp.blocks_per_sm}};
  const std::pair<const char*, int64_t*> longs[] = {
      {"grid_x", &hp.grid_x}, {"grid_y", &hp.grid_y}, {"smem_bytes", &hp.smem_bytes}};
  const std::pair<const char*, bool*> flags[] = {{"multi_pass", &hp.multi_pass},
                                                 {"smem_buffer", &hp.smem_buffer},
                                                 {"smem_columns", &hp.smem_columns},
                                                 {"reread_rows", &hp.reread_rows},
                                                 {"lanes_in_registers", &hp.lanes_in_registers},
                                                 {"cluster_rows", &hp.cluster_rows},
                                                 {"online_softmax", &hp.online_softmax},
                                                 {"trust_alignment", &hp.trust_alignment},
                                                 {"one_pass_variance", &hp.one_pass_variance},
                                                 {"dynamic_rows", &hp.dynamic_rows},
                                                 {"streaming_stores", &hp.streaming_stores},
                                                 {"exact_tiling", &hp.exact_tiling}};
  for (const auto& [name, field] : ints) {
    if (k == name) return *field = static_cast<int>(v), 0;
  }
  for (const auto& [name, field] : longs) {
    if (k == name) return *field = v, 0;
  }
  for (const auto& [name, field] : flags) {
    if (k == name) return *field = v != 0, 0;
  }
  std::cerr << "unknown field " << k << "\n";
  return 2;
}

// The overrides in two rounds: the heuristics' fields, code generation's
// choices decided from them, then the choices given. 0 or the exit status.
int ApplyOverrides(const std::vector<std::string>& sets, const SegmentResult& seg,
                   HeuristicParams& hp) {
  for (bool derived : {false, true}) {
    if (derived) {
      SizeBinding binding{seg.symbol_sizes};
      DecideKernelForm(AnalyzeFusion(seg.graph, binding), DefaultTarget(), &hp);
    }
    for (const std::string& s : sets) {
      std::vector<std::string> kv = absl::StrSplit(s, '=');
      if (kv.size() != 2) {
        std::cerr << "'" << s << "': expected field=value\n";
        return 2;
      }
      if (int rc = SetField(kv[0], kv[1], derived, hp); rc > 0) return rc;
    }
  }
  return 0;
}

// The one segment with the heuristics' fields overridden, through the
// pipeline's own codegen + NVRTC step (CompileSegment), so a variant is what
// the product would build with these parameters.
int CompileVariant(const ParsedFusion& parsed, const Args& args) {
  CompileOptions copt;
  copt.generate_code = false;
  auto planned = CompileFusion(parsed.graph, args.shapes, copt);
  if (!planned.ok()) {
    std::cerr << planned.status() << "\n";
    return 1;
  }
  if (planned->segments.size() != 1) {
    std::cerr << "overrides need a one-segment fusion; this one has " << planned->segments.size()
              << "\n";
    return 1;
  }
  CompileResult r = *std::move(planned);
  SegmentResult& seg = r.segments[0];
  HeuristicParams hp = seg.params;
  if (int rc = ApplyOverrides(args.sets, seg, hp); rc != 0) return rc;
  std::cerr << "scheduler: " << seg.scheduler_reason << "\nparams: " << hp.ToString() << "\n";
  const std::string base = Stem(args.file);
  SegmentCompileOptions so;
  so.kernel_name = "fz_" + base;
  so.specialize = !args.general;
  so.symbol_sizes = seg.symbol_sizes;
  auto art = CompileSegment(seg.graph, hp, so);
  if (!art.ok()) {
    std::cerr << art.status() << "\n";
    return 1;
  }
  if (art->binary.empty()) {
    std::cerr << "no NVRTC in this build\n";
    return 1;
  }
  std::error_code ec;
  std::filesystem::create_directories(args.dir, ec);
  if (ec) {
    std::cerr << "cannot create " << args.dir << ": " << ec.message() << "\n";
    return 1;
  }
  std::ofstream(args.dir + "/" + so.kernel_name + ".cu") << art->cuda_source;
  const std::string file = so.kernel_name + (art->is_ptx ? ".ptx" : ".cubin");
  std::ofstream(args.dir + "/" + file, std::ios::binary) << art->binary;
  seg.kind = hp.kind;
  seg.params = hp;
  seg.kernel = *art;
  std::ofstream(args.dir + "/manifest.json") << FusionManifestJson(r, base);
  std::cerr << "registers " << art->registers << " spill " << art->spill_bytes << " smem "
            << art->static_smem_bytes << " nvrtc_ms " << art->nvrtc_micros / 1000 << "\n";
  return art->spill_bytes > 0 ? 3 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "--compile-cu")
    return CompileCu(argv[2], argv[3], argv[4]);
  if (argc < 3) {
    return Usage(argv[0],
                 argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h"));
  }
  Args args;
  args.file = argv[1];
  args.dir = argv[2];
  auto parsed = ParseReproFile(args.file);
  if (!parsed.ok()) {
    std::cerr << parsed.status() << "\n";
    return 1;
  }
  args.shapes = parsed->input_shapes;
  if (int rc = ParseArgs(argc, argv, &args); rc != 0) return rc;
  auto binding = BindShapes(parsed->graph, args.shapes);
  if (!binding.ok()) {
    std::cerr << binding.status() << "\n";
    return 1;
  }
  return args.sets.empty() ? CompileAsThePipeline(*parsed, args) : CompileVariant(*parsed, args);
}
