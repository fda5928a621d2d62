// The value the shared tier stores in Redis: a kernel-cache record that
// names its own key and carries an HMAC-SHA256 under the cluster secret.
//
//   offset size  field
//   0      4     magic "FSR1"
//   4      4     key length k (little endian)
//   8      k     the Redis key this value belongs under
//   8+k    n     the framed record (record.h: header with CRC-32C, payload)
//   8+k+n  32    HMAC-SHA256(secret, bytes 0 .. 8+k+n-1)
//
// Anyone who can write to Redis but does not hold the secret cannot make a
// value a daemon accepts: an altered cubin with a recomputed CRC fails the
// MAC, and a genuine value copied under another key names the wrong key.
#ifndef FUSIOND_CACHE_SHARED_TIER_RECORD_H_
#define FUSIOND_CACHE_SHARED_TIER_RECORD_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace fusiond {

constexpr size_t kSharedRecordMacBytes = 32;

// Why a remote value was refused.
enum class SharedRecordProblem {
  kNone,
  kMalformed,  // too short, bad magic or lengths, or the inner record's checks
  kBadMac,     // not made with this cluster's secret (forged or altered)
  kWrongKey,   // a genuine value stored under another key
};

// The value for `redis_key` and `payload`, authenticated with `secret`.
std::string EncodeSharedRecord(std::string_view secret, std::string_view redis_key,
                               std::string_view payload);

// The payload of `value` (a view into it) when it carries a valid MAC under
// `secret`, names `redis_key` and its record passes its checks; else
// DataLoss naming the check, with the reason in `*problem` (may be null).
absl::StatusOr<std::string_view> DecodeSharedRecord(std::string_view secret,
                                                    std::string_view redis_key,
                                                    std::string_view value,
                                                    SharedRecordProblem* problem);

// HMAC-SHA256 of `data` under `secret` (32 bytes).
std::string HmacSha256(std::string_view secret, std::string_view data);

}  // namespace fusiond

#endif  // FUSIOND_CACHE_SHARED_TIER_RECORD_H_
