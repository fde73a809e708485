// Timeline files and atomic writes: exact round trip, clear errors, nothing half-written.
#include "traces/timeline_proto_io.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "timeline.pb.h"
#include "timeline_equality.h"
#include "traces/atomic_file.h"

namespace pipetwin {
namespace {

namespace fs = std::filesystem;
using testing::expect_same_timeline;
using ::testing::HasSubstr;

Timeline sample_timeline() {
  Timeline t;
  t.source = "simgrid";
  t.devices = {{0, 0, "gpu0"}, {1, 1, "gpu1"}};
  t.links = {{0, "nic0_1", 1.25e10}, {7, "pcie_switch0", 1e11 / 3}};  // id 0: the +1 encoding
  Span fwd;
  fwd.device = 0;
  fwd.lane = "compute";
  fwd.name = "0F[0,48)";
  fwd.op = "FWD";
  fwd.stage = 0;
  fwd.microbatch = 0;
  fwd.range_hi = 48;
  fwd.start_s = 0.1 + 0.2;  // not 0.3: catches any rounding on the way
  fwd.end_s = 1.0 / 3;
  Span send = fwd;
  send.lane = "send";
  send.name = "0SEND_A0";
  send.op = "SEND_ACT";
  send.start_s = fwd.end_s;
  send.end_s = fwd.end_s + 1e-5;
  send.bytes = int64_t{3} << 33;  // past 32 bits
  send.peer_device = 1;
  send.flow_id = uint64_t{1} << 63;
  Span recv = send;
  recv.device = 1;
  recv.lane = "recv";
  recv.name = "1RECV_A0";
  recv.op = "RECV_ACT";
  recv.stage = 1;
  recv.peer_device = 0;
  Span bwd = fwd;
  bwd.device = 1;
  bwd.name = "1B0";
  bwd.op = "BWD";
  bwd.stage = 1;
  bwd.iteration = 2;
  bwd.range_lo = -1;  // negative ints must survive too
  t.spans = {fwd, send, recv, bwd};
  t.counters = {{0, "memory_bytes", 0.0, 1.25e9},
                {0, "utilization", 0.0, 0.1 + 0.2, 0},
                {1, "memory_bytes", 1.0 / 3, 7.0 / 3},
                {0, "utilization", 1.0 / 3, 1.0 / 7, 7},
                {0, "utilization", 0.7, 0.0, 0}};
  t.instants = {{1, "freeze", 0.7}};
  return t;
}

// A fresh directory per test; tests may run as parallel processes (gtest_discover_tests).
class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("pipetwin_" + std::string(info->test_suite_name()) + "_" +
                                        info->name() + "_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      names.push_back(entry.path().filename().string());
    }
    return names;
  }

  static std::string contents(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  static void put(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }

  fs::path dir_;
};

using TimelineFile = TempDir;
using AtomicFile = TempDir;

TEST_F(TimelineFile, RoundTripIsExactAndLeavesOnlyTheFile) {
  const Timeline t = sample_timeline();
  write_timeline_file(t, path("run.timeline"));
  EXPECT_EQ(files(), std::vector<std::string>{"run.timeline"});
  expect_same_timeline(t, read_timeline_file(path("run.timeline")));
}

TEST_F(TimelineFile, CounterLinkIsStoredAsIdPlusOneAndDeviceCountersAsZero) {
  Timeline t = sample_timeline();
  t.counters[1].device = 1;  // unused for a link counter, but the file keeps it
  write_timeline_file(t, path("run.timeline"));
  proto::Timeline p;
  std::ifstream in(path("run.timeline"), std::ios::binary);
  ASSERT_TRUE(p.ParseFromIstream(&in));
  ASSERT_EQ(p.links_size(), 2);
  EXPECT_EQ(p.links(1).id(), 7);
  EXPECT_EQ(p.links(1).name(), "pcie_switch0");
  ASSERT_EQ(p.counters_size(), 5);
  EXPECT_EQ(p.counters(0).link(), 0);  // device counter
  EXPECT_EQ(p.counters(1).link(), 1);  // link 0
  EXPECT_EQ(p.counters(3).link(), 8);  // link 7

  const Timeline back = read_timeline_file(path("run.timeline"));
  expect_same_timeline(t, back);
  EXPECT_EQ(back.counters[0].link, -1);
  EXPECT_EQ(back.counters[1].link, 0);
  EXPECT_EQ(back.counters[1].device, 1);
  EXPECT_EQ(back.counters[3].link, 7);
}

TEST_F(TimelineFile, EmptyTimelineRoundTrips) {
  write_timeline_file(Timeline{}, path("empty.timeline"));
  expect_same_timeline(Timeline{}, read_timeline_file(path("empty.timeline")));
}

TEST_F(TimelineFile, MissingFileErrorNamesThePath) {
  try {
    read_timeline_file(path("nope.timeline"));
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(path("nope.timeline")));
  }
}

TEST_F(TimelineFile, GarbageFileErrorNamesThePath) {
  put(path("garbage.timeline"), "this is not a timeline, it is text\n");
  try {
    read_timeline_file(path("garbage.timeline"));
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(path("garbage.timeline")));
    EXPECT_THAT(e.what(), HasSubstr("not a timeline"));
  }
}

TEST_F(TimelineFile, UnwritableDirectoryErrorNamesThePath) {
  const std::string target = path("no/such/dir/run.timeline");
  try {
    write_timeline_file(sample_timeline(), target);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(target));
  }
}

TEST_F(AtomicFile, WritesAndReplacesTheWholeFile) {
  put(path("out.json"), "old contents that are longer than the new ones");
  write_file_atomically(path("out.json"), [](std::ostream& out) { out << "{}\n"; });
  EXPECT_EQ(contents(path("out.json")), "{}\n");
  EXPECT_EQ(files(), std::vector<std::string>{"out.json"});
}

TEST_F(AtomicFile, ThrowingWriterLeavesNoFileAndNoTemp) {
  EXPECT_THROW(write_file_atomically(path("out.json"),
                                     [](std::ostream& out) {
                                       out << "{\"traceEvents\":[";
                                       throw std::logic_error("writer gave up");
                                     }),
               std::logic_error);
  EXPECT_TRUE(files().empty());
}

TEST_F(AtomicFile, ThrowingWriterKeepsThePreviousFile) {
  put(path("out.json"), "previous");
  EXPECT_THROW(write_file_atomically(path("out.json"),
                                     [](std::ostream& out) {
                                       out << "half";
                                       throw std::runtime_error("disk on fire");
                                     }),
               std::runtime_error);
  EXPECT_EQ(contents(path("out.json")), "previous");
  EXPECT_EQ(files(), std::vector<std::string>{"out.json"});
}

TEST_F(AtomicFile, FailedStreamIsAnErrorNamingThePath) {
  try {
    write_file_atomically(path("out.json"),
                          [](std::ostream& out) { out.setstate(std::ios::badbit); });
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(path("out.json")));
  }
  EXPECT_TRUE(files().empty());
}

}  // namespace
}  // namespace pipetwin
