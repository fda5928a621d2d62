#include "client/fusionc/script_input.h"

#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "compiler/frontend/source.h"

namespace fusiond {
namespace fusionc {
namespace {

struct LimitFlag {
  const char* name;
  int CompileLimits::*field;
};

constexpr LimitFlag kLimitFlags[] = {
    {"max-graph-nodes", &CompileLimits::max_nodes},
    {"max-graph-depth", &CompileLimits::max_depth},
    {"max-kernel-ops", &CompileLimits::max_kernel_ops},
    {"max-partition-nodes", &CompileLimits::max_partition_nodes},
    {"max-kernel-params", &CompileLimits::max_kernel_params},
};

absl::StatusOr<int64_t> ScriptByteLimit(const ParsedFlags& flags) {
  absl::StatusOr<std::optional<int64_t>> given = flags.GetInt("max-script-bytes");
  if (!given.ok()) return given.status();
  if (!given->has_value()) return MaxScriptBytes();
  if (**given <= 0 || **given > MaxScriptBytes()) {
    return absl::InvalidArgumentError(absl::StrCat("--max-script-bytes is ", **given,
                                                   "; it takes 1 to ", MaxScriptBytes(),
                                                   " (the front end's limit)"));
  }
  return **given;
}

absl::Status TooLarge(const std::string& path, int64_t size, int64_t limit, bool partial) {
  return absl::ResourceExhaustedError(
      absl::StrCat("the script ", path, " is ", partial ? "more than " : "", partial ? limit : size,
                   " bytes, over the limit of ", limit,
                   " (--max-script-bytes; the front end reads at most ", MaxScriptBytes(), ")"));
}

}  // namespace

int64_t MaxScriptBytes() { return static_cast<int64_t>(frontend::SourceLimits{}.max_bytes); }

FlagSpec ScriptBytesFlagSpec() { return {"max-script-bytes", true}; }

absl::StatusOr<ParsedFusion> ParseScriptFile(const ParsedFlags& flags, const std::string& path) {
  absl::StatusOr<int64_t> limit = ScriptByteLimit(flags);
  if (!limit.ok()) return limit.status();
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::is_directory(st)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ":1:1: is a directory; expected a repro script file"));
  }
  // A regular file's size is known before reading: a huge one costs a stat.
  if (!ec && std::filesystem::is_regular_file(st)) {
    const uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && size > static_cast<uintmax_t>(*limit)) {
      return TooLarge(path, static_cast<int64_t>(size), *limit, false);
    }
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open the file"));
  // Pipes (and files that grew): read in chunks, stopping past the limit.
  std::string text;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (static_cast<int64_t>(text.size()) > *limit) {
      return TooLarge(path, static_cast<int64_t>(text.size()), *limit, true);
    }
  }
  if (in.bad()) return absl::InvalidArgumentError(absl::StrCat(path, ":1:1: cannot read the file"));
  return ParseReproScript(text, path);
}

std::vector<FlagSpec> LimitFlagSpecs() {
  std::vector<FlagSpec> specs;
  for (const LimitFlag& f : kLimitFlags) specs.push_back({f.name, true});
  specs.push_back(ScriptBytesFlagSpec());
  return specs;
}

absl::Status ApplyLimitFlags(const ParsedFlags& flags, CompileLimits* limits) {
  for (const LimitFlag& f : kLimitFlags) {
    absl::StatusOr<std::optional<int64_t>> v = flags.GetInt(f.name);
    if (!v.ok()) return v.status();
    if (!v->has_value()) continue;
    if (**v < 0 || **v > std::numeric_limits<int>::max()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", f.name, " is ", **v, "; it takes a count, 0 for no limit"));
    }
    limits->*f.field = static_cast<int>(**v);
  }
  return absl::OkStatus();
}

bool LimitFlagGiven(const ParsedFlags& flags) {
  for (const LimitFlag& f : kLimitFlags) {
    if (flags.Has(f.name)) return true;
  }
  return false;
}

}  // namespace fusionc
}  // namespace fusiond
