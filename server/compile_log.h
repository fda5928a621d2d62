// The log lines of a full compile. The fusion's canonical hash (bounded:
// one per distinct fusion) goes in these lines, not in metric labels, so an
// operator can find the fusion behind a spill or a slow compile:
//  - "compiled" (info): cache key, canonical hash, segments, microseconds;
//  - "compile_stages" (debug): each stage's microseconds, and per segment
//    the scheduler, heuristics and ptxas figures;
//  - "kernel_spills" (warning): a kernel that spills registers;
//  - "slow_compile" (warning): a compile over the slow threshold.
#ifndef FUSIOND_SERVER_COMPILE_LOG_H_
#define FUSIOND_SERVER_COMPILE_LOG_H_

#include "cache/cached_compiler.h"

namespace fusiond {

// Logs one full compile; `slow_micros` <= 0 turns the slow-compile line off.
void LogCompiled(const CachedCompileResult& result, double slow_micros);

}  // namespace fusiond

#endif  // FUSIOND_SERVER_COMPILE_LOG_H_
