#include "sim/sweep/fork_pool.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <vector>

#include "sim/sweep/child_process.h"

namespace pipetwin {
namespace {

struct Child {
  size_t index;
  pid_t pid;
  int fd;  // read end of the child's pipe
  std::string output;
};

// Kills and reaps whatever is still running when the pool is left by an exception, so
// that no orphan keeps computing (or holds the terminal) after the command has failed.
struct Reaper {
  std::vector<Child>& children;
  ~Reaper() {
    for (const Child& child : children) {
      kill(child.pid, SIGKILL);
      close(child.fd);
      while (waitpid(child.pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
  }
};

Child spawn(size_t index, const std::function<std::string(size_t)>& job) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
  const pid_t pid = fork_child();
  if (pid < 0) {
    const int error = errno;
    close(fds[0]);
    close(fds[1]);
    throw std::system_error(error, std::generic_category(), "fork");
  }
  if (pid == 0) {
    close(fds[0]);
    int code = 0;
    try {
      const std::string out = job(index);
      if (!write_all(fds[1], out.data(), out.size())) code = 71;
    } catch (...) {
      code = 70;
    }
    // _exit, not exit: the parent's atexit handlers and static destructors are not ours
    // to run (they would flush its streams and tear down its state a second time).
    _exit(code);
  }
  // Only the child may hold the write end: the pipe must read EOF as soon as it is gone.
  close(fds[1]);
  return Child{index, pid, fds[0], {}};
}

// Reads what is there; false at end of file (the child closed its pipe: exited or died).
bool drain(Child& child) {
  char buffer[1 << 16];
  const ssize_t n = read(child.fd, buffer, sizeof buffer);
  if (n > 0) {
    child.output.append(buffer, static_cast<size_t>(n));
    return true;
  }
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  return false;  // EOF, or an error that no retry would fix: the child's result is over
}

int reap(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

}  // namespace

bool ChildExit::exited_cleanly() const {
  return wait_status >= 0 && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
}

std::string describe_child_exit(int wait_status) {
  if (wait_status < 0) return "vanished (waitpid failed)";
  if (WIFEXITED(wait_status))
    return "exited with status " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    const int signal = WTERMSIG(wait_status);
    return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  }
  return "stopped with wait status " + std::to_string(wait_status);
}

int available_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
}

void run_in_children(size_t count, int max_parallel, const std::function<std::string(size_t)>& job,
                     const std::function<void(size_t, ChildExit)>& on_done) {
  const size_t limit = static_cast<size_t>(std::max(1, max_parallel));
  std::vector<Child> running;
  Reaper reaper{running};
  size_t next = 0;
  while (next < count || !running.empty()) {
    while (next < count && running.size() < limit) running.push_back(spawn(next++, job));
    std::vector<pollfd> polled;
    for (const Child& child : running) polled.push_back({child.fd, POLLIN, 0});
    if (poll(polled.data(), polled.size(), -1) < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "poll");
    }
    // Backwards, so that erasing a finished child leaves the earlier positions valid.
    for (size_t k = polled.size(); k-- > 0;) {
      if (polled[k].revents == 0 || drain(running[k])) continue;
      Child child = std::move(running[k]);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
      close(child.fd);
      ChildExit exit{std::move(child.output), reap(child.pid)};
      on_done(child.index, std::move(exit));
    }
  }
}

}  // namespace pipetwin
