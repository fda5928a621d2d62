#include "client/fusionc/flags.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace fusiond {
namespace fusionc {

std::optional<std::string> ParsedFlags::Get(const std::string& name) const {
  auto it = values.find(name);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<std::optional<int64_t>> ParsedFlags::GetInt(const std::string& name) const {
  auto v = Get(name);
  if (!v) return std::optional<int64_t>();
  int64_t n = 0;
  if (!absl::SimpleAtoi(*v, &n)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " takes an integer, got '", *v, "'"));
  }
  return std::optional<int64_t>(n);
}

absl::StatusOr<ParsedFlags> ParseFlags(const std::vector<std::string>& args,
                                       const std::vector<FlagSpec>& specs) {
  ParsedFlags out;
  bool flags_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (flags_done || a.size() < 2 || a[0] != '-') {
      out.positional.push_back(a);
      continue;
    }
    if (a == "--") {
      flags_done = true;
      continue;
    }
    if (a == "-h" || a == "--help") {
      out.help = true;
      continue;
    }
    if (a.rfind("--", 0) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag '", a, "' (flags start with --)"));
    }
    std::string name = a.substr(2), value;
    bool has_value = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    const FlagSpec* spec = nullptr;
    for (const FlagSpec& s : specs) {
      if (s.name == name) spec = &s;
    }
    if (spec == nullptr) {
      std::string known;
      for (const FlagSpec& s : specs)
        absl::StrAppend(&known, known.empty() ? "" : ", ", "--", s.name);
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag '--", name, "'",
                       known.empty() ? "" : absl::StrCat(" (known: ", known, ")")));
    }
    if (out.values.count(name)) {
      return absl::InvalidArgumentError(absl::StrCat("flag --", name, " given twice"));
    }
    if (!spec->takes_value) {
      if (has_value) {
        return absl::InvalidArgumentError(absl::StrCat("flag --", name, " takes no value"));
      }
      out.values[name] = "true";
      continue;
    }
    if (!has_value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat("flag --", name, " needs a value"));
      }
      value = args[++i];
    }
    out.values[name] = value;
  }
  return out;
}

absl::StatusOr<std::vector<std::vector<int64_t>>> ParseShapes(const std::string& text) {
  std::vector<std::vector<int64_t>> out;
  for (absl::string_view entry : absl::StrSplit(text, ';')) {
    std::vector<int64_t> shape;
    entry = absl::StripAsciiWhitespace(entry);
    if (!entry.empty() && entry != "scalar") {
      for (absl::string_view size : absl::StrSplit(entry, absl::ByAnyChar("x,"))) {
        int64_t n = 0;
        if (!absl::SimpleAtoi(size, &n) || n < 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("--shapes: '", std::string(size), "' in '", std::string(entry),
                           "' is not a size; expected e.g. --shapes '2048x8192;8192'"));
        }
        shape.push_back(n);
      }
    }
    out.push_back(std::move(shape));
  }
  return out;
}

}  // namespace fusionc
}  // namespace fusiond
