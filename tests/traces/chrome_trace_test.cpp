// Chrome trace export: what viewers need (events, flows, metadata) and exact read-back.
#include "traces/chrome_trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "timeline_equality.h"
#include "traces/drawn_slices.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using testing::expect_same_timeline;

Span make_span(int32_t device, const std::string& lane, const std::string& name,
               const std::string& op, int32_t stage, double start_s, double end_s) {
  Span s;
  s.device = device;
  s.lane = lane;
  s.name = name;
  s.op = op;
  s.stage = stage;
  s.microbatch = 0;
  s.range_lo = 0;
  s.range_hi = 8;
  s.iteration = 0;
  s.start_s = start_s;
  s.end_s = end_s;
  return s;
}

Span make_transfer(int32_t device, const std::string& lane, const std::string& name,
                   const std::string& op, int32_t stage, double start_s, double end_s, int32_t peer,
                   uint64_t flow_id) {
  Span s = make_span(device, lane, name, op, stage, start_s, end_s);
  s.bytes = 4 << 20;
  s.peer_device = peer;
  s.flow_id = flow_id;
  return s;
}

// One microbatch through two stages on two nodes: activations forward, gradients back.
// Times are deliberately not round in binary (0.1 + 0.2 style) to catch inexact read-back.
// Two links carry utilization counters, interleaved with the device counters; link ids are
// not their indices (0 and 3), so an index/id mix-up shows.
Timeline two_stage_timeline() {
  Timeline t;
  t.source = "analytic";
  t.devices = {{0, 0, "gpu0"}, {1, 1, "gpu1"}};
  t.links = {{0, "nic0_1", 12.5e9}, {3, "pcie_switch0", 1e11 / 3}};
  const double f = 0.0125, x = 0.1 + 0.2 - 0.3 + 0.0006, b = 1.0 / 38;
  t.spans.push_back(make_span(0, "compute", "0F0", "FWD", 0, 0.0, f));
  t.spans.push_back(make_transfer(0, "send", "0SEND_A0", "SEND_ACT", 0, f, f + x, 1, 1));
  t.spans.push_back(make_transfer(1, "recv", "1RECV_A0", "RECV_ACT", 1, f, f + x, 0, 1));
  t.spans.push_back(make_span(1, "compute", "1F0", "FWD", 1, f + x, 2 * f + x));
  t.spans.push_back(make_span(1, "compute", "1B0", "BWD", 1, 2 * f + x, 2 * f + x + b));
  t.spans.push_back(
      make_transfer(1, "send", "1SEND_G0", "SEND_GRAD", 1, 2 * f + x + b, 2 * f + 2 * x + b, 0, 2));
  t.spans.push_back(
      make_transfer(0, "recv", "0RECV_G0", "RECV_GRAD", 0, 2 * f + x + b, 2 * f + 2 * x + b, 1, 2));
  t.spans.push_back(
      make_span(0, "compute", "0B0", "BWD", 0, 2 * f + 2 * x + b, 2 * f + 2 * x + 2 * b));
  Span optim = make_span(0, "compute", "0OPT", "OPTIM", 0, 2 * f + 2 * x + 2 * b, 0.2);
  optim.microbatch = -1;
  optim.range_hi = 0;
  t.spans.push_back(optim);
  t.counters = {{0, "memory_bytes", 0.0, 1.5e9},      {0, "utilization", f, 0.1 + 0.2, 0},
                {0, "memory_bytes", f, 2.25e9 + 0.5}, {1, "memory_bytes", f + x, 1.0e9 / 3},
                {0, "utilization", f + x, 0.0, 0},    {0, "utilization", 2 * f + x + b, 1.0 / 3, 3},
                {0, "memory_bytes", 0.2, 1.5e9}};
  t.instants = {{1, "freeze", 2 * f + x}};
  return t;
}

std::vector<json> events_with_ph(const json& trace, const std::string& ph) {
  std::vector<json> out;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == ph) out.push_back(e);
  }
  return out;
}

int lane_index(const std::string& lane) {
  static const std::map<std::string, int> kLanes = {{"compute", 0},    {"send", 1},
                                                    {"recv", 2},       {"copy", 3},
                                                    {"collective", 4}, {"data-parallel", 5}};
  return kLanes.at(lane);
}

