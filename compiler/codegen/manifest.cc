#include "compiler/codegen/manifest.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "compiler/codegen/generator.h"
#include "compiler/codegen/prelude.h"
#include "compiler/ir/reshape_views.h"

namespace fusiond {
namespace {

std::string QuoteAll(const std::vector<std::string>& v) {
  std::vector<std::string> q;
  for (const std::string& s : v) q.push_back(JsonQuote(s));
  return absl::StrCat("[", absl::StrJoin(q, ", "), "]");
}

// Symbol names of a graph: root symbol -> "s<k>" in input order (the same
// rule the code generator uses).
std::map<SymbolId, std::string> SymbolNames(const Graph& g, std::vector<SymbolId>* order) {
  std::map<SymbolId, std::string> names;
  for (ValueId in : g.inputs) {
    for (const Extent& e0 : g.value(in).shape) {
      Extent e = g.Canonical(e0);
      if (!e.is_static() && !names.count(e.symbol)) {
        names[e.symbol] = absl::StrCat("s", names.size());
        if (order) order->push_back(e.symbol);
      }
    }
  }
  return names;
}

std::string TensorJson(const Graph& g, ValueId v, const std::map<SymbolId, std::string>& names,
                       const std::string& fallback_name) {
  const Value& val = g.value(v);
  std::vector<std::string> shape;
  for (const Extent& e0 : val.shape) {
    Extent e = g.Canonical(e0);
    shape.push_back(e.is_static() ? std::to_string(e.size) : names.at(e.symbol));
  }
  return absl::StrCat("{\"name\": ", JsonQuote(val.name.empty() ? fallback_name : val.name),
                      ", \"dtype\": ", JsonQuote(DataTypeName(val.dtype)),
                      ", \"shape\": ", QuoteAll(shape), val.is_tensor ? "" : ", \"scalar\": true",
                      val.cpu_tensor ? ", \"cpu_tensor\": true" : "", "}");
}

// A requirement's key in the manifest (docs/manifest.md, `requires`).
const char* RequirementKey(Requirement::Kind kind) {
  switch (kind) {
    case Requirement::Kind::kMultipleOf:
      return "multiple_of";
    case Requirement::Kind::kAtMost:
      return "at_most";
    case Requirement::Kind::kEquals:
      return "equals";
  }
  return "?";
}

}  // namespace

std::string JsonQuote(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        o += "\\\"";
        break;
      case '\\':
        o += "\\\\";
        break;
      case '\n':
        o += "\\n";
        break;
      case '\t':
        o += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          snprintf(buf, sizeof(buf), "\\u%04x", c);
          o += buf;
        } else {
          o += c;
        }
    }
  }
  return o + "\"";
}

std::string KernelManifestJson(const GeneratedKernel& k, const std::string& binary_file,
                               int registers, int static_smem_bytes, const Target& target) {
  std::vector<std::string> grid = LaunchGrid(k, registers, static_smem_bytes, target);
  std::vector<std::string> params;
  for (const ParamBinding& p : k.params) {
    if (p.kind == "size") {
      params.push_back(absl::StrCat("{\"kind\": \"size\", \"symbol\": ", JsonQuote(p.symbol), "}"));
    } else {
      params.push_back(absl::StrCat("{\"kind\": ", JsonQuote(p.kind), ", \"index\": ", p.index,
                                    p.align > 0 ? absl::StrCat(", \"align\": ", p.align) : "",
                                    "}"));
    }
  }
  std::vector<std::string> requirements;
  for (const Requirement& q : k.requirements) {
    requirements.push_back(absl::StrCat("{\"expr\": ", JsonQuote(q.expr), ", \"",
                                        RequirementKey(q.kind), "\": ", q.n, "}"));
  }
  std::string j = absl::StrCat(
      "{\"name\": ", JsonQuote(k.name), ", \"binary\": ", JsonQuote(binary_file),
      ", \"scheduler\": ", JsonQuote(k.scheduler),
      ", \"cooperative\": ", k.cooperative ? "true" : "false",
      ", \"block\": ", QuoteAll({std::to_string(k.block_x), std::to_string(k.block_y), "1"}),
      ", \"grid\": ", QuoteAll(grid), ", \"smem_bytes\": \"", k.dynamic_smem_bytes,
      "\", \"params\": [", absl::StrJoin(params, ", "), "]");
  if (!requirements.empty())
    absl::StrAppend(&j, ", \"requires\": [", absl::StrJoin(requirements, ", "), "]");
  if (k.needs_workspace) {
    absl::StrAppend(&j, ", \"workspace\": {\"bytes\": \"", kBarrierBytes,
                    "\", \"zero\": true, \"keep\": true}",
                    ", \"workspace2\": {\"bytes\": ", JsonQuote(WorkspaceBytes(k, grid[0])),
                    ", \"zero\": false}");
  }
  absl::StrAppend(&j, ", \"registers\": ", registers, "}");
  return j;
}

