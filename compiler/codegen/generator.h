// Internal to the code generator: the Generator class that emits one
// kernel (codegen.cc: the skeleton, Run; generator_offsets.cc: per-tensor
// access and offsets; generator_stages.cc: the chunk loops, block
// reductions, stage and final bodies; generator_keep.cc: kept chunks;
// generator_staging.cc and generator_cluster.cc: staged rows and cluster
// partials; generator_requires.cc: specialized kernels' requirements).
#ifndef FUSIOND_COMPILER_CODEGEN_GENERATOR_H_
#define FUSIOND_COMPILER_CODEGEN_GENERATOR_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/codegen.h"
#include "compiler/codegen/kernel_plan.h"
#include "compiler/codegen/value_emitter.h"

namespace fusiond {
namespace codegen_internal {

// Static shared memory for column operands (HeuristicParams::smem_columns),
// leaving room under the 48 KB static limit for the reduction buffers.
constexpr int64_t kMaxColumnSmemBytes = 32 * 1024;
// The most blocks a grid's x dimension takes (CUDA's 2^31 - 1).
constexpr int64_t kMaxGridX = 2147483647;

// How a kernel reads or writes one tensor.
struct Access {
  ValueId v = kNone;
  std::string ptr;  // "in0", "out1"
  int dt = 6;
  int esize = 4;
  bool has_r = false, has_i = false;
  bool vec = false;     // its innermost axis is the row's innermost axis
  bool fast_r = false;  // row-domain offset is the linear element index
  std::vector<std::pair<int, std::string>> r_terms, i_terms;  // (ref axis, stride)
};

inline const char* OpId(OpKind op) {
  switch (op) {
    case OpKind::kMax:
      return "1";
    case OpKind::kMin:
      return "2";
    case OpKind::kProd:
      return "3";
    default:
      return "0";
  }
}

inline std::string Identity(OpKind op, const char* t) {
  const bool f = std::string(t) == "float";
  switch (op) {
    case OpKind::kMax:
      return f ? "(-__int_as_float(0x7f800000))" : "(-__longlong_as_double(0x7ff0000000000000LL))";
    case OpKind::kMin:
      return f ? "__int_as_float(0x7f800000)" : "__longlong_as_double(0x7ff0000000000000LL)";
    case OpKind::kProd:
      return "1";
    default:
      return "0";
  }
}

// The scheduler's name as docs/manifest.md spells it.
inline const char* KindName(SchedulerKind k) {
  switch (k) {
    case SchedulerKind::kPointwise:
      return "pointwise";
    case SchedulerKind::kInnerReduction:
      return "inner_reduction";
    case SchedulerKind::kOuterReduction:
      return "outer_reduction";
    case SchedulerKind::kInnerPersistent:
      return "inner_persistent";
    case SchedulerKind::kOuterPersistent:
      return "outer_persistent";
    case SchedulerKind::kInnerOuterPersistent:
      return "inner_outer_persistent";
  }
  return "unknown";
}

// Outer kinds whose channels are adjacent in memory: rows_per_block > 1
// (generator_lanes.cc).
inline bool LanesKernel(const HeuristicParams& hp) {
  return (hp.kind == SchedulerKind::kOuterPersistent ||
          hp.kind == SchedulerKind::kOuterReduction) &&
         hp.rows_per_block > 1;
}

class Generator {
 public:
  Generator(const KernelPlan& plan, const HeuristicParams& hp, const CodegenOptions& o)
      : p_(plan), g_(*plan.graph), hp_(hp), o_(o) {}

  absl::StatusOr<GeneratedKernel> Run();

