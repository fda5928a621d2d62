// Outer persistent kernels whose channels are adjacent in memory (a softmax
// or a sum over the outer axis of [M, N], broadcast back; the scheduler's
// rows_per_block > 1). A "row" of the plan is then a column of the tensor,
// its elements N apart. With the usual mapping a warp's lanes walk down one
// column, one 2-byte element a 32-byte sector; here lanes take threads_y
// consecutive columns (coalesced: 64 bytes a warp for bf16) and the block's
// threads_x lane groups (warps) split the column's rows, so a row's threads sit in
// different warps and its block reduction goes through shared memory alone.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/generator.h"
#include "compiler/codegen/online_softmax.h"

namespace fusiond {
namespace codegen_internal {

// The launch is (threads_x, threads_y) threads as for every kind; the linear thread id
// is split the other way round: ty (the row) fastest.
std::string Generator::LanesThreadIds() const {
  return absl::StrCat("  const int fz_lin = threadIdx.y * ", shape_.threads_x, " + threadIdx.x;\n",
                      "  const int tx = fz_lin / ", shape_.threads_y, ", ty = fz_lin % ",
                      shape_.threads_y, ";\n  (void)ty;\n");
}

// Partials [buffer][slot][tx][ty]: the lanes of a warp (consecutive ty)
// write and read consecutive words, free of bank conflicts. Static shared
// memory, so within kMaxLanesScratchBytes (double partials of many slots in
// one stage could pass the 48 KB static limit: Unimplemented, not a kernel
// NVRTC rejects).
absl::StatusOr<std::string> Generator::LanesReductionScratch() const {
  constexpr int64_t kMaxLanesScratchBytes = 40 * 1024;
  size_t per_stage = 1;
  for (int s = 0; s < plan_.num_stages; ++s) {
    size_t n = 0;
    for (const auto& sl : plan_.row_slots)
      n += (sl.stage == s) + 2 * (sl.stage == s && sl.one_pass && !sl.second_moment);
    per_stage = std::max(per_stage, n);
  }
  const int64_t bytes = int64_t{2} * per_stage * shape_.threads_x * shape_.threads_y *
                        (std::string(BlockPartialType()) == "float" ? 4 : 8);
  if (bytes > kMaxLanesScratchBytes) {
    return absl::UnimplementedError(absl::StrCat(
        "codegen: a lanes kernel's block reduction needs ", bytes, " bytes of shared memory (",
        per_stage, " partials of ", shape_.threads_x * shape_.threads_y,
        " threads, twice); at most ", kMaxLanesScratchBytes));
  }
  return absl::StrCat("  __shared__ __align__(16) ", BlockPartialType(), " fz_red[2][", per_stage,
                      "][", shape_.threads_x, "][", shape_.threads_y,
                      "];\n  unsigned fz_rb = 0;\n");
}

// Every thread stores its partials, one barrier, and every thread combines
// its row's threads_x partials in tx order (the same order in every thread of the
// row, so they all hold the same bits). Two buffers alternate as in
// BlockReduce: one barrier a reduction.
std::string Generator::LanesBlockReduce(const std::vector<int>& slots,
                                        const std::string& ind) const {
  if (shape_.threads_x == 1) return "";  // a thread a row: nothing to combine
  struct Chan {
    int f, s;
    size_t qf, qs, qn;
  };
  std::vector<Chan> chans;
  for (size_t q = 0; q < slots.size(); ++q) {
    const ReductionSlot& sl = plan_.row_slots[slots[q]];
    if (!sl.one_pass || sl.second_moment) continue;
    for (size_t r = 0; r < slots.size(); ++r) {
      const ReductionSlot& o = plan_.row_slots[slots[r]];
      if (o.node == sl.node && o.second_moment)
        chans.push_back({slots[q], slots[r], q, r, slots.size() + 2 * chans.size()});
    }
  }
  const auto at = [&](const std::string& t, size_t q, const std::string& w) {
    return absl::StrCat("(", t, ")fz_red[fz_rb][", q, "][", w, "][ty]");
  };
  std::string s = absl::StrCat(ind, "{");
  for (size_t q = 0; q < slots.size(); ++q) {
    absl::StrAppend(&s, " fz_red[fz_rb][", q, "][tx][ty] = (", BlockPartialType(), ")acc", slots[q],
                    ";");
  }
  for (const Chan& c : chans)
    absl::StrAppend(&s, " fz_red[fz_rb][", c.qn, "][tx][ty] = (", BlockPartialType(), ")wn", c.f,
                    "; fz_red[fz_rb][", c.qn + 1, "][tx][ty] = (", BlockPartialType(), ")ws", c.f,
                    ";");
  absl::StrAppend(&s, " }\n", ind, "__syncthreads();\n");
  for (size_t q = 0; q < slots.size(); ++q) {
    const ReductionSlot& sl = plan_.row_slots[slots[q]];
    if (sl.one_pass || (sl.online && !OnlineLead(graph_, sl))) continue;
    if (sl.online) {
      // A max and its sum of exponentials (online_softmax.h), merged in tx order.
      const int p = OnlinePartnerSlot(plan_, slots[q]);
      const size_t qs = std::find(slots.begin(), slots.end(), p) - slots.begin();
      absl::StrAppend(
          &s, ind, "acc", slots[q], " = ", at("float", q, "0"), "; acc", p, " = ",
          at("float", qs, "0"), ";\n", ind, "for (int w = 1; w < ", shape_.threads_x, "; ++w) ",
          OnlineMerge(plan_, slots[q], at("float", q, "w"), at("float", qs, "w")), "\n");
      continue;
    }
    const char* op = sl.second_moment ? "0" : ReduceOpId(graph_.node(sl.node).op);
    const std::string& t = accumulator_type_[slots[q]];
    absl::StrAppend(&s, ind, "acc", slots[q], " = ", at(t, q, "0"), ";\n", ind,
                    "for (int w = 1; w < ", shape_.threads_x, "; ++w) acc", slots[q], " = fz_comb<",
                    op, ", ", t, ">(acc", slots[q], ", ", at(t, q, "w"), ");\n");
  }
  for (const Chan& c : chans) {
    const std::string& t = accumulator_type_[c.f];
    absl::StrAppend(&s, ind, "wn", c.f, " = ", at(t, c.qn, "0"), "; acc", c.f, " = ",
                    at(t, c.qf, "0"), "; acc", c.s, " = ", at(t, c.qs, "0"), ";\n", ind,
                    "for (int w = 1; w < ", shape_.threads_x, "; ++w) fz_chan(wn", c.f, ", acc",
                    c.f, ", acc", c.s, ", ", at(t, c.qn, "w"), ", ", at(t, c.qf, "w"), ", ",
                    at(t, c.qs, "w"), ");\n", ind, "ws", c.f, " = ", at(t, c.qn + 1, "0"), ";\n",
                    ind, "for (int w = 1; w < ", shape_.threads_x, "; ++w) ws", c.f,
                    " += ", at(t, c.qn + 1, "w"), ";\n");
  }
  absl::StrAppend(&s, ind, "fz_rb ^= 1;\n");
  return s;
}

// Blocks a SM asked of ptxas: as many as leave a thread 64 registers (two of
// 512 threads), the figure the heuristics size the grid for; a thread keeps
// unroll x vector_width loads in flight and nothing between the passes.
int Generator::LanesMinBlocks() const {
  return std::max(1, std::min(params_.blocks_per_sm, options_.max_min_blocks));
}

// Kept chunks (HeuristicParams::lanes_in_registers) on a lanes outer
// persistent kernel whose inputs are all read element by element (none
// vectorized along the column) and without column reductions: the
// persistent_batch chunks a thread takes of its column, at most 16 and 48
// kept words a thread.
absl::Status Generator::PlanLanesKept() {
  if (!params_.lanes_in_registers) return absl::OkStatus();
  if (!shape_.lanes || params_.kind != SchedulerKind::kOuterPersistent || HasColumnReductions()) {
    return absl::InvalidArgumentError(
        "codegen: lanes_in_registers needs a lanes outer persistent kernel (rows_per_block > 1) "
        "without column reductions");
  }
  int words = 0;
  for (const auto& [v, a] : input_access_) {
    if (!plan_.needed[v] || !a.along_row) continue;
    if (a.vectorized) {
      return absl::InvalidArgumentError(absl::StrCat("codegen: lanes_in_registers: input ", a.ptr,
                                                     " is contiguous along the column"));
    }
    if (LanesKeptInput(a)) words += shape_.chunks_per_thread * ChunkWords(a);
  }
  if (params_.smem_buffer) {
    // In shared memory: [chunk word][thread] an input, up to what a block
    // may take beside the static scratch.
    constexpr int kMaxSmemChunks = 64;
    const int64_t threads = int64_t{shape_.threads_x} * shape_.threads_y;
    int64_t offset = 0;
    for (const auto& [v, a] : input_access_) {
      if (!LanesKeptInput(a)) continue;
      form_.lanes_smem_offset[a.ptr] = offset;
      offset += int64_t{shape_.chunks_per_thread} * ChunkWords(a) * threads;
    }
    const int64_t most = options_.target.smem_per_block - 16 * 1024;
    if (shape_.chunks_per_thread > kMaxSmemChunks || 4 * offset > most) {
      return absl::InvalidArgumentError(absl::StrCat(
          "codegen: lanes_in_registers with smem_buffer keeps ", shape_.chunks_per_thread,
          " chunks (", 4 * offset, " bytes) a block; at most ", kMaxSmemChunks, " chunks and ",
          most, " bytes (more blocks a column group: grid_x)"));
    }
    form_.lanes_kept_smem = true;
    form_.lanes_kept = shape_.chunks_per_thread;
    dynamic_smem_bytes_ = std::max(dynamic_smem_bytes_, 4 * offset);
    return absl::OkStatus();
  }
  constexpr int kMaxKeptChunks = 16, kMaxKeptWords = 48;
  if (shape_.chunks_per_thread > kMaxKeptChunks || words > kMaxKeptWords) {
    return absl::InvalidArgumentError(
        absl::StrCat("codegen: lanes_in_registers keeps ", shape_.chunks_per_thread, " chunks (",
                     words, " words) a thread; at most ", kMaxKeptChunks, " chunks and ",
                     kMaxKeptWords, " words (more blocks a column group: grid_x)"));
  }
  form_.lanes_kept = shape_.chunks_per_thread;
  return absl::OkStatus();
}

// Inputs that vary along and across the columns, of 2-, 4- or 8-byte
// elements (packed as stored: two 16-bit elements a word); others are read
// from memory in every pass.
bool Generator::LanesKeptInput(const Access& a) const {
  return params_.lanes_in_registers && shape_.lanes && a.along_row && a.across_rows &&
         !a.vectorized && plan_.needed[a.v] &&
         (a.elem_bytes == 2 || a.elem_bytes == 4 || a.elem_bytes == 8);
}

// Whether the thread's chunks fit the kept words (kfit: the column within
// persistent_batch chunks of every thread; else every pass reads memory),
// the words, and per input kl_<ptr>: loads element j into word slot l of a
// chunk's words and returns it.
std::string Generator::LanesKeptSetup() const {
  const int k = form_.lanes_kept, vw = shape_.vector_width;
  // T is blocks_per_row x threads_x (the grid's y is the split), written
  // as a literal so that static kernels fold kfit and drop the memory paths.
  std::string s = absl::StrCat("  const bool kfit = vec_ok && rlen <= ",
                               int64_t{k} * vw * shape_.blocks_per_row * shape_.threads_x,
                               "LL;\n  (void)kfit;\n");
  for (const auto& [v, a] : input_access_) {
    if (!LanesKeptInput(a)) continue;
    const int w = ChunkWords(a);
    const int b = a.elem_bytes;
    if (!form_.lanes_kept_smem) absl::StrAppend(&s, "  u32 kw_", a.ptr, "[", k * w, "];\n");
    absl::StrAppend(&s, "  auto kl_", a.ptr, " = [&](u32* w, int l, i64 j) {\n    u32 x[",
                    (b + 3) / 4, "];\n    Chunk<", b, ">::ld(x, ", a.ptr, " + ",
                    OffsetAt(a, "j", At::kVec), ");\n");
    if (b == 2) {
      absl::StrAppend(&s, "    w[l >> 1] = (l & 1) ? (w[l >> 1] | (x[0] << 16)) : x[0];\n");
    } else if (b == 4) {
      absl::StrAppend(&s, "    w[l] = x[0];\n");
    } else {
      absl::StrAppend(&s, "    w[2 * l] = x[0];\n    w[2 * l + 1] = x[1];\n");
    }
    absl::StrAppend(&s, "    return Ty<", a.type_id, ">::get(w, l);\n  };\n");
  }
  if (form_.lanes_kept_smem) {
    absl::StrAppend(&s, "  extern __shared__ __align__(16) u32 fz_kept_smem[];\n");
  }
  return s;
}

// Element j + l of a kept input: on the kept path (kv = VW<1>) loaded and
// kept by the first pass that reads it, then read from the words; on the
// memory path as any lanes load.
std::string Generator::LanesKeptLoad(const Access& a) {
  const bool first = lanes_loaded_.count(a.ptr) == 0;
  lanes_pass_used_.insert(a.ptr);
  const std::string kept = first ? absl::StrCat("kl_", a.ptr, "(kp_", a.ptr, ", l, j + l)")
                                 : absl::StrCat("Ty<", a.type_id, ">::get(kp_", a.ptr, ", l)");
  return absl::StrCat("(decltype(kv)::value ? ", kept, " : Ty<", a.type_id, ">::load(", a.ptr,
                      " + ", OffsetAt(a, "j + l", At::kAny), "))");
}

std::string Generator::LanesKeptParams() {
  lanes_mem_args_.clear();
  lanes_kept_args_.clear();
  if (form_.lanes_kept == 0) return "";
  std::string params = ", auto kv";
  lanes_mem_args_ = ", VW<0>()";
  lanes_kept_args_ = ", VW<1>()";
  lanes_pass_inputs_.clear();
  lanes_pass_first_.clear();
  for (const auto& [v, a] : input_access_) {
    if (!lanes_pass_used_.count(a.ptr)) continue;
    absl::StrAppend(&params, ", u32* kp_", a.ptr);
    lanes_pass_inputs_.push_back(a.ptr);
    if (!lanes_loaded_.count(a.ptr)) lanes_pass_first_.insert(a.ptr);
    if (form_.lanes_kept_smem) {
      // A chunk's words in registers, from and to shared memory around the body.
      absl::StrAppend(&lanes_mem_args_, ", (u32*)nullptr");
      absl::StrAppend(&lanes_kept_args_, ", kc_", a.ptr);
    } else {
      absl::StrAppend(&lanes_mem_args_, ", kw_", a.ptr);
      absl::StrAppend(&lanes_kept_args_, ", &kw_", a.ptr, "[k * ", ChunkWords(a), "]");
    }
    lanes_loaded_.insert(a.ptr);
  }
  lanes_pass_used_.clear();
  return params;
}

// The kept path of a pass: the thread's persistent_batch chunks, unrolled
// (constant word indices: registers); LoopOver's memory paths follow in the
// else branch.
std::string Generator::LanesKeptLoop(const std::string& body) const {
  const int vw = shape_.vector_width;
  const std::string head = absl::StrCat("      for (int k = 0; k < ", form_.lanes_kept,
                                        "; ++k) {\n        const i64 jj = (t + (i64)k * T) * ", vw,
                                        ";\n        if (active && jj < rlen) ");
  if (!form_.lanes_kept_smem) {
    return absl::StrCat("    if (kfit) {\n#pragma unroll\n", head, body, "(VW<", vw, ">(), jj",
                        lanes_kept_args_, ");\n      }\n    } else {\n");
  }
  // Shared memory: the chunk's words into registers (later passes), the
  // body, and the words out (the pass that loads the input first).
  const int64_t threads = int64_t{shape_.threads_x} * shape_.threads_y;
  std::string in, out;
  for (const std::string& ptr : lanes_pass_inputs_) {
    const Access* a = nullptr;
    for (const auto& [v, x] : input_access_) {
      if (x.ptr == ptr) a = &x;
    }
    const int w = ChunkWords(*a);
    const std::string at = absl::StrCat("fz_kept_smem[", form_.lanes_smem_offset.at(ptr),
                                        " + (k * ", w, " + q) * ", threads, " + fz_lin]");
    absl::StrAppend(&in, "          u32 kc_", ptr, "[", w, "];\n");
    if (lanes_pass_first_.count(ptr)) {
      absl::StrAppend(&out, "#pragma unroll\n          for (int q = 0; q < ", w, "; ++q) ", at,
                      " = kc_", ptr, "[q];\n");
    } else {
      absl::StrAppend(&in, "#pragma unroll\n          for (int q = 0; q < ", w, "; ++q) kc_", ptr,
                      "[q] = ", at, ";\n");
    }
  }
  return absl::StrCat("    if (kfit) {\n#pragma unroll 8\n", head, "{\n", in, "          ", body,
                      "(VW<", vw, ">(), jj", lanes_kept_args_, ");\n", out,
                      "        }\n      }\n    } else {\n");
}

}  // namespace codegen_internal
}  // namespace fusiond
