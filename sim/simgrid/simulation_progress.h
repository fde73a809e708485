// A long SimGrid run says how far it is: after two seconds, a line on stderr redrawn in
// place, "simgrid: 1204224 of 3411968 instructions, 12.304 s simulated, 41 s left". Only
// when stderr is a terminal: tests, CI and log files stay clean.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace pipetwin {

class SimulationProgress {
 public:
  explicit SimulationProgress(int64_t total);
  ~SimulationProgress();  // clears the line

  // Cheap when nothing is to be drawn: call it after every instruction.
  void update(int64_t done, double simulated_s);

 private:
  using Clock = std::chrono::steady_clock;
  int64_t total_;
  bool enabled_;
  Clock::time_point start_;
  double last_drawn_s_ = 0;
  size_t shown_ = 0;
};

}  // namespace pipetwin
