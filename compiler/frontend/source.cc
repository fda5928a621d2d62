#include "compiler/frontend/source.h"

#include "absl/strings/str_cat.h"

namespace fusiond {
namespace frontend {

absl::Status ErrorReporter::Error(Location at, std::string_view what,
                                  std::string_view expected) const {
  std::string msg = absl::StrCat(filename_, ":", at.line, ":", at.column, ": ", std::string(what));
  if (!expected.empty()) absl::StrAppend(&msg, "; expected ", std::string(expected));
  return absl::InvalidArgumentError(msg);
}

absl::Status ErrorReporter::At(Location at, const absl::Status& s,
                               std::string_view expected) const {
  if (s.ok()) return s;
  return Error(at, std::string(s.message()), expected);
}

}  // namespace frontend
}  // namespace fusiond