 private:
  Access MakeAccess(ValueId v, std::string ptr) const;
  std::string OffsetLambda(const Access& a) const;
  // Whether the iteration space is static and under 2^31 elements (offsets
  // in 32-bit arithmetic, divisions by literals).
  bool SmallStaticSpace() const;
  // Offsets that divide by run-time extents: per extent (ExtentExpr) the
  // name of its FzDiv, made once per thread, and fz_q32 (j and the extents
  // fit the multiply-high division); empty when no offset divides so.
  std::string PlanDividers();
  std::map<std::string, std::string> dividers_;
  // A call of a's offset function at j where the vector paths run (`vec`:
  // vec_ok holds, and with it fz_q32), anywhere (`any`: in a body
  // instantiated for VW<VV>, VV 1 in the element loop) or outside them.
  enum class At { kVec, kAny, kElem };
  std::string Ro(const Access& a, const std::string& j, At at) const;
  // A per-element scope writing to *body: row values from the row scope,
  // inputs from the vector words (recorded in *used) or from memory.
  Scope ElementScope(std::string* body, std::map<ValueId, std::string>* memo,
                     std::set<ValueId>* used);
  absl::Status EmitStage(int stage, std::string& code);
  absl::Status EmitFinal(std::string& code);
  // The blocks a SM the kernel asks ptxas for (__launch_bounds__' second
  // argument; coop: a cooperative grid).
  int MinBlocksPerSm(bool coop) const;
  // generator_row_loop.cc: the loop over a block's rows, to the end of the
  // final pass (coop: a cooperative grid; cols: column reductions).
  absl::Status EmitRowLoop(std::string& code, bool coop, bool cols);
  // generator_epilogue.cc: the column partials, the grid barrier and the
  // tiles that sum them into the column outputs (kernels with column
  // reductions).
  absl::Status EmitColumnEpilogue(std::string& code);
  std::string LoopOver(const std::string& body, const std::vector<const Access*>& ins,
                       const std::vector<int>& cols, bool final);
  std::string BlockReduce(const std::vector<int>& slots, const std::string& ind);
  // generator_lanes.cc: outer persistent kernels whose channels are adjacent
  // in memory (HeuristicParams::rows_per_block > 1): a warp's lanes take BY_
  // consecutive rows (channels), its warps the row's chunks, so every load
  // is coalesced and block reductions go through shared memory only.
  bool lanes_ = false;
  std::string LanesThreadIds() const;
  absl::StatusOr<std::string> LanesReductionScratch() const;
  std::string LanesBlockReduce(const std::vector<int>& slots, const std::string& ind) const;
  int LanesMinBlocks() const;
  // The squared-deviation slot of the var whose first slot is `slot`.
  int SecondMoment(int slot) const {
    for (size_t i = 0; i < p_.row_slots.size(); ++i) {
      if (p_.row_slots[i].node == p_.row_slots[slot].node && p_.row_slots[i].second_moment)
        return i;
    }
    return slot;
  }
  int FirstMoment(int slot) const {
    for (size_t i = 0; i < p_.row_slots.size(); ++i) {
      if (p_.row_slots[i].node == p_.row_slots[slot].node && !p_.row_slots[i].second_moment)
        return i;
    }
    return slot;
  }

  // u32 words of the persistent row buffers (inputs with row and
  // iteration axes, in their storage type) one thread holds.
  int PersistentRowWords() const {
    int words = 0;
    for (const auto& [v, a] : in_access_) {
      if (a.has_r && a.has_i && a.vec && p_.needed[v] && !staged_) words += PB_ * ChunkWords(a);
    }
    return words;
  }
  // u32 words of the column buffers (inputs with row axes only, e.g. a
  // norm's weight), loaded once per thread.
  int PersistentColWords() const {
    int words = 0;
    for (const auto& [v, a] : in_access_) {
      if (a.has_r && !a.has_i && a.vec && p_.needed[v] && !staged_ && !ColumnInSmem(a)) {
        words += PB_ * ChunkWords(a);
      }
    }
    return words;
  }
  // Column operands kept in shared memory (HeuristicParams::smem_columns).
  int ColumnsInSmem() const {
    int n = 0;
    for (const auto& [v, a] : in_access_) n += ColumnInSmem(a);
    return n;
  }
  // Whether the next row is loaded into a second buffer while the current
  // one is reduced (double-buffering costs as many registers again: only
  // for small buffers).
  bool PrefetchRows() const { return !exact_ && PersistentRowWords() <= 16; }

