// The code kernels run for slice, pad and cat (compiler/codegen/shift_emitter.h)
// against the CPU reference, without a GPU: the statements the emitter writes
// for a shift op's element are compiled by the host's C++ compiler into a
// loop over every linear index (the kernel's arithmetic: the same index
// decomposition, clamps, guards and loads), loaded with dlopen and compared
// element by element with Evaluate. Float32 values hold small integers, so
// every result is exact on both sides.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/codegen/kernel_plan.h"
#include "compiler/codegen/shift_emitter.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/printer.h"
#include "compiler/reference/reference.h"

namespace fusiond {
namespace {

constexpr char kHostPrelude[] = R"(#include <cmath>
#include <cstring>
typedef long long i64;
typedef unsigned u32;
typedef unsigned long long u64;
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
template <int B> struct Chunk {
  static void ld(u32* w, const void* p) { std::memcpy(w, p, B); }
};
template <typename C> C Get(const u32* w, int l) {
  C c;
  std::memcpy(&c, (const char*)w + l * sizeof(C), sizeof(C));
  return c;
}
template <int DT> struct Ty;
template <> struct Ty<6> {
  static float load(const float* p) { return *p; }
  static float get(const u32* w, int l) { return Get<float>(w, l); }
  static void put(u32* w, int l, float v) { std::memcpy((char*)w + l * sizeof(v), &v, sizeof(v)); }
};
template <> struct Ty<7> {
  static double load(const double* p) { return *p; }
  static double get(const u32* w, int l) { return Get<double>(w, l); }
  static void put(u32* w, int l, double v) { std::memcpy((char*)w + l * sizeof(v), &v, sizeof(v)); }
};
template <> struct Ty<3> {
  static i64 load(const i64* p) { return *p; }
  static i64 get(const u32* w, int l) { return Get<i64>(w, l); }
  static void put(u32* w, int l, i64 v) { std::memcpy((char*)w + l * sizeof(v), &v, sizeof(v)); }
};
)";

const char* HostType(DataType t) {
  return t == DataType::kDouble ? "double" : t == DataType::kInt64 ? "i64" : "float";
}

// The lanes of a chunk on the host (the kernels' 16 bytes of float).
constexpr int kWidth = 4;

// The host function computing output k of g (a shift op's result) at every
// linear index: void fk(const void* const* in, const double* sc, const i64*
// sym, double* out, i64 n, int chunks), in chunks of kWidth lanes (the
// kernels' vector path; every input aligned) while they fit when `chunks`,
// else lane by lane (their scalar path).
absl::StatusOr<std::string> HostFunction(const Graph& g, int k, bool known_aligned,
                                         const std::string& name) {
  KernelPlan plan;
  plan.graph = &g;
  std::map<ValueId, int> index;
  std::string setup;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Value& v = g.value(g.inputs[i]);
    index[g.inputs[i]] = static_cast<int>(i);
    if (!v.is_tensor) continue;
    absl::StrAppend(&setup, "  const ", HostType(v.dtype), "* in", i, " = (const ",
                    HostType(v.dtype), "*)in[", i, "];\n");
    for (const Extent& e0 : v.shape) {
      const Extent e = g.Canonical(e0);
      if (e.is_static() || plan.symbol_names.count(e.symbol)) continue;
      const std::string name = absl::StrCat("s", plan.symbol_order.size());
      absl::StrAppend(&setup, "  const i64 ", name, " = sym[", plan.symbol_order.size(), "];\n");
      plan.symbol_names[e.symbol] = name;
      plan.symbol_order.push_back(e.symbol);
    }
  }
  auto scalar = [&](ValueId v) -> absl::StatusOr<std::string> {
    const Value& val = g.value(v);
    if (val.is_constant()) return Literal(*val.constant, val.dtype);
    if (g.def(v) == nullptr) {
      return absl::StrCat("((", ComputeTypeName(val.dtype), ")sc[", index.at(v), "])");
    }
    return absl::UnimplementedError("scalar ops are not in this harness");
  };
  std::string body, chunk;
  const ValueId out = g.outputs[k];
  ShiftLanes lanes;
  lanes.chunk = &chunk;
  lanes.chunk_indent = "  ";
  lanes.first = "j";
  lanes.width = kWidth;
  lanes.aligned = [&g, known_aligned](ValueId v) { return known_aligned && g.value(v).is_tensor; };
  auto e =
      EmitShifted(plan, ExprOptions{}, index, out, "(j + l)", &lanes, "x", &body, "    ", scalar);
  if (!e.ok()) return e.status();
  const std::string params = "const void* const* in, const double* sc, const i64* sym, double* out";
  const std::string c = absl::StrCat("c", name);
  return absl::StrCat(
      "template <int VV> static void ", c, "(", params, ", i64 j) {\n", setup, chunk,
      "  for (int l = 0; l < VV; ++l) {\n", body, "    out[j + l] = (double)(", *e,
      ");\n  }\n}\nextern \"C\" void ", name, "(", params,
      ", i64 n, int chunks) {\n  i64 j = 0;\n  if (chunks)\n    for (; j + ", kWidth,
      " <= n; j += ", kWidth, ") ", c, "<", kWidth,
      ">(in, sc, sym, out, j);\n  for (; j < n; ++j) ", c, "<1>(in, sc, sym, out, j);\n}\n");
}

