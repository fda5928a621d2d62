// libFuzzer target: bytes as a serialized FusionGraph (proto/fusion.proto,
// what clients send the daemon), through FromProto, then the pipeline at the
// definition's static sizes (fuzz_pipeline.h). A message FromProto accepts
// must be a graph the verifier accepts; the rest as fuzz_repro_script.cc.
#include <cstddef>
#include <cstdint>

#include "compiler/ir/ir_proto.h"
#include "google/protobuf/stubs/logging.h"
#include "tests/fuzz/fuzz_pipeline.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Invalid UTF-8 in string fields is a parse failure; without its log line.
  static const bool quiet = (google::protobuf::SetLogHandler(nullptr), true);
  (void)quiet;
  fusiond::v1::FusionGraph proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size))) return 0;
  auto graph = fusiond::FromProto(proto);
  if (!graph.ok()) {
    fusiond::FuzzCheckError(graph.status());
    return 0;
  }
  fusiond::FuzzPipeline(*graph, {});
  return 0;
}
