// CRC-32C (Castagnoli), table driven. Checksums the kernel cache's records.
#ifndef FUSIOND_CACHE_CRC32C_H_
#define FUSIOND_CACHE_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace fusiond {

// CRC-32C of `n` bytes at `data`, continuing from `crc` (0 to start).
// Crc32c("123456789") == 0xE3069283. Uses the SSE4.2 instruction when the
// CPU has it, else slicing-by-8 tables.
uint32_t Crc32c(const void* data, size_t n, uint32_t crc = 0);
// The table version always (for tests: both must agree).
uint32_t Crc32cPortable(const void* data, size_t n, uint32_t crc = 0);

}  // namespace fusiond

#endif  // FUSIOND_CACHE_CRC32C_H_
