// ChildProcess: a server a test starts (fusiond, redis-server) that cannot
// outlive the test. The child runs in its own process group, gets SIGKILL
// from the kernel when the test process dies (even by abort or a crash), and
// is killed with its group when the ChildProcess is destroyed. Its stdin is
// /dev/null and its stdout and stderr go to a log file (or /dev/null), so it
// never holds the test runner's pipes open.
#ifndef FUSIOND_TESTS_UTIL_CHILD_PROCESS_H_
#define FUSIOND_TESTS_UTIL_CHILD_PROCESS_H_

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace fusiond {

class ChildProcess {
 public:
  ChildProcess() = default;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() { Kill(); }

  // Starts args[0] with args; returns false when fork fails. A failed exec
  // shows as exit status 127.
  bool Start(const std::vector<std::string>& args, const std::string& log_path = "/dev/null") {
    Kill();
    const pid_t parent = getpid();
    pid_ = fork();
    if (pid_ < 0) return false;
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(126);  // the parent died before prctl
      setpgid(0, 0);
      const int in = open("/dev/null", O_RDONLY);
      const int out = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      dup2(in, 0);
      dup2(out, 1);
      dup2(out, 2);
      std::vector<char*> argv;
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    setpgid(pid_, pid_);  // also here, so that Kill() finds the group at once
    return true;
  }

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  // Sends `signal`, waits up to `timeout` for the exit, then SIGKILLs the
  // group. Returns the wait status (-1 if nothing was running).
  int Stop(int signal = SIGTERM, std::chrono::seconds timeout = std::chrono::seconds(30)) {
    if (pid_ <= 0) return -1;
    kill(pid_, signal);
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(-pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill(-pid_, SIGKILL);  // anything the child left in its group
    pid_ = 0;
    return status;
  }

  void Kill() { Stop(SIGKILL, std::chrono::seconds(10)); }

 private:
  pid_t pid_ = 0;
};

}  // namespace fusiond

#endif  // FUSIOND_TESTS_UTIL_CHILD_PROCESS_H_
