// fusionc's command registry. Each command lives in its own
// `<name>_command.cc` in this folder and registers itself with
// FUSIONC_COMMAND; CMake compiles every *_command.cc it finds here, so adding
// a command never means editing another file. A command may also ship a
// `<name>_command.cmake` beside it to link extra libraries (see
// CMakeLists.txt).
#ifndef FUSIOND_CLIENT_FUSIONC_COMMANDS_H_
#define FUSIOND_CLIENT_FUSIONC_COMMANDS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace fusiond {
namespace fusionc {

// Exit codes shared by every command.
constexpr int kExitOk = 0;
constexpr int kExitInternal = 1;  // our bug, GPU/NVRTC trouble, ...
constexpr int kExitBadInput = 2;  // parse/verify errors, unknown flags, bad files

struct Command {
  const char* name;     // "parse"
  const char* summary;  // one line for `fusionc --help`
  const char* usage;    // full text for `fusionc <name> --help`: synopsis and every flag
  // Runs the command on the arguments after its name; returns an exit code.
  int (*run)(const std::vector<std::string>& args);
};

// Every registered command, sorted by name.
const std::vector<Command>& Commands();

class CommandRegistrar {
 public:
  explicit CommandRegistrar(const Command& command);
};

// Registers a command at static-initialization time:
//   FUSIONC_COMMAND(parse, "print the IR", kParseUsage, RunParse);
#define FUSIONC_COMMAND(name, summary, usage, run)                            \
  static const ::fusiond::fusionc::CommandRegistrar fusionc_registrar_##name( \
      ::fusiond::fusionc::Command{#name, summary, usage, run})

// Prints s to stderr as "fusionc <command>: <message>" and maps its code to
// an exit code: InvalidArgument, NotFound, OutOfRange, FailedPrecondition and
// ResourceExhausted are bad input (2); everything else is internal (1).
int ReportError(const char* command, const absl::Status& s);
int ExitCodeFor(const absl::Status& s);

}  // namespace fusionc
}  // namespace fusiond

#endif  // FUSIOND_CLIENT_FUSIONC_COMMANDS_H_
