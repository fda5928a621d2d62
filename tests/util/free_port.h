// FreePort(): a TCP port on 127.0.0.1 that was free a moment ago, for tests
// and benchmarks that start a daemon on loopback.
#ifndef FUSIOND_TESTS_UTIL_FREE_PORT_H_
#define FUSIOND_TESTS_UTIL_FREE_PORT_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace fusiond {

inline int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace fusiond

#endif  // FUSIOND_TESTS_UTIL_FREE_PORT_H_
