// GenerateKernel: one kernel as a short sequence of lowering steps over a
// KernelPlan (Generator::Run): the tensors and parameters, the launch shape
// derived from the heuristics, the kernel's form (staging, clusters,
// specialization, blocks per SM), then the text in the order it appears in
// the source: preludes, signature, index setup, column buffers, row bases,
// the first rows' loads, the row loop (generator_row_loop.cc) and the column
// epilogue (generator_epilogue.cc), and last the launch recipe.
#include "compiler/codegen/codegen.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/codegen/expr_emitter.h"
#include "compiler/codegen/generator.h"
#include "compiler/codegen/kernel_plan.h"
#include "compiler/codegen/online_softmax.h"
#include "compiler/codegen/prelude.h"
#include "compiler/codegen/value_emitter.h"
#include "compiler/ir/reshape_views.h"

namespace fusiond {
namespace codegen_internal {

absl::StatusOr<GeneratedKernel> Generator::Run() {
  GeneratedKernel k;
  k.name = options_.kernel_name;
  k.scheduler = SchedulerName(params_.kind);  // docs/manifest.md's spelling
  DeclareTensors(k);
  if (absl::Status st = PlanLaunchShape(); !st.ok()) return st;
  if (absl::Status st = PlanKernelForm(k); !st.ok()) return st;
  SetUpValueEmitter();
  std::string c = Preludes();
  if (std::any_of(plan_.row_slots.begin(), plan_.row_slots.end(),
                  [](const ReductionSlot& sl) { return sl.online; })) {
    c += OnlineSoftmaxPrelude();
  }
  EmitSignature(k.name, c);
  if (absl::Status st = EmitIndexSetup(c); !st.ok()) return st;
  EmitColumnBuffers(c);
  EmitRowBases(c);
  EmitFirstRows(c);
  if (absl::Status st = EmitRowLoop(c); !st.ok()) return st;
  if (HasColumnReductions()) {
    if (absl::Status st = EmitColumnEpilogue(c); !st.ok()) return st;
  }
  absl::StrAppend(&c, "}\n");
  // Only the prelude pieces this kernel uses: NVRTC parses less, same cubin.
  k.source = TrimDevicePrelude(c);
  FillLaunch(k);
  return k;
}

absl::StatusOr<LaunchShape> Generator::RunToLaunchShape() {
  GeneratedKernel k;
  DeclareTensors(k);
  if (absl::Status st = PlanLaunchShape(); !st.ok()) return st;
  return shape_;
}

// var/var_mean in one stage where the heuristics say so
// (HeuristicParams::one_pass_variance). Lanes kernels (generator_lanes.cc)
// reduce their channels as rows, column sums included.
absl::StatusOr<KernelPlan> PlanKernelFor(const Graph& g, const HeuristicParams& params) {
  return PlanKernel(g, params.kind == SchedulerKind::kPointwise, params.one_pass_variance,
                    LanesKernel(params), params.online_softmax);
}

}  // namespace codegen_internal

absl::StatusOr<GeneratedKernel> GenerateKernel(const Graph& g, const HeuristicParams& params,
                                               const CodegenOptions& options) {
  // Reshapes that are views of an input or an output read and write the
  // buffers in the reshaped shape (compiler/ir/reshape_views.h).
  const bool views = std::any_of(g.nodes.begin(), g.nodes.end(),
                                 [](const Node& n) { return n.op == OpKind::kReshape; });
  const Graph viewed = views ? ResolveReshapeViews(g) : Graph();
  auto plan = codegen_internal::PlanKernelFor(views ? viewed : g, params);
  if (!plan.ok()) return plan.status();
  codegen_internal::Generator gen(*plan, params, options);
  return gen.Run();
}

std::vector<std::string> LaunchGrid(const GeneratedKernel& k, int registers, int static_smem_bytes,
                                    const Target& target) {
  int64_t cap = k.grid_x_cap;
  if (k.cooperative || (k.one_wave && registers > 0)) {
    const int threads = k.block_x * k.block_y;
    int per_sm = target.max_threads_per_sm / threads;
    if (registers > 0) {
      const int regs_per_block = ((registers * 32 + 255) / 256 * 256) * (threads / 32);
      per_sm = std::min(per_sm, target.registers_per_sm / std::max(1, regs_per_block));
    } else {
      per_sm = 1;
    }
    // Shared memory per block: static + dynamic + the 1 KiB the driver reserves.
    const int64_t smem = static_smem_bytes + k.dynamic_smem_bytes;
    if (smem > 0) per_sm = std::min<int64_t>(per_sm, target.smem_per_sm / (smem + 1024));
    per_sm = std::max(1, std::min(per_sm, target.max_blocks_per_sm));
    int64_t y = 1;
    if (k.grid_y_expr.find_first_not_of("0123456789") == std::string::npos)
      y = std::stoll(k.grid_y_expr);
    cap = std::min<int64_t>(cap, std::max<int64_t>(1, per_sm * target.sm_count / y));
  }
  std::string gx =
      absl::StrCat("min(", cap, ", max(1, ceil_div(", k.rows_expr, ", ", k.block_y, ")))");
  // A grid that loops over the rows: as few blocks as give the same rounds,
  // so every block takes the same number of row groups (2048 rows on 264
  // blocks: 256 blocks of 8 rows, not 200 of 8 and 64 of 7). Rmsnorm
  // forward 2048x8192 bf16 24.1 -> 23.1 us, layernorm forward 16384x4096
  // 78.8 -> 77.2 on the H200.
  const bool loops = k.one_wave || (k.cooperative && k.scheduler == "inner_outer_persistent");
  if (loops && k.rows_expr != "1") {
    const std::string groups = absl::StrCat("max(1, ceil_div(", k.rows_expr, ", ", k.block_y, "))");
    gx = absl::StrCat("ceil_div(", groups, ", ceil_div(", groups, ", ", cap, "))");
  }
  if (k.rows_expr == "1") gx = "1";
  if (k.cluster_x > 1) {  // whole clusters, still one wave
    const int64_t whole = std::max<int64_t>(k.cluster_x, cap / k.cluster_x * k.cluster_x);
    gx =
        absl::StrCat("min(", whole, ", ceil_div(", gx, ", ", k.cluster_x, ") * ", k.cluster_x, ")");
  }
  return {gx, k.grid_y_expr, "1"};
}

int EpilogueLanes(int64_t columns, int64_t partials, int64_t blocks, int threads) {
  int best = 16;
  int64_t best_trips = -1;
  for (int lanes = 16; lanes >= 1; lanes /= 2) {
    const int64_t tiles = (std::max<int64_t>(1, columns) + 4 * lanes - 1) / (4 * lanes);
    const int64_t loads = int64_t{kEpilogueLoads} * std::max(1, threads / lanes);
    const int64_t trips = (tiles + blocks - 1) / std::max<int64_t>(1, blocks) *
                          ((std::max<int64_t>(1, partials) + loads - 1) / loads);
    if (best_trips < 0 || trips < best_trips) {
      best = lanes;
      best_trips = trips;
    }
  }
  return best;
}

std::string WorkspaceBytes(const GeneratedKernel& k, const std::string& grid_x) {
  if (!k.needs_workspace) return "";
  return absl::StrCat("(", grid_x, ") * (", k.ws_per_grid_x, ")");
}

}  // namespace fusiond
