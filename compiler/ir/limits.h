// Limits that bound what one compile may cost, checked before the stage
// they protect: the graph's size and depth before the passes, the size of
// the partition before the segmenter's search, the ops of each kernel
// before code generation and NVRTC. Each is a plain field with its default,
// so a daemon can expose it as a flag; 0 turns a limit off. Beyond a limit
// a compile is refused with ResourceExhausted naming the limit, the value
// and the option that raises it.
#ifndef FUSIOND_COMPILER_IR_LIMITS_H_
#define FUSIOND_COMPILER_IR_LIMITS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "compiler/ir/graph.h"

namespace fusiond {

struct CompileLimits {
  // Nodes per graph. Default: 100,000 (GraphLimits::max_nodes, which the
  // front end and FromProto apply while building).
  int max_nodes = 100000;
  // The longest chain of nodes from an input to an output. Real fusions
  // are a few hundred deep at most. Default: 2,000.
  int max_depth = 2000;
  // Nodes of one kernel (segment), shape ops included. NVRTC's time grows
  // with them (a 100-op chain of sin/cos/tanh/abs: ~22 s on 2 cores; the
  // corpus' largest kernel has 37). Default: 500.
  int max_kernel_ops = 500;
  // Compute nodes the segmenter may partition when no scheduler takes the
  // whole graph: its search grows faster than quadratically (1,000 such
  // nodes: ~4 s on 2 cores; 3,000: ~40 s). Default: 1,000.
  int max_partition_nodes = 1000;
  // Parameters of one kernel: its inputs, outputs and symbolic sizes. NVRTC's
  // time grows faster than quadratically with them whatever the kernel does
  // (one neg stored to N outputs, 2 cores: 512 outputs ~5 s, 768 ~20 s, 1,000
  // ~45 s); the daemon takes 512 inputs plus outputs (--max-graph-io), and
  // this leaves room for their sizes. Default: 640.
  int max_kernel_params = 640;
};

// The parameters CheckKernelLimits counts against max_kernel_params.
struct KernelParamCount {
  int64_t inputs = 0, outputs = 0, sizes = 0;
  int64_t total() const { return inputs + outputs + sizes; }
};
KernelParamCount CountKernelParams(const Graph& segment);

// The longest chain of nodes of g (0 for a graph without nodes). Linear
// time, no recursion; g must be verified (nodes in topological order).
int GraphDepth(const Graph& g);

// ResourceExhausted when g has more nodes than limits.max_nodes or is
// deeper than limits.max_depth.
absl::Status CheckGraphLimits(const Graph& g, const CompileLimits& limits);

// ResourceExhausted when segment `index` (its standalone graph) has more
// nodes than limits.max_kernel_ops or more parameters than
// limits.max_kernel_params.
absl::Status CheckKernelLimits(const Graph& segment, int index, const CompileLimits& limits);

// The ResourceExhausted error of every limit: "<what> is <value>, over the
// limit of <limit> (<option>)".
absl::Status LimitError(const std::string& what, int64_t value, int64_t limit,
                        const std::string& option);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_IR_LIMITS_H_
