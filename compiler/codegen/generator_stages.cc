// The Generator's per-stage pieces: the loops that call a body for every
// chunk of a row (with kept chunks), block reductions, and the stage / final
// bodies (see codegen.h for the kernel they build; generator_offsets.cc for
// the tensor accesses and offset functions they call).
#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/codegen/expr_emitter.h"
#include "compiler/codegen/generator.h"
#include "compiler/codegen/online_softmax.h"

namespace fusiond {
namespace codegen_internal {

// Calls `body` for every chunk this thread owns in the current row: from the
// persistent buffers, from memory with vector loads, or element by element
// (a specialized kernel: only the first).
std::string Generator::LoopOver(const std::string& body, const std::vector<const Access*>& ins,
                                const std::vector<int>& cols, bool final) {
  std::string s = form_.lanes_kept > 0 ? LanesKeptLoop(body) : "";
  if (shape_.persistent) {
    absl::StrAppend(
        &s, "    if (fits) {\n#pragma unroll\n      for (int k = 0; k < ", shape_.chunks_per_thread,
        "; ++k) {\n        const i64 jj = (t + (i64)k * T) * ", shape_.vector_width, ";\n");
    // Staged chunks are copied from shared memory into registers first (one
    // 128-bit shared load per chunk).
    // So are column operands kept in shared memory.
    for (const Access* x : ins) {
      const int w = ChunkWords(*x);
      if (FloatColumn(*x)) {
        absl::StrAppend(
            &s, "        u32 sw_", x->ptr, "[", shape_.vector_width, "];\n        if (active && ",
            InRow("jj"), ") { Chunk<", shape_.vector_width * 2, ">::ld(sw_", x->ptr, ", ",
            FloatColumnHalf(*x, 0, "k"), "); Chunk<", shape_.vector_width * 2, ">::ld(sw_", x->ptr,
            " + ", shape_.vector_width / 2, ", ", FloatColumnHalf(*x, 1, "k"), "); }\n");
      } else if (Staged(*x)) {
        absl::StrAppend(&s, "        u32 sw_", x->ptr, "[", w, "];\n        if (active && ",
                        InRow("jj"), ") Chunk<", shape_.vector_width * x->elem_bytes, ">::ld(sw_",
                        x->ptr, ", ", StagedChunk(*x, "stage", "k"), ");\n");
      } else if (ColumnInSmem(*x)) {
        absl::StrAppend(&s, "        u32 sw_", x->ptr, "[", w, "];\n        if (active && ",
                        InRow("jj"), ") Chunk<", shape_.vector_width * x->elem_bytes, ">::ld(sw_",
                        x->ptr, ", &cs_", x->ptr, "[(k * ", shape_.threads_x, " + tx) * ", w,
                        "]);\n");
      } else if (form_.reread_rows && final && x->across_rows) {
        // The row's chunk again, evict-first: its last use (reread_rows).
        absl::StrAppend(&s, "        if (active && ", InRow("jj"), ") fz_ld_done<",
                        shape_.vector_width * x->elem_bytes, ">(&pb_", x->ptr, "[k * ", w, "], ",
                        x->ptr, " + ro_", x->ptr, "(jj));\n");
      }
    }
    absl::StrAppend(&s, "        if (active && ", InRow("jj"), ") ", body, "(VW<",
                    shape_.vector_width, ">(), jj");
    for (const Access* x : ins) {
      if (FloatColumn(*x)) {
        absl::StrAppend(&s, ", (const float*)sw_", x->ptr);
      } else if (Staged(*x) || ColumnInSmem(*x)) {
        absl::StrAppend(&s, ", sw_", x->ptr);
      } else {
        absl::StrAppend(&s, ", &", x->across_rows ? "pb_" : "cb_", x->ptr, "[k * ", ChunkWords(*x),
                        "]");
      }
    }
    for (int c : cols) absl::StrAppend(&s, ", &cacc", c, "[k * ", shape_.vector_width, "]");
    absl::StrAppend(&s, ");\n      }\n    }");
    if (form_.specialized) return absl::StrCat(s, "\n");
    absl::StrAppend(&s, " else ");
  }
  // Vector path from memory, U chunks at a time. In a two-pass kernel (one
  // reduction stage, then the final pass) the final pass walks the row from
  // its end (chunk c is element rlen - V - c V): what the first pass read
  // last is the likeliest to be still in L2 (H200: rmsnorm backward
  // 512x65536 351 -> 260 us, batch norm 4-D 137 -> 135; with three passes,
  // softmax 512x65536 lost 5%, so those stay forward). Only in kernels the
  // heuristics made multi-pass: in the fallback loops of persistent kernels
  // it cost registers. Chunks map to threads the same way in every row,
  // which is all the column partials need. A kernel that keeps chunks
  // (generator_keep.cc) walks each thread's own chunks instead.
  const bool backwards = final && params_.multi_pass && plan_.num_stages == 1;
  const bool first = !final && current_stage_ == 0;
  if (form_.keep_chunks && first) PlanKeep(ins);
  absl::StrAppend(&s, "    if (vec_ok) {\n");
  if (form_.keep_chunks && kept_iterations_ > 0) {
    absl::StrAppend(&s, KeptVectorPath(first, backwards, body, ins, cols));
  } else {
    const std::string fwd = absl::StrCat("(c0 + (i64)u * T) * ", shape_.vector_width);
    absl::StrAppend(
        &s, VectorLoop(absl::StrCat("      for (i64 c0 = t; active && c0 * ", shape_.vector_width,
                                    " < rlen; c0 += (i64)T * ", shape_.unroll, ") {\n"),
                       backwards ? absl::StrCat("rlen - ", shape_.vector_width, " - ", fwd) : fwd,
                       backwards ? "jj >= 0" : "jj < rlen", Src::kMemory, body, ins, cols));
  }
  absl::StrAppend(&s, "    } else {\n");
  // Element by element.
  absl::StrAppend(&s, "      for (i64 jj = t; active && jj < rlen; jj += T) {\n");
  for (const Access* x : ins) {
    absl::StrAppend(&s, "        u32 w_", x->ptr, "[", (x->elem_bytes + 3) / 4,
                    "];\n        Chunk<", x->elem_bytes, ">::ld(w_", x->ptr, ", ", x->ptr, " + ",
                    OffsetAt(*x, "jj", At::kElem), ");\n");
  }
  absl::StrAppend(&s, "        ", body, "(VW<1>(), jj");
  for (const Access* x : ins) absl::StrAppend(&s, ", w_", x->ptr);
  for (int c : cols) absl::StrAppend(&s, ", ", ColumnPartialRow(c), " + jj");
  absl::StrAppend(&s, lanes_mem_args_, ");\n      }\n    }\n");
  return form_.lanes_kept > 0 ? absl::StrCat(s, "    }\n") : s;
}

// One loop over this thread's chunk groups (`header` opens it and defines
// c0): the U chunks of the inputs read from memory go out as one batch,
// then the body runs on each chunk. kMemoryAndKeep also copies the chunks
// to their kept slots in the first kept_iterations_ iterations, after every load
// of the batch is issued (a loop of their own for those iterations made
// ptxas spill the 4-D batch norm at its 128 registers; rolled, its chunks
// went through the stack and the gain was gone). kKept reads the kept
// inputs from shared memory chunk by chunk as the body needs them (and
// takes RolledKeptLoop when every input was kept).
std::string Generator::VectorLoop(const std::string& header, const std::string& jj,
                                  const std::string& in_row, Src src, const std::string& body,
                                  const std::vector<const Access*>& ins,
                                  const std::vector<int>& cols) const {
  auto kept = [&](const Access* x) {
    return src == Src::kKept && kept_word_offset_.count(x->ptr) > 0;
  };
  bool all_kept = src == Src::kKept;
  for (const Access* x : ins) all_kept = all_kept && kept(x);
  if (all_kept) return RolledKeptLoop(header, jj, in_row, body, ins, cols);
  std::string l = header;
  for (const Access* x : ins) {
    if (!kept(x))
      absl::StrAppend(&l, "        u32 w_", x->ptr, "[", shape_.unroll, "][", ChunkWords(*x),
                      "];\n");
  }
  absl::StrAppend(&l, "#pragma unroll\n        for (int u = 0; u < ", shape_.unroll,
                  "; ++u) {\n          const i64 jj = ", jj, ";\n          if (", in_row, ") {\n");
  for (const Access* x : ins) {
    if (kept(x)) continue;
    absl::StrAppend(&l, "            Chunk<", shape_.vector_width * x->elem_bytes, ">::ld(w_",
                    x->ptr, "[u], ", x->ptr, " + ro_", x->ptr, "(jj));\n");
  }
  std::string keep, reads;
  for (const Access* x : ins) {
    if (src == Src::kMemoryAndKeep && kept_word_offset_.count(x->ptr) > 0) {
      for (int q = 0; q < ChunkWords(*x); ++q) {
        absl::StrAppend(&keep, " ", KeptWord(*x, q), " = w_", x->ptr, "[u][", q, "];");
      }
    }
    if (kept(x)) {
      absl::StrAppend(&reads, " u32 k_", x->ptr, "[", ChunkWords(*x), "];");
      for (int q = 0; q < ChunkWords(*x); ++q)
        absl::StrAppend(&reads, " k_", x->ptr, "[", q, "] = ", KeptWord(*x, q), ";");
    }
  }
  const bool block = !keep.empty() || !reads.empty();
  absl::StrAppend(&l, "          }\n        }\n#pragma unroll\n        for (int u = 0; u < ",
                  shape_.unroll, "; ++u) {\n          const i64 jj = ", jj, ";\n          if (",
                  in_row, ") ",
                  keep.empty() ? (reads.empty() ? "" : absl::StrCat("{", reads, "\n            "))
                               : absl::StrCat("{\n            if (fz_ki < ", kept_iterations_,
                                              ") {", keep, " }\n            "),
                  body, "(VW<", shape_.vector_width, ">(), jj");
  for (const Access* x : ins)
    absl::StrAppend(&l, kept(x) ? ", k_" : ", w_", x->ptr, kept(x) ? "" : "[u]");
  for (int c : cols) absl::StrAppend(&l, ", ", ColumnPartialRow(c), " + jj");
  absl::StrAppend(&l, lanes_mem_args_, block ? "); }\n" : ");\n", "        }\n      }\n");
  return l;
}

std::string Generator::BlockReduce(const std::vector<int>& slots, const std::string& ind) {
  if (shape_.lanes) return LanesBlockReduce(slots, ind);
  std::string s;
  // A one-pass var's count wn<F>, mean acc<F>, squared deviations acc<S> and
  // plain sum ws<F> (its mean's); count and sum take two more entries.
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
  for (size_t q = 0; q < slots.size(); ++q) {
    const ReductionSlot& sl = plan_.row_slots[slots[q]];
    if (sl.one_pass || sl.online) continue;
    const char* op = sl.second_moment ? "0" : ReduceOpId(graph_.node(sl.node).op);
    absl::StrAppend(&s, ind, "acc", slots[q], " = fz_warp_reduce<", op, ">(acc", slots[q], ");\n");
  }
  // Online pairs (max, sum of exponentials): slot indices q of the lead and its partner.
  std::vector<std::pair<size_t, size_t>> onl;
  for (size_t q = 0; q < slots.size(); ++q) {
    if (!OnlineLead(graph_, plan_.row_slots[slots[q]])) continue;
    const int p = OnlinePartnerSlot(plan_, slots[q]);
    onl.push_back({q, std::find(slots.begin(), slots.end(), p) - slots.begin()});
    absl::StrAppend(&s, ind, "fz_warp_os<", OnlineExp(plan_, slots[q]), ">(acc", slots[q], ", acc",
                    p, ");\n");
  }
  for (const Chan& c : chans)
    absl::StrAppend(&s, ind, "fz_warp_chan(wn", c.f, ", acc", c.f, ", acc", c.s, ");\n", ind, "ws",
                    c.f, " = fz_warp_reduce<0>(ws", c.f, ");\n");
  if (shape_.threads_x > 32) {
    // Warp partials go to one of two buffers, alternating: one barrier per
    // reduction. Reduction k + 2 rewrites buffer k % 2 only after every
    // thread passed reduction k + 1's barrier, i.e. finished reading k.
    absl::StrAppend(&s, ind, "if ((tx & 31) == 0) {");
    for (size_t q = 0; q < slots.size(); ++q) {
      absl::StrAppend(&s, " fz_red[fz_rb][ty][", q, "][tx >> 5] = (", BlockPartialType(), ")acc",
                      slots[q], ";");
    }
    for (const Chan& c : chans)
      absl::StrAppend(&s, " fz_red[fz_rb][ty][", c.qn, "][tx >> 5] = (", BlockPartialType(), ")wn",
                      c.f, "; fz_red[fz_rb][ty][", c.qn + 1, "][tx >> 5] = (", BlockPartialType(),
                      ")ws", c.f, ";");
    absl::StrAppend(&s, " }\n", ind, "__syncthreads();\n");
    const int warps = shape_.threads_x / 32;
    // Exact kernels (exact_tiling): warp 0 combines the warps' partials (a shuffle
    // tree) and hands the results out through shared memory after a second
    // barrier, as Triton's reductions do: softmax backward 16384x4096 bf16
    // on the H200 97.5 against 98.5 us with every thread reading all the
    // partials.
    std::string warp0, results;
    for (size_t q = 0; q < slots.size(); ++q) {
      const ReductionSlot& sl = plan_.row_slots[slots[q]];
      if (sl.one_pass || sl.online) continue;
      const char* op = sl.second_moment ? "0" : ReduceOpId(graph_.node(sl.node).op);
      const std::string& t = accumulator_type_[slots[q]];
      const std::string acc = absl::StrCat("acc", slots[q]);
      const std::string comb = absl::StrCat("fz_comb<", op, ", ", t, ">(");
      if (form_.exact_tiling && t == "float" && BlockPartialType() == t) {
        absl::StrAppend(
            &warp0, ind, "  ", t, " v", q, " = tx < ", warps, " ? fz_red[fz_rb][ty][", q,
            "][tx] : ",
            sl.second_moment ? "0.0f" : ReductionIdentity(graph_.node(sl.node).op, t.c_str()),
            ";\n", ind, "  v", q, " = fz_warp_reduce<", op, ">(v", q, ");\n", ind,
            "  if (tx == 0) fz_red[fz_rb][ty][", q, "][0] = v", q, ";\n");
        absl::StrAppend(&results, ind, acc, " = fz_red[fz_rb][ty][", q, "][0];\n");
        continue;
      }
      if (t == "float" && BlockPartialType() == t && warps % 4 == 0) {
        // A slot's float partials are contiguous and 16-byte aligned: four
        // per shared-memory load, combined in warp order as below.
        absl::StrAppend(&s, ind, "{\n", ind,
                        "  const float4* r = (const float4*)fz_red[fz_rb][ty][", q, "];\n", ind,
                        "  float4 v = r[0];\n", ind, "  ", acc, " = v.x;\n", ind, "  ", acc, " = ",
                        comb, acc, ", v.y); ", acc, " = ", comb, acc, ", v.z); ", acc, " = ", comb,
                        acc, ", v.w);\n", ind, "  for (int w = 1; w < ", warps / 4, "; ++w) {\n",
                        ind, "    v = r[w];\n", ind, "    ", acc, " = ", comb, acc, ", v.x); ", acc,
                        " = ", comb, acc, ", v.y); ", acc, " = ", comb, acc, ", v.z); ", acc, " = ",
                        comb, acc, ", v.w);\n", ind, "  }\n", ind, "}\n");
        continue;
      }
      absl::StrAppend(&s, ind, acc, " = (", t, ")fz_red[fz_rb][ty][", q, "][0];\n", ind,
                      "for (int w = 1; w < ", warps, "; ++w) ", acc, " = ", comb, acc, ", (", t,
                      ")fz_red[fz_rb][ty][", q, "][w]);\n");
    }
    if (!warp0.empty()) {
      absl::StrAppend(&s, ind, "if (tx < 32) {\n", warp0, ind, "}\n", ind, "__syncthreads();\n",
                      results);
    }
    for (const auto& [qm, qs] : onl) {
      const auto at = [&](const char* w, size_t q) {
        return absl::StrCat("(float)fz_red[fz_rb][ty][", q, "][", w, "]");
      };
      absl::StrAppend(&s, ind, "acc", slots[qm], " = ", at("0", qm), "; acc", slots[qs], " = ",
                      at("0", qs), ";\n", ind, "for (int w = 1; w < ", warps, "; ++w) ",
                      OnlineMerge(plan_, slots[qm], at("w", qm), at("w", qs)), "\n");
    }
    for (const Chan& c : chans) {
      const std::string& t = accumulator_type_[c.f];
      const auto at = [&](const char* w, size_t q) {
        return absl::StrCat("(", t, ")fz_red[fz_rb][ty][", q, "][", w, "]");
      };
      absl::StrAppend(&s, ind, "wn", c.f, " = ", at("0", c.qn), "; acc", c.f, " = ", at("0", c.qf),
                      "; acc", c.s, " = ", at("0", c.qs), ";\n", ind, "for (int w = 1; w < ", warps,
                      "; ++w) fz_chan(wn", c.f, ", acc", c.f, ", acc", c.s, ", ", at("w", c.qn),
                      ", ", at("w", c.qf), ", ", at("w", c.qs), ");\n", ind, "ws", c.f, " = ",
                      at("0", c.qn + 1), ";\n", ind, "for (int w = 1; w < ", warps, "; ++w) ws",
                      c.f, " += ", at("w", c.qn + 1), ";\n");
    }
    absl::StrAppend(&s, ind, "fz_rb ^= 1;\n");
  }
  return s;
}

Scope Generator::ElementScope(std::string* body, std::map<ValueId, std::string>* memo,
                              std::set<ValueId>* used) {
  Scope es = Scope::Of(Scope::kElem, body, "        ", memo);
  es.row = &row_scope_;
  es.load = [this, used](ValueId v) {
    const Access& a = input_access_.at(v);
    if (LanesKeptInput(a)) return LanesKeptLoad(a);
    if (a.vectorized) {
      used->insert(v);
      if (FloatColumn(a)) return absl::StrCat("fz_elem<", a.type_id, ">(w_", a.ptr, ", l)");
      return absl::StrCat("Ty<", a.type_id, ">::get(w_", a.ptr, ", l)");
    }
    return absl::StrCat("Ty<", a.type_id, ">::load(", a.ptr, " + ", OffsetAt(a, "j + l", At::kAny),
                        ")");
  };
  es.index = [this](ValueId v) { return OffsetAt(rng_access_.at(v), "j + l", At::kElem); };
  if (!shape_.lanes && shape_.vector_width > 1) {
    // Chunks of consecutive lanes: shift ops index once per chunk and read
    // aligned inputs as vectors (shift_emitter.h).
    es.vector_width = shape_.vector_width;
    es.chunk_indent = "      ";
    es.chunk_index = [this](ValueId v) {
      const Access& a = rng_access_.at(v);
      return a.vectorized ? OffsetAt(a, "j", At::kElem) : std::string();
    };
    es.aligned_input = [this](ValueId v) {
      auto it = input_access_.find(v);
      return it != input_access_.end() && it->second.vectorized && plan_.needed[v];
    };
  }
  return es;
}

// Blocks sharing a row combine their stage's partials through the workspace
// (plain partials: one-pass variances are not split).
absl::Status Generator::EmitCrossBlockCombine(const std::vector<int>& slots, std::string& code) {
  for (int i : slots) {
    if (plan_.row_slots[i].one_pass)
      return absl::InternalError("codegen: one-pass var with a row split over blocks");
  }
  // Online pairs merge (max, sum) partials; the identity is (-inf, 0).
  std::string online;
  for (size_t q = 0; q < slots.size(); ++q) {
    const ReductionSlot& sl = plan_.row_slots[slots[q]];
    if (!OnlineLead(graph_, sl)) continue;
    const int s = OnlinePartnerSlot(plan_, slots[q]);
    const size_t qs = std::find(slots.begin(), slots.end(), s) - slots.begin();
    absl::StrAppend(
        &online, "      acc", slots[q], " = ", ReductionIdentity(OpKind::kMax, "float"), "; acc", s,
        " = 0.0f;\n      for (int b = tx; b < (int)gridDim.y; b += ", shape_.threads_x, ") ",
        OnlineMerge(plan_, slots[q],
                    absl::StrCat("(float)part[base + (size_t)b * ", slots.size(), " + ", q, "]"),
                    absl::StrCat("(float)part[base + (size_t)b * ", slots.size(), " + ", qs, "]")),
        "\n");
  }
  if (form_.cluster_rows) {
    absl::StrAppend(&code, ClusterRowCombine(slots));
    return absl::OkStatus();
  }
  // Blocks sharing a row combine their partials through the workspace. Each
  // row's region holds the most slots any stage has (part_stride's count):
  // row groups pass their barriers apart, so a stage with more slots must
  // not reach into another row's region while that row reads a stage with
  // fewer.
  absl::StrAppend(&code, "    {\n      double* part = ws_row + (size_t)(par & 1) * part_stride;\n",
                  "      const size_t base = ((size_t)(blockIdx.x * ", shape_.threads_y,
                  " + ty) * gridDim.y) * ", std::max<size_t>(1, MaxSlotsPerStage()), ";\n");
  absl::StrAppend(&code, "      if (tx == 0) {");
  for (size_t q = 0; q < slots.size(); ++q) {
    absl::StrAppend(&code, " part[base + (size_t)blockIdx.y * ", slots.size(), " + ", q,
                    "] = (double)acc", slots[q], ";");
  }
  absl::StrAppend(&code, " }\n      fz_group_sync(bar);\n      par++;\n");
  for (size_t q = 0; q < slots.size(); ++q) {
    const ReductionSlot& sl = plan_.row_slots[slots[q]];
    if (sl.online) continue;
    const char* op = sl.second_moment ? "0" : ReduceOpId(graph_.node(sl.node).op);
    const std::string& t = accumulator_type_[slots[q]];
    absl::StrAppend(&code, "      acc", slots[q], " = ",
                    sl.second_moment ? "0" : ReductionIdentity(graph_.node(sl.node).op, t.c_str()),
                    ";\n      for (int b = tx; b < (int)gridDim.y; b += ", shape_.threads_x,
                    ") acc", slots[q], " = fz_comb<", op, ", ", t, ">(acc", slots[q], ", (", t,
                    ")part[base + (size_t)b * ", slots.size(), " + ", q, "]);\n");
  }
  absl::StrAppend(&code, online, BlockReduce(slots, "      "), "    }\n");
  return absl::OkStatus();
}

absl::Status Generator::EmitStage(int stage, std::string& code) {
  current_stage_ = stage;
  std::vector<int> slots;
  for (size_t i = 0; i < plan_.row_slots.size(); ++i) {
    if (plan_.row_slots[i].stage == stage) slots.push_back(static_cast<int>(i));
  }
  std::string body, pending, chunk;
  std::map<ValueId, std::string> memo;
  std::set<ValueId> used;
  Scope es = ElementScope(&body, &memo, &used);
  es.chunk = &chunk;
  std::string accum, post, moments, online;
  for (int i : slots) {
    const ReductionSlot& sl = plan_.row_slots[i];
    if (sl.one_pass && sl.second_moment) continue;       // with its first slot
    if (sl.online && !OnlineLead(graph_, sl)) continue;  // with its max
    const Node& n = graph_.node(sl.node);
    auto e = values_->Get(n.inputs[0], es);
    if (!e.ok()) return e.status();
    const std::string& t = accumulator_type_[i];
    if (sl.online) {
      // Online softmax: the chunk's values, then one rescale of the sum a chunk.
      absl::StrAppend(&online, "      float ox", i, "[VV];\n");
      absl::StrAppend(&accum, "        ox", i, "[l] = (float)", *e, ";\n");
      absl::StrAppend(&post, "      fz_os_chunk<", OnlineExp(plan_, i), ", VV>(acc", i, ", acc",
                      OnlinePartnerSlot(plan_, i), ", ox", i, ");\n");
    } else if (sl.one_pass) {
      // Per thread, sums of x - K and (x - K)^2 with K its first element
      // (the shifted-data algorithm: exact algebra, cancellation only as
      // large as K's distance from the thread's mean), turned into (count,
      // mean, squared deviations) before the block merges them (fz_chan).
      // The row mean is a plain sum ws over rlen as in two passes: the
      // merged means err by |K| and the merges' spread, several times more.
      const int s2 = SecondMoment(i);
      absl::StrAppend(&accum, "        { const ", t, " x = (", t, ")", *e, "; if (l == 0 && wn", i,
                      " == 0) wk", i, " = x; const ", t, " d = x - wk", i, "; acc", i, " += d; acc",
                      s2, " += d * d; ws", i, " += x; }\n");
      absl::StrAppend(&post, "      wn", i, " += (", t, ")VV;\n");
      absl::StrAppend(&moments, "    if (wn", i, " > 0) { const ", t, " s1 = acc", i, "; acc", i,
                      " = wk", i, " + fz_div_count(s1, wn", i, "); acc", s2,
                      " -= s1 * fz_div_count(s1, wn", i, "); }\n");
    } else if (sl.second_moment) {
      absl::StrAppend(&accum, "        { const ", t, " d = (", t, ")", *e, " - rmean",
                      FirstMoment(i), "; acc", i, " += d * d; }\n");
    } else {
      absl::StrAppend(&accum, "        acc", i, " = fz_comb<", ReduceOpId(n.op), ", ", t, ">(acc",
                      i, ", (", t, ")", *e, ");\n");
    }
  }
  std::string fn = absl::StrCat("body", stage);
  std::vector<const Access*> ins;
  std::string params;
  for (ValueId v : used) {
    ins.push_back(&input_access_.at(v));
    absl::StrAppend(&params, ParamOf(input_access_.at(v)));
  }
  absl::StrAppend(&params, LanesKeptParams());
  // Row values the stage needs were appended to the row scope while emitting.
  absl::StrAppend(&code, row_code_);
  row_code_.clear();
  for (int i : slots) {
    const ReductionSlot& sl = plan_.row_slots[i];
    absl::StrAppend(&code, "    ", accumulator_type_[i], " acc", i, " = ",
                    sl.second_moment || sl.one_pass
                        ? "0"
                        : ReductionIdentity(graph_.node(sl.node).op, accumulator_type_[i].c_str()),
                    ";\n");
    if (sl.one_pass && !sl.second_moment) {
      absl::StrAppend(&code, "    ", accumulator_type_[i], " wn", i, " = 0, wk", i, " = 0, ws", i,
                      " = 0;\n");
    }
  }
  absl::StrAppend(&code, "    auto ", fn, " = [&](auto vw, i64 j", params,
                  ") {\n      constexpr int VV = decltype(vw)::value;\n", chunk, online,
                  "#pragma unroll\n      for (int l = 0; l < VV; ++l) {\n", body, accum,
                  "      }\n", post, "    };\n");
  absl::StrAppend(&code, LoopOver(fn, ins, {}, false), moments);
  absl::StrAppend(&code, BlockReduce(slots, "    "));
  if (shape_.row_split) {
    if (absl::Status st = EmitCrossBlockCombine(slots, code); !st.ok()) return st;
  }
  EmitStageResults(slots, code);
  return absl::OkStatus();
}

// A stage's reductions as row values (rv<id>) for the later stages and the
// final pass: var and var_mean from their moments, hidden repeats scaled.
void Generator::EmitStageResults(const std::vector<int>& slots, std::string& code) {
  for (int i : slots) {
    const ReductionSlot& sl = plan_.row_slots[i];
    const Node& n = graph_.node(sl.node);
    const bool var = n.op == OpKind::kVar || n.op == OpKind::kVarMean;
    const std::string& t = accumulator_type_[i];
    if (var && !sl.second_moment) {
      // The row's sum (one pass: the plain sum beside the merged moments).
      absl::StrAppend(&code, "    const ", t, " rmean", i, " = ", sl.one_pass ? "ws" : "acc", i,
                      " / (", t, ")rlen;\n");
      if (n.op == OpKind::kVarMean) {
        ValueId mean = n.outputs[1];
        absl::StrAppend(&code, "    const ", ComputeTypeName(graph_.value(mean).dtype), " rv", mean,
                        " = ", RoundTo(graph_.value(mean).dtype, absl::StrCat("rmean", i)), ";\n");
        row_values_[mean] = absl::StrCat("rv", mean);
      }
      continue;
    }
    ValueId out = n.outputs[0];
    std::string val = absl::StrCat("acc", i);
    // Each element stands for k equal ones along reduced axes it does not vary along.
    const std::string k = plan_.HiddenCount(graph_, n);
    if (var && k.empty()) {
      val = absl::StrCat("(acc", i, " / (", t, ")(rlen - ", n.attrs.correction, "))");
    } else if (var) {
      val = absl::StrCat("(acc", i, " * (", t, ")(", k, ") / ((", t, ")(", k, ") * (", t,
                         ")rlen - ", n.attrs.correction, "))");
    } else if (!k.empty() && n.op == OpKind::kSum) {
      val = absl::StrCat("(acc", i, " * (", t, ")(", k, "))");
    } else if (!k.empty() && n.op == OpKind::kProd) {
      val = absl::StrCat("((", t, ")pow((double)acc", i, ", ", k, "))");
    }
    absl::StrAppend(&code, "    const ", ComputeTypeName(graph_.value(out).dtype), " rv", out,
                    " = ",
                    RoundTo(graph_.value(out).dtype,
                            absl::StrCat("(", ComputeTypeName(graph_.value(out).dtype), ")", val)),
                    ";\n");
    row_values_[out] = absl::StrCat("rv", out);
  }
}

absl::Status Generator::EmitFinal(std::string& code) {
  std::string body;
  std::map<ValueId, std::string> memo;
  std::set<ValueId> used;
  Scope es = ElementScope(&body, &memo, &used);
  std::string pre, post, rowstores;
  es.chunk = &pre;
  for (size_t k = 0; k < output_access_.size(); ++k) {
    const Access& a = output_access_[k];
    if (plan_.domain[a.v] == Domain::kCol) continue;
    if (a.along_row) {
      // A cast to the stored 16-bit type needs no rounding of its own: the
      // store rounds (to nearest even) exactly as the cast would.
      ValueId src = a.v;
      const Node* dn = graph_.def(a.v);
      if (a.vectorized && dn != nullptr && dn->op == OpKind::kCast &&
          (a.type_id == static_cast<int>(DataType::kBFloat16) ||
           a.type_id == static_cast<int>(DataType::kHalf)) &&
          graph_.value(dn->inputs[0]).dtype == DataType::kFloat &&
          plan_.domain[dn->inputs[0]] == Domain::kElem) {
        src = dn->inputs[0];
      }
      auto e = values_->Get(src, es);
      if (!e.ok()) return e.status();
      // Outputs without row axes (column-only) are written by the first row.
      const std::string guard = a.across_rows || plan_.i_axes.empty() ? "" : "if (row == 0) ";
      if (a.vectorized && a.elem_bytes == 2) {
        // 16-bit outputs: rounded two at a time (one cvt per pair) after the loop.
        absl::StrAppend(&pre, "      u32 wo", k, "[(VV + 1) / 2];\n      float fo", k, "[VV];\n");
        absl::StrAppend(&body, "        fo", k, "[l] = ", *e, ";\n");
        absl::StrAppend(&post, "      Ty<", a.type_id, ">::template pack<VV>(wo", k, ", fo", k,
                        ");\n      ", guard, "Chunk<VV * 2>::", StoreFn(), "(", a.ptr, " + ",
                        OffsetAt(a, "j", At::kAny), ", wo", k, ");\n");
      } else if (a.vectorized) {
        absl::StrAppend(&pre, "      u32 wo", k, "[(VV * ", a.elem_bytes, " + 3) / 4] = {};\n");
        absl::StrAppend(&body, "        Ty<", a.type_id, ">::put(wo", k, ", l, ", *e, ");\n");
        absl::StrAppend(&post, "      ", guard, "Chunk<VV * ", a.elem_bytes, ">::", StoreFn(), "(",
                        a.ptr, " + ", OffsetAt(a, "j", At::kAny), ", wo", k, ");\n");
      } else {
        absl::StrAppend(&body, "        ", guard, "Ty<", a.type_id, ">::store(", a.ptr, " + ",
                        OffsetAt(a, "j + l", At::kAny), ", ", *e, ");\n");
      }
    } else {
      auto e = values_->Get(a.v, row_scope_);
      if (!e.ok()) return e.status();
      std::string off = "0";
      if (a.across_rows) off = absl::StrCat("rb_", a.ptr);
      absl::StrAppend(&rowstores, "    if (active && tx == 0 && blockIdx.y == 0) Ty<", a.type_id,
                      ">::store(", a.ptr, " + ", off, ", ", *e, ");\n");
    }
  }
  std::vector<int> cols;
  for (size_t c = 0; c < plan_.col_reds.size(); ++c) {
    const Node& n = graph_.node(plan_.col_reds[c]);
    auto e = values_->Get(n.inputs[0], es);
    if (!e.ok()) return e.status();
    // A column sum's element stands for k equal ones (HiddenCount); max/min ignore copies.
    const std::string k = plan_.HiddenCount(graph_, n);
    const std::string x = n.op == OpKind::kSum && !k.empty()
                              ? absl::StrCat("(float)((double)", *e, " * ", k, ")")
                              : absl::StrCat("(float)", *e);
    absl::StrAppend(&body, "        cp", c, "[l] = fz_comb<", ReduceOpId(n.op), ", float>(cp", c,
                    "[l], ", x, ");\n");
    cols.push_back(static_cast<int>(c));
  }
  absl::StrAppend(&code, row_code_);
  row_code_.clear();
  std::vector<const Access*> ins;
  std::string params;
  for (ValueId v : used) {
    ins.push_back(&input_access_.at(v));
    absl::StrAppend(&params, ParamOf(input_access_.at(v)));
  }
  for (int c : cols) absl::StrAppend(&params, ", float* cp", c);
  absl::StrAppend(&params, LanesKeptParams());
  absl::StrAppend(&code, "    auto fin = [&](auto vw, i64 j", params,
                  ") {\n      constexpr int VV = decltype(vw)::value;\n", pre,
                  "#pragma unroll\n      for (int l = 0; l < VV; ++l) {\n", body, "      }\n", post,
                  "    };\n");
  absl::StrAppend(&code, LoopOver("fin", ins, cols, true));
  absl::StrAppend(&code, rowstores);
  return absl::OkStatus();
}

}  // namespace codegen_internal
}  // namespace fusiond
