#include "tests/host_emulation/emu_runtime.h"

#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/host_emulation/emu_abi.h"
#include "tests/host_emulation/emu_fault.h"

namespace fusiond {
namespace host_emulation {
namespace {

// Coroutine stacks; the lowest bytes hold a canary checked when the block
// ends (no guard pages: a cooperative grid of 132 x 512 threads would pass
// the kernel's limit on mappings).
constexpr size_t kStackBytes = 64 * 1024;
constexpr size_t kStackCanaryBytes = 256;
// sm_90: 227 KiB of shared memory per block (opt-in), 48 KiB of it static.
constexpr size_t kMaxSmem = 232448;
constexpr size_t kMaxStaticSmem = 48 * 1024;
constexpr size_t kCanaryBytes = 64;
constexpr unsigned char kCanary = 0xA5;
// A cluster-mapped shared address (mapa): bit 31, the rank, the offset.
constexpr unsigned kMappedBit = 0x80000000u;
constexpr int kRankShift = 20;
constexpr unsigned kOffsetMask = (1u << kRankShift) - 1;

struct Block;

struct Copy {
  void* dst;
  const void* src;
  int bytes;
};

// A thread starts through its ucontext; after that it and the scheduler
// switch with _setjmp/_longjmp, which keep the signal mask (no system call).
struct Thread {
  FzEmuThread pub;
  ucontext_t ctx;
  jmp_buf env;
  bool started = false;
  char* stack = nullptr;
  enum State { kRun, kBarrier, kWarp, kDone } state = kRun;
  std::vector<Copy> open_group;
  std::vector<std::vector<Copy>> committed;
};

struct Warp {
  unsigned long long slots[32] = {};
  unsigned arrived = 0, mask = 0, present = 0, exited = 0;
};

// The grid's blocks, cluster barriers and the first failure.
struct Grid {
  KernelEntry entry;
  void* const* slots;
  GridLaunch launch;
  std::chrono::steady_clock::time_point deadline;
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::condition_variable cv;
  std::string failure;
  std::vector<Block*> blocks;  // by linear block index (running ones)
  std::vector<int> cluster_arrived, cluster_generation, cluster_exited;
  int ClusterSize() const { return launch.cluster[0] * launch.cluster[1] * launch.cluster[2]; }
  // The cluster of a block, and the linear index of the block of rank r in
  // it (ranks run x fastest, as %cluster_ctarank).
  int64_t ClusterOf(const uint3& b) const {
    const uint32_t* c = launch.cluster;
    const int64_t nx = launch.grid[0] / c[0], ny = launch.grid[1] / c[1];
    return (int64_t{b.z / c[2]} * ny + b.y / c[1]) * nx + b.x / c[0];
  }
  int64_t PeerOf(const uint3& b, unsigned r) const {
    const uint32_t* c = launch.cluster;
    const int64_t x = b.x / c[0] * c[0] + r % c[0], y = b.y / c[1] * c[1] + r / c[0] % c[1],
                  z = b.z / c[2] * c[2] + r / (c[0] * c[1]);
    return (z * launch.grid[1] + y) * launch.grid[0] + x;
  }
  void Fail(const std::string& why) {
    std::lock_guard<std::mutex> lock(mu);
    if (failure.empty()) failure = why;
    failed = true;
    cv.notify_all();
  }
};

struct Block {
  Grid* grid;
  uint3 bid;
  int64_t linear = 0;
  std::vector<Thread> threads;
  std::vector<Warp> warps;
  ucontext_t sched;
  jmp_buf sched_env;
  Thread* cur = nullptr;
  int at_barrier = 0, done = 0;
  int spins = 0;  // fz_emu_spin calls since the last __syncthreads
  bool failed = false;
  unsigned char* smem = nullptr;  // the worker's arena
  size_t smem_bytes = 0;
  size_t dyn_bytes = 0, static_base = 0, static_top = 0;
  std::vector<std::pair<const void*, size_t>> sites;  // declaration -> arena offset
  char* stacks = nullptr;

