// Source locations and located errors for the repro-script front end.
// Every front-end error is InvalidArgument "file:line:column: what; expected
// what", so a user can jump to the spot and see what would have been valid.
#ifndef FUSIOND_COMPILER_FRONTEND_SOURCE_H_
#define FUSIOND_COMPILER_FRONTEND_SOURCE_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace fusiond {
namespace frontend {

// A 1-based line and column (columns count bytes).
struct Location {
  int line = 1;
  int column = 1;
};

// Limits that keep hostile input from exhausting the stack or memory.
struct SourceLimits {
  size_t max_bytes = size_t{16} << 20;  // script size. Default: 16 MiB.
  int max_depth = 64;                   // bracket / expression nesting. Default: 64.
  int max_list_elements = 1 << 20;      // entries of one list literal. Default: 1M.
};

// Formats located errors for one file.
class ErrorReporter {
 public:
  explicit ErrorReporter(std::string filename) : filename_(std::move(filename)) {}

  // InvalidArgument "file:line:column: what; expected expected" (the
  // "; expected ..." part is left out when expected is empty).
  absl::Status Error(Location at, std::string_view what, std::string_view expected = {}) const;
  // Prefixes a status from a lower layer (e.g. GraphBuilder) with the
  // location, keeping its message: "file:line:column: <message>".
  absl::Status At(Location at, const absl::Status& s, std::string_view expected = {}) const;

  const std::string& filename() const { return filename_; }

 private:
  std::string filename_;
};

}  // namespace frontend
}  // namespace fusiond

#endif  // FUSIOND_COMPILER_FRONTEND_SOURCE_H_
