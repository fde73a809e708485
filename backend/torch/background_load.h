// Compute that keeps cores busy while something else is measured, so that a profile or a
// link calibration sees the machine as a pipeline run does: every rank's compute thread
// busy, the transport's threads competing with them for cores. Torch-free header.
#pragma once

#include <atomic>
#include <thread>
#include <vector>

namespace pipetwin {

class BackgroundLoad {
 public:
  // `threads` threads, each running single-threaded matrix products until destroyed.
  explicit BackgroundLoad(int threads);
  ~BackgroundLoad();
  BackgroundLoad(const BackgroundLoad&) = delete;
  BackgroundLoad& operator=(const BackgroundLoad&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

}  // namespace pipetwin
