#include "server/sd_notify.h"

#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <string>

#include "gtest/gtest.h"

namespace fusiond {
namespace {

// A datagram socket bound where systemd's would be; the test reads what
// SdNotify sent.
class NotifySocket {
 public:
  explicit NotifySocket(const std::string& name) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr = {};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, name.data(), name.size());
    socklen_t len = offsetof(struct sockaddr_un, sun_path) + name.size();
    if (name[0] == '@') {
      addr.sun_path[0] = '\0';
    } else {
      unlink(name.c_str());
      ++len;
    }
    bound_ = bind(fd_, reinterpret_cast<struct sockaddr*>(&addr), len) == 0;
    struct timeval tv = {5, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~NotifySocket() { close(fd_); }
  bool bound() const { return bound_; }
  std::string Receive() {
    char buf[256];
    ssize_t n = recv(fd_, buf, sizeof buf, 0);
    return n < 0 ? "" : std::string(buf, n);
  }

 private:
  int fd_ = -1;
  bool bound_ = false;
};

TEST(SdNotify, SendsToAPathSocket) {
  std::string path = "/tmp/sd_notify_test." + std::to_string(getpid());
  NotifySocket sock(path);
  ASSERT_TRUE(sock.bound());
  setenv("NOTIFY_SOCKET", path.c_str(), 1);
  ASSERT_TRUE(SdNotify("READY=1").ok());
  EXPECT_EQ(sock.Receive(), "READY=1");
  ASSERT_TRUE(SdNotify("STOPPING=1").ok());
  EXPECT_EQ(sock.Receive(), "STOPPING=1");
  unsetenv("NOTIFY_SOCKET");
  unlink(path.c_str());
}

TEST(SdNotify, SendsToAnAbstractSocket) {
  std::string name = "@fusiond_sd_notify_test_" + std::to_string(getpid());
  NotifySocket sock(name);
  ASSERT_TRUE(sock.bound());
  setenv("NOTIFY_SOCKET", name.c_str(), 1);
  ASSERT_TRUE(SdNotify("READY=1").ok());
  EXPECT_EQ(sock.Receive(), "READY=1");
  unsetenv("NOTIFY_SOCKET");
}

TEST(SdNotify, NothingToDoWithoutTheVariable) {
  unsetenv("NOTIFY_SOCKET");
  EXPECT_TRUE(SdNotify("READY=1").ok());
}

TEST(SdNotify, BadAddressesAreErrors) {
  setenv("NOTIFY_SOCKET", "relative/path", 1);
  EXPECT_TRUE(absl::IsInvalidArgument(SdNotify("READY=1")));
  setenv("NOTIFY_SOCKET", ("/" + std::string(200, 'x')).c_str(), 1);
  EXPECT_TRUE(absl::IsInvalidArgument(SdNotify("READY=1")));
  setenv("NOTIFY_SOCKET", "/nonexistent/dir/notify", 1);
  EXPECT_TRUE(absl::IsUnavailable(SdNotify("READY=1")));
  unsetenv("NOTIFY_SOCKET");
}

}  // namespace
}  // namespace fusiond
