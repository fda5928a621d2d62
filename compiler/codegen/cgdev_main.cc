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
// rows_per_block smem_columns reread_rows.
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
#include "compiler/scheduler/scheduler.h"  // SchedulerName, Schedulers

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

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "--compile-cu")
    return CompileCu(argv[2], argv[3], argv[4]);
  if (argc < 3) {
    const bool help =
        argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h");
    std::fprintf(
        help ? stdout : stderr,
        "usage: %s FILE DIR [field=value ...] [--shape=AxB,C,...] [--general]\n"
        "       %s --compile-cu SOURCE.cu KERNEL OUT.cubin\n"
        "The first form compiles a repro script's one segment as the pipeline would, with\n"
        "the heuristics' fields overridden, into DIR (<kernel>.cu, .cubin, manifest.json);\n"
        "--shape gives the input sizes (default: the script's); --general keeps the\n"
        "fallback loops (CompileOptions::general_kernels). The second compiles\n"
        "hand-written CUDA with the pipeline's NVRTC options. Fields (numbers, or\n"
        "true/false): kind vectorize block_x block_y grid_x grid_y persistent_batch\n"
        "multi_pass unroll smem_buffer smem_bytes cluster_x rows_per_block smem_columns\n"
        "reread_rows.\n",
        argv[0], argv[0]);
    return help ? 0 : 2;
  }
  auto parsed = ParseReproFile(argv[1]);
  if (!parsed.ok()) {
    std::cerr << parsed.status() << "\n";
    return 1;
  }
  std::vector<std::vector<int64_t>> shapes = parsed->input_shapes;
  std::vector<std::string> sets;
  bool general = false;
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--general") {
      general = true;
    } else if (a.rfind("--shape=", 0) == 0) {
      shapes.clear();
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
        shapes.push_back(s);
      }
    } else {
      sets.push_back(a);
    }
  }
  auto binding = BindShapes(parsed->graph, shapes);
  if (!binding.ok()) {
    std::cerr << binding.status() << "\n";
    return 1;
  }
  if (sets.empty()) {
    // The product path: passes, segmenter, schedulers, codegen, NVRTC.
    CompileOptions options;
    options.general_kernels = general;
    auto r = CompileFusion(parsed->graph, shapes, options);
    if (!r.ok()) {
      std::cerr << r.status() << "\n";
      return 1;
    }
    std::string base = argv[1];
    base = base.substr(base.find_last_of('/') + 1);
    base = base.substr(0, base.find('.'));
    if (absl::Status s = WriteArtifacts(*r, argv[2], base); !s.ok()) {
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
  // Overrides: the pipeline's passes, segmenter and heuristics, then the
  // fields given on the command line.
  CompileOptions copt;
  copt.generate_code = false;
  auto planned = CompileFusion(parsed->graph, shapes, copt);
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
  for (const std::string& s : sets) {
    std::vector<std::string> kv = absl::StrSplit(s, '=');
    if (kv.size() != 2) {
      std::cerr << "'" << s << "': expected field=value\n";
      return 2;
    }
    const std::string& k = kv[0];
    // Numbers, or true/false for the flags.
    int64_t v = 0;
    bool flag = false;
    if (k != "kind" && !absl::SimpleAtoi(kv[1], &v)) {
      if (!absl::SimpleAtob(kv[1], &flag)) {
        std::cerr << "field " << k << ": '" << kv[1] << "' is neither a number nor true/false\n";
        return 2;
      }
      v = flag ? 1 : 0;
    }
    if (k == "kind") {
      bool known = false;
      for (const Scheduler* sc : Schedulers()) {
        if (SchedulerName(sc->kind()) == kv[1]) hp.kind = sc->kind(), known = true;
      }
      if (!known) {
        std::cerr << "kind: unknown scheduler '" << kv[1] << "'\n";
        return 2;
      }
    } else if (k == "vectorize")
      hp.vectorize = v;
    else if (k == "block_x")
      hp.block_x = v;
    else if (k == "block_y")
      hp.block_y = v;
    else if (k == "grid_x")
      hp.grid_x = v;
    else if (k == "grid_y")
      hp.grid_y = v;
    else if (k == "persistent_batch")
      hp.persistent_batch = v;
    else if (k == "multi_pass")
      hp.multi_pass = v != 0;
    else if (k == "smem_buffer")
      hp.smem_buffer = v != 0;
    else if (k == "unroll")
      hp.unroll = v;
    else if (k == "rows_per_block")
      hp.rows_per_block = v;
    else if (k == "smem_bytes")
      hp.smem_bytes = v;
    else if (k == "cluster_x")
      hp.cluster_x = v;
    else if (k == "smem_columns")
      hp.smem_columns = v != 0;
    else if (k == "reread_rows")
      hp.reread_rows = v != 0;
    else {
      std::cerr << "unknown field " << k << "\n";
      return 2;
    }
  }
  std::cerr << "scheduler: " << seg.scheduler_reason << "\nparams: " << hp.ToString() << "\n";
  std::string base = argv[1];
  base = base.substr(base.find_last_of('/') + 1);
  base = base.substr(0, base.find('.'));
  // The pipeline's own codegen + NVRTC step (CompileSegment), so a variant
  // is what the product would build with these parameters.
  SegmentCompileOptions so;
  so.kernel_name = "fz_" + base;
  so.specialize = !general;
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
  const std::string dir = argv[2];
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::cerr << "cannot create " << dir << ": " << ec.message() << "\n";
    return 1;
  }
  std::ofstream(dir + "/" + so.kernel_name + ".cu") << art->cuda_source;
  const std::string file = so.kernel_name + (art->is_ptx ? ".ptx" : ".cubin");
  std::ofstream(dir + "/" + file, std::ios::binary) << art->binary;
  seg.kind = hp.kind;
  seg.params = hp;
  seg.kernel = *art;
  std::ofstream(dir + "/manifest.json") << FusionManifestJson(r, base);
  std::cerr << "registers " << art->registers << " spill " << art->spill_bytes << " smem "
            << art->static_smem_bytes << " nvrtc_ms " << art->nvrtc_micros / 1000 << "\n";
  return art->spill_bytes > 0 ? 3 : 0;
}