std::string reader_error(const std::string& text) {
  try {
    read_chrome_trace(text);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error reading: " << text.substr(0, 200);
  return "";
}

TEST(ChromeTrace, IsJsonWithTheTopLevelViewersExpect) {
  const json trace = json::parse(chrome_trace_json(two_stage_timeline()));
  ASSERT_TRUE(trace.at("traceEvents").is_array());
  EXPECT_EQ(trace.at("displayTimeUnit"), "ms");
  EXPECT_EQ(trace.at("otherData").at("source"), "analytic");
  EXPECT_EQ(trace.at("otherData").at("devices"),
            json::parse(R"([{"id":0,"node":0,"name":"gpu0"},{"id":1,"node":1,"name":"gpu1"}])"));
  const json& links = trace.at("otherData").at("links");
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links[0], (json{{"id", 0}, {"name", "nic0_1"}, {"bandwidth_bytes_per_s", 12.5e9}}));
  EXPECT_EQ(links[1].at("id"), 3);
  EXPECT_EQ(links[1].at("name"), "pcie_switch0");
  EXPECT_EQ(links[1].at("bandwidth_bytes_per_s").get<double>(), 1e11 / 3);
}

TEST(ChromeTrace, OneCompleteEventPerSpanWithTimesIdsAndArgs) {
  const Timeline t = two_stage_timeline();
  const std::vector<json> xs = events_with_ph(json::parse(chrome_trace_json(t)), "X");
  ASSERT_EQ(xs.size(), t.spans.size());
  for (std::size_t i = 0; i < xs.size(); ++i) {
    SCOPED_TRACE("span " + std::to_string(i));
    const Span& s = t.spans[i];
    const json& e = xs[i];
    EXPECT_EQ(e.at("name"), s.name);
    EXPECT_EQ(e.at("cat"), s.lane);  // "compute" for FWD/BWD/OPTIM, else the lane
    EXPECT_EQ(e.at("pid"), t.devices[s.device].node);
    EXPECT_EQ(e.at("tid"), s.device * kChromeTidsPerDevice + lane_index(s.lane));
    // Drawn on the grid (traces/drawn_slices.h): ts within half a step of the exact start,
    // dur within a step of the exact duration; args keep the exact times.
    const double step_us = kDrawnGridNs * 1e-3;
    EXPECT_NEAR(e.at("ts").get<double>(), s.start_s * 1e6, step_us / 2);
    EXPECT_NEAR(e.at("dur").get<double>(), s.duration_s() * 1e6, step_us);
    const json& a = e.at("args");
    EXPECT_EQ(a.at("op"), s.op);
    EXPECT_EQ(a.at("stage"), s.stage);
    EXPECT_EQ(a.at("microbatch"), s.microbatch);
    EXPECT_EQ(a.at("iteration"), s.iteration);
    EXPECT_EQ(a.at("samples"), s.samples());
    EXPECT_EQ(a.at("range_lo"), s.range_lo);
    EXPECT_EQ(a.at("range_hi"), s.range_hi);
    EXPECT_EQ(a.at("device"), s.device);
    EXPECT_EQ(a.at("lane"), s.lane);
    EXPECT_EQ(a.at("start_s").get<double>(), s.start_s);
    EXPECT_EQ(a.at("end_s").get<double>(), s.end_s);
    if (s.lane == "send" || s.lane == "recv") {
      EXPECT_EQ(a.at("bytes"), s.bytes);
      EXPECT_EQ(a.at("peer_device"), s.peer_device);
      EXPECT_EQ(a.at("flow_id"), s.flow_id);
    } else {
      EXPECT_FALSE(a.contains("bytes"));
      EXPECT_FALSE(a.contains("flow_id"));
    }
  }
}

