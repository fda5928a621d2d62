// Specialized persistent kernels (docs/codegen.md, "Specialized kernels").
// A persistent kernel's fast path holds the row in registers or shared
// memory and reads it with vector loads: it needs the row to fit the
// buffers (rlen <= bound), the innermost extent to be a multiple of the
// vector width and every vector pointer aligned to a vector. A general
// kernel also carries loops for rows that break those (vector loads from
// memory for wider rows, element loads for the rest); a specialized one
// does not, and its manifest states the conditions instead, which the
// runtimes check before every launch. The fallback loops were about a
// quarter of rmsnorm backward's compile time (NVVM and ptxas: 178 against
// 131 ms, docs/codegen.md), and the daemon never needs
// them for shapes: its cache key holds a persistent segment's sizes, so
// another row length is another compile. Misaligned inputs the runtimes copy to aligned buffers.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/generator.h"
#include "compiler/ir/binding.h"

namespace fusiond {
namespace codegen_internal {

std::vector<int> Generator::VectorUnitAxes() const {
  const std::vector<int>& r = plan_.r_axes;
  if (shape_.lanes || r.size() < 2) return {};
  size_t m = r.size();
  auto common = [&](const Access& a) {
    std::vector<int> own;  // reference axes of the tensor's own axes other than 1s
    for (int ax : plan_.axis_map[a.v])
      if (ax >= 0) own.push_back(ax);
    size_t k = 0;
    while (k < own.size() && k < r.size() && own[own.size() - 1 - k] == r[r.size() - 1 - k]) ++k;
    m = std::min(m, k);
  };
  for (const auto& [v, a] : input_access_)
    if (a.vectorized) common(a);
  for (const Access& a : output_access_)
    if (a.vectorized && a.along_row) common(a);
  if (m < 2) return {};
  return std::vector<int>(r.end() - m, r.end());
}

bool Generator::PlanRequires(int64_t bound, GeneratedKernel& k) {
  // Kernels with run-time extents over several row axes check more than
  // this (fz_q32: 32-bit offsets) and stay general.
  if (!options_.specialize || !shape_.persistent || !form_.extent_dividers.empty() ||
      plan_.r_axes.empty())
    return false;
  // The sizes compiled for must meet the conditions themselves.
  const Extent& inner = plan_.ref[plan_.r_axes.back()];
  bool symbolic = false;
  for (int a : plan_.r_axes) symbolic |= !graph_.Canonical(plan_.ref[a]).is_static();
  if (symbolic && options_.symbol_sizes.size() < graph_.symbols.size()) return false;
  const SizeBinding sizes{options_.symbol_sizes};
  int64_t rlen = 1;
  for (int a : plan_.r_axes) rlen *= sizes.Resolve(graph_, plan_.ref[a]);
  int64_t inner_size = sizes.Resolve(graph_, inner);
  const std::vector<int> unit = VectorUnitAxes();
  if (!unit.empty()) {
    inner_size = 1;
    for (int a : unit) inner_size *= sizes.Resolve(graph_, plan_.ref[a]);
  }
  if (inner_size <= 0 || inner_size % shape_.vector_width != 0 || rlen > bound) return false;
  form_.row_fills_tiles = rlen == bound;
  // A symbolic row's extents become the literals compiled for (codegen.cc),
  // as a static definition's are, so a symbolic definition and a static one
  // of the same shape get the same row arithmetic (docs/codegen.md,
  // "Specialized kernels": what that did on the H200). That costs
  // the daemon no compiles (its cache key holds a persistent segment's
  // sizes); the row count stays a parameter, so another batch size still
  // shares the kernel text and NVRTC's work.
  if (symbolic) {
    for (int a : plan_.r_axes) {
      const Extent e = graph_.Canonical(plan_.ref[a]);
      if (e.is_static() || form_.literal_symbols.count(e.symbol)) continue;
      form_.literal_symbols.insert(e.symbol);
      k.requirements.push_back({plan_.symbol_names.at(e.symbol), Requirement::Kind::kEquals,
                                options_.symbol_sizes[e.symbol]});
    }
  }
  // The pointers vec_ok tests.
  for (ParamBinding& b : k.params) {
    const Access* a = nullptr;
    if (b.kind == "input") {
      for (const auto& [v, x] : input_access_) {
        if (input_index_.at(v) == b.index && x.vectorized) a = &x;
      }
    } else if (b.kind == "output") {
      const Access& x = output_access_[b.index];
      if (x.vectorized && x.along_row) a = &x;
    }
    if (a != nullptr && shape_.vector_width * a->elem_bytes > a->elem_bytes)
      b.align = shape_.vector_width * a->elem_bytes;
  }
  return true;
}

}  // namespace codegen_internal
}  // namespace fusiond
