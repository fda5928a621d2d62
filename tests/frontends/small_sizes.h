// The small sizes definitions are checked at on the CPU (frontends_test's
// reference check, the host emulation): every integer literal of a script
// that is a multiple of 16 and at least 128 divided by 16, or the map of a
// `# small: A->B, ...` line (for shapes whose factors must stay related).
#ifndef FUSIOND_TESTS_FRONTENDS_SMALL_SIZES_H_
#define FUSIOND_TESTS_FRONTENDS_SMALL_SIZES_H_

#include <cctype>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace fusiond {

// The `# small: A->B, ...` map of a script (empty if it has none).
inline std::map<std::string, std::string> SmallSizesMap(const std::string& text) {
  std::map<std::string, std::string> small;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, "# small:")) continue;
    for (absl::string_view pair : absl::StrSplit(line, ',', absl::SkipWhitespace())) {
      std::vector<std::string> ab = absl::StrSplit(pair, "->");
      if (ab.size() == 2) {
        small[std::string(absl::StripAsciiWhitespace(ab[0]))] =
            std::string(absl::StripAsciiWhitespace(ab[1]));
      }
    }
  }
  return small;
}

// The script with each integer literal (a run of digits not touching a
// letter, '_', '.' or another digit, so names such as T16 and floats such
// as 1e-05 stay) replaced: by `sizes` where it names the literal, else by
// `small` where that map is not empty, else by the rule above.
inline std::string ShrinkToSmallSizes(const std::string& text,
                                      const std::map<std::string, std::string>& small,
                                      const std::map<std::string, std::string>* sizes = nullptr) {
  auto replace = [&](const std::string& lit) -> std::string {
    if (sizes != nullptr && sizes->count(lit)) return sizes->at(lit);
    if (!small.empty()) {
      auto it = small.find(lit);
      return it == small.end() ? lit : it->second;
    }
    int64_t n = 0;
    if (absl::SimpleAtoi(lit, &n) && n >= 128 && n % 16 == 0) return absl::StrCat(n / 16);
    return lit;
  };
  auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (!std::isdigit(static_cast<unsigned char>(c)) ||
        (i > 0 && (word_char(text[i - 1]) || text[i - 1] == '.'))) {
      out += c;
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    const std::string lit = text.substr(i, j - i);
    const bool ends = j >= text.size() || (!word_char(text[j]) && text[j] != '.');
    out += ends ? replace(lit) : lit;
    i = j;
  }
  return out;
}

}  // namespace fusiond

#endif  // FUSIOND_TESTS_FRONTENDS_SMALL_SIZES_H_
