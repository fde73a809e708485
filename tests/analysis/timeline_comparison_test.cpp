// Timeline comparison (analysis/timeline_comparison.h), stacking two timelines into one
// trace (analysis/stacked_timeline.h), and `pipetwin compare` end to end.
#include "analysis/timeline_comparison.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>

#include "analysis/metrics.h"
#include "analysis/stacked_timeline.h"
#include "cli_runner.h"
#include "timeline_equality.h"
#include "traces/chrome_trace.h"
#include "traces/timeline_proto_io.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;
using testing::read_all;
using testing::run_pipetwin;
using testing::TempDir;

Span make_span(int32_t device, const std::string& lane, const std::string& op,
               const std::string& name, int32_t microbatch, int32_t iteration, double start_s,
               double duration_s) {
  Span s;
  s.device = device;
  s.lane = lane;
  s.op = op;
  s.name = name;
  s.stage = device;
  s.microbatch = microbatch;
  s.range_lo = 4 * microbatch;
  s.range_hi = 4 * microbatch + 4;
  s.iteration = iteration;
  s.start_s = start_s;
  s.end_s = start_s + duration_s;
  return s;
}

// Two stages, two microbatches, two iterations: per iteration and device two forwards
// (1 s), two backwards (2 s), and per iteration two activation transfers (0.25 s), each a
// SEND on device 0 and a RECV on device 1. 24 spans: 8 of 0.25 s, 8 of 1 s, 8 of 2 s.
// Device 1 carries two links with utilization counters, so that stacking has links to renumber.
Timeline pipeline_timeline() {
  Timeline t;
  t.source = "analytic";
  t.devices = {{0, 0, "gpu0"}, {1, 0, "gpu1"}};
  t.links = {{0, "nvswitch_port0", 3e11}, {2, "nvswitch_port1", 3e11}};
  uint64_t flow = 1;
  for (int32_t it = 0; it < 2; ++it) {
    const double base = 10.0 * it;
    for (int32_t m = 0; m < 2; ++m) {
      const std::string mb = std::to_string(m);
      t.spans.push_back(make_span(0, "compute", "FWD", "0F" + mb, m, it, base + m, 1));
      Span send = make_span(0, "send", "SEND_ACT", "0SEND_A" + mb, m, it, base + m + 1, 0.25);
      Span recv = make_span(1, "recv", "RECV_ACT", "1RECV_A" + mb, m, it, base + m + 1, 0.25);
      send.bytes = recv.bytes = 1 << 20;
      send.peer_device = 1;
      recv.peer_device = 0;
      send.flow_id = recv.flow_id = flow++;
      t.spans.push_back(send);
      t.spans.push_back(recv);
      t.spans.push_back(make_span(1, "compute", "FWD", "1F" + mb, m, it, base + m + 1.25, 1));
      t.spans.push_back(make_span(1, "compute", "BWD", "1B" + mb, m, it, base + 3.25 + 2 * m, 2));
      t.spans.push_back(make_span(0, "compute", "BWD", "0B" + mb, m, it, base + 5.25 + 2 * m, 2));
    }
    t.counters.push_back({0, "memory_bytes", base, 1e9});
    t.counters.push_back({1, "memory_bytes", base + 1, 2e9});
    Counter link;
    link.name = "utilization";
    link.time_s = base + 1;
    link.value = 0.5;
    link.link = 2;
    t.counters.push_back(link);
  }
  t.instants.push_back({1, "freeze", 3.0});
  return t;
}

// Every timestamp t becomes factor * t + shift: each duration grows by factor - 1, and each
// start, counted from the timeline's first start, too.
Timeline stretched(Timeline t, double factor, double shift) {
  t.source = "torch";
  for (Span& s : t.spans) {
    s.start_s = factor * s.start_s + shift;
    s.end_s = factor * s.end_s + shift;
  }
  for (Counter& c : t.counters) c.time_s = factor * c.time_s + shift;
  for (Instant& i : t.instants) i.time_s = factor * i.time_s + shift;
  std::reverse(t.spans.begin(), t.spans.end());  // matching must not depend on order
  return t;
}

const OpComparison& op_of(const TimelineComparison& c, const std::string& op) {
  auto it = std::find_if(c.per_op.begin(), c.per_op.end(),
                         [&](const OpComparison& o) { return o.op == op; });
  if (it == c.per_op.end()) throw std::out_of_range("no op " + op);
  return *it;
}

