#include "sim/simgrid/run_in_child.h"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

enum Status : char { kOk = 0, kRuntime = 1, kInput = 2 };

void write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent went away; nothing left to tell
    data += n;
    size -= static_cast<size_t>(n);
  }
}

}  // namespace

std::string run_in_child(const std::function<std::string()>& work) {
  int fds[2];
  if (::pipe(fds) != 0) throw RuntimeFailure(std::string("pipe: ") + std::strerror(errno));
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw RuntimeFailure(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
    // Dies with its parent: a parent killed (a pool's Reaper, a user's ^C) leaves no simulation
    // running on as an orphan.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) std::_Exit(1);  // it died before the line above
    std::string reply;
    Status status = kOk;
    try {
      reply = work();
    } catch (const InputError& e) {
      status = kInput;
      reply = e.what();
    } catch (const std::exception& e) {
      status = kRuntime;
      reply = e.what();
    }
    write_all(fds[1], reinterpret_cast<const char*>(&status), 1);
    write_all(fds[1], reply.data(), reply.size());
    ::close(fds[1]);
    std::_Exit(0);  // no atexit handlers, no second flush of the parent's buffers
  }
  ::close(fds[1]);
  std::string data;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    data.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(wstatus) || data.empty()) {
    const int sig = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
    throw RuntimeFailure("the simulation process died" +
                         (sig ? std::string(" (") + strsignal(sig) + ")" : std::string()));
  }
  const Status status = static_cast<Status>(data[0]);
  std::string reply = data.substr(1);
  if (status == kInput) throw InputError(reply);
  if (status == kRuntime) throw RuntimeFailure(reply);
  return reply;
}

}  // namespace pipetwin
