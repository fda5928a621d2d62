// The calls between translated kernels (cuda_host.h) and the emulation
// runtime (emu_runtime.cc), which the test binary exports to the kernels'
// shared objects.
#ifndef FUSIOND_TESTS_HOST_EMULATION_EMU_ABI_H_
#define FUSIOND_TESTS_HOST_EMULATION_EMU_ABI_H_

#include <cstddef>

struct uint3 {
  unsigned x, y, z;
};
typedef uint3 dim3;

// The state of the running CUDA thread (emu_runtime.cc owns it).
struct FzEmuThread {
  uint3 tid, bid, bdim, gdim;
  int lane;
  unsigned long long* warp_slots;  // the warp's 32 exchange slots
};

extern "C" {
FzEmuThread* fz_emu_self();
void fz_emu_syncthreads();
void fz_emu_syncwarp(unsigned mask);
void fz_emu_fail(const char* what);
void* fz_emu_shared(const void* site, size_t bytes, size_t align);
void* fz_emu_dynamic_shared();
unsigned fz_emu_cvta_shared(const void* p);
void* fz_emu_shared_ptr(unsigned addr);
unsigned fz_emu_mapa(unsigned addr, unsigned rank);
void fz_emu_cluster_sync();
void fz_emu_cp_async(unsigned shared_addr, const void* global, int bytes);
void fz_emu_cp_commit();
void fz_emu_cp_wait(int pending);
void fz_emu_spin();
void fz_emu_check_align(const void* p, int bytes);
}

#endif  // FUSIOND_TESTS_HOST_EMULATION_EMU_ABI_H_
