#include "compiler/scheduler/heuristics.h"

#include "absl/strings/str_cat.h"
#include "compiler/util/hash.h"

namespace fusiond {

const char* SchedulerName(SchedulerKind k) {
  switch (k) {
    case SchedulerKind::kPointwise:
      return "pointwise";
    case SchedulerKind::kInnerReduction:
      return "inner_reduction";
    case SchedulerKind::kOuterReduction:
      return "outer_reduction";
    case SchedulerKind::kInnerPersistent:
      return "inner_persistent";
    case SchedulerKind::kOuterPersistent:
      return "outer_persistent";
    case SchedulerKind::kInnerOuterPersistent:
      return "inner_outer_persistent";
  }
  return "unknown";
}

std::string HeuristicParams::ToString() const {
  return absl::StrCat(
      "kind=", SchedulerName(kind), " outer_size=", outer_size, " inner_size=", inner_size,
      " vectorize=", vectorize, " block_x=", block_x, " block_y=", block_y, " grid_x=", grid_x,
      " grid_y=", grid_y, " persistent_batch=", persistent_batch,
      " smem_buffer=", smem_buffer ? "true" : "false", " rows_per_block=", rows_per_block,
      " grid_reduction=", grid_reduction ? "true" : "false",
      " multi_pass=", multi_pass ? "true" : "false", " unroll=", unroll, " smem_bytes=", smem_bytes,
      // The later fields only when set, so the hashes of parameters without
      // them stay as they were.
      cluster_x > 1 ? absl::StrCat(" cluster_x=", cluster_x) : std::string(),
      smem_columns ? " smem_columns=true" : "", reread_rows ? " reread_rows=true" : "",
      lanes_in_registers ? " lanes_in_registers=true" : "",
      cluster_rows ? " cluster_rows=true" : "", trust_alignment ? " trust_alignment=true" : "",
      online_softmax ? " online_softmax=true" : "",
      one_pass_variance ? " one_pass_variance=true" : "", dynamic_rows ? " dynamic_rows=true" : "",
      streaming_stores ? " streaming_stores=true" : "", exact_tiling ? " exact_tiling=true" : "",
      blocks_per_sm != 1 ? absl::StrCat(" blocks_per_sm=", blocks_per_sm) : std::string());
}

std::string HeuristicParams::ToJson() const {
  auto b = [](bool v) { return v ? "true" : "false"; };
  return absl::StrCat(
      "{\"kind\":\"", SchedulerName(kind), "\",\"outer_size\":", outer_size,
      ",\"inner_size\":", inner_size, ",\"vectorize\":", vectorize, ",\"block_x\":", block_x,
      ",\"block_y\":", block_y, ",\"grid_x\":", grid_x, ",\"grid_y\":", grid_y,
      ",\"persistent_batch\":", persistent_batch, ",\"smem_buffer\":", b(smem_buffer),
      ",\"rows_per_block\":", rows_per_block, ",\"grid_reduction\":", b(grid_reduction),
      ",\"multi_pass\":", b(multi_pass), ",\"unroll\":", unroll, ",\"smem_bytes\":", smem_bytes,
      ",\"cluster_x\":", cluster_x, ",\"smem_columns\":", b(smem_columns),
      ",\"reread_rows\":", b(reread_rows), ",\"lanes_in_registers\":", b(lanes_in_registers),
      ",\"cluster_rows\":", b(cluster_rows), ",\"trust_alignment\":", b(trust_alignment),
      ",\"one_pass_variance\":", b(one_pass_variance), ",\"dynamic_rows\":", b(dynamic_rows),
      ",\"streaming_stores\":", b(streaming_stores), ",\"exact_tiling\":", b(exact_tiling),
      ",\"blocks_per_sm\":", blocks_per_sm,
      // Only when set, so the manifests of kernels without it stay as they were.
      online_softmax ? ",\"online_softmax\":true" : "", "}");
}

// ToString names every field, so hashing it is a stable field-by-field hash.
uint64_t HeuristicParams::Hash() const { return Fnv1a64(ToString()); }

bool HeuristicParams::operator==(const HeuristicParams& o) const {
  return kind == o.kind && outer_size == o.outer_size && inner_size == o.inner_size &&
         vectorize == o.vectorize && block_x == o.block_x && block_y == o.block_y &&
         grid_x == o.grid_x && grid_y == o.grid_y && persistent_batch == o.persistent_batch &&
         smem_buffer == o.smem_buffer && rows_per_block == o.rows_per_block &&
         grid_reduction == o.grid_reduction && multi_pass == o.multi_pass && unroll == o.unroll &&
         smem_bytes == o.smem_bytes && cluster_x == o.cluster_x && smem_columns == o.smem_columns &&
         reread_rows == o.reread_rows && lanes_in_registers == o.lanes_in_registers &&
         cluster_rows == o.cluster_rows && trust_alignment == o.trust_alignment &&
         one_pass_variance == o.one_pass_variance && dynamic_rows == o.dynamic_rows &&
         streaming_stores == o.streaming_stores && exact_tiling == o.exact_tiling &&
         blocks_per_sm == o.blocks_per_sm && online_softmax == o.online_softmax;
}

}  // namespace fusiond
