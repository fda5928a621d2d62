// The heuristic functions, one file per scheduler kind
// (heuristics_<kind>.cc), and the helpers they share (heuristics_common.cc).
// Each reads only the FusionAnalysis summary (pattern, sizes, sorted tensor
// summaries) and the Target, so equal summaries give equal parameters.
#ifndef FUSIOND_COMPILER_SCHEDULER_KERNEL_HEURISTICS_H_
#define FUSIOND_COMPILER_SCHEDULER_KERNEL_HEURISTICS_H_

#include <cstdint>
#include <optional>

#include "compiler/scheduler/analysis.h"
#include "compiler/scheduler/heuristics.h"
#include "compiler/scheduler/target.h"

namespace fusiond {

HeuristicParams PointwiseHeuristics(const FusionAnalysis& a, const Target& t);
// nullopt when a row does not fit on chip (registers or shared memory).
std::optional<HeuristicParams> InnerPersistentHeuristics(const FusionAnalysis& a, const Target& t);
// The non-persistent fallback for rows too wide to keep on chip.
HeuristicParams InnerReductionHeuristics(const FusionAnalysis& a, const Target& t);
// Blocks an inner reduction gives each row: more than one where the rows are
// fewer than half the SMs and long enough to share (1: a block a row).
int64_t InnerRowSplit(const FusionAnalysis& a, const Target& t);
// Such rows, in a fusion that moves at least kFewLongRowsBytes: the inner
// persistent scheduler leaves them to the inner reduction's shared rows
// rather than a block a row on a few SMs (log_softmax over a 50257 vocabulary
// at 64 tokens: 64 blocks). Below it a launch costs about as much as the
// whole transfer (2 us at HBM bandwidth) and the row keeps its one read.
constexpr int64_t kFewLongRowsBytes = int64_t{8} << 20;
bool FewLongRows(const FusionAnalysis& a, const Target& t);
HeuristicParams InnerOuterPersistentHeuristics(const FusionAnalysis& a, const Target& t);
HeuristicParams OuterPersistentHeuristics(const FusionAnalysis& a, const Target& t);
HeuristicParams OuterReductionHeuristics(const FusionAnalysis& a, const Target& t);
// Outer reductions over `rlen` rows of `columns` adjacent columns, a lane a
// column (rows_per_block > 1; heuristics_outer_persistent.cc); `rereads`:
// the passes after the first read the inputs again.
HeuristicParams OuterLanesHeuristics(const FusionAnalysis& a, const Target& t, SchedulerKind kind,
                                     int64_t columns, int64_t rlen, bool rereads);

// Code generation's choices beyond the launch shape (one_pass_variance,
// dynamic_rows, streaming_stores, exact_tiling, blocks_per_sm), from the
// other fields and the summary; every heuristic function above ends with it
// (heuristics_kernel_form.cc). Parameters changed by hand (tests, the
// fusiond_cgdev tool) call it again.
void DecideKernelForm(const FusionAnalysis& a, const Target& t, HeuristicParams* p);

// --- shared helpers (heuristics_common.cc) ---

inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t RoundUp(int64_t a, int64_t b) { return CeilDiv(a, b) * b; }
// Largest power of two <= n (n >= 1).
int64_t FloorPow2(int64_t n);

// Elements per vectorized access along the inner extent: 16 bytes of the
// widest tensor that varies along it, at most 8, dividing `extent`.
int VectorWidth(const FusionAnalysis& a, int64_t extent);

// Floats a thread keeps per vector slot of its persistent buffers: one per
// element of every full input that varies along the row (in compute type;
// float64 counts twice), plus `accumulators` more per element.
int BufferFloatsPerElement(const FusionAnalysis& a, int accumulators);

// Registers a thread needs beyond its buffers (indices, reductions, temps).
inline constexpr int kRegisterOverhead = 32;
// 32-bit words a thread keeps of every input varying along the row (full
// rows and column operands), `elements` of each, packed as stored.
int64_t RowWordsPerThread(const FusionAnalysis& a, int64_t elements);

// Blocks of `threads` threads using `registers` each and `smem` bytes that
// fit on one SM at once (0 when not even one does).
int BlocksPerSm(const Target& t, int threads, int registers, int64_t smem);

// A persistent split of `vectors` vector slots of a row over block_x threads
// of persistent_batch slots each.
struct PersistentSplit {
  int block_x = 0;
  int batch = 0;
  int registers = 0;
  int rows_per_block = 1;
};
// The split with the least padding whose registers fit (nullopt if none):
// ties go to a batch nearest 4, then to fewer threads.
std::optional<PersistentSplit> ChoosePersistentSplit(const Target& t, int64_t vectors,
                                                     int floats_per_slot);

// Shared memory a generated kernel may declare statically (block-reduction
// scratch) beside the dynamic ring the heuristics size.
constexpr int64_t kStaticSmemReserve = 4096;

// Staged rows (inner-outer kernels): on a register-persistent split, moves
// the row buffers to shared memory (smem_buffer, smem_bytes = column buffers
// + two rows, leaving room for the kernel's static shared memory) when a
// thread's row buffers exceed 16 registers, so the next
// row cannot be prefetched in registers (rmsnorm backward 4096x16384: 166.6
// -> 116.3 us on the H200). Inner persistent kernels keep their rows in
// registers (softmax backward staged was 6% slower). `even_small` stages
// buffers of 16 registers or fewer too. Returns whether it staged.
bool StageRows(const FusionAnalysis& a, const Target& t, HeuristicParams* p,
               bool even_small = false);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_SCHEDULER_KERNEL_HEURISTICS_H_