TEST(ChromeTrace, EveryFlowHasOneStartOnTheSendAndOneFinishInsideTheRecv) {
  const Timeline t = two_stage_timeline();
  const json trace = json::parse(chrome_trace_json(t));
  std::map<uint64_t, std::vector<json>> starts, finishes;
  for (const json& e : events_with_ph(trace, "s")) starts[e.at("id")].push_back(e);
  for (const json& e : events_with_ph(trace, "f")) finishes[e.at("id")].push_back(e);
  EXPECT_EQ(starts.size(), 2u);
  EXPECT_EQ(finishes.size(), 2u);
  for (const Span& s : t.spans) {
    if (s.flow_id == 0) continue;
    SCOPED_TRACE(s.name);
    const bool is_send = s.lane == "send";
    const std::vector<json>& ends = is_send ? starts[s.flow_id] : finishes[s.flow_id];
    ASSERT_EQ(ends.size(), 1u);
    const json& e = ends[0];
    EXPECT_EQ(e.at("cat"), "flow");
    EXPECT_EQ(e.at("name"), "transfer");
    EXPECT_EQ(e.at("pid"), t.devices[s.device].node);
    EXPECT_EQ(e.at("tid"), s.device * kChromeTidsPerDevice + lane_index(s.lane));
    // Strictly inside: at a slice edge the viewer could bind the flow to the neighbour.
    EXPECT_GT(e.at("ts").get<double>(), s.start_s * 1e6);
    EXPECT_LT(e.at("ts").get<double>(), s.end_s * 1e6);
    if (is_send) {
      EXPECT_FALSE(e.contains("bp"));
    } else {
      EXPECT_EQ(e.at("bp"), "e");
    }
  }
}

TEST(ChromeTrace, MetadataNamesNodesAndUsedLanesDeviceMajor) {
  const json trace = json::parse(chrome_trace_json(two_stage_timeline()));
  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::string> threads;
  std::map<std::pair<int, int>, int> sort_index;
  for (const json& e : events_with_ph(trace, "M")) {
    const std::pair<int, int> key{e.at("pid"), e.at("tid")};
    if (e.at("name") == "process_name") processes[key.first] = e.at("args").at("name");
    if (e.at("name") == "thread_name") threads[key] = e.at("args").at("name");
    if (e.at("name") == "thread_sort_index") sort_index[key] = e.at("args").at("sort_index");
  }
  EXPECT_EQ(processes, (std::map<int, std::string>{
                           {0, "node0"}, {1, "node1"}, {kChromeNetworkPid, "network"}}));
  const std::map<std::pair<int, int>, std::string> want_threads = {
      {{0, 0}, "gpu0 compute"}, {{0, 1}, "gpu0 send"},  {{0, 2}, "gpu0 recv"},
      {{1, 9}, "gpu1 compute"}, {{1, 10}, "gpu1 send"}, {{1, 11}, "gpu1 recv"}};
  EXPECT_EQ(threads, want_threads);
  ASSERT_EQ(sort_index.size(), want_threads.size());
  for (const auto& [key, index] : sort_index) EXPECT_EQ(index, key.second);
}

TEST(ChromeTrace, CountersAreOneSeriesPerDeviceAndInstantsSitOnTheComputeLane) {
  const Timeline t = two_stage_timeline();
  const json trace = json::parse(chrome_trace_json(t));
  const std::vector<json> counters = events_with_ph(trace, "C");
  ASSERT_EQ(counters.size(), t.counters.size());
  for (std::size_t i = 0; i < counters.size(); ++i) {
    const Counter& c = t.counters[i];
    if (c.link != -1) continue;  // LinkCountersSitOnTheNetworkProcess checks those
    EXPECT_EQ(counters[i].at("name"), "memory_bytes gpu" + std::to_string(c.device));
    EXPECT_EQ(counters[i].at("pid"), t.devices[c.device].node);
    EXPECT_NEAR(counters[i].at("ts").get<double>(), c.time_s * 1e6, 1e-6);
    EXPECT_EQ(counters[i].at("args"), (json{{"memory_bytes", c.value}}));
  }
  const std::vector<json> instants = events_with_ph(trace, "i");
  ASSERT_EQ(instants.size(), 1u);
  EXPECT_EQ(instants[0].at("name"), "freeze");
  EXPECT_EQ(instants[0].at("s"), "t");
  EXPECT_EQ(instants[0].at("pid"), 1);
  EXPECT_EQ(instants[0].at("tid"), kChromeTidsPerDevice);
}

