#include "cache/record.h"

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cache/crc32c.h"

namespace fusiond {
namespace {

constexpr char kMagic[4] = {'F', 'K', 'C', 'R'};

void PutLE(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

uint64_t GetLE(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

}  // namespace

std::string EncodeRecord(std::string_view payload) {
  std::string out;
  out.reserve(kRecordHeaderBytes + payload.size());
  out.append(kMagic, 4);
  PutLE(&out, kRecordVersion, 4);
  PutLE(&out, payload.size(), 8);
  PutLE(&out, Crc32c(payload.data(), payload.size()), 4);
  PutLE(&out, Crc32c(out.data(), out.size()), 4);
  out.append(payload.data(), payload.size());
  return out;
}

absl::StatusOr<std::string_view> DecodeRecord(std::string_view record) {
  if (record.size() < kRecordHeaderBytes) {
    return absl::DataLossError(absl::StrCat("cache record truncated: ", record.size(),
                                            " bytes, the header alone is ", kRecordHeaderBytes));
  }
  const char* p = record.data();
  if (std::memcmp(p, kMagic, 4) != 0) {
    return absl::DataLossError("cache record has a bad magic");
  }
  if (GetLE(p + 20, 4) != Crc32c(p, 20)) {
    return absl::DataLossError("cache record header fails its checksum");
  }
  uint64_t version = GetLE(p + 4, 4);
  if (version != kRecordVersion) {
    return absl::DataLossError(
        absl::StrCat("cache record version ", version, " is not ", kRecordVersion));
  }
  uint64_t length = GetLE(p + 8, 8);
  if (length != record.size() - kRecordHeaderBytes) {
    return absl::DataLossError(absl::StrCat("cache record says ", length,
                                            " payload bytes but holds ",
                                            record.size() - kRecordHeaderBytes));
  }
  std::string_view payload = record.substr(kRecordHeaderBytes);
  if (GetLE(p + 16, 4) != Crc32c(payload.data(), payload.size())) {
    return absl::DataLossError("cache record payload fails its checksum");
  }
  return payload;
}

}  // namespace fusiond
