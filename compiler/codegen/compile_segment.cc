#include "compiler/codegen/compile_segment.h"

#include <chrono>

#include "compiler/codegen/codegen.h"
#include "compiler/codegen/manifest.h"
#include "compiler/nvrtc/nvrtc_compiler.h"

namespace fusiond {

absl::StatusOr<KernelArtifact> CompileSegment(const Graph& g, const HeuristicParams& params,
                                              const SegmentCompileOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  CodegenOptions co;
  co.kernel_name = options.kernel_name;
  co.sm_count = options.sm_count;
  auto k = GenerateKernel(g, params, co);
  if (!k.ok()) return k.status();
  KernelArtifact a;
  a.kernel_name = k->name;
  a.cuda_source = k->source;
  a.arch = options.arch;
  a.codegen_micros =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  NvrtcOptions no;
  no.arch = options.arch;
  auto bin = CompileWithNvrtc(k->source, k->name, no);
  if (!bin.ok() && !absl::IsUnavailable(bin.status())) return bin.status();
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
  a.manifest_json = KernelManifestJson(*k, file, a.registers, a.static_smem_bytes, options.sm_count);
  return a;
}

}  // namespace fusiond
