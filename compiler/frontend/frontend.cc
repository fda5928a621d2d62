#include "compiler/frontend/frontend.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "compiler/frontend/lexer.h"
#include "compiler/frontend/lower.h"
#include "compiler/frontend/parser.h"
#include "compiler/ir/verifier.h"

namespace fusiond {

absl::StatusOr<ParsedFusion> ParseReproScript(std::string_view text,
                                              std::string_view filename) {
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
    return absl::InternalError(absl::StrCat(std::string(filename), ": the parsed graph fails verification: ",
                                            s.message()));
  }
  return out;
}

absl::StatusOr<ParsedFusion> ParseReproFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open the file"));
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const frontend::SourceLimits limits;
  if (size < 0) return absl::InvalidArgumentError(absl::StrCat(path, ":1:1: cannot read the file"));
  if (static_cast<uint64_t>(size) > limits.max_bytes) {
    return frontend::ErrorReporter(path).Error(
        frontend::Location{}, absl::StrCat("the script is ", size, " bytes"),
        absl::StrCat("at most ", limits.max_bytes, " bytes"));
  }
  in.seekg(0, std::ios::beg);
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), size);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(path, ":1:1: cannot read the file"));
  return ParseReproScript(text, path);
}

}  // namespace fusiond
