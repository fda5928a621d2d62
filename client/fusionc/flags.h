// A small command-line flag parser shared by fusionc's commands:
// `--name value`, `--name=value`, boolean `--name`, positional arguments,
// `--` ends flags, and `-h`/`--help`. Unknown flags and missing values are
// InvalidArgument (exit code 2).
#ifndef FUSIOND_CLIENT_FUSIONC_FLAGS_H_
#define FUSIOND_CLIENT_FUSIONC_FLAGS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fusiond {
namespace fusionc {

struct FlagSpec {
  std::string name;  // without the dashes: "seed"
  bool takes_value = true;
};

struct ParsedFlags {
  std::vector<std::string> positional;
  std::map<std::string, std::string> values;  // boolean flags hold "true"
  bool help = false;

  bool Has(const std::string& name) const { return values.count(name) != 0; }
  std::optional<std::string> Get(const std::string& name) const;
  // The flag as an integer; InvalidArgument if it is not one.
  absl::StatusOr<std::optional<int64_t>> GetInt(const std::string& name) const;
};

absl::StatusOr<ParsedFlags> ParseFlags(const std::vector<std::string>& args,
                                       const std::vector<FlagSpec>& specs);

// Parses "--shapes" text (eval, compile): one entry per graph input separated
// by ';', sizes within an entry separated by 'x' or ',' ("2048x8192;8192");
// an empty entry or "scalar" is a scalar input.
absl::StatusOr<std::vector<std::vector<int64_t>>> ParseShapes(const std::string& text);

}  // namespace fusionc
}  // namespace fusiond

#endif  // FUSIOND_CLIENT_FUSIONC_FLAGS_H_
