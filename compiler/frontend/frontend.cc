#include "compiler/frontend/frontend.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "compiler/frontend/lexer.h"
#include "compiler/frontend/lower.h"
#include "compiler/frontend/parser.h"
#include "compiler/ir/verifier.h"

namespace fusiond {

absl::StatusOr<ParsedFusion> ParseReproScript(std::string_view text, std::string_view filename) {
  const frontend::ErrorReporter errors{std::string(filename)};
  const frontend::SourceLimits limits;
  auto tokens = frontend::Tokenize(text, errors, limits);
  if (!tokens.ok()) return tokens.status();
  auto module = frontend::ParseModule(*tokens, errors, limits);
  if (!module.ok()) return module.status();
  ParsedFusion out;
  if (absl::Status s = frontend::LowerModule(*module, errors, GraphLimits{}, &out); !s.ok()) {
    return s;
  }
  // Everything was built through GraphBuilder, so a verifier failure is a
  // bug in the builder or here, not in the script.
  if (absl::Status s = VerifyGraph(out.graph); !s.ok()) {
    return absl::InternalError(absl::StrCat(
        std::string(filename), ": the parsed graph fails verification: ", s.message()));
  }
  return out;
}

absl::StatusOr<ParsedFusion> ParseReproFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ":1:1: is a directory; expected a repro script file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open the file"));
  // Read in chunks (works for pipes too), stopping just past the size limit.
  const frontend::SourceLimits limits;
  std::string text;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (text.size() > limits.max_bytes) {
      return frontend::ErrorReporter(path).Error(
          frontend::Location{},
          absl::StrCat("the script is larger than ", limits.max_bytes, " bytes"),
          absl::StrCat("at most ", limits.max_bytes, " bytes"));
    }
  }
  if (in.bad()) return absl::InvalidArgumentError(absl::StrCat(path, ":1:1: cannot read the file"));
  return ParseReproScript(text, path);
}

}  // namespace fusiond
