// Only the prelude pieces a kernel uses (prelude.h, TrimDevicePrelude).
#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/codegen/prelude.h"

namespace fusiond {
namespace {

bool IdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Whether `text` names `name` (one entry of PreludePiece::names): as a
// whole identifier, or, for "Ty<5>", that specialization or a Ty<...>
// whose argument is not a literal (it may be any of them).
bool Names(std::string_view text, std::string_view name) {
  const size_t lt = name.find('<');
  const std::string_view head = lt == std::string_view::npos ? name : name.substr(0, lt + 1);
  for (size_t at = text.find(head); at != std::string_view::npos; at = text.find(head, at + 1)) {
    if (at > 0 && IdentChar(text[at - 1])) continue;
    const size_t end = at + head.size();
    if (lt == std::string_view::npos) {
      if (end == text.size() || !IdentChar(text[end])) return true;
    } else if (text.compare(at, name.size(), name) == 0 ||
               (end < text.size() && !std::isdigit(static_cast<unsigned char>(text[end])))) {
      return true;
    }
  }
  return false;
}

// Empty names: the piece is in every kernel.
bool NamesPiece(std::string_view text, const PreludePiece& piece) {
  std::string_view names = piece.names;
  if (names.empty()) return true;
  while (!names.empty()) {
    const size_t space = std::min(names.find(' '), names.size());
    if (space > 0 && Names(text, names.substr(0, space))) return true;
    names.remove_prefix(std::min(space + 1, names.size()));
  }
  return false;
}

}  // namespace

std::string TrimDevicePrelude(const std::string& source) {
  const std::string_view whole = DevicePrelude();
  if (std::string_view(source).substr(0, whole.size()) != whole) return source;
  const std::string_view rest = std::string_view(source).substr(whole.size());
  const std::vector<PreludePiece> pieces = DevicePreludePieces();
  // The pieces the rest names, then those the taken pieces name, until no
  // new one is named (a piece's text names the pieces it needs).
  std::vector<bool> take(pieces.size(), false);
  std::vector<std::string_view> to_scan = {rest};
  while (!to_scan.empty()) {
    const std::string_view text = to_scan.back();
    to_scan.pop_back();
    for (size_t i = 0; i < pieces.size(); ++i) {
      if (take[i] || !NamesPiece(text, pieces[i])) continue;
      take[i] = true;
      to_scan.push_back(pieces[i].text);
    }
  }
  std::string out;
  for (size_t i = 0; i < pieces.size(); ++i)
    if (take[i]) out += pieces[i].text;
  return out.append(rest);
}

std::string UntrimDevicePrelude(const std::string& source) {
  // A trimmed prelude is some of the pieces in order, the first (typedefs)
  // always; the rest starts where the next piece does not follow.
  const std::vector<PreludePiece> pieces = DevicePreludePieces();
  const std::string_view typedefs = pieces[0].text;
  if (std::string_view(source).substr(0, typedefs.size()) != typedefs) return source;
  size_t at = 0;
  for (const PreludePiece& p : pieces) {
    const std::string_view text = p.text;
    if (std::string_view(source).substr(at, text.size()) == text) at += text.size();
  }
  return DevicePrelude() + source.substr(at);
}

}  // namespace fusiond
