// The one runner of a rank's part of a Program, for every real backend (docs/backend.md: one
// runner, pluggable device operations). Each lane runs on its own host thread, in the
// lane's order; an instruction starts once the instructions it waits for on other lanes
// are done, as the device defines done:
//   LibTorch   executes an instruction before returning: done means finished;
//   CUDA       enqueues it on the lane's stream and records its end event: done means
//              enqueued, and the device itself waits for the event.
// The first failure stops every lane and is rethrown; a wait longer than the timeout is a
// failure. Plain C++17 with no sim/ types, so that nvcc compiles what includes it.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace pipetwin {

// What the runner needs of a rank's part of a Program.
struct LaneSchedule {
  int32_t program_size = 0;                 // instruction ids run from 0 to this
  std::vector<std::vector<int32_t>> lanes;  // per lane, its instructions in order
  std::vector<std::vector<int32_t>> waits;  // per instruction id: what it waits for on
                                            // other lanes of this rank
};

class LaneDevice {
 public:
  virtual ~LaneDevice() = default;
  // Once on each lane's thread before its first instruction (a CUDA device binds the
  // thread to its GPU).
  virtual void enter_lane(int lane) {}
  // Carries out instruction `i`, or enqueues it; its waits are done.
  virtual void execute(int32_t i) = 0;
};

// The failure of one instruction, as the runner rethrows it.
struct LaneFailure : std::runtime_error {
  LaneFailure(int32_t instruction, int32_t waited_for, const std::string& what)
      : std::runtime_error(what), instruction(instruction), waited_for(waited_for) {}
  int32_t instruction;  // the instruction that failed, or whose wait timed out
  int32_t waited_for;   // on a timeout, what it waited for; else -1
};

// Runs every lane of `schedule` on `device`; lane 0 on the calling thread. Throws
// LaneFailure for the first failure (its what() is the device's exception's).
void run_lanes(const LaneSchedule& schedule, LaneDevice& device, double timeout_s);

}  // namespace pipetwin