  std::string Where() const {
    if (cur == nullptr) return absl::StrCat("block (", bid.x, ", ", bid.y, ", ", bid.z, ")");
    return absl::StrCat("block (", bid.x, ", ", bid.y, ", ", bid.z, ") thread (", cur->pub.tid.x,
                        ", ", cur->pub.tid.y, ", ", cur->pub.tid.z, ")");
  }
};

thread_local Block* tl_block = nullptr;

// Stacks and shared memory of the blocks one OS thread runs, kept from one
// block to the next.
struct WorkerStorage {
  char* stacks = nullptr;
  size_t stacks_bytes = 0;
  std::vector<unsigned char> smem;
  ~WorkerStorage() {
    if (stacks != nullptr) munmap(stacks, stacks_bytes);
  }
};
thread_local WorkerStorage tl_storage;

void Yield() {
  if (_setjmp(tl_block->cur->env) == 0) _longjmp(tl_block->sched_env, 1);
}

// Ends the running thread's part in the kernel: its block stops.
[[noreturn]] void FailHere(const std::string& why) {
  Block* b = tl_block;
  b->failed = true;
  b->grid->Fail(absl::StrCat(b->Where(), ": ", why));
  b->cur->state = Thread::kDone;
  _longjmp(b->sched_env, 1);  // never resumed
}

void ReleaseBarrierIfMet(Block* b) {
  const int n = static_cast<int>(b->threads.size());
  if (b->at_barrier == 0 || b->at_barrier + b->done < n) return;
  for (Thread& t : b->threads) {
    if (t.state == Thread::kBarrier) t.state = Thread::kRun;
  }
  b->at_barrier = 0;
}

// The lanes of w's mask have all arrived: release them. A lane of the mask
// that has exited can never arrive.
void ReleaseWarpIfMet(Block* b, int w) {
  Warp& warp = b->warps[w];
  if (warp.arrived == 0) return;
  const unsigned need = warp.mask & warp.present;
  if ((need & warp.exited) != 0) {
    FailHere(absl::StrCat("lanes 0x", absl::Hex(need & warp.exited), " of warp ", w,
                          " exited before a warp-synchronous call with mask 0x", absl::Hex(need)));
  }
  if ((warp.arrived & need) != need) return;
  for (int l = 0; l < 32; ++l) {
    if ((need >> l) & 1u) b->threads[w * 32 + l].state = Thread::kRun;
  }
  warp.arrived = 0;
}

void Trampoline() {
  Block* b = tl_block;
  b->grid->entry(b->grid->slots);
  Thread* t = b->cur;
  t->state = Thread::kDone;
  ++b->done;
  const int i = static_cast<int>(t - b->threads.data());
  b->warps[i / 32].exited |= 1u << (i % 32);
  ReleaseBarrierIfMet(b);
  ReleaseWarpIfMet(b, i / 32);
  _longjmp(b->sched_env, 1);
}

absl::Status SetUpBlock(Block& b, const GridLaunch& l) {
  const int nx = l.block[0], ny = l.block[1], nz = l.block[2];
  const int n = nx * ny * nz;
  b.threads.resize(n);
  b.warps.resize((n + 31) / 32);
  b.dyn_bytes = (l.dynamic_smem_bytes + 15) / 16 * 16;
  b.static_base = b.static_top = b.dyn_bytes + kCanaryBytes;
  if (b.dyn_bytes > kMaxSmem) {
    return absl::InternalError(absl::StrCat("launch asks for ", l.dynamic_smem_bytes,
                                            " bytes of dynamic shared memory, over the GPU's ",
                                            kMaxSmem));
  }
  // Dynamic, a canary, then at most the static limit.
  tl_storage.smem.resize(b.static_base + kMaxStaticSmem + 64);
  b.smem = tl_storage.smem.data();
  b.smem_bytes = tl_storage.smem.size();
  std::memset(b.smem, 0xFF, b.smem_bytes);
  std::memset(b.smem + b.dyn_bytes, kCanary, kCanaryBytes);
  const size_t stacks_bytes = static_cast<size_t>(n) * kStackBytes;
  if (tl_storage.stacks_bytes < stacks_bytes) {
    if (tl_storage.stacks != nullptr) munmap(tl_storage.stacks, tl_storage.stacks_bytes);
    tl_storage.stacks_bytes = 0;
    void* mem = mmap(nullptr, stacks_bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) return absl::ResourceExhaustedError("mmap of coroutine stacks failed");
    tl_storage.stacks = static_cast<char*>(mem);
    tl_storage.stacks_bytes = stacks_bytes;
  }
  b.stacks = tl_storage.stacks;
  for (int i = 0; i < n; ++i) {
    Thread& t = b.threads[i];
    t.stack = b.stacks + static_cast<size_t>(i) * kStackBytes;
    std::memset(t.stack, kCanary, kStackCanaryBytes);
    t.pub.tid = {static_cast<unsigned>(i % nx), static_cast<unsigned>(i / nx % ny),
                 static_cast<unsigned>(i / (nx * ny))};
    t.pub.bid = b.bid;
    t.pub.bdim = {l.block[0], l.block[1], l.block[2]};
    t.pub.gdim = {l.grid[0], l.grid[1], l.grid[2]};
    t.pub.lane = i % 32;
    t.pub.warp_slots = b.warps[i / 32].slots;
    b.warps[i / 32].present |= 1u << (i % 32);
    getcontext(&t.ctx);
    t.ctx.uc_stack.ss_sp = t.stack;
    t.ctx.uc_stack.ss_size = kStackBytes;
    t.ctx.uc_link = nullptr;
    makecontext(&t.ctx, Trampoline, 0);
  }
  return absl::OkStatus();
}

// Runs one block's threads until all are done, one fails or they deadlock.
void RunBlock(Block& b) {
  tl_block = &b;
  const int n = static_cast<int>(b.threads.size());
  while (!b.failed && b.done < n) {
    bool ran = false;
    for (Thread& t : b.threads) {
      if (t.state != Thread::kRun) continue;
      b.cur = &t;
      if (_setjmp(b.sched_env) == 0) {
        if (t.started) _longjmp(t.env, 1);
        t.started = true;
        setcontext(&t.ctx);
      }
      ran = true;
      if (b.failed) break;
    }
    b.cur = nullptr;
    if (!ran && !b.failed && b.done < n) {
      int bar = 0, warp = 0;
      std::string first_warp;
      for (const Thread& t : b.threads) {
        bar += t.state == Thread::kBarrier;
        if (t.state == Thread::kWarp && warp++ == 0)
          first_warp = absl::StrCat(" (first: thread ", t.pub.tid.x, ", ", t.pub.tid.y, ")");
      }
      b.failed = true;
      b.grid->Fail(absl::StrCat(b.Where(), ": deadlock: ", bar, " threads wait in __syncthreads, ",
                                warp, " in a warp-synchronous call", first_warp, ", ", b.done,
                                " have exited"));
    }
  }
  for (const Thread& t : b.threads) {
    for (size_t i = 0; i < kStackCanaryBytes && !b.failed; ++i) {
      if (static_cast<unsigned char>(t.stack[i]) != kCanary) {
        b.failed = true;
        b.grid->Fail(absl::StrCat(b.Where(), ": a thread overflowed its ", kStackBytes,
                                  "-byte emulation stack"));
      }
    }
  }
  if (!b.failed) {
    for (size_t i = 0; i < kCanaryBytes; ++i) {
      if (b.smem[b.dyn_bytes + i] != kCanary) {
        b.grid->Fail(absl::StrCat(b.Where(), ": wrote past its ", b.dyn_bytes,
                                  " bytes of dynamic shared memory"));
        break;
      }
    }
  }
  tl_block = nullptr;
}

void RunBlockAt(Grid& g, int64_t linear) {
  const GridLaunch& l = g.launch;
  Block b;
  b.grid = &g;
  b.linear = linear;
  b.bid = {static_cast<unsigned>(linear % l.grid[0]),
           static_cast<unsigned>(linear / l.grid[0] % l.grid[1]),
           static_cast<unsigned>(linear / (int64_t{l.grid[0]} * l.grid[1]))};
  if (absl::Status s = SetUpBlock(b, l); !s.ok()) {
    g.Fail(std::string(s.message()));
    return;
  }
  {
    std::lock_guard<std::mutex> lock(g.mu);
    g.blocks[linear] = &b;
  }
  RunBlock(b);
  // Cluster peers may still read this block's shared memory: wait for them.
  if (g.ClusterSize() > 1) {
    std::unique_lock<std::mutex> lock(g.mu);
    const int64_t c = g.ClusterOf(b.bid);
    ++g.cluster_exited[c];
    g.cv.notify_all();
    g.cv.wait(lock, [&] { return g.failed || g.cluster_exited[c] >= g.ClusterSize(); });
  }
  std::lock_guard<std::mutex> lock(g.mu);
  g.blocks[linear] = nullptr;
}

// Where the faulting thread is, for the fault report (emu_fault.h).
int DescribeFault(int sig, char* buf, size_t n) {
  const Block* b = tl_block;
  if (b == nullptr || b->cur == nullptr) {
    return std::snprintf(buf, n, "host emulation: signal %d outside a kernel thread\n", sig);
  }
  return std::snprintf(buf, n,
                       "host emulation: signal %d in kernel %s, block (%u, %u, %u) thread (%u, "
                       "%u, %u)\n",
                       sig, b->grid->launch.kernel.c_str(), b->bid.x, b->bid.y, b->bid.z,
                       b->cur->pub.tid.x, b->cur->pub.tid.y, b->cur->pub.tid.z);
}

Block* Self() {
  if (tl_block == nullptr || tl_block->cur == nullptr) {
    std::fprintf(stderr, "host emulation: a CUDA built-in called outside a kernel\n");
    std::abort();
  }
  return tl_block;
}

}  // namespace

absl::Status RunGrid(KernelEntry entry, void* const* slots, const GridLaunch& launch) {
  const int64_t threads = int64_t{launch.block[0]} * launch.block[1] * launch.block[2];
  const int64_t blocks = int64_t{launch.grid[0]} * launch.grid[1] * launch.grid[2];
  if (threads < 1 || threads > kMaxEmulatedThreads || blocks < 1 || blocks > kMaxEmulatedBlocks) {
    return absl::InvalidArgumentError(absl::StrCat("launch of ", blocks, " blocks of ", threads,
                                                   " threads is outside the emulation's range"));
  }
  for (int d = 0; d < 3; ++d) {
    if (launch.cluster[d] < 1 || launch.grid[d] % launch.cluster[d] != 0) {
      return absl::InternalError(absl::StrCat("grid dimension ", d, " (", launch.grid[d],
                                              ") is not a multiple of the cluster's (",
                                              launch.cluster[d], ")"));
    }
  }
  InstallFaultReport(DescribeFault);
  Grid g;
  g.entry = entry;
  g.slots = slots;
  g.launch = launch;
  g.deadline = std::chrono::steady_clock::now() +
               std::chrono::milliseconds(static_cast<int64_t>(launch.timeout_s * 1000));
  g.blocks.assign(blocks, nullptr);
  const int64_t clusters = g.ClusterSize() > 1 ? blocks / g.ClusterSize() : 0;
  g.cluster_arrived.assign(clusters, 0);
  g.cluster_generation.assign(clusters, 0);
  g.cluster_exited.assign(clusters, 0);
  // Grid and cluster barriers need every block resident; other kernels run
  // in a pool, blocks in index order.
  const bool all_at_once = launch.cooperative || g.ClusterSize() > 1 || blocks <= 16;
  const int64_t workers = all_at_once ? blocks : 8;
  std::atomic<int64_t> next{0};
  std::vector<std::thread> pool;
  for (int64_t w = 0; w < workers; ++w) {
    pool.emplace_back([&] {
      AltSignalStack alt;
      for (int64_t i = next++; i < blocks && !g.failed; i = next++) RunBlockAt(g, i);
    });
  }
  for (std::thread& t : pool) t.join();
  if (g.failed) return absl::InternalError(g.failure);
  return absl::OkStatus();
}

}  // namespace host_emulation
}  // namespace fusiond

