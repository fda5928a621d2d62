// The Generator's tensor accesses and their offset functions: how a row
// element index j becomes an element offset per tensor (a decomposition
// over the row axes; with run-time extents, divisions by multiply-high in
// the vector paths), and which form each call site uses.
#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/codegen/generator.h"

namespace fusiond {
namespace codegen_internal {

Access Generator::MakeAccess(ValueId v, std::string ptr) const {
  Access a;
  a.v = v;
  a.ptr = std::move(ptr);
  const Value& val = graph_.value(v);
  a.type_id = static_cast<int>(val.dtype);
  a.elem_bytes = DataTypeSize(val.dtype);
  const auto& m = plan_.axis_map[v];
  std::vector<int> own;  // own non-1 axes (indices)
  for (int i = 0; i < val.rank(); ++i)
    if (m[i] >= 0) own.push_back(i);
  for (size_t k = 0; k < own.size(); ++k) {
    std::vector<std::string> f;
    int64_t st = 1;
    for (size_t q = k + 1; q < own.size(); ++q) {
      Extent e = graph_.Canonical(val.shape[own[q]]);
      if (e.is_static())
        st *= e.size;
      else
        f.push_back(plan_.ExtentExpr(e));
    }
    if (st != 1 || f.empty()) f.push_back(std::to_string(st));
    const int ra = m[own[k]];
    auto& terms = (plan_.r_mask >> ra & 1) ? a.along_row_terms : a.across_row_terms;
    terms.push_back({ra, absl::StrJoin(f, " * ")});
  }
  a.along_row = !a.along_row_terms.empty();
  a.across_rows = !a.across_row_terms.empty();
  a.vectorized = a.along_row && !own.empty() && m[own.back()] == plan_.r_axes.back();
  // Fast path: the trailing own axes are exactly the row axes, in order.
  if (a.along_row_terms.size() == plan_.r_axes.size() && own.size() >= plan_.r_axes.size()) {
    bool ok = true;
    for (size_t k = 0; k < plan_.r_axes.size(); ++k) {
      ok &= m[own[own.size() - plan_.r_axes.size() + k]] == plan_.r_axes[k];
    }
    a.linear_in_row = ok;
  }
  return a;
}

bool Generator::SmallStaticSpace() const {
  int64_t elements = 1;
  for (const Extent& e : plan_.ref) {
    if (!e.is_static() || (e.size != 0 && elements >= INT32_MAX / e.size)) return false;
    elements *= e.size;
  }
  return true;
}

std::string Generator::PlanDividers() {
  form_.extent_dividers.clear();
  bool decomposes = false;
  for (const auto& [v, a] : input_access_) decomposes |= a.along_row && !a.linear_in_row;
  for (const Access& a : output_access_) decomposes |= a.along_row && !a.linear_in_row;
  // Only reductions: a pointwise kernel's row is the whole tensor, which can
  // pass 2^32 elements (a [32768, 131072] bf16 logits tensor), and its
  // vector path must keep working there, so it divides in 64 bits (bias-GELU
  // 8192x8192 ran within 1% either way).
  if (shape_.pointwise || !decomposes || SmallStaticSpace()) return "";
  std::string s, small = "rlen <= 0xffffffffLL";
  for (size_t k = 1; k < plan_.r_axes.size(); ++k) {
    const Extent& e = plan_.ref[plan_.r_axes[k]];
    const std::string ext = plan_.ExtentExpr(e);
    if (e.is_static() || form_.extent_dividers.count(ext)) continue;
    const std::string name = absl::StrCat("fz_d", form_.extent_dividers.size());
    form_.extent_dividers[ext] = name;
    absl::StrAppend(&s, "  const FzDiv ", name, " = fz_div_make(", ext, ");\n");
    absl::StrAppend(&small, " && (", ext, ") <= 0x7fffffffLL");
  }
  if (form_.extent_dividers.empty()) return "";
  // Each decomposed offset within its row fits 32 bits (the vector paths
  // add it up in u32).
  std::set<std::string> bounds;
  auto bound = [&](const Access& a) {
    if (!a.along_row || a.linear_in_row) return;
    std::vector<std::string> terms;
    for (const auto& [ra, stride] : a.along_row_terms) {
      terms.push_back(
          absl::StrCat("((i64)(", plan_.ExtentExpr(plan_.ref[ra]), ") - 1) * (i64)(", stride, ")"));
    }
    bounds.insert(absl::StrCat(" && ", absl::StrJoin(terms, " + "), " <= 0xffffffffLL"));
  };
  for (const auto& [v, a] : input_access_) bound(a);
  for (const Access& a : output_access_) bound(a);
  for (const std::string& b : bounds) absl::StrAppend(&small, b);
  return absl::StrCat(s, "  const bool fz_q32 = ", small, ";\n");
}

std::string Generator::OffsetAt(const Access& a, const std::string& j, At at) const {
  const std::string fast = absl::StrCat("ro_", a.ptr, "(", j, ")");
  if (form_.extent_dividers.empty() || a.linear_in_row || at == At::kVec) return fast;
  const std::string general = absl::StrCat("ro64_", a.ptr, "(", j, ")");
  return at == At::kElem ? general : absl::StrCat("(VV == 1 ? ", general, " : ", fast, ")");
}

std::string Generator::OffsetLambda(const Access& a) const {
  const std::string base = a.across_rows ? absl::StrCat("rb_", a.ptr) : "0";
  if (a.linear_in_row)
    return absl::StrCat("  auto ro_", a.ptr, " = [&](i64 j) -> i64 { return ", base, " + j; };\n");
  // The decomposition of j over the row axes. A static iteration space under
  // 2^31 elements takes 32-bit arithmetic (a division by a literal becomes a
  // 32-bit multiply-high); any other takes 64-bit, where NVVM's bypass of
  // slow division already runs the 32-bit instruction when both operands
  // fit. A 32-bit path of our own beside the 64-bit one doubled the division
  // code: bias-GELU compiled in 143 ms with it, 122 without (same kernel
  // time on the H200). Run-time extents: the vector paths (where vec_ok, and with
  // it fz_q32, holds) divide by multiply-high (ro_, FzDiv), the element
  // loop and the column epilogue in 64 bits (ro64_); a branch between the
  // two in one function made bias-GELU compile 25% slower, and the 64-bit
  // divisions made the symbolic 4-D batch norm 26% slower than the static.
  // The vector paths also add the offset up in 32 bits (fz_q32 checks that
  // every such offset fits).
  auto decompose = [&](const char* t, bool magic) {
    std::string d = absl::StrCat(t, " q = (", t, ")j; ", t, " o = 0;");
    for (int k = static_cast<int>(plan_.r_axes.size()) - 1; k >= 0; --k) {
      const int ax = plan_.r_axes[k];
      const std::string e = plan_.ExtentExpr(plan_.ref[ax]);
      const auto div = form_.extent_dividers.find(e);
      const bool fast = magic && k > 0 && div != form_.extent_dividers.end();
      const std::string ext = absl::StrCat("(", t, ")(", e, ")");
      if (fast) absl::StrAppend(&d, " const u32 q", k, " = fz_div(q, ", div->second, ");");
      std::string coord = k == 0 ? "q"
                          : fast ? absl::StrCat("(q - q", k, " * ", div->second, ".d)")
                                 : absl::StrCat("(q % ", ext, ")");
      for (const auto& [ra, stride] : a.along_row_terms) {
        if (ra != ax) continue;
        absl::StrAppend(&d, " o += ", coord, " * (", t, ")(", stride, ");");
      }
      if (k > 0)
        absl::StrAppend(&d,
                        fast ? absl::StrCat(" q = q", k, ";") : absl::StrCat(" q /= ", ext, ";"));
    }
    return absl::StrCat(d, " return ", base, " + (i64)o; };\n");
  };
  if (form_.extent_dividers.empty()) {
    return absl::StrCat("  auto ro_", a.ptr, " = [&](i64 j) -> i64 { ",
                        decompose(SmallStaticSpace() ? "u32" : "i64", false));
  }
  return absl::StrCat("  auto ro_", a.ptr, " = [&](i64 j) -> i64 { ", decompose("u32", true),
                      "  auto ro64_", a.ptr, " = [&](i64 j) -> i64 { ", decompose("i64", false));
}

}  // namespace codegen_internal
}  // namespace fusiond
