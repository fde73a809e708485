#include "backend/common/fault_injection.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace pipetwin {
namespace {

// "r:k" for `rank`: k, else -1.
int32_t index_for(const char* variable, int rank) {
  const char* value = std::getenv(variable);
  if (value == nullptr) return -1;
  const std::string spec = value;
  const size_t colon = spec.find(':');
  if (colon == std::string::npos) return -1;
  try {
    if (std::stoi(spec.substr(0, colon)) != rank) return -1;
    return std::stoi(spec.substr(colon + 1));
  } catch (const std::exception&) {
    return -1;  // a malformed test setting injects nothing
  }
}

// Every socket of this process shut down both ways: its peers see the connection end, and
// its own next use of them fails.
void shut_down_sockets() {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    int fd = -1;
    try {
      fd = std::stoi(entry.path().filename().string());
    } catch (const std::exception&) {
      continue;
    }
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode)) ::shutdown(fd, SHUT_RDWR);
  }
}

}  // namespace

InjectedFault injected_fault(int rank) {
  const std::pair<const char*, InjectedFault::Kind> kinds[] = {
      {"PIPETWIN_CRASH_AT", InjectedFault::Kind::kCrash},
      {"PIPETWIN_STALL_AT", InjectedFault::Kind::kStall},
      {"PIPETWIN_CLOSE_SOCKETS_AT", InjectedFault::Kind::kCloseSockets}};
  for (const auto& [variable, kind] : kinds) {
    if (const int32_t at = index_for(variable, rank); at >= 0) return {kind, at};
  }
  return {};
}

void strike(const InjectedFault& fault) {
  switch (fault.kind) {
    case InjectedFault::Kind::kCrash:
      ::raise(SIGKILL);
      break;
    case InjectedFault::Kind::kStall:
      ::raise(SIGSTOP);
      break;
    case InjectedFault::Kind::kCloseSockets:
      shut_down_sockets();
      break;
    case InjectedFault::Kind::kNone:
      break;
  }
}

}  // namespace pipetwin