using fusiond::host_emulation::Block;
using fusiond::host_emulation::Copy;
using fusiond::host_emulation::Thread;

extern "C" {

FzEmuThread* fz_emu_self() { return &fusiond::host_emulation::Self()->cur->pub; }

void fz_emu_fail(const char* what) {
  fusiond::host_emulation::Self();
  fusiond::host_emulation::FailHere(what);
}

void fz_emu_syncthreads() {
  Block* b = fusiond::host_emulation::Self();
  b->spins = 0;
  b->cur->state = Thread::kBarrier;
  ++b->at_barrier;
  fusiond::host_emulation::ReleaseBarrierIfMet(b);
  fusiond::host_emulation::Yield();
}

void fz_emu_syncwarp(unsigned mask) {
  Block* b = fusiond::host_emulation::Self();
  Thread* t = b->cur;
  const int i = static_cast<int>(t - b->threads.data());
  auto& w = b->warps[i / 32];
  if (((mask >> (i % 32)) & 1u) == 0) {
    fusiond::host_emulation::FailHere(absl::StrCat("calls a warp-synchronous function with mask 0x",
                                                   absl::Hex(mask),
                                                   " that leaves out its own lane ", i % 32));
  }
  if (w.arrived != 0 && w.mask != mask) {
    fusiond::host_emulation::FailHere(absl::StrCat("warp ", i / 32, " lanes meet with masks 0x",
                                                   absl::Hex(w.mask), " and 0x", absl::Hex(mask)));
  }
  w.mask = mask;
  w.arrived |= 1u << (i % 32);
  t->state = Thread::kWarp;
  fusiond::host_emulation::ReleaseWarpIfMet(b, i / 32);
  fusiond::host_emulation::Yield();
}

void* fz_emu_dynamic_shared() {
  Block* b = fusiond::host_emulation::Self();
  return b->smem;
}

void* fz_emu_shared(const void* site, size_t bytes, size_t align) {
  Block* b = fusiond::host_emulation::Self();
  for (const auto& [s, offset] : b->sites) {
    if (s == site) return b->smem + offset;
  }
  const size_t offset = (b->static_top + align - 1) / align * align;
  const size_t static_bytes = offset + bytes - b->static_base;
  if (static_bytes > fusiond::host_emulation::kMaxStaticSmem) {
    fusiond::host_emulation::FailHere(absl::StrCat("static shared memory reaches ", static_bytes,
                                                   " bytes, over the GPU's 48 KiB"));
  }
  if (b->dyn_bytes + static_bytes > fusiond::host_emulation::kMaxSmem) {
    fusiond::host_emulation::FailHere(absl::StrCat(
        "shared memory reaches ", b->dyn_bytes + static_bytes,
        " bytes (dynamic + static), over the GPU's ", fusiond::host_emulation::kMaxSmem));
  }
  b->static_top = offset + bytes;
  b->sites.emplace_back(site, offset);
  return b->smem + offset;
}

unsigned fz_emu_cvta_shared(const void* p) {
  Block* b = fusiond::host_emulation::Self();
  const unsigned char* c = static_cast<const unsigned char*>(p);
  if (c < b->smem || c >= b->smem + b->smem_bytes) {
    fusiond::host_emulation::FailHere(
        "__cvta_generic_to_shared of a pointer outside shared memory");
  }
  return static_cast<unsigned>(c - b->smem);
}

void* fz_emu_shared_ptr(unsigned addr) {
  using fusiond::host_emulation::kMappedBit;
  Block* b = fusiond::host_emulation::Self();
  if ((addr & kMappedBit) == 0) return b->smem + addr;
  const unsigned rank = (addr & ~kMappedBit) >> fusiond::host_emulation::kRankShift;
  const int64_t peer = b->grid->PeerOf(b->bid, rank);
  Block* other = nullptr;
  {
    std::lock_guard<std::mutex> lock(b->grid->mu);
    other = b->grid->blocks[peer];
  }
  if (other == nullptr) {
    fusiond::host_emulation::FailHere(
        absl::StrCat("reads the shared memory of cluster rank ", rank, ", which is not running"));
  }
  return other->smem + (addr & fusiond::host_emulation::kOffsetMask);
}

unsigned fz_emu_mapa(unsigned addr, unsigned rank) {
  Block* b = fusiond::host_emulation::Self();
  if (rank >= static_cast<unsigned>(b->grid->ClusterSize())) {
    fusiond::host_emulation::FailHere(
        absl::StrCat("mapa to rank ", rank, " of a cluster of ", b->grid->ClusterSize()));
  }
  return fusiond::host_emulation::kMappedBit | (rank << fusiond::host_emulation::kRankShift) |
         (addr & fusiond::host_emulation::kOffsetMask);
}

void fz_emu_cluster_sync() {
  Block* b = fusiond::host_emulation::Self();
  auto& g = *b->grid;
  const int cs = g.ClusterSize();
  fz_emu_syncthreads();
  const uint3 tid = b->cur->pub.tid;
  if (cs > 1 && tid.x == 0 && tid.y == 0 && tid.z == 0) {
    std::unique_lock<std::mutex> lock(g.mu);
    const int64_t c = g.ClusterOf(b->bid);
    const int gen = g.cluster_generation[c];
    if (++g.cluster_arrived[c] == cs) {
      g.cluster_arrived[c] = 0;
      ++g.cluster_generation[c];
      g.cv.notify_all();
    } else if (!g.cv.wait_until(lock, g.deadline,
                                [&] { return g.failed || g.cluster_generation[c] != gen; })) {
      lock.unlock();
      fusiond::host_emulation::FailHere("waited past the time limit in a cluster barrier");
    }
    if (g.failed) {
      lock.unlock();
      fusiond::host_emulation::FailHere("another block failed during a cluster barrier");
    }
  }
  fz_emu_syncthreads();
}

void fz_emu_check_align(const void* p, int bytes) {
  if (reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(bytes) != 0) {
    fusiond::host_emulation::Self();
    fusiond::host_emulation::FailHere(absl::StrCat(bytes,
                                                   "-byte vector access at a misaligned address 0x",
                                                   absl::Hex(reinterpret_cast<uintptr_t>(p))));
  }
}

void fz_emu_cp_async(unsigned shared_addr, const void* global, int bytes) {
  void* dst = fz_emu_shared_ptr(shared_addr);
  fz_emu_check_align(dst, bytes);
  fz_emu_check_align(global, bytes);
  fusiond::host_emulation::Self()->cur->open_group.push_back(Copy{dst, global, bytes});
}

void fz_emu_cp_commit() {
  Thread* t = fusiond::host_emulation::Self()->cur;
  t->committed.push_back(std::move(t->open_group));
  t->open_group.clear();
}

void fz_emu_cp_wait(int pending) {
  Thread* t = fusiond::host_emulation::Self()->cur;
  while (static_cast<int>(t->committed.size()) > pending) {
    for (const Copy& c : t->committed.front()) std::memcpy(c.dst, c.src, c.bytes);
    t->committed.erase(t->committed.begin());
  }
}

void fz_emu_spin() {
  Block* b = fusiond::host_emulation::Self();
  if (b->grid->failed)
    fusiond::host_emulation::FailHere("another block failed while this one spun");
  if (std::chrono::steady_clock::now() > b->grid->deadline) {
    fusiond::host_emulation::FailHere(
        "spun past the time limit (a grid barrier some block never reaches)");
  }
  // Yield at first, then sleep: with more blocks than cores the waiting
  // blocks would otherwise take the CPU from the ones still working.
  if (++b->spins < 64) {
    sched_yield();
  } else {
    usleep(50);
  }
}

}  // extern "C"
