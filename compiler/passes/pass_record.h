// What one pass application reports: plain data the pass manager fills and
// the pipeline's report (compiler/compile_result.h) carries.
#ifndef FUSIOND_COMPILER_PASSES_PASS_RECORD_H_
#define FUSIOND_COMPILER_PASSES_PASS_RECORD_H_

#include <string>
#include <vector>

namespace fusiond {

// One pass application.
struct PassRecord {
  std::string name;
  bool changed = false;
  double micros = 0;
  std::string dump;                // IR after the pass, when requested and changed
  std::vector<std::string> notes;  // what the pass wants reported (kept round trips, ...)
};

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_PASSES_PASS_RECORD_H_
