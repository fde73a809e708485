// The lane runner every real backend shares: each lane in its order on its own thread,
// nothing before what it waits for, lanes truly concurrent, the first failure stops the
// rest and names its instruction, and a wait past the timeout fails naming what it waited
// for.
#include "backend/common/lane_runner.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>

#include "backend/common/program_lanes.h"
#include "random_setup.h"
#include "sim/driver/build_program.h"

namespace pipetwin {
namespace {

// Records the order instructions finished in; optionally fails or stalls at one.
class RecordingDevice : public LaneDevice {
 public:
  explicit RecordingDevice(int32_t size) : finished_at(size, -1) {}
  void execute(int32_t i) override {
    if (i == fail_at) throw std::runtime_error("device error");
    if (i == stall_at) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(finished_at[i], -1) << "instruction " << i << " ran twice";
    finished_at[i] = next++;
  }
  std::mutex mutex;
  std::vector<int32_t> finished_at;  // -1: never ran
  int32_t next = 0;
  int32_t fail_at = -1, stall_at = -1;
};

TEST(LaneRunner, RunsEveryInstructionAfterWhatItWaitsForInLaneOrder) {
  std::mt19937 rng(21);
  for (int trial = 0; trial < 20; ++trial) {
    ResolvedScenario setup =
        testing::random_setup(rng, trial % 2 ? proto::ONE_F_ONE_B : proto::GPIPE);
    const Program p = build_program(setup);
    for (int32_t rank = 0; rank < p.num_devices; ++rank) {
      const LaneSchedule schedule = lane_schedule(p, rank);
      RecordingDevice device(p.size());
      run_lanes(schedule, device, 10);
      for (const auto& lane : schedule.lanes) {
        for (size_t k = 0; k < lane.size(); ++k) {
          ASSERT_GE(device.finished_at[lane[k]], 0) << p.describe(lane[k]);
          if (k > 0) {
            EXPECT_GT(device.finished_at[lane[k]], device.finished_at[lane[k - 1]]);
          }
        }
      }
      // Every dependency on this rank, across lanes too, finished first.
      for (int32_t i = 0; i < p.size(); ++i) {
        if (p.instructions[i].device != rank) continue;
        for (int32_t d : p.deps_of(i)) {
          EXPECT_LT(device.finished_at[d], device.finished_at[i]) << p.describe(i);
        }
      }
    }
  }
}

// Two lanes that each wait for the other to have started: only concurrent lanes finish.
TEST(LaneRunner, LanesRunConcurrently) {
  struct Rendezvous : LaneDevice {
    std::mutex mutex;
    std::condition_variable cv;
    int arrived = 0;
    void execute(int32_t) override {
      std::unique_lock<std::mutex> lock(mutex);
      ++arrived;
      cv.notify_all();
      if (!cv.wait_for(lock, std::chrono::seconds(5), [&] { return arrived == 2; })) {
        throw std::runtime_error("the other lane never ran alongside");
      }
    }
  } device;
  LaneSchedule schedule{2, {{0}, {1}}, {{}, {}}};
  EXPECT_NO_THROW(run_lanes(schedule, device, 10));
}

TEST(LaneRunner, TheFirstFailureStopsTheLanesAndNamesItsInstruction) {
  // Lane 0: 0 1 2; lane 1: 3 (waits for 1) 4.
  const LaneSchedule schedule{5, {{0, 1, 2}, {3, 4}}, {{}, {}, {}, {1}, {}}};
  RecordingDevice device(5);
  device.fail_at = 1;
  try {
    run_lanes(schedule, device, 10);
    FAIL() << "no failure";
  } catch (const LaneFailure& f) {
    EXPECT_EQ(f.instruction, 1);
    EXPECT_EQ(f.waited_for, -1);
    EXPECT_STREQ(f.what(), "device error");
  }
  EXPECT_EQ(device.finished_at[2], -1);  // after the failure on its lane
  EXPECT_EQ(device.finished_at[3], -1);  // waited for the failed one
}

TEST(LaneRunner, AWaitPastTheTimeoutNamesWhatItWaitedFor) {
  // Lane 1's instruction 1 waits for lane 0's instruction 0, which takes 300 ms.
  const LaneSchedule schedule{2, {{0}, {1}}, {{}, {0}}};
  RecordingDevice device(2);
  device.stall_at = 0;
  try {
    run_lanes(schedule, device, 0.05);
    FAIL() << "no timeout";
  } catch (const LaneFailure& f) {
    EXPECT_EQ(f.instruction, 1);
    EXPECT_EQ(f.waited_for, 0);
    EXPECT_NE(std::string(f.what()).find("timed out"), std::string::npos);
  }
}

}  // namespace
}  // namespace pipetwin
