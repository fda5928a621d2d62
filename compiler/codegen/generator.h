// Internal to the code generator: the Generator class that emits one
// kernel as a sequence of lowering steps (codegen.cc: Run, the steps in
// order; generator_shape.cc: the planning steps, LaunchShape and KernelForm;
// generator_setup.cc: the emission steps before the row loop and the launch
// recipe; generator_row_loop.cc, generator_stages.cc, generator_epilogue.cc:
// the row loop, its stages and final pass, the column epilogue;
// generator_offsets.cc: per-tensor access and offsets; generator_keep.cc:
// kept chunks; generator_staging.cc and generator_cluster.cc: staged rows and
// cluster partials; generator_requires.cc: specialized kernels'
// requirements; generator_lanes.cc: lanes kernels).
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
  int type_id = 6;  // Ty<type_id>: the DataType's number
  int elem_bytes = 4;
  bool along_row = false, across_rows = false;
  bool vectorized = false;     // its innermost axis is the row's innermost axis
  bool linear_in_row = false;  // row-domain offset is the linear element index
  std::vector<std::pair<int, std::string>> along_row_terms, across_row_terms;  // (ref axis, stride)
};

inline const char* ReduceOpId(OpKind op) {
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

inline std::string ReductionIdentity(OpKind op, const char* t) {
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

// Outer kinds whose channels are adjacent in memory: rows_per_block > 1
// (generator_lanes.cc).
inline bool LanesKernel(const HeuristicParams& hp) {
  return (hp.kind == SchedulerKind::kOuterPersistent ||
          hp.kind == SchedulerKind::kOuterReduction) &&
         hp.rows_per_block > 1;
}

// The kernel's launch shape, derived once from the heuristics
// (Generator::PlanLaunchShape; docs/codegen.md, "Launch shape").
struct LaunchShape {
  int vector_width = 1;        // elements per vector access
  int threads_x = 128;         // threads along a row (lanes kernels: along a channel)
  int threads_y = 1;           // rows a block takes at once (lanes kernels: channels)
  int chunks_per_thread = 1;   // vectors a thread keeps of a row (persistent batch)
  int unroll = 1;              // unroll of the loops that stream a row
  int64_t blocks_per_row = 1;  // blocks sharing a row (grid y)
  int64_t row_blocks = 1;      // blocks along the rows (the grid's x cap)
  bool pointwise = false;      // one row, no reductions
  bool lanes = false;          // LanesKernel
  bool persistent = false;     // rows held on chip (registers, or staged in shared memory)
  bool row_split = false;      // blocks_per_row > 1 on a kind with rows
  int64_t row_iterations = 1;  // a thread's loop iterations over the heuristics' row
};

// What PlanKernelForm decides beyond the launch shape, before any text.
struct KernelForm {
  // Staged rows (HeuristicParams::smem_buffer, PlanStaging): the row and
  // column buffers in a shared-memory ring of ring_stages rows; 16-bit
  // column operands widened to float there (float_columns).
  bool rows_staged = false;
  int ring_stages = 0;
  bool float_columns = false;
  std::map<std::string, int64_t> staged_smem_offset;  // by pointer name
  int cluster_x = 1;                                  // PlanCluster
  // HeuristicParams::cluster_rows: the blocks_per_row blocks of a row are a
  // cluster along y that combines row partials through distributed shared
  // memory (PlanRowCluster; no workspace, no group barrier).
  bool cluster_rows = false;
  // HeuristicParams::reread_rows on a kernel with rows in registers: the row
  // buffers pb_* fill with fz_ld_keep, and the final pass loads each chunk
  // again with fz_ld_done before it uses it (RereadPrelude).
  bool reread_rows = false;
  // Multi-pass kernels keep their first chunks in shared memory (PlanKeep).
  bool keep_chunks = false;
  // Specialized to the shape class compiled for (PlanRequires), the size
  // symbols it has as literals, and whether the row is exactly
  // threads_x * chunks_per_thread * vector_width elements.
  bool specialized = false;
  std::set<SymbolId> literal_symbols;
  bool row_fills_tiles = false;
  // A block a row group (HeuristicParams::exact_tiling on a specialized
  // kernel whose row fills the tile, no split, no column reductions): no
  // row loop, no next-row prefetch, no in-row guards, the grid covering
  // every row group, and the block reduction in warp 0 (BlockReduce).
  bool exact_tiling = false;
  // Row groups taken from a counter (HeuristicParams::dynamic_rows).
  bool dynamic_rows = false;
  // Divisions by run-time extents: the FzDiv name per extent (PlanDividers)
  // and the code that makes them once per thread.
  std::map<std::string, std::string> extent_dividers;
  std::string divider_code;
  int min_blocks = 1;  // __launch_bounds__' second argument
  // Lanes kernels with HeuristicParams::lanes_in_registers: the chunks a
  // thread keeps of its column (PlanLanesKept; 0: none kept).
  int lanes_kept = 0;
  // With HeuristicParams::smem_buffer: the kept words in dynamic shared
  // memory ([chunk word][thread] per input, from lanes_smem_offset words).
  bool lanes_kept_smem = false;
  std::map<std::string, int64_t> lanes_smem_offset;
};

class Generator {
 public:
  Generator(const KernelPlan& plan, const HeuristicParams& hp, const CodegenOptions& o)
      : plan_(plan), graph_(*plan.graph), params_(hp), options_(o) {}

  // The lowering steps in order (codegen.cc).
  absl::StatusOr<GeneratedKernel> Run();
  // The first steps alone (DeclareTensors, PlanLaunchShape), for tests.
  absl::StatusOr<LaunchShape> RunToLaunchShape();

 private:
  // generator_setup.cc: the tensors' accesses and the kernel's input and
  // output parameters, in the graph's order.
  void DeclareTensors(GeneratedKernel& k);
  // generator_shape.cc: the launch shape from the heuristics (shape_), the
  // vector width narrowed to 16 bytes of the widest element, and the staged
  // rows (PlanStaging).
  absl::Status PlanLaunchShape();
  // generator_shape.cc: everything else decided before the text: workspaces,
  // clusters, reread rows, kept chunks, streaming stores, size parameters,
  // accumulator types, run-time divisions, specialization, exact tiling and
  // the blocks per SM.
  absl::Status PlanKernelForm(GeneratedKernel& k);
  // generator_setup.cc: the emission steps before the row loop, and the
  // launch recipe after it.
  void SetUpValueEmitter();
  std::string Preludes() const;
  void EmitSignature(const std::string& name, std::string& code) const;
  absl::Status EmitIndexSetup(std::string& code);
  void EmitColumnBuffers(std::string& code) const;
  void EmitRowBases(std::string& code) const;
  void EmitFirstRows(std::string& code) const;
  void FillLaunch(GeneratedKernel& k) const;
  // A cooperative grid: blocks share rows or the kernel has column
  // reductions (both meet at grid barriers and take workspaces).
  bool HasColumnReductions() const { return !plan_.col_reds.empty(); }
  bool Cooperative() const {
    return (shape_.row_split && !form_.cluster_rows) || HasColumnReductions();
  }
  // The most row slots one reduction stage exchanges.
  size_t MaxSlotsPerStage() const;
  std::string signature_;  // the kernel's parameter list
  Access MakeAccess(ValueId v, std::string ptr) const;
  std::string OffsetLambda(const Access& a) const;
  // The trailing row axes (at least two, else none) that every vectorized
  // tensor has as its own trailing axes, in order: a vector of V elements at
  // j = multiple of V is contiguous in each of them once the product of
  // their extents, not only the innermost one, is a multiple of V (group
  // norm's rows [C/G, H, W] with W = 28 at V = 8; its per-channel sums over
  // [N, H, W]: H * W). Outside lanes kernels.
  std::vector<int> VectorUnitAxes() const;
  // Whether the iteration space is static and under 2^31 elements (offsets
  // in 32-bit arithmetic, divisions by literals).
  bool SmallStaticSpace() const;
  // Offsets that divide by run-time extents: per extent (ExtentExpr) the
  // name of its FzDiv, made once per thread, and fz_q32 (j and the extents
  // fit the multiply-high division); empty when no offset divides so.
  std::string PlanDividers();
  // A call of a's offset function at j where the vector paths run (`vec`:
  // vec_ok holds, and with it fz_q32), anywhere (`any`: in a body
  // instantiated for VW<VV>, VV 1 in the element loop) or outside them.
  enum class At { kVec, kAny, kElem };
  std::string OffsetAt(const Access& a, const std::string& j, At at) const;
  // A per-element scope writing to *body: row values from the row scope,
  // inputs from the vector words (recorded in *used) or from memory.
  Scope ElementScope(std::string* body, std::map<ValueId, std::string>* memo,
                     std::set<ValueId>* used);
  absl::Status EmitStage(int stage, std::string& code);
  void EmitStageResults(const std::vector<int>& slots, std::string& code);
  absl::Status EmitCrossBlockCombine(const std::vector<int>& slots, std::string& code);
  absl::Status EmitFinal(std::string& code);
  // The blocks a SM the kernel asks ptxas for (__launch_bounds__' second
  // argument; coop: a cooperative grid).
  int MinBlocksPerSm(bool coop) const;
  // generator_row_loop.cc: the loop over a block's rows, to the end of the
  // final pass.
  absl::Status EmitRowLoop(std::string& code);
  // The loop's head: the rows (row groups) a block visits, in a static order,
  // from a counter (dynamic_rows) or one group (exact tiling).
  void EmitRowLoopHead(std::string& code, bool coop);
  void EmitNextRowLoads(std::string& code);
  // generator_epilogue.cc: the column partials, the grid barrier and the
  // tiles that sum them into the column outputs (kernels with column
  // reductions).
  absl::Status EmitColumnEpilogue(std::string& code);
  void EmitColumnPartials(std::string& code) const;
  std::string LoopOver(const std::string& body, const std::vector<const Access*>& ins,
                       const std::vector<int>& cols, bool final);
  std::string BlockReduce(const std::vector<int>& slots, const std::string& ind);
  // generator_lanes.cc: outer persistent kernels whose channels are adjacent
  // in memory (HeuristicParams::rows_per_block > 1): a warp's lanes take threads_y
  // consecutive rows (channels), its warps the row's chunks, so every load
  // is coalesced and block reductions go through shared memory only.
  std::string LanesThreadIds() const;
  absl::StatusOr<std::string> LanesReductionScratch() const;
  std::string LanesBlockReduce(const std::vector<int>& slots, const std::string& ind) const;
  int LanesMinBlocks() const;
  // Kept chunks (HeuristicParams::lanes_in_registers): the first pass that
  // reads a full input keeps its elements in registers (kw_<ptr>, packed as
  // stored) where the thread's chunks fit them (kfit), and later passes read
  // them there; LoopOver's kept path, the element expressions, and the
  // body's extra parameters (kv: VW<1> on the kept path, VW<0> from memory).
  absl::Status PlanLanesKept();
  bool LanesKeptInput(const Access& a) const;
  std::string LanesKeptSetup() const;
  std::string LanesKeptLoad(const Access& a);
  // The pass's body parameters for the kept inputs it read; sets the memory
  // paths' arguments (lanes_mem_args_) and marks the inputs as loaded.
  std::string LanesKeptParams();
  std::string LanesKeptLoop(const std::string& body) const;
  std::set<std::string> lanes_loaded_, lanes_pass_used_;
  std::string lanes_mem_args_, lanes_kept_args_;
  std::vector<std::string> lanes_pass_inputs_;  // kept inputs of the pass
  std::set<std::string> lanes_pass_first_;      // ... that it loads first
  // The squared-deviation slot of the var whose first slot is `slot`.
  int SecondMoment(int slot) const {
    for (size_t i = 0; i < plan_.row_slots.size(); ++i) {
      if (plan_.row_slots[i].node == plan_.row_slots[slot].node && plan_.row_slots[i].second_moment)
        return i;
    }
    return slot;
  }
  int FirstMoment(int slot) const {
    for (size_t i = 0; i < plan_.row_slots.size(); ++i) {
      if (plan_.row_slots[i].node == plan_.row_slots[slot].node &&
          !plan_.row_slots[i].second_moment)
        return i;
    }
    return slot;
  }

  // u32 words of the persistent row buffers (inputs with row and
  // iteration axes, in their storage type) one thread holds.
  int PersistentRowWords() const {
    int words = 0;
    for (const auto& [v, a] : input_access_) {
      if (a.along_row && a.across_rows && a.vectorized && plan_.needed[v] && !form_.rows_staged)
        words += shape_.chunks_per_thread * ChunkWords(a);
    }
    return words;
  }
  // u32 words of the column buffers (inputs with row axes only, e.g. a
  // norm's weight), loaded once per thread.
  int PersistentColWords() const {
    int words = 0;
    for (const auto& [v, a] : input_access_) {
      if (a.along_row && !a.across_rows && a.vectorized && plan_.needed[v] && !form_.rows_staged &&
          !ColumnInSmem(a)) {
        words += shape_.chunks_per_thread * ChunkWords(a);
      }
    }
    return words;
  }
  // Column operands kept in shared memory (HeuristicParams::smem_columns).
  int ColumnsInSmem() const {
    int n = 0;
    for (const auto& [v, a] : input_access_) n += ColumnInSmem(a);
    return n;
  }
  // Whether the next row is loaded into a second buffer while the current
  // one is reduced (double-buffering costs as many registers again: only
  // for small buffers).
  bool PrefetchRows() const { return !form_.exact_tiling && PersistentRowWords() <= 16; }

  // Staged rows (HeuristicParams::smem_buffer on the inner persistent
  // kinds): the persistent row and column buffers live in dynamic shared
  // memory, filled with cp.async by the thread that later reads them,
  // ring_stages rows deep (the current row plus ring_stages - 1 in flight).
  bool Staged(const Access& a) const {
    return form_.rows_staged && a.along_row && a.vectorized && plan_.needed[a.v];
  }
  // 32-bit words one vector chunk of tensor a takes in registers.
  int ChunkWords(const Access& a) const { return (shape_.vector_width * a.elem_bytes + 3) / 4; }
  // A column operand kept in shared memory (HeuristicParams::smem_columns).
  bool ColumnInSmem(const Access& a) const {
    return params_.smem_columns && shape_.persistent && !form_.rows_staged && a.along_row &&
           !a.across_rows && a.vectorized && plan_.needed[a.v] &&
           (params_.kind == SchedulerKind::kInnerPersistent ||
            params_.kind == SchedulerKind::kInnerOuterPersistent);
  }
  // A staged column operand of 16-bit floats kept in shared memory as float
  // (decided by PlanStaging): widened once when the block starts, so no
  // row's passes unpack it; a chunk is two halves of vector_width / 2 floats, each
  // half its own [k][ty][tx] array (16-byte slots at vector_width = 8: no bank
  // conflicts). The element read is fz_elem (FloatColumnPrelude), which the
  // paths that load packed words from memory share.
  bool FloatColumn(const Access& a) const {
    return form_.float_columns && Staged(a) && !a.across_rows && HalfFloat(a);
  }
  static bool HalfFloat(const Access& a) {
    return a.type_id == 4 || a.type_id == 5;
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
  std::string ColumnPartialRow(size_t ci) const;

  // Cluster column partials (HeuristicParams::cluster_x): after the row
  // loop the blocks of a cluster put their column accumulators in shared
  // memory, and each sums its 1/cluster_x share of the columns over the
  // cluster's blocks (distributed shared memory, fixed order) into the
  // cluster's partial row. Validates the request (InvalidArgument).
  absl::Status PlanCluster();
  std::string ClusterPartials() const;
  // Rows split over a cluster (HeuristicParams::cluster_rows): validates the
  // request (InvalidArgument) and sets form_.cluster_rows; then, for a
  // reduction stage's slots, the combine of the blocks' totals in rank order.
  absl::Status PlanRowCluster();
  std::string ClusterRowCombine(const std::vector<int>& slots) const;

  // generator_requires.cc: whether this persistent kernel is specialized
  // (CodegenOptions::specialize), and if so its launch requirements in k;
  // literal_symbols: the size symbols it has as the literals compiled for.
  bool PlanRequires(int64_t bound, GeneratedKernel& k);
  // The test that chunk `jj` of a persistent row lies in the row.
  std::string InRow(const std::string& jj) const {
    return form_.exact_tiling ? "true" : absl::StrCat(jj, " < rlen");
  }
  // The load of chunk `src` of row input a into the words at `dst`.
  std::string RowChunkLoad(const Access& a, const std::string& dst, const std::string& src) const {
    return form_.reread_rows ? absl::StrCat("fz_ld_keep<", shape_.vector_width * a.elem_bytes, ">(",
                                            dst, ", ", src, ");")
                             : absl::StrCat("Chunk<", shape_.vector_width * a.elem_bytes, ">::ld(",
                                            dst, ", ", src, ");");
  }
  // Kept chunks (multi-pass kernels with HeuristicParams::smem_bytes): the
  // first pass copies each thread's first kept_iterations_ loop iterations of the
  // inputs it streams into dynamic shared memory, and the later passes read
  // those there instead of memory. Slots are [iteration * U + u][word]
  // [thread]; an input's words start at kept_word_offset_[ptr] within a slot of
  // kept_slot_words_.
  int kept_iterations_ = 0;
  int current_stage_ = 0;  // the reduction stage being emitted (EmitStage)
  int kept_slot_words_ = 0;
  std::map<std::string, int> kept_word_offset_;
  // Word q of this thread's kept chunk (fz_ki, u) of input a.
  std::string KeptWord(const Access& a, int q) const;
  // Plans the kept chunks in the first pass: which inputs, how many
  // iterations (kept_iterations_), and the dynamic shared memory they take.
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
  int64_t dynamic_smem_bytes_ = 0;

  const KernelPlan& plan_;
  const Graph& graph_;
  const HeuristicParams& params_;
  const CodegenOptions& options_;
  // Set once by PlanLaunchShape, read by every emission step.
  LaunchShape shape_;
  // Set by PlanKernelForm (and the planning functions it calls), read by
  // every emission step.
  KernelForm form_;
  std::string next_row_code_;
  // Vectorized output stores, with the streaming (evict-first) hint where
  // the heuristics ask for it (HeuristicParams::streaming_stores).
  const char* StoreFn() const { return params_.streaming_stores ? "stcs" : "st"; }
  std::map<ValueId, int> input_index_;
  std::map<ValueId, Access> input_access_;     // tensor inputs with a row-domain part
  std::vector<Access> output_access_;          // per graph output
  std::vector<std::string> accumulator_type_;  // per row slot
  // Random ops' results: their offsets in a contiguous tensor of their
  // shape are their elements' indices.
  std::map<ValueId, Access> rng_access_;
  // The type of the block reduction's shared-memory partials: float when
  // every row slot accumulates in float (a double round trip costs two
  // conversions per warp partial at 16 per clock per SM on sm_90, in every
  // thread, on every row), else double.
  const char* BlockPartialType() const {
    for (const std::string& t : accumulator_type_) {
      if (t != "float") return "double";
    }
    return "float";
  }
  std::map<ValueId, std::string> row_values_;
  std::string row_code_;
  Scope row_scope_;
  std::unique_ptr<ValueEmitter> values_;
};

// The kernel plan GenerateKernel lowers for these parameters.
absl::StatusOr<KernelPlan> PlanKernelFor(const Graph& g, const HeuristicParams& params);

}  // namespace codegen_internal
}  // namespace fusiond

#endif  // FUSIOND_COMPILER_CODEGEN_GENERATOR_H_
