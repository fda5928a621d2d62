#include "cache/result_proto.h"

#include <chrono>

#include "compiler/codegen/manifest.h"
#include "compiler/ir/ir_proto.h"

namespace fusiond {
namespace {

void ParamsToProto(const HeuristicParams& p, fusiond::v1::HeuristicParams* out) {
  out->set_kind(SchedulerName(p.kind));
  out->set_outer_size(p.outer_size);
  out->set_inner_size(p.inner_size);
  out->set_vectorize(p.vectorize);
  out->set_block_x(p.block_x);
  out->set_block_y(p.block_y);
  out->set_grid_x(p.grid_x);
  out->set_grid_y(p.grid_y);
  out->set_persistent_batch(p.persistent_batch);
  out->set_smem_buffer(p.smem_buffer);
  out->set_rows_per_block(p.rows_per_block);
  out->set_grid_reduction(p.grid_reduction);
  out->set_multi_pass(p.multi_pass);
  out->set_unroll(p.unroll);
  out->set_smem_bytes(p.smem_bytes);
  out->set_cluster_x(p.cluster_x);
  out->set_smem_columns(p.smem_columns);
  out->set_reread_rows(p.reread_rows);
  out->set_one_pass_variance(p.one_pass_variance);
  out->set_dynamic_rows(p.dynamic_rows);
  out->set_streaming_stores(p.streaming_stores);
  out->set_exact_tiling(p.exact_tiling);
  out->set_blocks_per_sm(p.blocks_per_sm);
  out->set_hash(p.Hash());
}

void KernelToProto(const KernelArtifact& k, fusiond::v1::Kernel* out) {
  out->set_kernel_name(k.kernel_name);
  out->set_cuda_source(k.cuda_source);
  out->set_binary(k.binary);
  out->set_is_ptx(k.is_ptx);
  out->set_arch(k.arch);
  for (const std::string& o : k.compile_options) out->add_compile_options(o);
  out->set_registers(k.registers);
  out->set_spill_bytes(k.spill_bytes);
  out->set_static_smem_bytes(k.static_smem_bytes);
  out->set_manifest_json(k.manifest_json);
  out->set_codegen_micros(k.codegen_micros);
  out->set_nvrtc_micros(k.nvrtc_micros);
}

}  // namespace

fusiond::v1::CompiledFusion CompiledFusionFromResult(const CompileResult& result) {
  fusiond::v1::CompiledFusion out;
  out.set_canonical_hash(result.canonical_hash);
  for (const PassRecord& p : result.passes) {
    auto* pp = out.add_passes();
    pp->set_name(p.name);
    pp->set_changed(p.changed);
    pp->set_micros(p.micros);
  }
  for (const SegmentResult& s : result.segments) {
    auto* sp = out.add_segments();
    sp->set_graph(ToProto(s.graph).SerializeAsString());
    ParamsToProto(s.params, sp->mutable_params());
    sp->set_scheduler_reason(s.scheduler_reason);
    sp->set_boundary_reason(s.boundary_reason);
    if (s.kernel.has_value()) {
      KernelToProto(*s.kernel, sp->mutable_kernel());
    }
  }
  for (const auto& [stage, micros] : result.stage_micros) {
    (*out.mutable_stage_micros())[stage] = micros;
  }
  out.set_report_json(CompileResultToJson(result));
  bool has_kernels = !result.segments.empty();
  for (const SegmentResult& s : result.segments) has_kernels &= s.kernel.has_value();
  if (has_kernels) {
    out.set_manifest_json(FusionManifestJson(result, "fusion_" + result.canonical_hash));
  }
  out.set_compiled_at_micros(std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count());
  return out;
}

}  // namespace fusiond