  // Staged rows (HeuristicParams::smem_buffer on the inner persistent
  // kinds): the persistent row and column buffers live in dynamic shared
  // memory, filled with cp.async by the thread that later reads them,
  // stages_ rows deep (the current row plus stages_ - 1 in flight).
  bool Staged(const Access& a) const { return staged_ && a.has_r && a.vec && p_.needed[a.v]; }
  // 32-bit words one vector chunk of tensor a takes in registers.
  int ChunkWords(const Access& a) const { return (V_ * a.esize + 3) / 4; }
  // A column operand kept in shared memory (HeuristicParams::smem_columns).
  bool ColumnInSmem(const Access& a) const {
    return hp_.smem_columns && persistent_ && !staged_ && a.has_r && !a.has_i && a.vec &&
           p_.needed[a.v] &&
           (hp_.kind == SchedulerKind::kInnerPersistent ||
            hp_.kind == SchedulerKind::kInnerOuterPersistent);
  }
  // A staged column operand of 16-bit floats kept in shared memory as float
  // (decided by PlanStaging): widened once when the block starts, so no
  // row's passes unpack it; a chunk is two halves of V_ / 2 floats, each
  // half its own [k][ty][tx] array (16-byte slots at V_ = 8: no bank
  // conflicts). The element read is fz_elem (FloatColumnPrelude), which the
  // paths that load packed words from memory share.
  bool FloatColumn(const Access& a) const {
    return float_cols_ && Staged(a) && !a.has_i && HalfFloat(a);
  }
  static bool HalfFloat(const Access& a) {
    return a.dt == 4 || a.dt == 5;
  }  // Ty<4> f16, Ty<5> bf16
  // A body lambda's parameter for input a's chunk: packed words, or for a
  // float column either (const auto*: each call site instantiates its own).
  std::string ParamOf(const Access& a) const {
    return absl::StrCat(", const ", FloatColumn(a) ? "auto" : "u32", "* w_", a.ptr);
  }
  // A u32* to half `half` (0, 1) of this thread's float chunk k of column a.
  std::string FloatColumnHalf(const Access& a, int half, const std::string& k) const;
  // A u32* to this thread's chunk k of tensor a in ring stage `stage`.
  std::string StagedChunk(const Access& a, const std::string& stage, const std::string& k) const;
  // cp.async of this thread's chunks of the row in rb_* into ring stage
  // `stage` (column buffers when cols).
  std::string IssueStagedCopies(const std::string& stage, bool cols, const std::string& ind) const;
  bool PlanStaging();
  // The start of this block's (and ty's) partials of column reduction ci in
  // the column workspace: rows of `wstride` floats (rlen rounded up to 4, so
  // the epilogue reads 16-byte aligned float4s).
  std::string WcolRow(size_t ci) const;

  // Cluster column partials (HeuristicParams::cluster_x): after the row
  // loop the blocks of a cluster put their column accumulators in shared
  // memory, and each sums its 1/cluster_ share of the columns over the
  // cluster's blocks (distributed shared memory, fixed order) into the
  // cluster's partial row. Validates the request (InvalidArgument).
  absl::Status PlanCluster();
  std::string ClusterPartials() const;
  int cluster_ = 1;

  // generator_requires.cc: whether this persistent kernel is specialized
  // (CodegenOptions::specialize), and if so its launch requirements in k;
  // literal_symbols_: the size symbols it has as the literals compiled for.
  bool PlanRequires(int64_t bound, GeneratedKernel& k);
  bool specialized_ = false;
  std::set<SymbolId> literal_symbols_;

