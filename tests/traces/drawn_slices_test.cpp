// Slices drawn so that viewers that nest slices by time see every lane as it ran: on every
// thread of the written trace, each slice nests in or follows the one before, with the
// printed numbers parsed back as doubles and combined as each viewer does; spans that take
// no time are instants; and this holds for every shipped scenario on both engines.
#include "traces/drawn_slices.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "shipped_scenarios.h"
#include "traces/chrome_trace.h"

namespace pipetwin {
namespace {

using nlohmann::json;

Span span_on(int32_t device, double start_s, double end_s) {
  Span s;
  s.device = device;
  s.lane = "compute";
  s.name = "s";
  s.op = "FWD";
  s.start_s = start_s;
  s.end_s = end_s;
  return s;
}

// How viewers compute where a slice ends, from ts and dur parsed as doubles: chrome://tracing
// adds them; speedscope first moves the thread's earliest ts to zero (its importer subtracts
// it from every event); Perfetto rounds each, times 1000, to whole nanoseconds.
struct ViewerArithmetic {
  const char* viewer;
  double (*start)(double ts, double origin);
  double (*end)(double ts, double dur, double origin);
};
const ViewerArithmetic kViewers[] = {
    {"sum", [](double ts, double) { return ts; },
     [](double ts, double dur, double) { return ts + dur; }},
    {"shifted to the thread's first ts", [](double ts, double origin) { return ts - origin; },
     [](double ts, double dur, double origin) { return (ts - origin) + dur; }},
    {"rounded to nanoseconds",
     [](double ts, double) { return static_cast<double>(std::llround(ts * 1000.0)); },
     [](double ts, double dur, double) {
       return static_cast<double>(std::llround(ts * 1000.0) + std::llround(dur * 1000.0));
     }},
};

// The complete events of each thread, in the order a viewer sorts them (by ts), each
// checked against its predecessor in every viewer's arithmetic: it must nest inside it or
// follow it.
std::vector<std::string> nesting_violations(const json& trace) {
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<double, double>>> threads;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    threads[{e.at("pid").get<int64_t>(), e.at("tid").get<int64_t>()}].emplace_back(
        e.at("ts").get<double>(), e.at("dur").get<double>());
  }
  std::vector<std::string> violations;
  for (auto& [thread, slices] : threads) {
    std::stable_sort(slices.begin(), slices.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    const double origin = slices.front().first;
    for (size_t k = 1; k < slices.size(); ++k) {
      const auto [prev_ts, prev_dur] = slices[k - 1];
      const auto [ts, dur] = slices[k];
      for (const ViewerArithmetic& v : kViewers) {
        const double prev_start = v.start(prev_ts, origin),
                     prev_end = v.end(prev_ts, prev_dur, origin);
        const double start = v.start(ts, origin), end = v.end(ts, dur, origin);
        const bool follows = start >= prev_end;
        const bool nests = start >= prev_start && end <= prev_end;
        if (dur <= 0 || !(follows || nests)) {
          violations.push_back("tid " + std::to_string(thread.second) + " slice at " +
                               std::to_string(ts) + " after one at " + std::to_string(prev_ts) +
                               " (" + v.viewer + ")");
        }
      }
    }
  }
  return violations;
}

TEST(DrawnSlices, NanosecondsPrintAsShortMicroseconds) {
  EXPECT_EQ(nanoseconds_as_micros(1234567), "1234.567");
  EXPECT_EQ(nanoseconds_as_micros(100000000), "100000");
  EXPECT_EQ(nanoseconds_as_micros(1500), "1.5");
  EXPECT_EQ(nanoseconds_as_micros(7), "0.007");
  EXPECT_EQ(nanoseconds_as_micros(-2500), "-2.5");
  EXPECT_EQ(nanoseconds_as_micros(0), "0");
}

// Back-to-back spans whose exact ends and starts are the same double, at times where the
// shortest decimals of ts and dur add up past the next ts, on a lane that starts at zero and
// on one that starts late (where subtracting the first ts rounds).
TEST(DrawnSlices, BackToBackSpansNeverOverlapOnceParsed) {
  Timeline t;
  t.devices = {{0, 0, "gpu0"}, {1, 0, "gpu1"}};
  for (int32_t device : {0, 1}) {
    double at = device == 0 ? 0 : 1.2345678901;
    for (int i = 0; i < 3000; ++i) {
      const double next = at + 1e-4 / 3 * (1 + i % 7);
      t.spans.push_back(span_on(device, at, next));
      at = next;
    }
  }
  EXPECT_THAT(nesting_violations(json::parse(chrome_trace_json(t))), ::testing::IsEmpty());
}

// Every drawn time is a multiple of 125 ns, so its microseconds print with at most three
// decimals and are exact binary fractions; a slice ends exactly where the next one starts.
TEST(DrawnSlices, TimesLieOnTheGridAndNeighboursMeetExactly) {
  const std::vector<Span> spans = {span_on(0, 1.0000001234, 1.0000034567),
                                   span_on(0, 1.0000034567, 1.00001)};
  const std::vector<DrawnSlice> drawn = draw_slices(spans, {0, 0});
  EXPECT_EQ(drawn[0].ts_ns, 1000000125);
  EXPECT_EQ(drawn[0].dur_ns, 1000003500 - 1000000125);
  EXPECT_EQ(drawn[0].ts_ns + drawn[0].dur_ns, drawn[1].ts_ns);
  EXPECT_EQ(drawn[1].dur_ns, 1000010000 - 1000003500);
  EXPECT_EQ(nanoseconds_as_micros(drawn[0].ts_ns), "1000000.125");
}

// A span shorter than half a grid step takes no time once drawn.
TEST(DrawnSlices, SpansShorterThanHalfAStepAreInstants) {
  const std::vector<DrawnSlice> drawn = draw_slices({span_on(0, 1e-3, 1e-3 + 50e-9)}, {0});
  EXPECT_EQ(drawn[0].ts_ns, 1000000);
  EXPECT_EQ(drawn[0].dur_ns, 0);
}

TEST(DrawnSlices, ZeroLengthSpansAreInstantsAndReadBackAsSpans) {
  Timeline t;
  t.devices = {{0, 0, "gpu0"}};
  t.spans = {span_on(0, 0, 1e-3), span_on(0, 1e-3, 1e-3), span_on(0, 1e-3, 2e-3)};
  t.spans[1].op = "OPTIM";
  const json trace = json::parse(chrome_trace_json(t));
  int slices = 0, instants = 0;
  for (const json& e : trace.at("traceEvents")) {
    slices += e.at("ph") == "X";
    instants += e.at("ph") == "i";
  }
  EXPECT_EQ(slices, 2);
  EXPECT_EQ(instants, 1);
  const Timeline back = read_chrome_trace(chrome_trace_json(t));
  ASSERT_EQ(back.spans.size(), 3u);
  EXPECT_EQ(back.spans[1].op, "OPTIM");
  EXPECT_EQ(back.spans[1].start_s, 1e-3);
  EXPECT_TRUE(back.instants.empty());
}

TEST(DrawnSlices, OverlappingMeasurementsAreCutAtTheNextStart) {
  std::vector<Span> spans = {span_on(0, 0, 2e-6), span_on(0, 1e-6, 3e-6)};
  const std::vector<DrawnSlice> drawn = draw_slices(spans, {0, 0});
  EXPECT_EQ(drawn[0].ts_ns, 0);
  EXPECT_EQ(drawn[0].dur_ns, 1000);
  EXPECT_EQ(drawn[1].dur_ns, 2000);
}

class ShippedScenario : public ::testing::TestWithParam<std::string> {};

// One process per scenario, each with its own time limit. Cluster-sized scenarios run with
// one replica of 32 microbatches (DualPipe's least on 16 stages) and 2 GPUs per sequence
// under context parallelism, so without expert parallelism, whose all-to-alls the smaller MoE
// scenarios draw: nesting does not depend on the scale, and their full size would take minutes in
// sanitized builds.
TEST_P(ShippedScenario, NestsCleanlyOnBothEngines) {
  const testing::TempDir dir;
  const auto path =
      std::filesystem::path(PIPETWIN_SOURCE_DIR) / "scenarios" / (GetParam() + ".textproto");
  const std::string smaller =
      testing::cluster_sized(GetParam()) ? testing::one_small_replica(GetParam()) : "";
  for (const char* engine : {"analytic", "simgrid"}) {
    const std::string name = GetParam() + "." + engine;
    const std::filesystem::path trace = dir.path() / (name + ".json");
    const testing::CliResult r =
        testing::run_pipetwin("simulate " + path.string() + smaller + " --allow-oom --engine " +
                              engine + " --trace " + trace.string());
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
    EXPECT_THAT(nesting_violations(json::parse(testing::read_all(trace))), ::testing::IsEmpty())
        << name;
  }
}

INSTANTIATE_TEST_SUITE_P(DrawnSlices, ShippedScenario,
                         ::testing::ValuesIn(testing::shipped_scenario_names()),
                         [](const auto& info) { return testing::scenario_test_name(info.param); });

TEST(DrawnSlices, EveryShippedScenarioIsChecked) {
  EXPECT_GE(testing::shipped_scenario_names().size(), 15u);
}

}  // namespace
}  // namespace pipetwin