TEST(ChromeTrace, LinkCountersSitOnTheNetworkProcess) {
  const Timeline t = two_stage_timeline();
  const json trace = json::parse(chrome_trace_json(t));
  const std::vector<json> counters = events_with_ph(trace, "C");
  ASSERT_EQ(counters.size(), t.counters.size());
  const std::map<int32_t, std::string> link_names = {{0, "nic0_1"}, {3, "pcie_switch0"}};
  int link_counters = 0;
  for (std::size_t i = 0; i < counters.size(); ++i) {
    const Counter& c = t.counters[i];
    SCOPED_TRACE("counter " + std::to_string(i));
    if (c.link == -1) {
      EXPECT_NE(counters[i].at("pid"), kChromeNetworkPid);
      continue;
    }
    ++link_counters;
    EXPECT_EQ(counters[i].at("name"), "utilization " + link_names.at(c.link));
    EXPECT_EQ(counters[i].at("pid"), kChromeNetworkPid);
    EXPECT_NEAR(counters[i].at("ts").get<double>(), c.time_s * 1e6, 1e-6);
    EXPECT_EQ(counters[i].at("args"), (json{{"utilization", c.value}}));
  }
  EXPECT_EQ(link_counters, 3);
  EXPECT_EQ(counters[1].at("name"), "utilization nic0_1");

  int network_processes = 0;
  for (const json& e : events_with_ph(trace, "M")) {
    if (e.at("pid") != kChromeNetworkPid) continue;
    EXPECT_EQ(e.at("name"), "process_name");  // counters only: no threads to name
    EXPECT_EQ(e.at("args").at("name"), "network");
    ++network_processes;
  }
  EXPECT_EQ(network_processes, 1);
}

TEST(ChromeTrace, LinksWithoutCountersStillGetTheNetworkProcessAndRoundTrip) {
  Timeline t = two_stage_timeline();
  std::erase_if(t.counters, [](const Counter& c) { return c.link != -1; });
  const std::string text = chrome_trace_json(t);
  int network_processes = 0;
  for (const json& e : events_with_ph(json::parse(text), "M")) {
    if (e.at("pid") == kChromeNetworkPid) ++network_processes;
  }
  EXPECT_EQ(network_processes, 1);
  expect_same_timeline(t, read_chrome_trace(text));
}

TEST(ChromeTrace, TimelineWithoutLinksHasNoNetworkProcess) {
  Timeline t = two_stage_timeline();
  t.links.clear();
  std::erase_if(t.counters, [](const Counter& c) { return c.link != -1; });
  const std::string text = chrome_trace_json(t);
  EXPECT_THAT(text, ::testing::Not(HasSubstr("network")));
  const json trace = json::parse(text);
  for (const json& e : trace.at("traceEvents")) {
    EXPECT_NE(e.at("pid"), kChromeNetworkPid) << e.dump();
  }
  EXPECT_FALSE(trace.at("otherData").contains("links"));
  expect_same_timeline(t, read_chrome_trace(text));
}

TEST(ChromeTrace, LinkCounterDeviceIsUnusedAndReadsBackAsZero) {
  Timeline t = two_stage_timeline();
  t.counters[1].device = 42;  // on no listed device: fine for a link counter
  const Timeline back = read_chrome_trace(chrome_trace_json(t));
  expect_same_timeline(t, back);
  EXPECT_EQ(back.counters[1].link, 0);
  EXPECT_EQ(back.counters[1].device, 0);
}

TEST(ChromeTrace, TimesInMicrosecondsKeepTheDecimalDigitsOfTheSeconds) {
  Timeline t;
  t.devices = {{0, 0, "gpu0"}};
  t.spans.push_back(make_span(0, "compute", "0F0", "FWD", 0, 0.1, 0.1234567));
  const std::string text = chrome_trace_json(t);
  // 0.1 * 1e6 would print as 100000.00000000001.
  EXPECT_THAT(text, HasSubstr(R"("ts":100000,)"));
}

TEST(ChromeTrace, ReadBackIsExact) {
  const Timeline t = two_stage_timeline();
  expect_same_timeline(t, read_chrome_trace(chrome_trace_json(t)));
}

TEST(ChromeTrace, ReadBackIsExactForAwkwardDoubles) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mantissa(0.5, 1.0);
  std::uniform_int_distribution<int> exponent(-40, 40);
  Timeline t;
  t.devices = {{3, 5, "cuda:0"}};
  std::vector<double> values = {
      0.1, 1.0 / 3, std::nextafter(0.1, 1.0), 1e-7, 123456.789, -2.5, 5e-324, 1e300, 1e22, 0.0};
  for (int i = 0; i < 2000; ++i) values.push_back(std::ldexp(mantissa(rng), exponent(rng)));
  for (std::size_t i = 0; i + 1 < values.size(); ++i) {
    Span s = make_span(3, "compute", "s", "FWD", 0, values[i], values[i + 1]);
    s.flow_id = i;
    t.spans.push_back(s);
    t.counters.push_back({3, "link_utilisation", values[i], values[i + 1]});
    t.instants.push_back({3, "repartition", values[i]});
  }
  expect_same_timeline(t, read_chrome_trace(chrome_trace_json(t)));
}

