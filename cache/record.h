// The framing of one kernel-cache value: a fixed header, then the payload
// (a serialized fusiond.v1.CompiledFusion).
//
//   offset size  field
//   0      4     magic "FKCR"
//   4      4     frame version (little endian), kRecordVersion
//   8      8     payload length in bytes (little endian)
//   16     4     CRC-32C of the payload (little endian)
//   20     4     CRC-32C of bytes 0..19 (the header itself)
//   24     n     payload
//
// A value that fails any check is corrupt: the cache counts it, deletes it
// and reports a miss; it is never served.
#ifndef FUSIOND_CACHE_RECORD_H_
#define FUSIOND_CACHE_RECORD_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace fusiond {

constexpr uint32_t kRecordVersion = 1;
constexpr size_t kRecordHeaderBytes = 24;

// Frames `payload` into one record.
std::string EncodeRecord(std::string_view payload);

// The payload of a framed record (a view into `record`); DataLoss naming
// the failed check when the record is truncated, has a bad magic or
// version, or fails a checksum.
absl::StatusOr<std::string_view> DecodeRecord(std::string_view record);

}  // namespace fusiond

#endif  // FUSIOND_CACHE_RECORD_H_
