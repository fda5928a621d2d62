// fusionc: the fusiond command-line tool.
//
// How commands are found. Every command is one file `<name>_command.cc` in
// this folder that registers itself at static-initialization time:
//
//   int RunFoo(const std::vector<std::string>& args);   // args after "foo"
//   FUSIONC_COMMAND(foo, "one-line summary", kFooUsage, RunFoo);
//
// CMakeLists.txt compiles every *_command.cc it finds (file(GLOB)), so adding
// a command needs no edit to this file or to the build. If the command needs
// more libraries or helper sources, put a `<name>_command.cmake` beside it:
// CMake includes it before creating the target, and it may append to
// FUSIONC_LIBS / FUSIONC_SOURCES or set FUSIONC_SKIP_COMMAND to ON (e.g. when
// a library it needs is not built).
//
// Global flags: `fusionc --server HOST:PORT <command> ...` is the same as
// `fusionc <command> --server HOST:PORT ...` (commands that talk to fusiond
// accept --server).
//
// Exit codes (commands.h): 0 ok, 2 bad input (parse/verify errors, unknown
// flags or commands, unreadable files), 1 internal errors.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "client/fusionc/commands.h"
#include "compiler/codegen/version.h"
#include "fusiond/version.h"

namespace fusiond {
namespace fusionc {
namespace {

std::vector<Command>& Registry() {
  static std::vector<Command>* commands = new std::vector<Command>();
  return *commands;
}

void PrintMainHelp(FILE* out) {
  std::fprintf(out,
               "usage: fusionc [--server HOST:PORT] <command> [args...]\n"
               "       fusionc <command> --help   (every flag of a command)\n"
               "       fusionc --help | --version\n\n"
               "fusionc reads fusion definitions in the repro-script form (fd.define_tensor,\n"
               "fd.ops.*, fd.add_output, then an `inputs = [...]` list).\n\n"
               "commands:\n");
  for (const Command& c : Commands()) std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
  std::fprintf(out,
               "\nexit codes: 0 ok; 2 bad input (parse or verify errors, unknown flags,\n"
               "unreadable files), printed to stderr; 1 internal error.\n");
}

}  // namespace

CommandRegistrar::CommandRegistrar(const Command& command) { Registry().push_back(command); }

const std::vector<Command>& Commands() {
  static const bool sorted = [] {
    std::sort(Registry().begin(), Registry().end(),
              [](const Command& a, const Command& b) { return std::string(a.name) < b.name; });
    return true;
  }();
  (void)sorted;
  return Registry();
}

int ExitCodeFor(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kOk:
      return kExitOk;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kResourceExhausted:
      return kExitBadInput;
    default:
      return kExitInternal;
  }
}

int ReportError(const char* command, const absl::Status& s) {
  const int code = ExitCodeFor(s);
  // The daemon or the network said no: its code is the news, not a bug here.
  const bool remote = s.code() == absl::StatusCode::kUnauthenticated ||
                      s.code() == absl::StatusCode::kPermissionDenied ||
                      s.code() == absl::StatusCode::kUnavailable ||
                      s.code() == absl::StatusCode::kDeadlineExceeded;
  const std::string prefix = remote                  ? absl::StatusCodeToString(s.code()) + ": "
                             : code == kExitInternal ? "internal error: "
                                                     : "";
  std::fprintf(stderr, "fusionc %s: %s%s\n", command, prefix.c_str(),
               std::string(s.message()).c_str());
  return code;
}

}  // namespace fusionc
}  // namespace fusiond

int main(int argc, char** argv) {
  using namespace fusiond::fusionc;
  // Reports and help in one write each: a reader that stops early (grep -q)
  // then never cuts a 4 KiB stdio chunk in two with SIGPIPE.
  static char out_buffer[1 << 16];
  std::setvbuf(stdout, out_buffer, _IOFBF, sizeof(out_buffer));
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    PrintMainHelp(stderr);
    return kExitBadInput;
  }
  if (args[0] == "--version") {
    std::printf("fusionc %s (codegen-%d)\n", fusiond::kFusiondVersion, fusiond::kCodegenVersion);
    return 0;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    if (args[0] == "help" && args.size() > 1) {
      args = {args[1], "--help"};
    } else {
      PrintMainHelp(stdout);
      return kExitOk;
    }
  }
  // A leading --server belongs to the command (see the top of this file).
  std::vector<std::string> global;
  while (!args.empty() && args[0].rfind("--server", 0) == 0) {
    global.push_back(args[0]);
    args.erase(args.begin());
    if (global.back() == "--server" && !args.empty()) {
      global.push_back(args[0]);
      args.erase(args.begin());
    }
  }
  if (args.empty()) {
    PrintMainHelp(stderr);
    return kExitBadInput;
  }
  for (const Command& c : Commands()) {
    if (args[0] == c.name) {
      std::vector<std::string> command_args(args.begin() + 1, args.end());
      command_args.insert(command_args.end(), global.begin(), global.end());
      try {
        return c.run(command_args);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "fusionc %s: internal error: uncaught exception: %s\n", c.name,
                     e.what());
        return kExitInternal;
      }
    }
  }
  std::fprintf(stderr, "fusionc: unknown command '%s'\n\n", args[0].c_str());
  PrintMainHelp(stderr);
  return kExitBadInput;
}