// Two extents equal as a manifest condition's text ("s2 - s0" == 0, "s1" ==
// 64); empty for two static extents (nothing to check at launch).
std::string EqualsCondition(Extent a, Extent b, const std::map<SymbolId, std::string>& names) {
  if (a.is_static() && b.is_static()) return "";
  if (a.is_static()) std::swap(a, b);
  if (b.is_static()) {
    return absl::StrCat("{\"expr\": ", JsonQuote(names.at(a.symbol)), ", \"equals\": ", b.size,
                        "}");
  }
  return absl::StrCat(
      "{\"expr\": ", JsonQuote(absl::StrCat(names.at(a.symbol), " - ", names.at(b.symbol))),
      ", \"equals\": 0}");
}

// What a segment's kernel assumes of the sizes beyond the fusion's shapes,
// as `requires` conditions over the fusion's symbols (docs/manifest.md,
// "Size classes"): a symbol the segment has as a literal (split segments
// are static, docs/passes.md) equals the size compiled for; a value placed
// on a loop axis of another extent (kernel_plan.cc places full-rank values
// by position) has that extent.
std::vector<std::string> SizeClassConditions(const Graph& g, const SegmentResult& seg,
                                             const std::map<SymbolId, std::string>& names) {
  const Graph& sg = seg.graph;
  std::map<SymbolId, Extent> fusion_extent;  // segment root symbol -> the fusion's extent
  std::vector<std::string> out;
  auto note = [&](ValueId src, ValueId own) {
    const std::vector<Extent>& fs = g.value(src).shape;
    const std::vector<Extent>& ss = sg.value(own).shape;
    for (size_t a = 0; a < fs.size() && a < ss.size(); ++a) {
      const Extent fe = g.Canonical(fs[a]), se = sg.Canonical(ss[a]);
      if (!se.is_static()) {
        fusion_extent.emplace(se.symbol, fe);
      } else if (!fe.is_static()) {
        out.push_back(EqualsCondition(fe, se, names));
      }
    }
  };
  for (size_t i = 0; i < sg.inputs.size() && i < seg.source_inputs.size(); ++i)
    note(seg.source_inputs[i], sg.inputs[i]);
  for (size_t o = 0; o < sg.outputs.size() && o < seg.source_outputs.size(); ++o)
    note(seg.source_outputs[o], sg.outputs[o]);
  if (!sg.symbols.empty()) {
    const bool views = std::any_of(sg.nodes.begin(), sg.nodes.end(),
                                   [](const Node& n) { return n.op == OpKind::kReshape; });
    const Graph viewed = views ? ResolveReshapeViews(sg) : Graph();
    const Graph& pg = views ? viewed : sg;
    auto plan = codegen_internal::PlanKernelFor(pg, seg.params);
    auto to_fusion = [&](Extent e) -> std::optional<Extent> {
      if (e.is_static()) return e;
      auto it = fusion_extent.find(e.symbol);
      if (it == fusion_extent.end()) return std::nullopt;
      return it->second;
    };
    for (size_t v = 0; plan.ok() && v < pg.values.size(); ++v) {
      if (!plan->needed[v] || !pg.values[v].is_tensor) continue;
      for (size_t i = 0; i < plan->axis_map[v].size(); ++i) {
        const int a = plan->axis_map[v][i];
        const Extent e = pg.Canonical(pg.values[v].shape[i]);
        if (a < 0 || e == plan->ref[a]) continue;
        const std::optional<Extent> fe = to_fusion(e), fr = to_fusion(plan->ref[a]);
        if (fe && fr && !(*fe == *fr)) out.push_back(EqualsCondition(*fe, *fr, names));
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (!out.empty() && out.front().empty()) out.erase(out.begin());
  return out;
}

// Adds conditions to a kernel entry's `requires` (made when missing).
void AddRequirements(std::string& kj, const std::vector<std::string>& conditions) {
  if (conditions.empty()) return;
  const std::string joined = absl::StrJoin(conditions, ", ");
  const std::string key = "\"requires\": [";
  if (size_t p = kj.find(key); p != std::string::npos) {
    kj.insert(p + key.size(), joined + ", ");
    return;
  }
  const size_t end = kj.rfind('}');
  if (end != std::string::npos) kj.insert(end, absl::StrCat(", ", key, joined, "]"));
}

std::string FusionManifestJson(const CompileResult& r, const std::string& fusion_name) {
  const Graph& g = r.optimized;
  std::vector<SymbolId> order;
  auto names = SymbolNames(g, &order);
  std::map<int, int> input_pos;  // graph input position -> fusion input index
  std::vector<std::string> symbols, inputs, outputs, intermediates, workspaces, kernels;
  for (SymbolId s : order) {
    int idx = 0;
    for (size_t i = 0; i < g.inputs.size(); ++i)
      if (g.inputs[i] == g.symbols[s].input) idx = i;
    symbols.push_back(absl::StrCat("{\"name\": ", JsonQuote(names.at(s)), ", \"input\": ", idx,
                                   ", \"axis\": ", g.symbols[s].axis, "}"));
  }
  // Value of the optimized graph -> (param kind, index) once it has a buffer.
  std::map<ValueId, std::pair<std::string, size_t>> where;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    inputs.push_back(TensorJson(g, g.inputs[i], names, absl::StrCat("in", i)));
    where[g.inputs[i]] = {g.value(g.inputs[i]).is_tensor ? "input" : "scalar", i};
  }
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    outputs.push_back(TensorJson(g, g.outputs[i], names, absl::StrCat("out", i)));
  }
  for (size_t si = 0; si < r.segments.size(); ++si) {
    const SegmentResult& seg = r.segments[si];
    if (!seg.kernel) continue;
    std::string kj = seg.kernel->manifest_json;
    // Lift the workspaces (barrier, then partials) into workspaces[].
    for (int w = 0; w < 2; ++w) {
      const std::string key = w == 0 ? "\"workspace\": {" : "\"workspace2\": {";
      const size_t p = kj.find(key);
      if (p == std::string::npos) continue;
      const size_t obj = kj.find('{', p);
      const size_t end = kj.find('}', obj);
      workspaces.push_back(kj.substr(obj, end + 1 - obj));
      kj.erase(p - 2, end + 1 - (p - 2));
      kj = absl::StrReplaceAll(
          kj,
          {{absl::StrCat("{\"kind\": \"workspace\", \"index\": ", w, "}"),
            absl::StrCat("{\"@kind\": \"workspace\", \"index\": ", workspaces.size() - 1, "}")}});
    }
    kj = absl::StrReplaceAll(kj, {{"\"@kind\"", "\"kind\""}});
    AddRequirements(kj, SizeClassConditions(g, seg, names));
    // A split fusion's segments, and a lone partitioner segment (static,
    // without the inputs it does not read), number their inputs and
    // outputs their own way.
    if (r.segments.size() > 1 || seg.source_inputs != g.inputs || seg.source_outputs != g.outputs) {
      // Rebind the segment's inputs/outputs (indices into the segment graph)
      // to fusion inputs, outputs or intermediates through the values of the
      // optimized graph they stand for.
      const Graph& sg = seg.graph;
      // Param (kind, index) -> (to_kind, to_index), with or without more
      // members after the index ("align"); marked "@kind" until every
      // rebinding is done, so none is rebound twice.
      auto rebind = [&kj](const std::string& kind, size_t index, const std::string& to_kind,
                          size_t to_index) {
        const std::string from = absl::StrCat("{\"kind\": \"", kind, "\", \"index\": ", index);
        const std::string to = absl::StrCat("{\"@kind\": \"", to_kind, "\", \"index\": ", to_index);
        kj = absl::StrReplaceAll(kj, {{from + "}", to + "}"}, {from + ",", to + ","}});
      };
      for (size_t i = 0; i < sg.inputs.size() && i < seg.source_inputs.size(); ++i) {
        const auto it = where.find(seg.source_inputs[i]);
        if (it == where.end()) continue;  // a scalar or an input at the same position
        rebind("input", i, it->second.first, it->second.second);
        rebind("scalar", i, it->second.first == "input" ? "scalar" : it->second.first,
               it->second.second);
      }
      for (size_t o = 0; o < sg.outputs.size() && o < seg.source_outputs.size(); ++o) {
        const ValueId src = seg.source_outputs[o];
        int fusion_out = -1;
        for (size_t q = 0; q < g.outputs.size(); ++q) {
          if (g.outputs[q] == src) {
            fusion_out = static_cast<int>(q);
            break;
          }
        }
        if (fusion_out >= 0) {
          where[src] = {"output", fusion_out};
        } else if (!where.count(src)) {
          intermediates.push_back(
              TensorJson(g, src, names, absl::StrCat("t", intermediates.size())));
          where[src] = {"intermediate", intermediates.size() - 1};
        }
        rebind("output", o, where[src].first, where[src].second);
      }
      kj = absl::StrReplaceAll(kj, {{"\"@kind\"", "\"kind\""}});
    }
    kernels.push_back(kj);
  }
  const std::string arch =
      r.segments.empty() || !r.segments[0].kernel ? "" : r.segments[0].kernel->arch;
  return absl::StrCat(
      "{\n  \"manifest_version\": 3,\n  \"fusion\": ", JsonQuote(fusion_name),
      ",\n  \"canonical_hash\": ", JsonQuote(r.canonical_hash), ",\n  \"arch\": ", JsonQuote(arch),
      ",\n  \"symbols\": [", absl::StrJoin(symbols, ", "), "],\n  \"inputs\": [",
      absl::StrJoin(inputs, ", "), "],\n  \"outputs\": [", absl::StrJoin(outputs, ", "),
      "],\n  \"intermediates\": [", absl::StrJoin(intermediates, ", "), "],\n  \"workspaces\": [",
      absl::StrJoin(workspaces, ", "), "],\n  \"kernels\": [\n    ",
      absl::StrJoin(kernels, ",\n    "), "\n  ]\n}\n");
}

absl::Status WriteFilesInto(const std::string& dir,
                            const std::vector<std::pair<std::string, std::string>>& files) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return absl::InvalidArgumentError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  for (const auto& [name, data] : files) {
    std::ofstream f(dir + "/" + name, std::ios::binary | std::ios::trunc);
    f << data;
    f.close();
    if (!f) return absl::InvalidArgumentError(absl::StrCat("cannot write ", dir, "/", name));
  }
  return absl::OkStatus();
}

absl::Status WriteArtifacts(const CompileResult& r, const std::string& dir,
                            const std::string& fusion_name) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const SegmentResult& seg : r.segments) {
    if (!seg.kernel) continue;
    const KernelArtifact& k = *seg.kernel;
    if (k.binary.empty()) {
      return absl::UnavailableError(
          absl::StrCat("kernel ", k.kernel_name, " has no binary (no NVRTC)"));
    }
    files.emplace_back(k.kernel_name + ".cu", k.cuda_source);
    files.emplace_back(k.kernel_name + (k.is_ptx ? ".ptx" : ".cubin"), k.binary);
  }
  files.emplace_back("manifest.json", FusionManifestJson(r, fusion_name));
  return WriteFilesInto(dir, files);
}

std::string EmittedCuda(const CompileResult& r) {
  std::string out;
  for (const SegmentResult& seg : r.segments) {
    if (!seg.kernel) continue;
    absl::StrAppend(&out, "// kernel ", seg.kernel->kernel_name, "\n", seg.kernel->cuda_source,
                    "\n");
  }
  return out;
}

}  // namespace fusiond