using HostFn = void (*)(const void* const*, const double*, const int64_t*, double*, int64_t, int);

// Compiles every output of the script (each a shift op's result) on the
// host, runs it at `shapes` and compares with the CPU reference.
void Check(const std::string& body, const std::vector<std::vector<int64_t>>& shapes,
           const std::vector<int64_t>& symbols = {}, const std::vector<double>& scalars = {},
           std::string* source = nullptr) {
  auto p =
      ParseReproScript(absl::StrCat("import torch\nfrom nvfuser import FusionDefinition, "
                                    "DataType\n\ndef fusion(fd: FusionDefinition) -> None:\n",
                                    body, "\nwith FusionDefinition() as fd:\n    fusion(fd)\n"),
                       "s.py");
  ASSERT_TRUE(p.ok()) << p.status();
  const Graph& g = p->graph;
  std::string src = kHostPrelude;
  // fk: every input's pointer aligned (vec_ok's inputs); gk: alignment
  // checked at run time.
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    for (const char* name : {"f", "g"}) {
      auto f = HostFunction(g, static_cast<int>(k), name[0] == 'f', absl::StrCat(name, k));
      ASSERT_TRUE(f.ok()) << f.status() << "\n" << PrintGraph(g);
      src += *f;
    }
  }
  if (source != nullptr) *source = src;
  const std::string dir =
      (std::filesystem::temp_directory_path() /
       absl::StrCat("fusiond_shift_kernel_", getpid(), "_", std::hash<std::string>()(src)))
          .string();
  std::filesystem::create_directories(dir);
  struct Remove {  // whatever the checks do
    std::string dir;
    ~Remove() { std::filesystem::remove_all(dir); }
  } remove{dir};
  std::ofstream(dir + "/k.cc") << src;
  const std::string cmd = absl::StrCat("c++ -std=c++17 -O1 -ffp-contract=off -shared -fPIC -o ",
                                       dir, "/k.so ", dir, "/k.cc 2>", dir, "/log");
  ASSERT_EQ(std::system(cmd.c_str()), 0) << src;
  void* lib = dlopen((dir + "/k.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  // Inputs: tensor i holds 100 * i + its element index (+ 1, so no zeros).
  std::vector<HostTensor> in;
  // Each input twice: 16-byte aligned, and one element further (misaligned).
  std::vector<std::vector<float>> f32(g.inputs.size());
  std::vector<const void*> ptrs, misaligned;
  std::vector<double> sc(g.inputs.size(), 0);
  size_t shape_k = 0, scalar_k = 0;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    HostTensor t;
    t.dtype = g.value(g.inputs[i]).dtype;
    if (g.value(g.inputs[i]).is_tensor) {
      t.shape = shapes[shape_k++];
      for (int64_t e = 0; e < t.numel(); ++e) t.data.push_back(100.0 * i + e + 1);
      const size_t n = t.data.size(), second = (n + 7) / 4 * 4 + 1;  // 4 bytes past 16
      f32[i].assign(second + n + 4, 0);
      std::copy(t.data.begin(), t.data.end(), f32[i].begin() + 4);
      std::copy(t.data.begin(), t.data.end(), f32[i].begin() + second);
      misaligned.push_back(f32[i].data() + second);
    } else {
      sc[i] = scalars[scalar_k++];
      t.data = {sc[i]};
    }
    ptrs.push_back(f32[i].empty() ? nullptr : f32[i].data() + 4);
    if (f32[i].empty()) misaligned.push_back(nullptr);
    in.push_back(std::move(t));
  }
  auto want = Evaluate(g, in);
  ASSERT_TRUE(want.ok()) << want.status();
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    for (int run = 0; run < 6; ++run) {  // f, g aligned, g misaligned; lanes, chunks
      const bool known = run < 2, chunks = run % 2 == 1;
      auto fn = reinterpret_cast<HostFn>(dlsym(lib, absl::StrCat(known ? "f" : "g", k).c_str()));
      ASSERT_NE(fn, nullptr);
      std::vector<double> got((*want)[k].data.size(), -12345);
      fn(run < 4 ? ptrs.data() : misaligned.data(), sc.data(), symbols.data(), got.data(),
         static_cast<int64_t>(got.size()), chunks);
      for (size_t e = 0; e < got.size(); ++e) {
        ASSERT_EQ(got[e], (*want)[k].data[e])
            << "output " << k << " element " << e << " run " << run << "\n"
            << src;
      }
    }
  }
  dlclose(lib);
}