TEST(ChromeTrace, StreamedOutputEqualsTheString) {
  Timeline t = two_stage_timeline();
  for (int i = 0; i < 3000; ++i) {  // well past one 64 KiB chunk
    t.spans.push_back(make_span(i % 2, "compute", std::to_string(i) + "F", "FWD", 0, i, i + 0.5));
  }
  std::ostringstream out;
  write_chrome_trace(t, out);
  EXPECT_GT(out.str().size(), 1u << 17);
  EXPECT_EQ(out.str(), chrome_trace_json(t));
}

TEST(ChromeTrace, WritingToAFailedStreamThrows) {
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  EXPECT_THROW(write_chrome_trace(two_stage_timeline(), out), std::runtime_error);
}

TEST(ChromeTrace, EscapesStringsAndReadsThemBack) {
  Timeline t = two_stage_timeline();
  t.source = "torch \"rank\" \\ run\n";
  t.devices[1].name = "gpu\t\"1\" é";
  t.spans[0].name = std::string("quote\" back\\ ctl\x01\x1f end");
  t.instants[0].name = "freeze/\u00e9\u4e2d";
  t.links[1].name = "switch \"0\"\\ \u00e9";
  t.counters[1].name = "util\tization";
  const std::string text = chrome_trace_json(t);
  EXPECT_TRUE(json::accept(text));
  expect_same_timeline(t, read_chrome_trace(text));
}

TEST(ChromeTrace, EmptyTimelineRoundTrips) {
  const Timeline t;
  expect_same_timeline(t, read_chrome_trace(chrome_trace_json(t)));
}

TEST(ChromeTrace, UnpairedFlowIdKeepsItsIdButDrawsNoArrow) {
  Timeline t = two_stage_timeline();
  t.spans.erase(t.spans.begin() + 2);  // the RECV of flow 1: as if that rank died
  const std::string text = chrome_trace_json(t);
  const json trace = json::parse(text);
  EXPECT_EQ(events_with_ph(trace, "s").size(), 1u);
  EXPECT_EQ(events_with_ph(trace, "f").size(), 1u);
  expect_same_timeline(t, read_chrome_trace(text));
}

TEST(ChromeTrace, UnknownLanesTakeTheSpareTidsUpToThree) {
  Timeline t = two_stage_timeline();
  t.spans.push_back(make_span(1, "nvme", "1OFF0", "OFFLOAD", 1, 0.3, 0.4));
  t.spans.push_back(make_span(0, "rdma", "0X", "OFFLOAD", 0, 0.3, 0.4));
  t.spans.push_back(make_span(0, "nvme", "0OFF0", "OFFLOAD", 0, 0.3, 0.4));
  const std::vector<json> xs = events_with_ph(json::parse(chrome_trace_json(t)), "X");
  EXPECT_EQ(xs[xs.size() - 3].at("tid"), 9 + 6);
  EXPECT_EQ(xs[xs.size() - 2].at("tid"), 0 + 7);
  EXPECT_EQ(xs[xs.size() - 1].at("tid"), 0 + 6);
  expect_same_timeline(t, read_chrome_trace(chrome_trace_json(t)));

  t.spans.push_back(make_span(0, "disk", "a", "OFFLOAD", 0, 0.5, 0.6));
  t.spans.push_back(make_span(0, "tape", "b", "OFFLOAD", 0, 0.5, 0.6));
  EXPECT_THROW(chrome_trace_json(t), std::invalid_argument);
}

