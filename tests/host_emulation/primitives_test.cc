// The emulation's own parts: the PTX table refuses what it does not know,
// the prelude's 16-bit conversions round as the CPU reference does, warp
// shuffles and block barriers combine exactly, and a barrier some threads
// never reach is reported as a deadlock instead of hanging or passing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/codegen/prelude.h"
#include "compiler/reference/reference.h"
#include "tests/host_emulation/emu_runtime.h"
#include "tests/host_emulation/emulate.h"
#include "tests/host_emulation/translate.h"

namespace fusiond {
namespace host_emulation {
namespace {

// One hand-written kernel (after the device prelude), built for the host.
struct OneKernel {
  PreparedFusion fusion;
  std::unique_ptr<HostKernels> built;
  KernelEntry entry = nullptr;
};

std::unique_ptr<OneKernel> Build(const std::string& name, const std::string& body) {
  auto k = std::make_unique<OneKernel>();
  k->fusion.name = name;
  PreparedKernel pk;
  pk.kernel.name = name;
  pk.kernel.source = std::string(DevicePrelude()) + body;
  k->fusion.kernels.push_back(pk);
  auto built = HostKernels::Build({&k->fusion}, 1);
  EXPECT_TRUE(built.ok()) << built.status();
  if (!built.ok()) return nullptr;
  k->built = *std::move(built);
  EXPECT_EQ(k->built->Error(name), "");
  k->entry = k->built->Find(name);
  EXPECT_NE(k->entry, nullptr);
  return k->entry != nullptr ? std::move(k) : nullptr;
}

TEST(Translate, UnknownPtxIsRefusedByName) {
  auto r = RewriteAsm(
      "u32 x; asm volatile(\"prmt.b32 %0, %1, %2, %3;\" : \"=r\"(x) : \"r\"(1), "
      "\"r\"(2), \"r\"(3));");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), "prmt.b32")) << r.status();
}

TEST(Translate, OperandsAndScopesAreKept) {
  auto r = RewriteAsm(
      "asm(\"cvt.rn.bf16x2.f32 %0, %1, %2;\" : \"=r\"(w[l >> 1]) : \"f\"(Ty<6>::x), "
      "\"f\"(f[l]));\nasm volatile(\"cp.async.commit_group;\" ::: \"memory\");");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(
      absl::StrContains(*r, "(w[l >> 1]) = ((unsigned)fz_emu_f32_to_bf16((Ty<6>::x)) << 16)"))
      << *r;
  EXPECT_TRUE(absl::StrContains(*r, "fz_emu_cp_commit();")) << *r;
}

TEST(Translate, SharedDeclarationsBecomeArenaViews) {
  const std::string s = RewriteShared(
      "  __shared__ __align__(16) float fz_red[2][4];\n"
      "  extern __shared__ __align__(16) unsigned char fz_smem[];\n");
  EXPECT_TRUE(absl::StrContains(s, "fz_emu_shared(&fz_site_0")) << s;
  EXPECT_TRUE(absl::StrContains(s,
                                "unsigned char* fz_smem = static_cast<unsigned char*>("
                                "fz_emu_dynamic_shared());"))
      << s;
}