std::string Tensor(const std::string& name, const std::string& shape,
                   const std::string& dtype = "Float") {
  return absl::StrCat("    ", name, " = fd.define_tensor(shape=", shape, ", dtype=DataType.", dtype,
                      ")\n");
}

TEST(ShiftKernel, RotaryHalvesSwapped) {
  Check(absl::StrCat(
            "    T0 = fd.define_tensor(shape=[2, 3, 5, 8], contiguity=[True, True, True, True], "
            "dtype=DataType.Float)\n",
            "    T1 = fd.ops.slice(T0, [0, 0, 0, 0], [2, 3, 5, 4])\n"
            "    T2 = fd.ops.slice(T0, [0, 0, 0, 4], [2, 3, 5, 8])\n"
            "    T3 = fd.ops.cat([fd.ops.neg(T2), T1], dim=-1)\n    fd.add_output(T3)\n"),
        {{2, 3, 5, 8}});
}

TEST(ShiftKernel, PadEveryAxisWithAScalarInput) {
  Check(absl::StrCat(Tensor("T0", "[3, 4, 5]"),
                     "    S1 = fd.define_scalar(None, dtype=DataType.Double)\n"
                     "    T2 = fd.ops.pad(T0, [2, 1, 0, 0, 1, 3], S1)\n    fd.add_output(T2)\n"
                     "    T3 = fd.ops.pad(fd.ops.mul(T0, 2.0), [0, 3])\n    fd.add_output(T3)\n"),
        {{3, 4, 5}}, {}, {-7.5});
}

TEST(ShiftKernel, SlicesWithStartsAndStrides) {
  Check(absl::StrCat(Tensor("T0", "[7, 3, 10]"),
                     "    T1 = fd.ops.slice(T0, [1, 0, 3], [6, 3, 10], [2, 1, 3])\n"
                     "    fd.add_output(T1)\n"
                     "    T2 = fd.ops.slice(T0, [0, 1, 0], [7, 2, 10])\n    fd.add_output(T2)\n"),
        {{7, 3, 10}});
}

TEST(ShiftKernel, CatOfBroadcastsAndSlicesAlongTheOuterAxis) {
  Check(absl::StrCat(Tensor("T0", "[2, 6]"), Tensor("T1", "[6]"), Tensor("T2", "[5, 9]"),
                     "    T3 = fd.ops.broadcast_in_dim(T1, shape=[3, 6], broadcast_dims=[1])\n"
                     "    T4 = fd.ops.slice(T2, [1, 2], [5, 8])\n"
                     "    T5 = fd.ops.cat([fd.ops.add(T0, 0.5), T3, T4], 0)\n"
                     "    fd.add_output(T5)\n"),
        {{2, 6}, {6}, {5, 9}});
}

TEST(ShiftKernel, NestedShiftsThroughPermuteAndBroadcasts) {
  Check(absl::StrCat(
            Tensor("T0", "[4, 6]"), Tensor("T1", "[4, 1]"),
            "    T2 = fd.ops.permute(T0, dims=[1, 0])\n"
            "    T3 = fd.ops.mul(T0, T1)\n"
            "    T4 = fd.ops.pad(fd.ops.slice(T3, [1, 0], [4, 6]), [1, 1, 0, 2], 3.0)\n"
            "    T5 = fd.ops.cat([T4, fd.ops.pad(T2, [2, 2])], 0)\n"
            "    fd.add_output(fd.ops.slice(T5, [1, 0], [11, 8], [3, 1]))\n"
            "    T6 = fd.ops.broadcast_in_dim(fd.ops.slice(T1, [1, 0], [3, 1]), shape=[2, 6], "
            "broadcast_dims=[0, 1])\n"
            "    fd.add_output(fd.ops.pad(fd.ops.add(T6, fd.ops.slice(T0, [2, 0], [4, 6])), "
            "[0, 0, 1, 0]))\n"),
        {{4, 6}, {4, 1}});
}

