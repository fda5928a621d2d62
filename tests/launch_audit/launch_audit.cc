#include "tests/launch_audit/launch_audit.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/runtime/launch_plan.h"
#include "compiler/codegen/codegen.h"
#include "compiler/codegen/manifest.h"
#include "compiler/pipeline.h"
#include "compiler/scheduler/target.h"

namespace fusiond {
namespace launch_audit {

bool FusionAudit::HasCliff() const {
  for (const KernelAudit& k : kernels)
    if (k.cliff) return true;
  return false;
}

bool FusionAudit::HasCappedCliff() const {
  for (const KernelAudit& k : kernels)
    if (k.capped) return true;
  return false;
}

namespace {

// The most registers a thread of `k` may hold while `k.min_blocks` blocks of
// it share an SM (its __launch_bounds__), in ptxas' allocation unit of 8.
int LaunchBoundsRegisters(const GeneratedKernel& k, const Target& t) {
  const int threads = std::max(1, k.block_x * k.block_y);
  const int per_thread = t.registers_per_sm / (std::max(1, k.min_blocks) * threads);
  return std::max(8, std::min(t.max_registers_per_thread, per_thread / 8 * 8));
}

// Kernel entries without NVRTC, the way CompileSegment writes them.
absl::Status FillKernelsWithoutNvrtc(const Target& target, const AuditOptions& options,
                                     CompileResult* r) {
  for (size_t i = 0; i < r->segments.size(); ++i) {
    SegmentResult& seg = r->segments[i];
    CodegenOptions co;
    co.kernel_name = absl::StrCat("fusion_", r->canonical_hash.substr(0, 12), "_k", i);
    co.target = target;
    co.specialize = !options.general;
    co.symbol_sizes = seg.symbol_sizes;
    auto k = GenerateKernel(seg.graph, seg.params, co);
    if (!k.ok()) return k.status();
    KernelArtifact a;
    a.kernel_name = k->name;
    a.arch = target.arch;
    a.registers = LaunchBoundsRegisters(*k, target);
    a.manifest_json =
        KernelManifestJson(*k, k->name + ".cubin", a.registers, /*static_smem_bytes=*/0, target);
    seg.kernel = a;
  }
  return absl::OkStatus();
}

// The manifest with every grid x cap ("grid": ["min(CAP, ...") lifted to
// CUDA's limit, for telling capped cliffs from structural ones.
std::string WithoutGridCaps(std::string json) {
  const std::string key = "\"grid\": [\"min(";
  for (size_t p = json.find(key); p != std::string::npos; p = json.find(key, p + 1)) {
    const size_t begin = p + key.size();
    size_t end = begin;
    while (end < json.size() && std::isdigit(static_cast<unsigned char>(json[end]))) ++end;
    if (end > begin && end < json.size() && json[end] == ',')
      json.replace(begin, end - begin, "2147483647");
  }
  return json;
}

}  // namespace

absl::StatusOr<CompiledManifest> CompileManifest(const Graph& graph, const Shapes& shapes,
                                                 const AuditOptions& options) {
  auto target = LookupTarget(options.arch);
  if (!target.ok()) return target.status();
  CompileOptions co;
  co.arch = options.arch;
  co.general_kernels = options.general;
  co.generate_code = options.nvrtc;
  co.kernel_threads = 1;
  auto r = CompileFusion(graph, shapes, co);
  if (!r.ok()) return r.status();
  CompiledManifest c;
  c.result = *std::move(r);
  if (!options.nvrtc) {
    if (absl::Status s = FillKernelsWithoutNvrtc(*target, options, &c.result); !s.ok()) return s;
  }
  c.json = FusionManifestJson(c.result, "audit");
  auto m = runtime::ParseManifest(c.json);
  if (!m.ok()) return m.status();
  c.manifest = *std::move(m);
  return c;
}

absl::StatusOr<std::vector<KernelAudit>> AuditLaunch(const CompiledManifest& c,
                                                     const Shapes& launch_shapes,
                                                     const AuditOptions& options) {
  auto target = LookupTarget(options.arch);
  if (!target.ok()) return target.status();
  const runtime::Manifest& m = c.manifest;
  auto plan = runtime::PlanLaunch(
      m, std::vector<runtime::Shape>(launch_shapes.begin(), launch_shapes.end()));
  if (!plan.ok()) return plan.status();
  auto tensor_bytes = [&](const runtime::ManifestTensor& t, const runtime::Shape& s) {
    return t.scalar ? 0 : runtime::NumElements(s) * runtime::ElementSize(t.dtype);
  };
  std::vector<KernelAudit> out;
  for (const runtime::KernelLaunch& l : plan->launches) {
    const runtime::ManifestKernel& mk = m.kernels[l.kernel];
    KernelAudit a;
    a.name = mk.name;
    a.scheduler = mk.scheduler;
    if (l.kernel < static_cast<int>(c.result.segments.size()))
      a.params = c.result.segments[l.kernel].params.ToString();
    a.cooperative = mk.cooperative;
    std::copy(l.grid, l.grid + 3, a.grid);
    std::copy(l.block, l.block + 3, a.block);
    a.smem_bytes = l.smem_bytes;
    a.blocks = int64_t{l.grid[0]} * l.grid[1] * l.grid[2];
    a.threads = int64_t{l.block[0]} * l.block[1] * l.block[2];
    a.resident_threads = std::min<int64_t>(a.blocks * a.threads,
                                           int64_t{target->sm_count} * target->max_threads_per_sm);
    std::set<std::pair<int, int>> seen;  // (kind, index): a tensor bound twice moves once
    for (const runtime::KernelParam& p : mk.params) {
      if (!seen.insert({static_cast<int>(p.kind), p.index}).second) continue;
      if (p.kind == runtime::KernelParam::Kind::kInput)
        a.bytes += tensor_bytes(m.inputs[p.index], launch_shapes[p.index]);
      if (p.kind == runtime::KernelParam::Kind::kOutput)
        a.bytes += tensor_bytes(m.outputs[p.index], plan->output_shapes[p.index]);
      if (p.kind == runtime::KernelParam::Kind::kIntermediate)
        a.bytes += tensor_bytes(m.intermediates[p.index], plan->intermediate_shapes[p.index]);
    }
    // The rule, for kernels that stream at least min_bytes: a block on
    // fewer than half the SMs (the rest idle for the whole run; an SM would
    // need more than twice its share of the bandwidth to make up for them),
    // or fewer than four warps an SM (too few loads in flight to cover the
    // memory latency). Cooperative and looping grids are sized to the blocks
    // resident and balanced so every block takes the same rows (LaunchGrid:
    // 133 rows on a cap of 132 run as 67 blocks of two), so they pass unless
    // their rows are few.
    const int64_t sms = target->sm_count;
    if (a.bytes >= options.min_bytes && 2 * a.blocks < sms) {
      a.cliff = true;
      a.why = absl::StrCat(a.blocks, " blocks for ", a.bytes >> 20, " MiB on ", sms, " SMs");
    } else if (a.bytes >= options.min_bytes && a.resident_threads < sms * 4 * target->warp_size) {
      a.cliff = true;
      a.why =
          absl::StrCat(a.resident_threads, " threads for ", a.bytes >> 20, " MiB on ", sms, " SMs");
    }
    out.push_back(std::move(a));
  }
  // Capped: the cliff's kernel launches more blocks with its cap lifted.
  bool any = false;
  for (const KernelAudit& a : out) any |= a.cliff && !a.cooperative;
  if (any) {
    auto lifted = runtime::ParseManifest(WithoutGridCaps(c.json));
    if (!lifted.ok()) return lifted.status();
    auto uncapped = runtime::PlanLaunch(
        *lifted, std::vector<runtime::Shape>(launch_shapes.begin(), launch_shapes.end()));
    if (!uncapped.ok()) return uncapped.status();
    for (size_t i = 0; i < out.size(); ++i) {
      const runtime::KernelLaunch& l = uncapped->launches[i];
      out[i].capped = out[i].cliff && !out[i].cooperative &&
                      int64_t{l.grid[0]} * l.grid[1] * l.grid[2] > out[i].blocks;
    }
  }
  return out;
}

FusionAudit AuditFusion(const std::string& label, const Graph& graph, const Shapes& compile_shapes,
                        const Shapes& launch_shapes, const AuditOptions& options) {
  FusionAudit a;
  a.label = label;
  a.compile_shapes = compile_shapes;
  a.launch_shapes = launch_shapes;
  auto c = CompileManifest(graph, compile_shapes, options);
  if (!c.ok()) {
    a.status = c.status();
    return a;
  }
  auto k = AuditLaunch(*c, launch_shapes, options);
  if (!k.ok()) {
    a.status = k.status();
    return a;
  }
  a.kernels = *std::move(k);
  return a;
}

bool IsSymbolic(const Graph& graph) {
  for (ValueId in : graph.inputs)
    for (const Extent& e : graph.value(in).shape)
      if (!graph.Canonical(e).is_static()) return true;
  return false;
}

Shapes ScaledShapes(const Graph& graph, const Shapes& own, const std::vector<int64_t>& target) {
  if (own.size() != graph.inputs.size()) return {};
  auto symbol_of = [&](size_t i, size_t a) {
    return graph.Canonical(graph.value(graph.inputs[i]).shape[a]);
  };
  int ref = -1;
  for (size_t i = 0; i < graph.inputs.size() && ref < 0; ++i) {
    const std::vector<Extent>& shape = graph.value(graph.inputs[i]).shape;
    if (shape.size() != target.size() || own[i].size() != shape.size()) continue;
    bool all = true;
    std::set<SymbolId> distinct;
    for (size_t a = 0; a < shape.size(); ++a) {
      all &= !symbol_of(i, a).is_static();
      distinct.insert(symbol_of(i, a).symbol);
    }
    if (all && distinct.size() == shape.size()) ref = static_cast<int>(i);
  }
  if (ref < 0) return {};
  std::map<SymbolId, int64_t> by_symbol;
  std::map<int64_t, int64_t> by_size;  // own size -> new size, for symbols off the reference
  for (size_t a = 0; a < target.size(); ++a) {
    by_symbol[symbol_of(ref, a).symbol] = target[a];
    by_size.emplace(own[ref][a], target[a]);
  }
  Shapes out = own;
  for (size_t i = 0; i < own.size(); ++i) {
    const std::vector<Extent>& shape = graph.value(graph.inputs[i]).shape;
    if (own[i].size() != shape.size()) continue;  // a scalar
    for (size_t a = 0; a < shape.size(); ++a) {
      const Extent e = symbol_of(i, a);
      if (e.is_static()) continue;
      if (auto it = by_symbol.find(e.symbol); it != by_symbol.end()) {
        out[i][a] = it->second;
      } else if (auto s = by_size.find(own[i][a]); s != by_size.end()) {
        out[i][a] = s->second;
      }
    }
  }
  return out;
}

std::string ShapesText(const Shapes& s) {
  std::vector<std::string> parts;
  for (const std::vector<int64_t>& shape : s)
    parts.push_back(shape.empty() ? "scalar" : absl::StrJoin(shape, "x"));
  return absl::StrJoin(parts, ";");
}

std::string FormatAudit(const FusionAudit& a) {
  std::string head = absl::StrCat(a.label, " [compiled ", ShapesText(a.compile_shapes));
  if (a.launch_shapes != a.compile_shapes)
    absl::StrAppend(&head, ", launched ", ShapesText(a.launch_shapes));
  absl::StrAppend(&head, "]");
  if (!a.status.ok()) return absl::StrCat(head, " not planned: ", a.status.message(), "\n");
  std::string out;
  for (const KernelAudit& k : a.kernels) {
    absl::StrAppend(
        &out, k.cliff ? "CLIFF " : "ok    ", head, " ", k.scheduler,
        absl::StrFormat(" grid %ux%ux%u block %ux%ux%u smem %u%s: %d blocks, %d resident threads, "
                        "%.1f MiB",
                        k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2],
                        k.smem_bytes, k.cooperative ? " coop" : "", k.blocks, k.resident_threads,
                        k.bytes / 1048576.0),
        k.cliff ? absl::StrCat(" (", k.why, k.capped ? ", capped" : "", "; ", k.params, ")") : "",
        "\n");
  }
  return out;
}

}  // namespace launch_audit
}  // namespace fusiond
