#include "server/sd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace fusiond {

absl::Status SdNotify(const std::string& state) {
  const char* env = std::getenv("NOTIFY_SOCKET");
  if (env == nullptr || env[0] == '\0') return absl::OkStatus();
  const std::string path = env;
  struct sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  if ((path[0] != '/' && path[0] != '@') || path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "NOTIFY_SOCKET '", path, "': expected an absolute path or @abstract name of at most ",
        sizeof(addr.sun_path) - 1, " bytes"));
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  if (path[0] == '@') addr.sun_path[0] = '\0';  // Linux abstract namespace
  const socklen_t len = static_cast<socklen_t>(offsetof(struct sockaddr_un, sun_path) +
                                               path.size() + (path[0] == '/' ? 1 : 0));
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("sd_notify: socket: ", strerror(errno)));
  ssize_t sent = sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
                        reinterpret_cast<const struct sockaddr*>(&addr), len);
  int err = errno;
  close(fd);
  if (sent != static_cast<ssize_t>(state.size())) {
    return absl::UnavailableError(
        absl::StrCat("sd_notify: sendto ", path, ": ", sent < 0 ? strerror(err) : "short write"));
  }
  return absl::OkStatus();
}

}  // namespace fusiond
