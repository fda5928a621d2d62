// libFuzzer target: a repro script through the front end, then the pipeline
// (fuzz_pipeline.h). Whatever the bytes, each stage returns a value or an
// error with a message; a crash, a sanitizer report or a failed check is a
// finding. Run by scripts/fuzz.sh; replayed over the seeds and the saved
// findings by CTest (fuzz_replay.cc).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "compiler/frontend/frontend.h"
#include "tests/fuzz/fuzz_pipeline.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = fusiond::ParseReproScript(text, "fuzz.py");
  if (!parsed.ok()) {
    fusiond::FuzzCheckError(parsed.status());
    return 0;
  }
  fusiond::FuzzPipeline(parsed->graph, parsed->input_shapes);
  return 0;
}