TEST(TimelineComparison, IdenticalTimelinesHaveNoError) {
  const Timeline a = pipeline_timeline();
  const TimelineComparison c = compare_timelines(a, a);
  EXPECT_EQ(c.spans_a, 24);
  EXPECT_EQ(c.matched, 24);
  EXPECT_EQ(c.unmatched_a, 0);
  EXPECT_EQ(c.unmatched_b, 0);
  EXPECT_EQ(c.duplicate_keys_a, 0);
  EXPECT_EQ(c.makespan_a_s, c.makespan_b_s);
  EXPECT_EQ(c.makespan_error, 0);
  EXPECT_EQ(c.bubble_a, c.bubble_b);
  for (const ErrorStats& s : {c.duration_error, c.start_error}) {
    EXPECT_EQ(s.median_s, 0);
    EXPECT_EQ(s.p90_s, 0);
    EXPECT_EQ(s.worst_s, 0);
    EXPECT_EQ(s.worst_rel, 0);
  }
  EXPECT_EQ(c.iterations_a, 2);
  ASSERT_EQ(c.worst_duration.size(), kNamedSpans);
  EXPECT_EQ(c.worst_duration[0].duration_error_s(), 0);
}

TEST(TimelineComparison, StretchedAndShiftedTimelineHasKnownErrors) {
  const Timeline a = pipeline_timeline();
  const Timeline b = stretched(a, 1.1, 100.0);
  const TimelineComparison c = compare_timelines(a, b);
  ASSERT_EQ(c.matched, 24);
  EXPECT_EQ(c.unmatched_a + c.unmatched_b, 0);
  EXPECT_DOUBLE_EQ(c.makespan_a_s, 19.25);
  EXPECT_NEAR(c.makespan_b_s, 1.1 * 19.25, 1e-9);
  EXPECT_NEAR(c.makespan_error, 0.1, 1e-12);
  // Errors 0.1 x duration: 8 x 0.025, 8 x 0.1, 8 x 0.2 s.
  EXPECT_NEAR(c.duration_error.median_s, 0.1, 1e-9);
  EXPECT_NEAR(c.duration_error.p90_s, 0.2, 1e-9);
  EXPECT_NEAR(c.duration_error.worst_s, 0.2, 1e-9);
  EXPECT_NEAR(c.duration_error.median_rel, 0.1, 1e-9);
  EXPECT_NEAR(c.duration_error.worst_rel, 0.1, 1e-9);
  // Starts count from each timeline's first span, so the shift of 100 s is no error; the
  // latest start (0B1 of iteration 1, at 19.25 - 2 = 17.25 s) moves the most.
  EXPECT_NEAR(c.start_error.worst_s, 0.1 * 17.25, 1e-9);
  EXPECT_NEAR(c.start_error.worst_rel, 0.1 * 17.25 / 19.25, 1e-9);
  EXPECT_EQ(c.worst_start[0].name, "0B1");
  EXPECT_EQ(c.worst_start[0].iteration, 1);

  EXPECT_NEAR(op_of(c, "FWD").median_duration_error_s, 0.1, 1e-9);
  EXPECT_NEAR(op_of(c, "BWD").median_duration_error_s, 0.2, 1e-9);
  EXPECT_NEAR(op_of(c, "SEND_ACT").median_duration_error_s, 0.025, 1e-9);
  EXPECT_NEAR(op_of(c, "RECV_ACT").median_duration_error_rel, 0.1, 1e-9);
  EXPECT_EQ(op_of(c, "FWD").matched, 8);
  EXPECT_NEAR(op_of(c, "BWD").total_b_s / op_of(c, "BWD").total_a_s, 1.1, 1e-12);
  ASSERT_EQ(c.per_op.size(), 4u);  // in the program's order
  EXPECT_EQ(c.per_op[0].op, "FWD");
  EXPECT_EQ(c.per_op[1].op, "BWD");
  EXPECT_EQ(c.per_op[2].op, "SEND_ACT");
  EXPECT_EQ(c.per_op[3].op, "RECV_ACT");

  // The worst five durations are backwards (2 s -> 2.2 s; which five of the eight depends
  // on rounding), named and placed.
  ASSERT_EQ(c.worst_duration.size(), 5u);
  for (const SpanDifference& d : c.worst_duration) {
    EXPECT_EQ(d.op, "BWD");
    EXPECT_NEAR(d.duration_error_s(), 0.2, 1e-9);
    EXPECT_EQ(d.device_name, "gpu" + std::to_string(d.device));
  }
  EXPECT_EQ(c.worst_duration[0].name.substr(1, 1), "B");
  EXPECT_DOUBLE_EQ(c.worst_duration[0].duration_a_s, 2);
}

