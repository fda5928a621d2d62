// The one wrapper that runs every optimization pass: it times the pass,
// records a PassRecord (compiler/passes/pass_record.h), keeps the IR text after the
// pass when a dump was requested and the pass changed the graph, and runs
// the IR verifier after every pass (debug builds and tests). A pass is a free
// function with the PassFn signature; it returns whether it changed the
// graph and leaves the graph compacted (compiler/passes/rewrite.h).
#ifndef FUSIOND_COMPILER_PASSES_PASS_MANAGER_H_
#define FUSIOND_COMPILER_PASSES_PASS_MANAGER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/ir/graph.h"
#include "compiler/passes/pass_record.h"

namespace fusiond {

#ifdef NDEBUG
inline constexpr bool kVerifyPassesByDefault = false;
#else
inline constexpr bool kVerifyPassesByDefault = true;
#endif

struct PassOptions {
  // Remove narrowing cast round trips (f32->bf16->f32), which makes the
  // result more precise than the definition asks. Default: false.
  bool allow_precision_increase = false;
  // Keep the IR after this pass when it changed the graph ("all" for every
  // pass). Default: none.
  std::string dump_pass;
  // Run VerifyGraph after every pass. Default: true in debug builds.
  bool verify = kVerifyPassesByDefault;
  // Rounds of the whole pass list before giving up on a fixed point.
  // Default: 4.
  int max_rounds = 4;
};

// What a pass wants the report to say (e.g. a round trip it kept).
struct PassLog {
  std::vector<std::string> notes;
};

using PassFn = absl::StatusOr<bool> (*)(Graph&, const PassOptions&, PassLog&);

class PassManager {
 public:
  // Appends one PassRecord per pass application to *records.
  PassManager(const PassOptions& options, std::vector<PassRecord>* records)
      : options_(options), records_(records) {}

  // Runs `fn` on g; returns whether it changed g. After the first failure
  // (pass error or verifier error) later calls do nothing and return false.
  bool Run(const char* name, PassFn fn, Graph& g);

  // OK, or the first failure (Internal for a verifier error after a pass).
  const absl::Status& status() const { return status_; }

 private:
  PassOptions options_;
  std::vector<PassRecord>* records_;
  absl::Status status_;
};

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_PASSES_PASS_MANAGER_H_
