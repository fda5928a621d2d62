// The checks a compile or lookup request passes before any of it is parsed
// or queued: limits that bound what it may cost the daemon.
#ifndef FUSIOND_CACHE_REQUEST_CHECK_H_
#define FUSIOND_CACHE_REQUEST_CHECK_H_

#include "absl/status/status.h"
#include "cache/cached_compiler.h"

namespace fusiond {

// ResourceExhausted past options' node or input-plus-output limit (the
// message names it); InvalidArgument for a name over kMaxRequestNameBytes
// or a signature whose element count overflows 64 bits.
absl::Status CheckRequest(const FusionRequest& request, const CachedCompilerOptions& options);

}  // namespace fusiond

#endif  // FUSIOND_CACHE_REQUEST_CHECK_H_
