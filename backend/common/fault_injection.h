// Faults injected into a real run, for the tests of how runs end (docs/reliability.md). An
// environment variable names a rank and the k-th instruction of its compute lane before
// which the fault strikes:
//   PIPETWIN_CRASH_AT=r:k          the rank kills itself (SIGKILL), as a crash or an OOM kill;
//   PIPETWIN_STALL_AT=r:k          the rank stops itself (SIGSTOP), as a hung process would;
//   PIPETWIN_CLOSE_SOCKETS_AT=r:k  the rank shuts down every socket it holds, as a dropped
//                                  connection would, and goes on.
#pragma once

#include <cstdint>

namespace pipetwin {

struct InjectedFault {
  enum class Kind { kNone, kCrash, kStall, kCloseSockets };
  Kind kind = Kind::kNone;
  int32_t before = -1;  // the compute-lane instruction it strikes before
};

// The fault the environment injects into `rank`, if any (the first variable that names it).
InjectedFault injected_fault(int rank);

// Strikes it, in the calling process.
void strike(const InjectedFault& fault);

}  // namespace pipetwin
