#include "backend/common/local_launcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "sim/spec/errors.h"

namespace pipetwin {

void launch_local_ranks_or_throw(const std::vector<std::string>& argv, int nproc,
                                 double timeout_s) {
  const LaunchResult launched = launch_local_ranks(argv, nproc, timeout_s);
  if (launched.exit_code == 2) throw InputError(launched.failure);
  if (launched.exit_code != 0) throw RuntimeFailure(launched.failure);
}

int free_local_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw RuntimeFailure(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t length = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) != 0) {
    ::close(fd);
    throw RuntimeFailure(std::string("cannot find a free port: ") + std::strerror(errno));
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

LaunchResult launch_local_ranks(const std::vector<std::string>& argv, int nproc, double timeout_s) {
  const int port = free_local_port();
  // A second port for NCCL's bootstrap (the CUDA replay): MASTER_PORT + 1 may still be
  // held by an earlier job's socket.
  int nccl_port = free_local_port();
  while (nccl_port == port) nccl_port = free_local_port();
  std::vector<pid_t> pids(nproc, -1);
  for (int rank = 0; rank < nproc; ++rank) {
    const pid_t pid = ::fork();
    if (pid < 0) throw RuntimeFailure(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      ::setenv("RANK", std::to_string(rank).c_str(), 1);
      ::setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
      ::setenv("WORLD_SIZE", std::to_string(nproc).c_str(), 1);
      ::setenv("MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      ::setenv("PIPETWIN_NCCL_PORT", std::to_string(nccl_port).c_str(), 1);
      ::setenv("PIPETWIN_QUIET_RANK", rank == 0 ? "0" : "1", 1);  // one rank reports
      std::vector<char*> args;
      std::vector<std::string> copy = argv;
      for (std::string& a : copy) args.push_back(a.data());
      args.push_back(nullptr);
      ::execv("/proc/self/exe", args.data());
      std::_Exit(127);
    }
    pids[rank] = pid;
  }

  LaunchResult result;
  int running = nproc;
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(timeout_s + 30));
  auto kill_all = [&] {
    for (pid_t p : pids) {
      if (p > 0) ::kill(p, SIGTERM);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    for (pid_t p : pids) {
      if (p > 0) ::kill(p, SIGKILL);
    }
    for (pid_t& p : pids) {
      if (p > 0) ::waitpid(p, nullptr, 0);
      p = -1;
    }
  };
  while (running > 0) {
    int status = 0;
    const pid_t done = ::waitpid(-1, &status, WNOHANG);
    if (done <= 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        if (result.failure.empty()) {
          result.exit_code = 1;
          result.failure =
              "the ranks did not finish within " + std::to_string(timeout_s + 30) + " s";
        }
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    int rank = 0;
    while (rank < nproc && pids[rank] != done) ++rank;
    if (rank == nproc) continue;
    pids[rank] = -1;
    --running;
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (code != 0 && result.failure.empty()) {
      result.exit_code = code == 2 ? 2 : 1;
      result.failure =
          "rank " + std::to_string(rank) +
          (WIFEXITED(status) ? " exited with code " + std::to_string(code)
                             : std::string(" was killed by ") + strsignal(WTERMSIG(status)));
      // Give the others a moment to notice and say what they were waiting on; then
      // kill_all() below makes sure none is left.
      const auto grace = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      if (grace < deadline) deadline = grace;
    }
  }
  kill_all();
  return result;
}

}  // namespace pipetwin
