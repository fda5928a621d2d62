#include "cache/secret_file.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace fusiond {

absl::StatusOr<std::string> ReadSecretFile(const std::string& path, const std::string& what) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": cannot read ", path));
  }
  if (!S_ISREG(st.st_mode) || st.st_size > (64 << 10)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", path, " is not a regular file of at most 64 KiB"));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": ", path, " is writable by other users; make it 0600 or 0400 (chmod go-w)"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(what, ": cannot read ", path));
  std::ostringstream text;
  text << in.rdbuf();
  std::string secret = text.str();
  while (!secret.empty() && absl::ascii_isspace(static_cast<unsigned char>(secret.back()))) {
    secret.pop_back();
  }
  if (secret.empty())
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", path, " is empty"));
  return secret;
}

bool IsLoopbackHost(const std::string& host_or_address) {
  std::string host = host_or_address;
  if (absl::StartsWith(host, "[")) {
    host = host.substr(
        1, host.find(']') == std::string::npos ? std::string::npos : host.find(']') - 1);
  } else if (std::count(host.begin(), host.end(), ':') == 1) {
    host = host.substr(0, host.find(':'));
  }
  if (absl::StartsWith(host, "ipv4:")) host = host.substr(5);
  return host == "localhost" || host == "::1" || absl::StartsWith(host, "127.");
}

}  // namespace fusiond
