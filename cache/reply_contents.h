// What a compile reply carries. A launch needs each kernel's binary, name,
// arch and manifest, the segments' heuristics and the fusion's manifest; the
// CUDA source and the compile report (most of a record's bytes) go out only
// when the caller asks (CompileRequest.include_source / include_report).
#ifndef FUSIOND_CACHE_REPLY_CONTENTS_H_
#define FUSIOND_CACHE_REPLY_CONTENTS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "proto/cache.pb.h"

namespace fusiond {

struct ReplyContents {
  // Every kernel's CUDA C++ (Kernel.cuda_source).
  bool source = false;
  // report_json, passes, and each segment's graph, scheduler and boundary
  // reasons.
  bool report = false;

  static ReplyContents Everything() { return {true, true}; }
  bool everything() const { return source && report; }
  // 0..3, for tables indexed by the contents.
  int index() const { return (source ? 1 : 0) | (report ? 2 : 0); }
};

// Clears from `compiled` what `contents` does not ask for.
void TrimCompiledFusion(ReplyContents contents, fusiond::v1::CompiledFusion* compiled);

// A serialized CompiledFusion trimmed the same way; the payload itself when
// `contents` asks for everything. Internal when it does not parse (callers
// pass verified records).
absl::StatusOr<std::shared_ptr<const std::string>> TrimPayload(
    const std::shared_ptr<const std::string>& payload, ReplyContents contents);

}  // namespace fusiond

#endif  // FUSIOND_CACHE_REPLY_CONTENTS_H_
