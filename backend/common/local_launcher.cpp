#include "backend/common/local_launcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

RankEntry rank_entry = nullptr;

void flush_output() {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
}

bool forks_in_place(RankStart start) {
  if (start != RankStart::kFork || rank_entry == nullptr) return false;
  if (const char* exec = std::getenv("PIPETWIN_RANKS_EXEC"); exec != nullptr && *exec == '1') {
    return false;
  }
  return running_threads() == 1;
}

// The rank's own process from here on: it runs the rank's command line and exits without
// running the launcher's destructors or atexit handlers (its temporary folders are the
// launcher's to remove).
[[noreturn]] void become_rank(const std::vector<std::string>& argv, bool in_place) {
  std::vector<std::string> copy = argv;
  std::vector<char*> args;
  for (std::string& a : copy) args.push_back(a.data());
  args.push_back(nullptr);
  if (in_place) {
    const int code = rank_entry(static_cast<int>(copy.size()), args.data());
    flush_output();  // _Exit does not
    std::_Exit(code);
  }
  ::execv("/proc/self/exe", args.data());
  std::_Exit(127);
}

}  // namespace

void set_rank_entry(RankEntry entry) { rank_entry = entry; }

int running_threads() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "Threads:") {
      int threads = 0;
      status >> threads;
      return threads;
    }
    status.ignore(1 << 16, '\n');
  }
  return 0;
}

void launch_local_ranks_or_throw(const std::vector<std::string>& argv, int nproc, double timeout_s,
                                 RankStart start) {
  const LaunchResult launched = launch_local_ranks(argv, nproc, timeout_s, start);
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

LaunchResult launch_local_ranks(const std::vector<std::string>& argv, int nproc, double timeout_s,
                                RankStart start) {
  const int port = free_local_port();
  // A second port for NCCL's bootstrap (the CUDA replay): MASTER_PORT + 1 may still be
  // held by an earlier job's socket.
  int nccl_port = free_local_port();
  while (nccl_port == port) nccl_port = free_local_port();
  const bool in_place = forks_in_place(start);
  flush_output();  // what the launcher has buffered must not be printed again by each fork
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
      become_rank(argv, in_place);
    }
    pids[rank] = pid;
  }

  LaunchResult result;
  bool failure_killed = false;  // whether result.failure is a rank killed by a signal
  int running = nproc;
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(timeout_s + 30));
  auto kill_all = [&] {
    if (std::none_of(pids.begin(), pids.end(), [](pid_t p) { return p > 0; })) return;
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
  // A rank stopped (SIGSTOP, a debugger, a frozen node) for longer than any wait may take is
  // the cause the others then fail on: when each was stopped, or none if it runs.
  std::vector<std::optional<std::chrono::steady_clock::time_point>> stopped_since(nproc);
  const auto stall_limit = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(timeout_s));
  bool failure_stalled = false;
  while (running > 0) {
    int status = 0;
    const pid_t done = ::waitpid(-1, &status, WNOHANG | WUNTRACED | WCONTINUED);
    if (done > 0 && (WIFSTOPPED(status) || WIFCONTINUED(status))) {
      for (int r = 0; r < nproc; ++r) {
        if (pids[r] != done) continue;
        if (WIFSTOPPED(status)) {
          stopped_since[r] = std::chrono::steady_clock::now();
        } else {
          stopped_since[r].reset();
        }
      }
      continue;
    }
    if (done <= 0) {
      const auto now = std::chrono::steady_clock::now();
      for (int r = 0; r < nproc && !failure_stalled; ++r) {
        if (!stopped_since[r] || now - *stopped_since[r] <= stall_limit) continue;
        result.exit_code = 1;
        result.failure = "rank " + std::to_string(r) + " stalled: stopped by a signal for more " +
                         "than the " + std::to_string(static_cast<int>(std::lround(timeout_s))) +
                         " s timeout (--timeout)";
        failure_stalled = failure_killed = true;
        deadline = now;  // nothing more to wait for: kill_all() below
      }
      if (now > deadline) {
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
    const bool killed = !WIFEXITED(status);
    // A rank killed by a signal is the cause the others then fail on (their peer vanished),
    // so it is the failure reported even when one of them was reaped first.
    if (code != 0 && !failure_stalled && (result.failure.empty() || (killed && !failure_killed))) {
      if (result.failure.empty()) {
        // Give the others a moment to notice and say what they were waiting on; then
        // kill_all() below makes sure none is left.
        const auto grace = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        if (grace < deadline) deadline = grace;
      }
      result.exit_code = code == 2 ? 2 : 1;
      result.failure = "rank " + std::to_string(rank) +
                       (killed ? std::string(" was killed by ") + strsignal(WTERMSIG(status))
                               : " exited with code " + std::to_string(code));
      failure_killed = killed;
    }
  }
  kill_all();
  return result;
}

void run_own_command_or_throw(const std::vector<std::string>& argv) {
  const bool in_place = forks_in_place(RankStart::kFork);
  flush_output();
  const pid_t pid = ::fork();
  if (pid < 0) throw RuntimeFailure(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::dup2(STDERR_FILENO, STDOUT_FILENO);
    become_rank(argv, in_place);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw RuntimeFailure(std::string("waitpid: ") + std::strerror(errno));
  }
  const std::string what = "`pipetwin " + (argv.size() > 1 ? argv[1] : std::string()) + "`";
  if (!WIFEXITED(status)) {
    throw RuntimeFailure(what + " was killed by " + strsignal(WTERMSIG(status)));
  }
  const int code = WEXITSTATUS(status);
  if (code == 2) throw InputError(what + " rejected its input (exit 2)");
  if (code != 0) throw RuntimeFailure(what + " exited with code " + std::to_string(code));
}

}  // namespace pipetwin