// Ty<5> / Ty<4> round (cvt.rn.bf16.f32, cvt.rn.f16.f32 and back) against
// the reference's RoundTo, over ties, subnormals, overflow and random bits;
// and a block sum through fz_warp_reduce, shared memory and __syncthreads.
TEST(Emulation, SixteenBitRoundingAndBlockSums) {
  auto k = Build("emu_prims", R"(
extern "C" __global__ void emu_prims(const void* in_, void* out_, i64 n) {
  const float* in = (const float*)in_;
  float* out = (float*)out_;
  __shared__ float part[8];
  const i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
  const float v = i < n ? in[i] : 0.0f;
  if (i < n) {
    out[i] = Ty<5>::round(v);
    out[n + i] = Ty<4>::round(v);
  }
  const float s = fz_warp_reduce<0>(fabsf(v) < 1e30f ? v : 0.0f);
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0;
    for (int w = 0; w < (int)blockDim.x / 32; ++w) t += part[w];
    out[2 * n + blockIdx.x] = t;
  }
}
)");
  ASSERT_NE(k, nullptr);
  std::vector<float> in = {0.0f,          -0.0f,
                           1.0f,          1.00390625f,
                           1.01171875f,   65504.0f,
                           65520.0f,      65519.0f,
                           5.9604645e-8f, 2.9802322e-8f,
                           8.940697e-8f,  6.1035156e-5f,
                           3.3895314e38f, std::numeric_limits<float>::infinity(),
                           -1e-40f};
  std::mt19937 rng(7);
  while (in.size() < 1024) {
    uint32_t bits = static_cast<uint32_t>(rng());
    if ((bits & 0x7f800000u) == 0x7f800000u) continue;  // no NaN
    float f;
    std::memcpy(&f, &bits, 4);
    in.push_back(f);
  }
  const int64_t n = static_cast<int64_t>(in.size());
  const int blocks = static_cast<int>((n + 255) / 256);
  std::vector<float> out(2 * n + blocks, -1.0f);
  uint64_t slots[3];
  const void* in_p = in.data();
  void* out_p = out.data();
  std::memcpy(&slots[0], &in_p, 8);
  std::memcpy(&slots[1], &out_p, 8);
  std::memcpy(&slots[2], &n, 8);
  void* slot_ptrs[3] = {&slots[0], &slots[1], &slots[2]};
  GridLaunch g;
  g.grid[0] = blocks;
  g.block[0] = 256;
  ASSERT_TRUE(RunGrid(k->entry, slot_ptrs, g).ok());
  for (int64_t i = 0; i < n; ++i) {
    SCOPED_TRACE(absl::StrCat("input ", in[i]));
    EXPECT_EQ(out[i], static_cast<float>(RoundTo(DataType::kBFloat16, in[i])));
    EXPECT_EQ(out[n + i], static_cast<float>(RoundTo(DataType::kHalf, in[i])));
  }
  for (int b = 0; b < blocks; ++b) {
    double want = 0, scale = 0;
    for (int64_t i = b * 256; i < std::min<int64_t>(n, (b + 1) * 256); ++i) {
      const double v = std::fabs(in[i]) < 1e30f ? in[i] : 0.0;
      want += v;
      scale += std::fabs(v);
    }
    EXPECT_NEAR(out[2 * n + b], want, 1e-5 * scale + 1e-30) << "block " << b;
  }
}

// One parameter slot holding a null pointer.
void* const* NullSlot() {
  static uint64_t zero = 0;
  static void* slots[1] = {&zero};
  return slots;
}

// Thread 0 waits at the block barrier while lanes 1-31 wait for it in a
// warp-synchronous call: neither can go on.
TEST(Emulation, BarrierDeadlockIsReported) {
  auto k = Build("emu_deadlock", R"(
extern "C" __global__ void emu_deadlock(const void* unused) {
  (void)unused;
  if (threadIdx.x == 0) __syncthreads(); else __syncwarp();
}
)");
  ASSERT_NE(k, nullptr);
  GridLaunch g;
  g.block[0] = 32;
  absl::Status s = RunGrid(k->entry, NullSlot(), g);
  EXPECT_TRUE(absl::StrContains(s.message(), "deadlock")) << s;
}

// Half a warp shuffles with the full mask after the other half has exited.
TEST(Emulation, ShuffleWithExitedLanesIsReported) {
  auto k = Build("emu_exited", R"(
extern "C" __global__ void emu_exited(const void* unused) {
  (void)unused;
  if (threadIdx.x >= 16) return;
  (void)__shfl_xor_sync(0xffffffffu, 1.0f, 1);
}
)");
  ASSERT_NE(k, nullptr);
  GridLaunch g;
  g.block[0] = 32;
  absl::Status s = RunGrid(k->entry, NullSlot(), g);
  EXPECT_TRUE(absl::StrContains(s.message(), "exited before a warp-synchronous call")) << s;
}

// A kernel that faults names itself and the thread before the process dies
// (built here, run in the forked child, so the parent removes its files).
TEST(EmulationDeathTest, FaultNamesTheKernelAndThread) {
  GTEST_FLAG_SET(death_test_style, "fast");
  auto k = Build("emu_fault", R"(
extern "C" __global__ void emu_fault(const void* null_ptr) {
  if (threadIdx.x == 5) *(volatile int*)null_ptr = 1;
}
)");
  ASSERT_NE(k, nullptr);
  GridLaunch g;
  g.block[0] = 32;
  g.kernel = "emu_fault";
  EXPECT_DEATH((void)RunGrid(k->entry, NullSlot(), g),
               "signal 11 in kernel emu_fault, block \\(0, 0, 0\\) thread \\(5, 0, 0\\)");
}

}  // namespace
}  // namespace host_emulation
}  // namespace fusiond
