#include "sim/simgrid/run_in_child.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "sim/spec/errors.h"
#include "sim/sweep/child_process.h"

namespace pipetwin {
namespace {

enum Status : char { kOk = 0, kRuntime = 1, kInput = 2 };

}  // namespace

std::string run_in_child(const std::function<std::string()>& work) {
  int fds[2];
  if (::pipe(fds) != 0) throw RuntimeFailure(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = fork_child();
  if (pid < 0) throw RuntimeFailure(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
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
    // A parent gone away has nothing left to be told.
    if (write_all(fds[1], reinterpret_cast<const char*>(&status), 1)) {
      write_all(fds[1], reply.data(), reply.size());
    }
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
