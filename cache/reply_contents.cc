#include "cache/reply_contents.h"

namespace fusiond {

void TrimCompiledFusion(ReplyContents contents, fusiond::v1::CompiledFusion* compiled) {
  if (!contents.report) {
    compiled->clear_report_json();
    compiled->clear_passes();
  }
  for (fusiond::v1::Segment& segment : *compiled->mutable_segments()) {
    if (!contents.report) {
      segment.clear_graph();
      segment.clear_scheduler_reason();
      segment.clear_boundary_reason();
    }
    if (!contents.source && segment.has_kernel()) segment.mutable_kernel()->clear_cuda_source();
  }
}

absl::StatusOr<std::shared_ptr<const std::string>> TrimPayload(
    const std::shared_ptr<const std::string>& payload, ReplyContents contents) {
  if (contents.everything()) return payload;
  fusiond::v1::CompiledFusion compiled;
  if (!compiled.ParseFromString(*payload)) {
    return absl::InternalError("a verified cache record does not parse as a CompiledFusion");
  }
  TrimCompiledFusion(contents, &compiled);
  return std::make_shared<const std::string>(compiled.SerializeAsString());
}

}  // namespace fusiond
