// Helpers for the pass unit tests.
#ifndef FUSIOND_COMPILER_PASSES_TEST_UTIL_H_
#define FUSIOND_COMPILER_PASSES_TEST_UTIL_H_

#include <cstdio>
#include <cstdlib>
#include <string>

#include "compiler/ir/builder.h"
#include "compiler/passes/pass_manager.h"

namespace fusiond {

int CountOps(const Graph& g, OpKind op);
// Runs one pass, verifies the graph after it and returns whether it changed;
// test failures (not crashes) when the pass fails or breaks the IR.
bool RunPassForTest(PassFn fn, Graph& g, const PassOptions& options = {}, PassLog* log = nullptr);
// Unwraps a StatusOr in tests (aborts the test binary on error).
template <typename T>
T Must(absl::StatusOr<T> v) {
  if (!v.ok()) {
    fprintf(stderr, "unexpected error: %s\n", std::string(v.status().message()).c_str());
    abort();
  }
  return *std::move(v);
}

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_PASSES_TEST_UTIL_H_
