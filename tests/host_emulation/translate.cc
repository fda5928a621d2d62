#include "tests/host_emulation/translate.h"

#include <cctype>
#include <regex>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace fusiond {
namespace host_emulation {
namespace {

// PTX template (whitespace collapsed) -> host statements; $N is operand N.
// Vector stores and loads check their alignment as the GPU would fault.
const std::vector<std::pair<std::string, std::string>>& PtxTable() {
  static const auto* table = new std::vector<std::pair<std::string, std::string>>{
      {"cvt.rn.bf16.f32 %0, %1;", "$0 = fz_emu_f32_to_bf16($1);"},
      {"cvt.f32.f16 %0, %1;", "$0 = fz_emu_f16_to_f32($1);"},
      {"cvt.rn.f16.f32 %0, %1;", "$0 = fz_emu_f32_to_f16($1);"},
      {"cvt.rn.bf16x2.f32 %0, %1, %2;",
       "$0 = ((unsigned)fz_emu_f32_to_bf16($1) << 16) | fz_emu_f32_to_bf16($2);"},
      {"cvt.rn.f16x2.f32 %0, %1, %2;",
       "$0 = ((unsigned)fz_emu_f32_to_f16($1) << 16) | fz_emu_f32_to_f16($2);"},
      {"tanh.approx.f32 %0, %1;", "$0 = fz_emu_tanh_approx($1);"},
      {"ex2.approx.ftz.f32 %0, %1;", "$0 = fz_emu_ex2_ftz($1);"},
      {"max.NaN.f32 %0, %1, %2;", "$0 = fz_emu_max_nan($1, $2);"},
      {"min.NaN.f32 %0, %1, %2;", "$0 = fz_emu_min_nan($1, $2);"},
      {"st.global.v4.u32 [%0], {%1, %2, %3, %4};",
       "unsigned* fz_w = fz_emu_words($0, 16); fz_w[0] = $1; fz_w[1] = $2; fz_w[2] = $3; "
       "fz_w[3] = $4;"},
      {"st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};",
       "unsigned* fz_w = fz_emu_words($0, 16); fz_w[0] = $1; fz_w[1] = $2; fz_w[2] = $3; "
       "fz_w[3] = $4;"},
      {"st.global.v2.u32 [%0], {%1, %2};",
       "unsigned* fz_w = fz_emu_words($0, 8); fz_w[0] = $1; fz_w[1] = $2;"},
      {"st.global.cs.v2.u32 [%0], {%1, %2};",
       "unsigned* fz_w = fz_emu_words($0, 8); fz_w[0] = $1; fz_w[1] = $2;"},
      {"st.global.cs.u32 [%0], %1;", "fz_emu_words($0, 4)[0] = $1;"},
      {"st.global.L2::cache_hint.v4.f32 [%0], {%1, %2, %3, %4}, %5;",
       "float* fz_f = (float*)fz_emu_words($0, 16); fz_f[0] = $1; fz_f[1] = $2; fz_f[2] = $3; "
       "fz_f[3] = $4; (void)($5);"},
      {"atom.add.release.gpu.u32 %0, [%1], %2;",
       "$0 = __atomic_fetch_add(fz_emu_words($1, 4), $2, __ATOMIC_SEQ_CST);"},
      {"ld.acquire.gpu.u32 %0, [%1];",
       "$0 = __atomic_load_n(fz_emu_words($1, 4), __ATOMIC_SEQ_CST); fz_emu_spin();"},
      {"createpolicy.fractional.L2::evict_last.b64 %0, 1.0;", "$0 = 0;"},
      {"createpolicy.fractional.L2::evict_first.b64 %0, 1.0;", "$0 = 0;"},
      {"cp.async.cg.shared.global [%0], [%1], 16;", "fz_emu_cp_async($0, $1, 16);"},
      {"cp.async.ca.shared.global [%0], [%1], %2;", "fz_emu_cp_async($0, $1, $2);"},
      {"cp.async.commit_group;", "fz_emu_cp_commit();"},
      {"cp.async.wait_group %0;", "fz_emu_cp_wait($0);"},
      {"barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;",
       "fz_emu_cluster_sync();"},
      {"mapa.shared::cluster.u32 %0, %1, %2;", "$0 = fz_emu_mapa($1, $2);"},
      {"ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];",
       "const float* fz_f = (const float*)fz_emu_shared_ptr($4); fz_emu_check_align(fz_f, 16); "
       "$0 = fz_f[0]; $1 = fz_f[1]; $2 = fz_f[2]; $3 = fz_f[3];"},
  };
  return *table;
}

// The evict_last / evict_first loads of re-read rows: plain loads here.
std::string CachedLoad(const std::string& tmpl) {
  for (const char* policy : {"evict_last", "evict_first"}) {
    const std::string head = absl::StrCat("ld.global.L1::", policy, ".L2::cache_hint.");
    if (tmpl == head + "v4.u32 {%0, %1, %2, %3}, [%4], %5;") {
      return "const unsigned* fz_w = fz_emu_words($4, 16); $0 = fz_w[0]; $1 = fz_w[1]; "
             "$2 = fz_w[2]; $3 = fz_w[3]; (void)($5);";
    }
    if (tmpl == head + "v2.u32 {%0, %1}, [%2], %3;") {
      return "const unsigned* fz_w = fz_emu_words($2, 8); $0 = fz_w[0]; $1 = fz_w[1]; "
             "(void)($3);";
    }
    if (tmpl == head + "u32 %0, [%1], %2;") return "$0 = fz_emu_words($1, 4)[0]; (void)($2);";
  }
  return "";
}

// Index of the ')' closing the '(' at `open`, skipping string literals; npos if none.
size_t MatchingParen(const std::string& s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"') {
      for (++i; i < s.size() && s[i] != '"'; ++i) {
        if (s[i] == '\\') ++i;
      }
      continue;
    }
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') {
      if (--depth == 0) return i;
    }
  }
  return std::string::npos;
}

