#include "cache/shared_tier_record.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "cache/record.h"

namespace fusiond {
namespace {

constexpr char kMagic[4] = {'F', 'S', 'R', '1'};
constexpr size_t kFixedHead = 8;  // magic + key length

void PutU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

uint32_t GetU32(std::string_view in) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<unsigned char>(in[i])} << (8 * i);
  return v;
}

absl::Status Refuse(SharedRecordProblem why, SharedRecordProblem* problem,
                    const std::string& message) {
  if (problem != nullptr) *problem = why;
  return absl::DataLossError(message);
}

}  // namespace

std::string HmacSha256(std::string_view secret, std::string_view data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  // A zero-length key is valid HMAC input; OpenSSL wants a non-null pointer.
  static const unsigned char kEmpty = 0;
  const void* key =
      secret.empty() ? static_cast<const void*>(&kEmpty) : static_cast<const void*>(secret.data());
  HMAC(EVP_sha256(), key, static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &mac_len);
  return std::string(reinterpret_cast<const char*>(mac), mac_len);
}

std::string EncodeSharedRecord(std::string_view secret, std::string_view redis_key,
                               std::string_view payload) {
  std::string record = EncodeRecord(payload);
  std::string out;
  out.reserve(kFixedHead + redis_key.size() + record.size() + kSharedRecordMacBytes);
  out.append(kMagic, sizeof(kMagic));
  PutU32(&out, static_cast<uint32_t>(redis_key.size()));
  out.append(redis_key);
  out.append(record);
  out.append(HmacSha256(secret, out));
  return out;
}

absl::StatusOr<std::string_view> DecodeSharedRecord(std::string_view secret,
                                                    std::string_view redis_key,
                                                    std::string_view value,
                                                    SharedRecordProblem* problem) {
  if (problem != nullptr) *problem = SharedRecordProblem::kNone;
  if (value.size() < kFixedHead + kSharedRecordMacBytes ||
      value.substr(0, 4) != std::string_view(kMagic, 4)) {
    return Refuse(SharedRecordProblem::kMalformed, problem,
                  "shared-tier value is not a signed record (short or bad magic)");
  }
  const uint64_t key_len = GetU32(value.substr(4, 4));
  if (key_len > value.size() - kFixedHead - kSharedRecordMacBytes) {
    return Refuse(SharedRecordProblem::kMalformed, problem,
                  "shared-tier value: key length past the end");
  }
  const std::string_view signed_part = value.substr(0, value.size() - kSharedRecordMacBytes);
  const std::string_view mac = value.substr(signed_part.size());
  const std::string expected = HmacSha256(secret, signed_part);
  if (CRYPTO_memcmp(expected.data(), mac.data(), kSharedRecordMacBytes) != 0) {
    return Refuse(SharedRecordProblem::kBadMac, problem,
                  "shared-tier value fails its HMAC (not written with this cluster's secret)");
  }
  if (value.substr(kFixedHead, key_len) != redis_key) {
    return Refuse(SharedRecordProblem::kWrongKey, problem,
                  "shared-tier value names another key (a record moved under this one)");
  }
  absl::StatusOr<std::string_view> payload = DecodeRecord(signed_part.substr(kFixedHead + key_len));
  if (!payload.ok()) {
    return Refuse(SharedRecordProblem::kMalformed, problem,
                  absl::StrCat("shared-tier record: ", payload.status().message()));
  }
  return payload;
}

}  // namespace fusiond