  bool staged_ = false;
  bool float_cols_ = false;
  // HeuristicParams::reread_rows on a kernel with rows in registers: the
  // row buffers pb_* fill with fz_ld_keep, and the final pass loads each
  // chunk again with fz_ld_done before it uses it (RereadPrelude).
  bool reread_ = false;
  // A block a row group, the row tiled exactly (a specialized reread_rows
  // kernel whose literal row extent is BX_ * PB_ * V_, no split, no column
  // reductions): no row loop, no next-row prefetch, no in-row guards, the
  // grid covering every row group, and the block reduction in warp 0
  // (BlockReduce). torch.compile's softmax backward kernel has that form.
  bool exact_ = false;
  bool tiled_exactly_ = false;  // PlanRequires: the row is BX_ * PB_ * V_ elements
  // The test that chunk `jj` of a persistent row lies in the row.
  std::string InRow(const std::string& jj) const {
    return exact_ ? "true" : absl::StrCat(jj, " < rlen");
  }
  // The load of chunk `src` of row input a into the words at `dst`.
  std::string RowChunkLoad(const Access& a, const std::string& dst, const std::string& src) const {
    return reread_ ? absl::StrCat("fz_ld_keep<", V_ * a.esize, ">(", dst, ", ", src, ");")
                   : absl::StrCat("Chunk<", V_ * a.esize, ">::ld(", dst, ", ", src, ");");
  }
  int stages_ = 0;
  // Kept chunks (multi-pass kernels with HeuristicParams::smem_bytes): the
  // first pass copies each thread's first keep_iters_ loop iterations of the
  // inputs it streams into dynamic shared memory, and the later passes read
  // those there instead of memory. Slots are [iteration * U + u][word]
  // [thread]; an input's words start at keep_word_[ptr] within a slot of
  // keep_slot_words_.
  bool keep_ = false;
  int keep_iters_ = 0;
  int stage_ = 0;          // the reduction stage being emitted (EmitStage)
  int64_t row_iters_ = 1;  // a thread's loop iterations over the heuristics' row
  int keep_slot_words_ = 0;
  std::map<std::string, int> keep_word_;
  // Word q of this thread's kept chunk (fz_ki, u) of input a.
  std::string KeptWord(const Access& a, int q) const;
  // Plans the kept chunks in the first pass: which inputs, how many
  // iterations (keep_iters_), and the dynamic shared memory they take.
  void PlanKeep(const std::vector<const Access*>& ins);
  // How a vector loop reads its chunks: from memory; from memory, copying
  // the first iterations' to their kept slots; from the kept slots where
  // the input was kept (generator_stages.cc, VectorLoop).
  enum class Src { kMemory, kMemoryAndKeep, kKept };
  std::string VectorLoop(const std::string& header, const std::string& jj,
                         const std::string& in_row, Src src, const std::string& body,
                         const std::vector<const Access*>& ins, const std::vector<int>& cols) const;
  // generator_keep.cc: the vector path of a pass of a kernel that keeps
  // chunks, and the loop over kept iterations when every input was kept.
  std::string KeptVectorPath(bool first, bool backwards, const std::string& body,
                             const std::vector<const Access*>& ins,
                             const std::vector<int>& cols) const;
  std::string RolledKeptLoop(const std::string& header, const std::string& jj,
                             const std::string& in_row, const std::string& body,
                             const std::vector<const Access*>& ins,
                             const std::vector<int>& cols) const;
  int64_t smem_bytes_ = 0;
  std::map<std::string, int64_t> smem_off_;  // by pointer name

  const KernelPlan& p_;
  const Graph& g_;
  const HeuristicParams& hp_;
  const CodegenOptions& o_;
  int V_ = 1, BX_ = 128, BY_ = 1, PB_ = 1, U_ = 1;
  bool pointwise_ = false, persistent_ = false, split_ = false;
  int64_t row_blocks_ = 1;
  std::string row_swap_;
  // Multi-pass inner-outer kernels take row groups from a counter (Run).
  bool dynamic_rows_ = false;
  // Vectorized output stores with the streaming (evict-first) hint: row
  // kernels (inner persistent or inner reduction) that stream one row input
  // (the forwards): softmax forward 16384x4096 76.4 -> 72.7 us on the H200;
  // with two streamed inputs (the backwards) they were 1-11% slower.
  bool streaming_stores_ = false;
  const char* StoreFn() const { return streaming_stores_ ? "stcs" : "st"; }
  std::map<ValueId, int> input_index_;
  std::map<ValueId, Access> in_access_;  // tensor inputs with a row-domain part
  std::vector<Access> out_access_;       // per graph output
  std::vector<std::string> acc_type_;    // per row slot
  // The type of the block reduction's shared-memory partials: float when
  // every row slot accumulates in float (a double round trip costs two
  // conversions per warp partial at 16 per clock per SM on sm_90, in every
  // thread, on every row), else double.
  const char* RedType() const {
    for (const std::string& t : acc_type_) {
      if (t != "float") return "double";
    }
    return "float";
  }
  std::map<ValueId, std::string> row_memo_;
  std::string row_pending_;
  Scope row_scope_;
  std::unique_ptr<ValueEmitter> em_;
};

}  // namespace codegen_internal
}  // namespace fusiond

#endif  // FUSIOND_COMPILER_CODEGEN_GENERATOR_H_
