// systemd's readiness protocol (Type=notify units): one datagram such as
// "READY=1" or "STOPPING=1" to the AF_UNIX socket named by $NOTIFY_SOCKET.
// Written here (a socket and a sendto) rather than linking libsystemd: the
// daemon and its container image need no further library for it.
#ifndef FUSIOND_SERVER_SD_NOTIFY_H_
#define FUSIOND_SERVER_SD_NOTIFY_H_

#include <string>

#include "absl/status/status.h"

namespace fusiond {

// Sends `state` to $NOTIFY_SOCKET ("/path" or "@abstract"). OK and nothing
// sent when the variable is unset or empty (not started by systemd);
// InvalidArgument for an address that is not a usable socket name;
// Unavailable when the datagram cannot be sent.
absl::Status SdNotify(const std::string& state);

}  // namespace fusiond

#endif  // FUSIOND_SERVER_SD_NOTIFY_H_
