// The local launcher's ranks: forks that call the rank entry where that is safe, each with
// the environment a launcher like torchrun gives (RANK, WORLD_SIZE, MASTER_PORT, ...).
#include "backend/common/local_launcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "cli_runner.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;

// Where the entry below writes; a forked rank sees the launcher's memory as it was.
std::string rank_folder;

// Writes "RANK WORLD_SIZE argv[1]" to rank_folder/RANK; fails with 3 when argv[1] says so.
int record_rank(int argc, char** argv) {
  const std::string rank = std::getenv("RANK");
  std::ofstream(rank_folder + "/" + rank)
      << rank << " " << std::getenv("WORLD_SIZE") << " " << (argc > 1 ? argv[1] : "");
  return argc > 1 && std::string(argv[1]) == "fail" ? 3 : 0;
}

// `nproc` forked ranks of record_rank, writing into `dir`.
LaunchResult launch_recording_ranks(const testing::TempDir& dir, const std::string& argument,
                                    int nproc) {
  rank_folder = dir.path().string();
  set_rank_entry(&record_rank);
  const LaunchResult launched = launch_local_ranks({"self", argument}, nproc, 10, RankStart::kFork);
  set_rank_entry(nullptr);
  return launched;
}

TEST(LocalLauncher, ForkedRanksRunTheEntryWithTheirEnvironment) {
  if (running_threads() != 1) GTEST_SKIP() << "the test process runs threads: ranks would exec";
  const testing::TempDir dir;
  const LaunchResult launched = launch_recording_ranks(dir, "ok", 3);
  EXPECT_EQ(launched.exit_code, 0) << launched.failure;
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_EQ(testing::read_all(dir.path() / std::to_string(rank)), std::to_string(rank) + " 3 ok");
  }
}

TEST(LocalLauncher, AFailingForkedRankIsReportedWithItsCode) {
  if (running_threads() != 1) GTEST_SKIP() << "the test process runs threads: ranks would exec";
  const testing::TempDir dir;
  const LaunchResult launched = launch_recording_ranks(dir, "fail", 2);
  EXPECT_EQ(launched.exit_code, 1);
  EXPECT_THAT(launched.failure, HasSubstr("exited with code 3"));
}

// Rank 1 dies by a signal a moment after rank 0 has given up on it (as a Gloo peer whose
// connection was reset does).
int die_after_the_other_gives_up(int, char**) {
  if (std::string(std::getenv("RANK")) == "0") return 1;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::raise(SIGKILL);
  return 0;
}

TEST(LocalLauncher, ARankKilledBySignalIsTheFailureReportedEvenWhenReapedLast) {
  if (running_threads() != 1) GTEST_SKIP() << "the test process runs threads: ranks would exec";
  set_rank_entry(&die_after_the_other_gives_up);
  const LaunchResult launched = launch_local_ranks({"self"}, 2, 10, RankStart::kFork);
  set_rank_entry(nullptr);
  EXPECT_EQ(launched.exit_code, 1);
  EXPECT_THAT(launched.failure, HasSubstr("rank 1 was killed"));
}

TEST(LocalLauncher, RunningThreadsCountsTheThreadsOfThisProcess) {
  // ThreadSanitizer's runtime starts a thread of its own beside the process's first one.
  std::thread([] {}).join();
  const int before = running_threads();
  ASSERT_GE(before, 1);
  std::thread second([&] { EXPECT_EQ(running_threads(), before + 1); });
  second.join();
}

}  // namespace
}  // namespace pipetwin
