// The `fusionc compile --json` report of a compiled fusion with its cache
// status. Shared by the embedded cache and the gRPC client so that
// `fusionc compile` prints the same report with or without --server.
#ifndef FUSIOND_CACHE_REPORT_H_
#define FUSIOND_CACHE_REPORT_H_

#include <string>

#include "proto/cache.pb.h"

namespace fusiond {

// The stored report (CompileResultToJson at compile time) with
// "cache": "hit" or "miss" added as the first field.
std::string ReportWithCacheStatus(const fusiond::v1::CompiledFusion& compiled, bool hit);

}  // namespace fusiond

#endif  // FUSIOND_CACHE_REPORT_H_
