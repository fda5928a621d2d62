// Conversion between the IR and the wire format (proto/fusion.proto).
// FromProto rebuilds the graph through GraphBuilder, so a malformed message
// is rejected with InvalidArgument naming the node and the reason.
#ifndef FUSIOND_COMPILER_IR_IR_PROTO_H_
#define FUSIOND_COMPILER_IR_IR_PROTO_H_

#include "absl/status/statusor.h"
#include "compiler/ir/builder.h"
#include "compiler/ir/graph.h"
#include "proto/fusion.pb.h"

namespace fusiond {

// The wire-format version this build writes and the newest it reads.
constexpr uint32_t kFusionGraphVersion = 1;

fusiond::v1::FusionGraph ToProto(const Graph& g);
absl::StatusOr<Graph> FromProto(const fusiond::v1::FusionGraph& proto, GraphLimits limits = {});

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_IR_IR_PROTO_H_