// Splits at `sep` outside strings, brackets and C++ scopes.
std::vector<std::string> SplitTop(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"') {
      const size_t start = i;
      for (++i; i < s.size() && s[i] != '"'; ++i) {
        if (s[i] == '\\') ++i;
      }
      cur += s.substr(start, i - start + 1);
      continue;
    }
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    // A C++ scope (Ty<5>::get) is "::" between name characters.
    auto name_char = [&](size_t k) {
      return k < s.size() &&
             (std::isalnum(static_cast<unsigned char>(s[k])) || s[k] == '_' || s[k] == '>');
    };
    if (c == ':' && i + 1 < s.size() && s[i + 1] == ':' && i > 0 && name_char(i - 1) &&
        name_char(i + 2)) {
      cur += "::";
      ++i;
      continue;
    }
    if (c == sep && depth == 0) {
      parts.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  parts.push_back(cur);
  return parts;
}

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\n\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\n\r") - b + 1);
}

// The concatenated text of adjacent string literals, whitespace collapsed;
// escapes \n and \t count as spaces.
std::string TemplateText(const std::string& part) {
  std::string raw;
  for (size_t i = 0; i < part.size(); ++i) {
    if (part[i] != '"') continue;
    for (++i; i < part.size() && part[i] != '"'; ++i) {
      if (part[i] == '\\' && i + 1 < part.size()) {
        raw += ' ';
        ++i;
        continue;
      }
      raw += part[i];
    }
  }
  std::string out;
  for (char c : raw) {
    const bool space = c == ' ' || c == '\t' || c == '\n';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  return Trim(out);
}

// `"constraint"(expr)` operands of one asm section, as "(expr)".
absl::StatusOr<std::vector<std::string>> Operands(const std::string& section) {
  std::vector<std::string> out;
  if (Trim(section).empty()) return out;
  for (const std::string& op : SplitTop(section, ',')) {
    const std::string t = Trim(op);
    const size_t paren = t.find('(', t.rfind('"') == std::string::npos ? 0 : t.rfind('"'));
    if (t.empty() || t[0] != '"' || paren == std::string::npos || t.back() != ')') {
      return absl::InvalidArgumentError(absl::StrCat("asm operand '", t, "' does not parse"));
    }
    out.push_back(t.substr(paren));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> RewriteAsm(const std::string& source) {
  static const std::regex kAsm(R"(\basm\s*(volatile\s*)?\()");
  std::string out;
  size_t pos = 0;
  std::smatch m;
  std::string::const_iterator from = source.begin();
  while (std::regex_search(from, source.end(), m, kAsm)) {
    const size_t start = static_cast<size_t>(m.position(0)) + (from - source.begin());
    const size_t open = start + m.length(0) - 1;
    const size_t close = MatchingParen(source, open);
    if (close == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("unterminated asm statement at offset ", start));
    }
    size_t end = source.find_first_not_of(" \t\n", close + 1);
    if (end == std::string::npos || source[end] != ';') {
      return absl::InvalidArgumentError(
          absl::StrCat("asm statement at offset ", start, " is not followed by ';'"));
    }
    const std::vector<std::string> sections =
        SplitTop(source.substr(open + 1, close - open - 1), ':');
    const std::string tmpl = TemplateText(sections[0]);
    std::vector<std::string> ops;
    for (size_t s = 1; s < sections.size() && s < 3; ++s) {
      auto more = Operands(sections[s]);
      if (!more.ok()) return more.status();
      ops.insert(ops.end(), more->begin(), more->end());
    }
    std::string host;
    for (const auto& [ptx, code] : PtxTable()) {
      if (ptx == tmpl) host = code;
    }
    if (host.empty()) host = CachedLoad(tmpl);
    if (host.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("no host equivalent for the PTX '", tmpl,
                       "' (tests/host_emulation/translate.cc's table)"));
    }
    for (size_t k = ops.size(); k-- > 0;) {
      host = absl::StrReplaceAll(host, {{absl::StrCat("$", k), ops[k]}});
    }
    if (host.find('$') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("the PTX '", tmpl, "' has ", ops.size(), " operands, fewer than it uses"));
    }
    out += source.substr(pos, start - pos);
    out += "{ " + host + " }";
    pos = end + 1;
    from = source.begin() + static_cast<std::ptrdiff_t>(pos);
  }
  out += source.substr(pos);
  return out;
}

