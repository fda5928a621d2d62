// CompileResult (compiler/compile_result.h) as the proto the cache stores and the
// daemon returns (proto/cache.proto), and the report JSON with its "cache"
// field.
#ifndef FUSIOND_CACHE_RESULT_PROTO_H_
#define FUSIOND_CACHE_RESULT_PROTO_H_

#include <string>

#include "cache/report.h"
#include "compiler/pipeline.h"
#include "proto/cache.pb.h"

namespace fusiond {

// Every field of `result`, the kernels' binaries included, plus its report
// (CompileResultToJson) so a cached result prints exactly as when compiled.
fusiond::v1::CompiledFusion CompiledFusionFromResult(const CompileResult& result);

}  // namespace fusiond

#endif  // FUSIOND_CACHE_RESULT_PROTO_H_