TEST(ChromeTrace, WriterRejectsWhatTheTraceCannotHold) {
  Timeline unknown_device = two_stage_timeline();
  unknown_device.spans[3].device = 9;
  EXPECT_THROW(chrome_trace_json(unknown_device), std::invalid_argument);

  Timeline nan_time = two_stage_timeline();
  nan_time.counters[1].value = std::nan("");
  EXPECT_THROW(chrome_trace_json(nan_time), std::invalid_argument);

  Timeline same_name = two_stage_timeline();
  same_name.devices[1] = {1, 0, "gpu0"};  // counters could not tell them apart
  EXPECT_THROW(chrome_trace_json(same_name), std::invalid_argument);

  Timeline same_name_other_node = two_stage_timeline();
  same_name_other_node.devices[1].name = "gpu0";  // fine: the node tells them apart
  expect_same_timeline(same_name_other_node,
                       read_chrome_trace(chrome_trace_json(same_name_other_node)));

  Timeline unknown_link = two_stage_timeline();
  unknown_link.counters[1].link = 1;  // ids are 0 and 3: 1 is an index, not an id
  EXPECT_THROW(chrome_trace_json(unknown_link), std::invalid_argument);
  try {
    chrome_trace_json(unknown_link);
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("link 1"));
  }

  Timeline negative_link = two_stage_timeline();
  negative_link.counters[1].link = -2;
  EXPECT_THROW(chrome_trace_json(negative_link), std::invalid_argument);

  Timeline no_links = two_stage_timeline();
  no_links.links.clear();  // the link counters now name nothing
  EXPECT_THROW(chrome_trace_json(no_links), std::invalid_argument);

  Timeline same_link_id = two_stage_timeline();
  same_link_id.links[1].id = 0;
  EXPECT_THROW(chrome_trace_json(same_link_id), std::invalid_argument);

  Timeline same_link_name = two_stage_timeline();
  same_link_name.links[1].name = "nic0_1";  // link counters could not tell them apart
  EXPECT_THROW(chrome_trace_json(same_link_name), std::invalid_argument);

  Timeline nan_bandwidth = two_stage_timeline();
  nan_bandwidth.links[0].bandwidth_bytes_per_s = std::nan("");
  EXPECT_THROW(chrome_trace_json(nan_bandwidth), std::invalid_argument);

  Timeline node_on_network_pid = two_stage_timeline();
  node_on_network_pid.devices[1].node = kChromeNetworkPid;
  EXPECT_THROW(chrome_trace_json(node_on_network_pid), std::invalid_argument);
  node_on_network_pid.links.clear();  // no network process, so no clash
  std::erase_if(node_on_network_pid.counters, [](const Counter& c) { return c.link != -1; });
  expect_same_timeline(node_on_network_pid,
                       read_chrome_trace(chrome_trace_json(node_on_network_pid)));
}

TEST(ChromeTrace, ReaderErrorsSayWhatIsWrong) {
  EXPECT_THAT(reader_error("not json at all"), HasSubstr("not valid JSON"));
  EXPECT_THAT(reader_error(R"({"traceEvents":[)"), HasSubstr("not valid JSON"));
  EXPECT_THAT(reader_error("[1, 2]"), HasSubstr("not a JSON object"));
  EXPECT_THAT(reader_error(R"({"traceEvents":[]})"), HasSubstr("otherData"));

  json trace = json::parse(chrome_trace_json(two_stage_timeline()));
  json no_stage = trace;
  for (json& e : no_stage["traceEvents"]) {
    if (e["ph"] == "X") {
      e["args"].erase("stage");
      break;
    }
  }
  const std::string message = reader_error(no_stage.dump());
  EXPECT_THAT(message, HasSubstr("traceEvents["));
  EXPECT_THAT(message, HasSubstr("args.stage"));

  json bad_counter = trace;
  for (json& e : bad_counter["traceEvents"]) {
    if (e["ph"] == "C") e["name"] = "memory_bytes gpu7";
  }
  EXPECT_THAT(reader_error(bad_counter.dump()), HasSubstr("names no device"));

  json bad_link_counter = trace;
  for (json& e : bad_link_counter["traceEvents"]) {
    if (e["ph"] == "C" && e["pid"] == kChromeNetworkPid) e["name"] = "utilization nic9_9";
  }
  EXPECT_THAT(reader_error(bad_link_counter.dump()), HasSubstr("names no link"));

  json string_bandwidth = trace;
  string_bandwidth["otherData"]["links"][0]["bandwidth_bytes_per_s"] = "fast";
  const std::string bandwidth_message = reader_error(string_bandwidth.dump());
  EXPECT_THAT(bandwidth_message, HasSubstr("otherData.links[0]"));
  EXPECT_THAT(bandwidth_message, HasSubstr("bandwidth_bytes_per_s is not a number"));

  json string_time = trace;
  for (json& e : string_time["traceEvents"]) {
    if (e["ph"] == "X") e["args"]["start_s"] = "soon";
  }
  EXPECT_THAT(reader_error(string_time.dump()), HasSubstr("start_s is not a number"));
}

}  // namespace
}  // namespace pipetwin
