// What bounds fusionc's work on one script: the size of the script file,
// checked before it is read, and the compile limits (compiler/ir/limits.h)
// as flags.
#ifndef FUSIOND_CLIENT_FUSIONC_SCRIPT_INPUT_H_
#define FUSIOND_CLIENT_FUSIONC_SCRIPT_INPUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/fusionc/flags.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/limits.h"

namespace fusiond {
namespace fusionc {

// The most --max-script-bytes may be, and its default: the front end's own
// limit (frontend::SourceLimits::max_bytes, 16 MiB).
int64_t MaxScriptBytes();

// --max-script-bytes (the commands that read a script).
FlagSpec ScriptBytesFlagSpec();

// Parses the repro script at `path`. A regular file larger than
// --max-script-bytes is refused (ResourceExhausted naming its size and the
// limit) before any of it is read; a pipe is read up to the limit and no
// further. InvalidArgument for a bad --max-script-bytes or a directory,
// NotFound for a file that cannot be opened.
absl::StatusOr<ParsedFusion> ParseScriptFile(const ParsedFlags& flags, const std::string& path);

// --max-graph-nodes, --max-graph-depth, --max-kernel-ops,
// --max-partition-nodes, --max-kernel-params and --max-script-bytes
// (`fusionc compile`).
std::vector<FlagSpec> LimitFlagSpecs();

// Sets the limits given as flags (the others keep their defaults); 0 turns
// a limit off. InvalidArgument naming the flag for a negative or non-integer
// value.
absl::Status ApplyLimitFlags(const ParsedFlags& flags, CompileLimits* limits);

// Whether any compile limit flag (not --max-script-bytes) was given.
bool LimitFlagGiven(const ParsedFlags& flags);

}  // namespace fusionc
}  // namespace fusiond

#endif  // FUSIOND_CLIENT_FUSIONC_SCRIPT_INPUT_H_
