#include "backend/common/lane_runner.h"

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

namespace pipetwin {
namespace {

class Runner {
 public:
  Runner(const LaneSchedule& schedule, LaneDevice& device, double timeout_s)
      : schedule_(schedule),
        device_(device),
        timeout_s_(timeout_s),
        done_(schedule.program_size, 0) {}

  void run() {
    std::vector<std::thread> helpers;
    for (size_t lane = 1; lane < schedule_.lanes.size(); ++lane) {
      if (!schedule_.lanes[lane].empty()) helpers.emplace_back([this, lane] { run_lane(lane); });
    }
    if (!schedule_.lanes.empty()) run_lane(0);
    for (std::thread& t : helpers) t.join();
    if (failure_) std::rethrow_exception(failure_);
  }

 private:
  void run_lane(size_t lane) {
    int32_t current = -1;
    try {
      device_.enter_lane(static_cast<int>(lane));
      for (int32_t i : schedule_.lanes[lane]) {
        current = i;
        if (!wait_for(i)) return;
        device_.execute(i);
        mark_done(i);
      }
    } catch (const LaneFailure&) {
      fail(std::current_exception());
    } catch (const std::exception& e) {
      fail(std::make_exception_ptr(LaneFailure(current, -1, e.what())));
    }
  }

  // False when another lane failed meanwhile.
  bool wait_for(int32_t i) {
    std::unique_lock<std::mutex> lock(mutex_);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s_);
    for (int32_t d : schedule_.waits[i]) {
      if (!wakeup_.wait_until(lock, deadline, [&] { return done_[d] || failure_ != nullptr; })) {
        throw LaneFailure(i, d, "timed out after " + std::to_string(timeout_s_) + " s");
      }
    }
    return failure_ == nullptr;
  }

  void mark_done(int32_t i) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_[i] = 1;
    }
    wakeup_.notify_all();
  }

  void fail(std::exception_ptr error) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!failure_) failure_ = error;
    }
    wakeup_.notify_all();
  }

  const LaneSchedule& schedule_;
  LaneDevice& device_;
  double timeout_s_;
  std::vector<char> done_;
  std::mutex mutex_;
  std::condition_variable wakeup_;
  std::exception_ptr failure_;
};

}  // namespace

void run_lanes(const LaneSchedule& schedule, LaneDevice& device, double timeout_s) {
  Runner(schedule, device, timeout_s).run();
}

}  // namespace pipetwin