TEST(TimelineComparison, BubbleComesFromTheMetrics) {
  const Timeline a = pipeline_timeline();
  Timeline b = a;
  b.spans.back().end_s += 1;  // 0B1 of iteration 1 runs a second longer
  const TimelineComparison c = compare_timelines(a, b);
  EXPECT_DOUBLE_EQ(c.bubble_a, compute_metrics(a, 2, 32).bubble_ratio);
  EXPECT_DOUBLE_EQ(c.bubble_b, compute_metrics(b, 2, 32).bubble_ratio);
  // 24 busy compute seconds on two devices over 19.25 s, then 25 over 20.25 s.
  EXPECT_NEAR(c.bubble_a, 1 - 24 / (2 * 19.25), 1e-12);
  EXPECT_NEAR(c.bubble_b, 1 - 25 / (2 * 20.25), 1e-12);
  EXPECT_NEAR(c.makespan_error, 1 / 19.25, 1e-12);
  ASSERT_FALSE(c.worst_duration.empty());
  EXPECT_EQ(c.worst_duration[0].name, "0B1");
  EXPECT_EQ(c.worst_duration[0].iteration, 1);
  EXPECT_DOUBLE_EQ(c.worst_duration[0].duration_error_s(), 1);
  EXPECT_DOUBLE_EQ(c.duration_error.worst_s, 1);
  EXPECT_DOUBLE_EQ(c.duration_error.median_s, 0);
}

TEST(TimelineComparison, UnmatchedSpansAreCountedAndNamed) {
  const Timeline a = pipeline_timeline();
  Timeline b = a;
  // B lacks iteration 1 entirely and splits microbatch ranges differently on device 1.
  std::erase_if(b.spans, [](const Span& s) { return s.iteration == 1; });
  for (Span& s : b.spans) {
    if (s.device == 1 && s.op == "BWD") s.range_hi += 1;
  }
  const TimelineComparison c = compare_timelines(a, b);
  EXPECT_EQ(c.spans_b, 12);
  EXPECT_EQ(c.matched, 10);
  EXPECT_EQ(c.unmatched_a, 14);
  EXPECT_EQ(c.unmatched_b, 2);
  ASSERT_EQ(c.first_unmatched_a.size(), kNamedSpans);
  EXPECT_EQ(c.first_unmatched_a[0].name, "1B0");  // A's order
  EXPECT_EQ(c.first_unmatched_a[0].device_name, "gpu1");
  EXPECT_EQ(c.first_unmatched_a[0].iteration, 0);
  ASSERT_EQ(c.first_unmatched_b.size(), 2u);
  EXPECT_EQ(c.first_unmatched_b[0].name, "1B0");
  EXPECT_EQ(c.first_unmatched_b[0].range_lo, 0);
  EXPECT_EQ(c.first_unmatched_b[0].range_hi, 5);
  EXPECT_EQ(c.first_unmatched_b[1].name, "1B1");
  EXPECT_EQ(c.iterations_b, 1);
}

TEST(TimelineComparison, RepeatedKeysPairInStartOrder) {
  // Malformed input: one key twice on each side. The earlier span pairs with the earlier.
  Timeline a;
  a.devices = {{0, 0, "gpu0"}};
  a.spans = {make_span(0, "compute", "FWD", "0F0", 0, 0, 5, 1),
             make_span(0, "compute", "FWD", "0F0", 0, 0, 0, 2)};
  Timeline b = a;
  b.spans[0].end_s = 7;  // the later one takes 2 s instead of 1
  const TimelineComparison c = compare_timelines(a, b);
  EXPECT_EQ(c.duplicate_keys_a, 1);
  EXPECT_EQ(c.duplicate_keys_b, 1);
  EXPECT_EQ(c.matched, 2);
  ASSERT_EQ(c.worst_duration.size(), 2u);
  EXPECT_DOUBLE_EQ(c.worst_duration[0].duration_error_s(), 1);
  EXPECT_DOUBLE_EQ(c.worst_duration[0].start_a_s, 5);
  EXPECT_DOUBLE_EQ(c.worst_duration[1].duration_error_s(), 0);

  b.spans.pop_back();
  const TimelineComparison d = compare_timelines(a, b);
  EXPECT_EQ(d.matched, 1);
  EXPECT_EQ(d.unmatched_a, 1);
}

