#include "compiler/compile_kernels.h"

#include <thread>

#include "compiler/ir/builder.h"
#include "compiler/nvrtc/nvrtc_compiler.h"
#include "compiler/pipeline.h"
#include "compiler/scheduler/target.h"
#include "gtest/gtest.h"

namespace fusiond {
namespace {

template <typename T>
T Must(absl::StatusOr<T> v) {
  EXPECT_TRUE(v.ok()) << v.status();
  return *std::move(v);
}

// Row sums of x * y, then the sum of their exponentials: two kernels (no
// scheduler takes a reduction of a reduction).
Graph TwoKernelGraph() {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {256, 1024}));
  ValueId y = Must(b.DefineTensor("y", DataType::kFloat, {256, 1024}));
  ValueId r = Must(b.Reduce(OpKind::kSum, Must(b.Binary(OpKind::kMul, x, y)), {1}, false));
  ValueId e = Must(b.Unary(OpKind::kExp, r));
  EXPECT_TRUE(b.AddOutput(Must(b.Reduce(OpKind::kSum, e, {0}, false))).ok());
  EXPECT_TRUE(b.AddOutput(e).ok());
  return g;
}

CompileResult Compile(const Graph& g, int threads) {
  CompileOptions options;
  options.kernel_threads = threads;
  return Must(CompileFusion(g, {}, options));
}

TEST(CompileKernels, ThreadsNeverExceedTheJobs) {
  EXPECT_EQ(KernelThreads(0, 1), 1);
  EXPECT_EQ(KernelThreads(1, 5), 1);
  EXPECT_EQ(KernelThreads(8, 3), 3);
  EXPECT_EQ(KernelThreads(4, 0), 1);
  EXPECT_EQ(KernelThreads(0, 1000),
            static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

// Compiled at once, a split fusion's kernels are the serial compile's:
// the same names, sources, binaries and ptxas reports, in segment order.
TEST(CompileKernels, ParallelKernelsEqualSerialOnes) {
  const Graph g = TwoKernelGraph();
  const CompileResult serial = Compile(g, 1);
  ASSERT_EQ(serial.segments.size(), 2u);
  for (int threads : {0, 2, 4}) {
    const CompileResult parallel = Compile(g, threads);
    ASSERT_EQ(parallel.segments.size(), serial.segments.size());
    for (size_t i = 0; i < serial.segments.size(); ++i) {
      const KernelArtifact& a = *serial.segments[i].kernel;
      const KernelArtifact& b = *parallel.segments[i].kernel;
      EXPECT_EQ(a.kernel_name, b.kernel_name) << threads;
      EXPECT_EQ(a.cuda_source, b.cuda_source) << threads;
      EXPECT_EQ(a.binary, b.binary) << threads;
      EXPECT_EQ(a.registers, b.registers) << threads;
      EXPECT_EQ(a.manifest_json, b.manifest_json) << threads;
    }
    EXPECT_GT(parallel.stage_micros.at("nvrtc"), 0) << threads;
  }
  if (NvrtcVersion() != "none") {
    EXPECT_FALSE(serial.segments[0].kernel->binary.empty());
  }
}

// A failing kernel: the first failure in job order is returned whatever
// finished first, and no job after it starts once it is known.
TEST(CompileKernels, FirstFailureInOrderWins) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "needs NVRTC to reject an architecture";
  const Graph g = TwoKernelGraph();
  const CompileResult r = Compile(g, 1);
  ASSERT_EQ(r.segments.size(), 2u);
  auto job = [&](size_t seg, const std::string& arch) {
    KernelJob j;
    j.graph = &r.segments[seg].graph;
    j.params = &r.segments[seg].params;
    j.options.kernel_name = "k" + std::to_string(seg);
    j.options.target = DefaultTarget();
    j.options.target.arch = arch;
    return j;
  };
  // Every job before the failure runs, whichever thread took it and
  // however soon the failure came (an architecture NVRTC refuses at once).
  const std::vector<KernelJob> jobs = {job(0, "sm_90"), job(1, "sm_90"), job(1, "sm_10"),
                                       job(0, "sm_90"), job(1, "sm_20")};
  for (int threads : {1, 2, 3, 5}) {
    auto out = CompileKernels(jobs, threads);
    ASSERT_EQ(out.size(), jobs.size());
    EXPECT_TRUE(out[0].ok()) << threads << ": " << out[0].status();
    EXPECT_TRUE(out[1].ok()) << threads << ": " << out[1].status();
    ASSERT_FALSE(out[2].ok()) << threads;
    EXPECT_EQ(out[2].status().code(), absl::StatusCode::kInvalidArgument) << out[2].status();
    EXPECT_NE(out[2].status().message().find("sm_10"), std::string::npos) << out[2].status();
    if (threads == 1) {  // serial: nothing after the failure ran
      EXPECT_EQ(out[3].status().code(), absl::StatusCode::kCancelled) << out[3].status();
      EXPECT_EQ(out[4].status().code(), absl::StatusCode::kCancelled) << out[4].status();
    }
  }
}

}  // namespace
}  // namespace fusiond