TEST(ShiftKernel, SymbolicOuterAxes) {
  Check(
      "    T0 = fd.define_tensor(shape=[-1, -1, 6], contiguity=[True, True, True], "
      "dtype=DataType.Float)\n"
      "    T1 = fd.ops.slice(T0, [0, 0, 2], [9223372036854775807, 9223372036854775807, 5])\n"
      "    T2 = fd.ops.pad(T1, [1, 2])\n"
      "    T3 = fd.ops.cat([T2, T0], -1)\n    fd.add_output(T3)\n",
      {{3, 5, 6}}, {3, 5});
}

// Windows on chunk edges keep a chunk's lanes together (one vector load of
// the input, index arithmetic once); a pad of 2 inside a chunk of 4 and a
// broadcast along the innermost axis index lane by lane.
TEST(ShiftKernel, ChunksThroughAlignedWindows) {
  std::string src;
  Check(absl::StrCat(Tensor("T0", "[3, 8]"), Tensor("T1", "[3, 1]"), Tensor("T2", "[8]"),
                     "    T3 = fd.ops.cat([fd.ops.slice(T0, [0, 4], [3, 8]), fd.ops.mul(T0, T1), "
                     "fd.ops.pad(T0, [2, 2]), fd.ops.broadcast_in_dim(T1, shape=[3, 4], "
                     "broadcast_dims=[0, 1])], -1)\n    fd.add_output(T3)\n"
                     "    T4 = fd.ops.broadcast_in_dim(T2, shape=[3, 8], broadcast_dims=[1])\n"
                     "    fd.add_output(fd.ops.pad(fd.ops.add(T0, T4), [4, 4], 9.0))\n"
                     "    T5 = fd.ops.cat([T0, fd.ops.neg(T0)], -1)\n"
                     "    fd.add_output(fd.ops.slice(T5, [0, 4], [3, 12]))\n"),
        {{3, 8}, {3, 1}, {8}}, {}, {}, &src);
  EXPECT_TRUE(absl::StrContains(src, "Chunk<VV * 4>::ld(")) << src;
}

// Reshapes in the sub-graph read the operand at the same row-major offset:
// heads split out of a packed projection and permuted (a qkv layout), and
// axes merged back; the lanes stay a chunk where the operand's innermost
// extent holds whole chunks.
TEST(ShiftKernel, ReshapesSplitAndMergeAxes) {
  std::string src;
  Check(
      absl::StrCat(Tensor("T0", "[2, 3, 48]"),
                   "    T1 = fd.ops.reshape(T0, new_shape=[2, 3, 2, 3, 8])\n"
                   "    T2 = fd.ops.permute(T1, dims=[0, 2, 3, 1, 4])\n"
                   "    T3 = fd.ops.slice(T2, [0, 0, 1, 0, 0], [2, 2, 2, 3, 8])\n"
                   "    T4 = fd.ops.reshape(T3, new_shape=[2, 2, 3, 8])\n"
                   "    T5 = fd.ops.cat([fd.ops.neg(fd.ops.slice(T4, [0, 0, 0, 4], [2, 2, 3, 8])), "
                   "fd.ops.slice(T4, [0, 0, 0, 0], [2, 2, 3, 4])], -1)\n"
                   "    fd.add_output(T5)\n"
                   "    T6 = fd.ops.reshape(fd.ops.slice(T0, [0, 1, 0], [2, 3, 48]), "
                   "new_shape=[2, 96])\n"
                   "    fd.add_output(fd.ops.pad(T6, [4, 4]))\n"),
      {{2, 3, 48}}, {}, {}, &src);
  EXPECT_TRUE(absl::StrContains(src, "Chunk<VV * 4>::ld(")) << src;
}

// Values computed from indices in the sub-graph (iota's positions, a
// broadcast of them) are computed at the shifted index too.
TEST(ShiftKernel, IotaReadShifted) {
  Check(
      absl::StrCat(Tensor("T0", "[3, 8]"),
                   "    T1 = fd.ops.iota(8, 0.5, 2.0, dtype=DataType.Float)\n"
                   "    T2 = fd.ops.broadcast_in_dim(T1, shape=[3, 8], broadcast_dims=[1])\n"
                   "    T3 = fd.ops.add(T0, T2)\n"
                   "    fd.add_output(fd.ops.pad(fd.ops.slice(T3, [0, 3], [3, 8]), [1, 2, 1, 0]))\n"
                   "    fd.add_output(fd.ops.slice(T1, [2], [6]))\n"),
      {{3, 8}});
}

}  // namespace
}  // namespace fusiond