TEST(TimelineComparison, NothingInCommon) {
  const Timeline a = pipeline_timeline();
  Timeline b = a;
  for (Span& s : b.spans) s.iteration += 5;
  const TimelineComparison c = compare_timelines(a, b);
  EXPECT_EQ(c.matched, 0);
  EXPECT_EQ(c.unmatched_a, 24);
  EXPECT_EQ(c.unmatched_b, 24);
  EXPECT_EQ(c.duration_error.worst_s, 0);
  EXPECT_TRUE(c.worst_duration.empty());
  EXPECT_TRUE(c.per_op.empty());
  EXPECT_EQ(c.iterations_b, 7);

  const TimelineComparison empty = compare_timelines(Timeline{}, Timeline{});
  EXPECT_EQ(empty.matched, 0);
  EXPECT_EQ(empty.makespan_error, 0);
}

TEST(StackedTimeline, BothSidesWithDistinctDevicesNodesFlowsAndLinks) {
  const Timeline a = pipeline_timeline();
  const Timeline b = stretched(a, 1.1, 100.0);
  const Timeline t = stack_timelines(a, "simulated", b, "measured");
  EXPECT_EQ(t.source, "simulated: analytic, measured: torch");
  ASSERT_EQ(t.devices.size(), 4u);
  EXPECT_EQ(t.devices[0].name, "simulated gpu0");
  EXPECT_EQ(t.devices[2].name, "measured gpu0");
  std::set<int32_t> ids, a_nodes, b_nodes;
  for (size_t i = 0; i < t.devices.size(); ++i) {
    ids.insert(t.devices[i].id);
    (i < 2 ? a_nodes : b_nodes).insert(t.devices[i].node);
  }
  EXPECT_EQ(ids.size(), 4u);
  for (int32_t node : b_nodes) EXPECT_EQ(a_nodes.count(node), 0u) << node;

  ASSERT_EQ(t.links.size(), 4u);
  EXPECT_EQ(t.links[1].name, "simulated nvswitch_port1");
  EXPECT_EQ(t.links[3].name, "measured nvswitch_port1");
  EXPECT_GT(t.links[2].id, 2);

  ASSERT_EQ(t.spans.size(), 48u);
  std::set<uint64_t> a_flows, b_flows;
  for (size_t i = 0; i < t.spans.size(); ++i) {
    const Span& s = t.spans[i];
    const bool from_b = i >= 24;
    EXPECT_EQ(s.device >= 2, from_b) << i;
    if (s.peer_device >= 0) {
      EXPECT_EQ(s.peer_device >= 2, from_b) << i;
    }
    if (s.flow_id != 0) (from_b ? b_flows : a_flows).insert(s.flow_id);
  }
  EXPECT_EQ(a_flows.size(), 4u);
  EXPECT_EQ(b_flows.size(), 4u);
  for (uint64_t id : b_flows) EXPECT_EQ(a_flows.count(id), 0u) << id;

  // B's link counter follows its link; its device counters follow its devices.
  ASSERT_EQ(t.counters.size(), 12u);
  EXPECT_EQ(t.counters[2].link, 2);
  EXPECT_EQ(t.counters[8].link, t.links[3].id);
  EXPECT_EQ(t.counters[6].device, 2);
  EXPECT_EQ(t.instants[1].device, 3);

  // B's first span starts where A's does, not 100 s later.
  double first_b = 1e300;
  for (size_t i = 24; i < t.spans.size(); ++i) first_b = std::min(first_b, t.spans[i].start_s);
  EXPECT_NEAR(first_b, 0, 1e-9);

  // One Chrome trace shows both, and reads back to the very same timeline.
  const Timeline back = read_chrome_trace(chrome_trace_json(t));
  testing::expect_same_timeline(t, back);
}

