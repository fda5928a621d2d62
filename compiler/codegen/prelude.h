// The device prelude: a small header of our own that every generated kernel
// starts with, so NVRTC never parses toolkit headers. It holds 16-bit float
// conversion (round to nearest even), element access inside packed words,
// vectorized loads/stores of 2..16 bytes, warp reductions and a grid barrier,
// in pieces: a kernel gets the pieces its code names (TrimDevicePrelude).
#ifndef FUSIOND_COMPILER_CODEGEN_PRELUDE_H_
#define FUSIOND_COMPILER_CODEGEN_PRELUDE_H_

#include <string>
#include <vector>

namespace fusiond {

// The barrier words' workspace of a cooperative kernel (zeroed once, kept):
// 128 bytes of grid-wide words, then one 32-byte word per row group
// (fz_group_sync) for up to kMaxBarrierGroups groups.
constexpr int kBarrierBytes = 4096;
constexpr int kMaxBarrierGroups = (kBarrierBytes - 128) / 32;

// The prelude's source text, whole (a constant string): its pieces in order.
const char* DevicePrelude();

// One piece of the prelude: helpers and the names that pull them into a
// kernel (TrimDevicePrelude).
struct PreludePiece {
  // Space-separated: identifiers ("fz_max"), or "Ty<5>" for one explicit
  // specialization, which a use with a non-literal argument (Ty<DT>) also
  // pulls in. Empty: in every kernel.
  const char* names;
  const char* text;
};
std::vector<PreludePiece> DevicePreludePieces();

// prelude_trim.cc. `source` (DevicePrelude() followed by the rest of a
// kernel: the other preludes and the code) with only the pieces the rest
// names, directly or through other pieces, in their order: NVRTC parses
// less and the cubin stays the same (prelude_test). Any other source comes
// back unchanged.
std::string TrimDevicePrelude(const std::string& source);
// The inverse: a trimmed kernel source with the whole prelude again (for
// checks that both compile to the same cubin). Any other source unchanged.
std::string UntrimDevicePrelude(const std::string& source);

// The thread-block cluster helpers (fz_cluster_sync, fz_dsmem_ld4; sm_90+),
// appended only to kernels that use clusters.
const char* ClusterPrelude();
// Division by run-time extents (FzDiv): in kernels whose offsets need it.
const char* DividerPrelude();
// The fp8 element types (Ty<8> e4m3fn, Ty<9> e5m2): in kernels using them.
const char* Fp8Prelude();
// fz_elem: a column operand's element from packed words or from floats, in
// kernels that keep a staged column as float (Generator::FloatColumn).
const char* FloatColumnPrelude();
// fz_ld_keep / fz_ld_done: row chunk loads with evict-last, then evict-first
// cache policies, in kernels that re-read their rows (reread_rows).
const char* RereadPrelude();
// fz_uniform_f/_d, fz_normal_f/_d (compiler/ir/philox.h): in kernels with
// random ops.
const char* RandomPrelude();

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_CODEGEN_PRELUDE_H_