std::string RewriteShared(const std::string& source) {
  static const std::regex kShared(
      R"((extern\s+)?__shared__\s+(__align__\((\d+)\)\s+)?([A-Za-z_][\w ]*?)\s+([A-Za-z_]\w*)\s*((\[[^\]]*\])*)\s*;)");
  std::string out;
  int site = 0;
  std::smatch m;
  std::string::const_iterator from = source.begin();
  while (std::regex_search(from, source.end(), m, kShared)) {
    out.append(from, from + m.position(0));
    const std::string type = m[4], name = m[5], dims = m[6];
    const std::string align = m[3].matched ? m[3].str() : "1";
    if (m[1].matched) {  // extern: the launch's dynamic shared memory
      out +=
          absl::StrCat(type, "* ", name, " = static_cast<", type, "*>(fz_emu_dynamic_shared());");
    } else {
      const std::string t = absl::StrCat("fz_shared_t_", name, "_", site);
      out += absl::StrCat("static const char fz_site_", site, " = 0; typedef ", type, " ", t, dims,
                          "; ", t, "& ", name, " = *static_cast<", t, "*>(fz_emu_shared(&fz_site_",
                          site, ", sizeof(", t, "), ", align, " > alignof(", t, ") ? ", align,
                          " : alignof(", t, ")));");
      ++site;
    }
    from += m.position(0) + m.length(0);
  }
  out.append(from, source.end());
  return out;
}

absl::StatusOr<std::string> TranslateKernel(const std::string& cuda_source,
                                            const std::string& kernel_name, const std::string& ns) {
  auto no_asm = RewriteAsm(cuda_source);
  if (!no_asm.ok()) return no_asm.status();
  return absl::StrCat("namespace ", ns, " {\n", RewriteShared(*no_asm), "\n}  // namespace ", ns,
                      "\nextern \"C\" void fz_emu_entry_", kernel_name,
                      "(void* const* slots) { fz_emu_invoke(&", ns, "::", kernel_name,
                      ", slots); }\n");
}

}  // namespace host_emulation
}  // namespace fusiond
