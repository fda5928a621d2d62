#include "compiler/codegen/compile_segment.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/codegen.h"
#include "compiler/codegen/manifest.h"
#include "compiler/codegen/prelude.h"
#include "compiler/nvrtc/nvrtc_compiler.h"
#include "compiler/scheduler/target.h"

namespace fusiond {

absl::StatusOr<KernelArtifact> CompileSegment(const Graph& g, const HeuristicParams& params,
                                              const SegmentCompileOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  CodegenOptions co;
  co.kernel_name = options.kernel_name;
  co.target = options.target;
  co.specialize = options.specialize;
  co.symbol_sizes = options.symbol_sizes;
  auto k = GenerateKernel(g, params, co);
  if (!k.ok()) return k.status();
  KernelArtifact a;
  a.kernel_name = k->name;
  a.cuda_source = k->source;
  a.arch = options.target.arch;
  a.codegen_micros =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  NvrtcOptions no;
  no.arch = options.target.arch;
  auto compile = [&](const GeneratedKernel& gk) -> absl::StatusOr<NvrtcOutput> {
    if (options.nvrtc_cache == nullptr) return CompileWithNvrtc(gk.source, gk.name, no);
    bool reused = false;
    auto out = options.nvrtc_cache->Compile(gk.source, gk.name, no, &reused);
    a.nvrtc_reused |= reused;
    return out;
  };
  auto bin = compile(*k);
  if (!bin.ok() && !absl::IsUnavailable(bin.status())) return bin.status();
  // Blocks per SM asked of ptxas rest on a register estimate; when ptxas had
  // to spill to meet it, ask for fewer: four instead of six, two instead of
  // three or four, else one (a cooperative grid then shrinks to the blocks
  // resident, LaunchGrid).
  if (bin.ok() && bin->spill_bytes > 0 && k->min_blocks > 1) {
    co.max_min_blocks = k->min_blocks > 4 ? 4 : k->min_blocks > 2 ? 2 : 1;
    auto k2 = GenerateKernel(g, params, co);
    if (!k2.ok()) return k2.status();
    auto bin2 = compile(*k2);
    if (!bin2.ok()) return bin2.status();
    bin2->micros += bin->micros;
    k = std::move(k2);
    bin = std::move(bin2);
    a.cuda_source = k->source;
  }
  // A block's shared memory is what the kernel declares (ptxas' report) plus
  // the dynamic part it asks for at launch; over the target's per-block
  // maximum every launch would fail, so the compile does instead.
  const Target& target = options.target;
  if (bin.ok() && bin->static_smem_bytes + k->dynamic_smem_bytes > target.smem_per_block) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel ", k->name, " needs ", bin->static_smem_bytes, " bytes of static and ",
                     k->dynamic_smem_bytes, " of dynamic shared memory a block, over the ",
                     target.smem_per_block, " a block may use on ", target.arch,
                     " (heuristics: ", params.ToString(), ")"));
  }
  std::string file = k->name + ".cubin";
  if (bin.ok()) {
    a.binary = std::move(bin->binary);
    a.is_ptx = bin->is_ptx;
    a.arch = bin->arch;
    a.compile_options = bin->options;
    a.registers = bin->registers;
    a.spill_bytes = bin->spill_bytes;
    a.static_smem_bytes = bin->static_smem_bytes;
    a.nvrtc_micros = bin->micros;
    if (a.is_ptx) file = k->name + ".ptx";
  }
  a.manifest_json = KernelManifestJson(*k, file, a.registers, a.static_smem_bytes, options.target);
  return a;
}

absl::StatusOr<double> WarmUpNvrtc(const std::string& arch) {
  const std::string src = std::string(DevicePrelude()) +
                          "\nextern \"C\" __global__ void fz_warmup(float* p) {\n"
                          "  p[threadIdx.x] = fz_warp_reduce<0, float>(p[threadIdx.x]);\n}\n";
  NvrtcOptions no;
  no.arch = arch;
  auto out = CompileWithNvrtc(src, "fz_warmup", no);
  if (!out.ok()) return out.status();
  // Later compiles find their memory mapped (32 MiB: the corpus kernels
  // fault in at most ~16 MiB; mapping it costs ~20 ms of CPU on the dev VM).
  return out->micros + KeepNvrtcHeap(size_t{32} << 20);
}

}  // namespace fusiond