TEST(StackedTimeline, EqualLabelsAreRejected) {
  const Timeline a = pipeline_timeline();
  EXPECT_THROW(stack_timelines(a, "x", a, "x"), std::invalid_argument);
  // Without labels on one side the names still differ.
  const Timeline t = stack_timelines(a, "", a, "copy");
  EXPECT_EQ(t.devices[0].name, "gpu0");
  EXPECT_EQ(t.devices[2].name, "copy gpu0");
  EXPECT_NO_THROW(chrome_trace_json(t));
}

// Found by fuzzing timeline files: ids near the largest int32 overflowed when B's were
// moved past A's. They are a clear error instead.
TEST(StackedTimeline, IdsWithNoRoomAboveTheFirstTimelineAreAClearError) {
  Timeline a = pipeline_timeline();
  a.devices[0].id = std::numeric_limits<int32_t>::max();
  for (Span& s : a.spans) {
    if (s.device == 0) s.device = a.devices[0].id;
  }
  try {
    (void)stack_timelines(a, "A", a, "B");
    FAIL() << "stacked";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("no room above the first timeline"));
  }
}

// --- `pipetwin compare` end to end -------------------------------------------------------

nlohmann::json compare_json(const std::string& args) {
  const testing::CliResult r = run_pipetwin("compare " + args + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

std::string simulate_to(const TempDir& dir, const std::string& name, const std::string& args) {
  const std::string path = (dir.path() / name).string();
  const testing::CliResult r = run_pipetwin("simulate " + args + " --timeline " + path);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return path;
}

TEST(CompareCli, MoreMicrobatchesMatchOnlyInPart) {
  const TempDir dir;
  const std::string a = simulate_to(dir, "a.timeline", "--engine analytic");
  const std::string b = simulate_to(dir, "b.timeline", "--set training.microbatches=16");
  const nlohmann::json j = compare_json(a + " " + b);
  for (const char* key :
       {"makespan_a_s", "makespan_b_s", "makespan_error", "bubble_a", "bubble_b", "matched",
        "unmatched_a", "unmatched_b", "duration_error", "start_error", "worst", "per_op"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  for (const char* key : {"median_s", "p90_s", "worst_s"}) {
    EXPECT_TRUE(j["duration_error"].contains(key)) << key;
    EXPECT_TRUE(j["start_error"].contains(key)) << key;
  }
  // Sample ranges differ, so forwards, backwards and transfers do not match; the optimizer
  // steps (whole batch) do.
  EXPECT_GT(j["matched"].get<int>(), 0);
  EXPECT_LT(j["matched"].get<int>(), j["spans_a"].get<int>());
  EXPECT_GT(j["unmatched_a"].get<int>(), 0);
  EXPECT_GT(j["unmatched_b"].get<int>(), 0);
  EXPECT_EQ(j["matched"].get<int>() + j["unmatched_a"].get<int>(), j["spans_a"].get<int>());
  EXPECT_EQ(j["matched"].get<int>() + j["unmatched_b"].get<int>(), j["spans_b"].get<int>());
  EXPECT_EQ(j["first_unmatched_a"].size(), 5u);
  EXPECT_TRUE(j["per_op"].contains("OPTIM"));
  // README: 16 microbatches take 558 ms per iteration instead of 637 ms, bubble 30% -> 20%.
  EXPECT_LT(j["makespan_error"].get<double>(), -0.1);
  EXPECT_LT(j["bubble_b"].get<double>(), j["bubble_a"].get<double>());
}

TEST(CompareCli, SimgridIsSlowerThanAnalyticOnPcie) {
  const TempDir dir;
  const std::string scenario =
      std::string(PIPETWIN_SOURCE_DIR) +
      "/scenarios/whatif-nvlink-vs-pcie.textproto --set cluster.preset=pcie-8xa100";
  const std::string a = simulate_to(dir, "analytic.timeline", scenario + " --engine analytic");
  const std::string b = simulate_to(dir, "simgrid.timeline", scenario + " --engine simgrid");
  const std::string trace = (dir.path() / "both.json").string();
  const nlohmann::json j =
      compare_json(a + " " + b + " --trace " + trace + " --labels analytic,simgrid");
  EXPECT_EQ(j["unmatched_a"], 0);
  EXPECT_EQ(j["unmatched_b"], 0);
  EXPECT_EQ(j["matched"], j["spans_a"]);
  EXPECT_EQ(j["matched"], j["spans_b"]);
  EXPECT_GT(j["makespan_error"].get<double>(), 0.2);
  EXPECT_GT(j["makespan_b_s"].get<double>(), j["makespan_a_s"].get<double>());
  EXPECT_GT(j["bubble_b"].get<double>(), j["bubble_a"].get<double>());
  // Compute takes the same time on both engines; contention slows the transfers.
  EXPECT_LT(j["per_op"]["FWD"]["median_duration_error_s"].get<double>(), 1e-9);
  EXPECT_GT(j["per_op"]["SEND_ACT"]["median_duration_error_s"].get<double>(), 0);
  ASSERT_EQ(j["worst"].size(), 5u);
  EXPECT_GT(j["worst"][0]["duration_error_s"].get<double>(), 0);
  EXPECT_TRUE(j["worst"][0].contains("name"));
  EXPECT_TRUE(j["worst"][0].contains("device_name"));
  EXPECT_TRUE(j["worst"][0].contains("iteration"));

  // The stacked trace: both sets of devices, under their labels.
  const Timeline stacked = read_chrome_trace(read_all(trace));
  const Timeline ta = read_timeline_file(a);
  ASSERT_EQ(stacked.devices.size(), 2 * ta.devices.size());
  EXPECT_EQ(stacked.devices.front().name, "analytic " + ta.devices.front().name);
  EXPECT_EQ(stacked.devices.back().name, "simgrid " + ta.devices.back().name);
  EXPECT_EQ(stacked.spans.size(), 2 * ta.spans.size());
}

TEST(CompareCli, HumanReport) {
  const TempDir dir;
  const std::string a = simulate_to(dir, "a.timeline", "");
  const std::string b = simulate_to(dir, "b.timeline", "--set training.microbatches=16");
  const testing::CliResult r = run_pipetwin("compare " + a + " " + b + " --labels before,after");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* text :
       {"spans matched", "only in before: 0F0 [0,4) on gpu0 (iteration 0)", "makespan", "bubble",
        "after vs before", "OPTIM", "worst durations", "worst starts"}) {
    EXPECT_THAT(r.out, HasSubstr(text));
  }
}

TEST(CompareCli, IdenticalFilesMatchExactly) {
  const TempDir dir;
  const std::string a = simulate_to(dir, "a.timeline", "");
  const nlohmann::json j = compare_json(a + " " + a);
  EXPECT_EQ(j["makespan_error"].get<double>(), 0);
  EXPECT_EQ(j["duration_error"]["worst_s"].get<double>(), 0);
  EXPECT_EQ(j["start_error"]["worst_s"].get<double>(), 0);
  EXPECT_EQ(j["unmatched_a"], 0);
}

TEST(CompareCli, UnreadableFileIsBadInput) {
  const TempDir dir;
  const std::string a = simulate_to(dir, "a.timeline", "");
  const std::string missing = (dir.path() / "missing.timeline").string();
  testing::CliResult r = run_pipetwin("compare " + a + " " + missing);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(missing));
  const std::string garbage = dir.write("garbage.timeline", "not a timeline").string();
  r = run_pipetwin("compare " + garbage + " " + a + " --json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(garbage));
  EXPECT_EQ(r.out, "");
  r = run_pipetwin("compare " + a + " " + a + " --labels same,same");
  EXPECT_EQ(r.exit_code, 2);
  r = run_pipetwin("compare " + a);
  EXPECT_EQ(r.exit_code, 2);
}

TEST(CompareCli, NothingInCommonFailsWithoutOutput) {
  const TempDir dir;
  const Timeline a = pipeline_timeline();
  Timeline b = a;
  for (Span& s : b.spans) s.device = 1 - s.device;
  for (Span& s : b.spans) s.stage += 10;
  write_timeline_file(a, (dir.path() / "a.timeline").string());
  write_timeline_file(b, (dir.path() / "b.timeline").string());
  const std::string trace = (dir.path() / "both.json").string();
  const testing::CliResult r =
      run_pipetwin("compare " + (dir.path() / "a.timeline").string() + " " +
                   (dir.path() / "b.timeline").string() + " --trace " + trace);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("nothing to compare"));
  EXPECT_THAT(r.err, HasSubstr("different programs"));
  EXPECT_FALSE(std::filesystem::exists(trace));
}

}  // namespace
}  // namespace pipetwin
